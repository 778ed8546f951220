//! The bench bundle: what `tilec bench --bundle DIR` writes for one GEMM shape (`bench.json` beside the PTX) and
//! what the runner needs to time the kernel against cuBLAS. It carries no input data: the inputs are made on
//! the GPU machine from `seed`, so a bundle is a few hundred KB of PTX and one small JSON file at any shape.
//!
//! ```json
//! {
//!   "ptx": "kernel.ptx", "kernel": "gemm", "label": "examples/gemm.tir",
//!   "grid": [32, 32, 1], "block": [128, 1, 1], "shared_bytes": 65536,
//!   "warmup": 10, "repeat": 50, "seed": 1,
//!   "gemm": {"m": 4096, "n": 4096, "k": 4096,
//!            "a": {"elem": "f16", "layout": "row_major"}, "b": {...}, "c": {"elem": "f32", ...},
//!            "alpha": null, "beta": null},
//!   "params": [{"pointer": "a"}, {"extent": {"of": "a", "axis": 0}}, ..., "alpha"]
//! }
//! ```

use serde::{Deserialize, Serialize};

/// The file name of a bench bundle's description inside its directory.
pub const BENCH_JSON: &str = "bench.json";

/// One GEMM shape to benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchBundle {
    /// PTX file, relative to the bundle directory.
    pub ptx: String,
    /// The kernel's name in the PTX.
    pub kernel: String,
    /// Where the kernel came from (the `.tir` file, backend), for the report.
    #[serde(default)]
    pub label: String,
    /// The grid: the launch grid, or for a `persistent` kernel its logical grid (see [`crate::persistent`]).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// A persistent kernel: launched as P blocks along x ([`crate::persistent::launch_grid`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
    /// Dynamic shared memory bytes (above 48 KiB the launcher raises the kernel's limit).
    #[serde(default)]
    pub shared_bytes: u32,
    /// Untimed launches before the timed ones (for each of tilec and cuBLAS).
    pub warmup: u32,
    /// Timed launches, each between its own pair of CUDA events.
    pub repeat: u32,
    /// Seed of the inputs made on the GPU machine.
    pub seed: u64,
    pub gemm: GemmSpec,
    /// The PTX entry's parameters in order.
    pub params: Vec<BenchParam>,
}

/// `C = alpha * A * B + beta * C`, A is MxK, B is KxN, C is MxN (logical shapes; `layout` says how each is stored).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GemmSpec {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: Operand,
    pub b: Operand,
    pub c: Operand,
    /// The kernel's `alpha` argument, when it has one (else the kernel computes `1 * A * B`).
    #[serde(default)]
    pub alpha: Option<f32>,
    /// The kernel's `beta` argument, when it has one (else C's old contents do not count).
    #[serde(default)]
    pub beta: Option<f32>,
}

/// One matrix of the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operand {
    pub elem: Elem,
    pub layout: MatrixLayout,
}

/// Element types a bench operand can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Elem {
    F16,
    Bf16,
    F32,
    I8,
    I32,
}

impl Elem {
    /// The IR's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::F32 => "f32",
            Elem::I8 => "i8",
            Elem::I32 => "i32",
        }
    }

    /// Parses the IR's name of the type.
    pub fn from_name(name: &str) -> Option<Elem> {
        [Elem::F16, Elem::Bf16, Elem::F32, Elem::I8, Elem::I32].into_iter().find(|e| e.name() == name)
    }

    pub fn bytes(self) -> usize {
        match self {
            Elem::I8 => 1,
            Elem::F16 | Elem::Bf16 => 2,
            Elem::F32 | Elem::I32 => 4,
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(self, Elem::I8 | Elem::I32)
    }
}

/// How a matrix is laid out in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixLayout {
    /// Element (i, j) of an R x C matrix at `i * C + j`.
    RowMajor,
    /// Element (i, j) at `j * R + i`.
    ColMajor,
}

/// Which matrix of the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    A,
    B,
    C,
}

/// A parameter of the PTX entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchParam {
    /// The device pointer of a matrix.
    Pointer(Role),
    /// A matrix's run-time extent along `axis` (0: rows, 1: columns of its logical shape), as `i64`.
    Extent { of: Role, axis: usize },
    /// The `alpha` scalar, as `f32`.
    Alpha,
    /// The `beta` scalar, as `f32`.
    Beta,
    /// A persistent kernel's hidden argument: the logical grid (the bundle's `grid`) along `axis`, as `i64`.
    LogicalGrid(usize),
    /// A TMA tensor map over a matrix, built at launch with `cuTensorMapEncodeTiled` (`crate::tensor_map`):
    /// over its logical shape for a row-major matrix, over its transpose (the row-major view of its memory)
    /// for a column-major one (`transposed`).
    TensorMap {
        of: Role,
        /// `CUtensorMapDataType`.
        data_type: u32,
        /// The box, outermost first (in the map's axis order).
        #[serde(rename = "box")]
        box_shape: Vec<u64>,
        /// `none`, `32b`, `64b` or `128b`.
        swizzle: String,
        /// The map is over the transpose of a column-major matrix.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        transposed: bool,
    },
}

impl GemmSpec {
    /// The logical shape (rows, columns) of a matrix.
    pub fn shape(&self, role: Role) -> (u64, u64) {
        match role {
            Role::A => (self.m, self.k),
            Role::B => (self.k, self.n),
            Role::C => (self.m, self.n),
        }
    }

    pub fn operand(&self, role: Role) -> Operand {
        match role {
            Role::A => self.a,
            Role::B => self.b,
            Role::C => self.c,
        }
    }

    /// Number of elements of a matrix, when it fits in memory sizes.
    pub fn elements(&self, role: Role) -> Option<usize> {
        let (r, c) = self.shape(role);
        usize::try_from(r.checked_mul(c)?).ok()
    }

    /// `f16*f16->f32`, the types as the report writes them.
    pub fn types(&self) -> String {
        format!("{}*{}->{}", self.a.elem.name(), self.b.elem.name(), self.c.elem.name())
    }

    /// `(A col-major)` and the like when some matrix is not row-major, else empty.
    pub fn layouts(&self) -> String {
        let col: Vec<&str> = [(Role::A, "A"), (Role::B, "B"), (Role::C, "C")]
            .into_iter()
            .filter(|&(r, _)| self.operand(r).layout == MatrixLayout::ColMajor)
            .map(|(_, n)| n)
            .collect();
        if col.is_empty() {
            String::new()
        } else {
            format!(" ({} col-major)", col.join(", "))
        }
    }

    /// The operation count, `2 * M * N * K`.
    pub fn ops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Whether the figures are integer operations (TOP/s) rather than floating-point ones (TF/s).
    pub fn integer(&self) -> bool {
        self.a.elem.is_integer()
    }

    /// Checks what the runner relies on: positive sizes, matching A/B types, sizes that fit cuBLAS's `int`.
    pub fn validate(&self) -> Result<(), String> {
        if self.m == 0 || self.n == 0 || self.k == 0 {
            return Err(format!("M, N and K must be positive, got {}x{}x{}", self.m, self.n, self.k));
        }
        let limit = i32::MAX as u64;
        if self.m > limit || self.n > limit || self.k > limit {
            return Err(format!("{}x{}x{} does not fit 32-bit sizes", self.m, self.n, self.k));
        }
        for role in [Role::A, Role::B, Role::C] {
            if self.elements(role).is_none() {
                return Err(format!("{role:?} is too large for this machine"));
            }
        }
        if self.a.elem != self.b.elem {
            return Err(format!("A and B have different element types ({} and {})", self.a.elem.name(), self.b.elem.name()));
        }
        Ok(())
    }
}
