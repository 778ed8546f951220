//! The CPU warp simulator: runs a kernel written in the `nvgpu` dialect (per-thread SIMT code) the way a GPU
//! would, one thread block after another, and reports misuse of the instructions as diagnostics.
//!
//! # Machine model
//! - A launch is a grid of thread blocks (`Launch::grid`), simulated one block at a time (x fastest).
//!   A block has `num_warps` warps (the function attribute, default 1) of 32 lanes; `nvgpu.thread_id x` is
//!   `32 * warp + lane` (blocks are one-dimensional).
//! - Each warp runs its lanes in lockstep, op by op, under an *active mask*. The only control flow is
//!   `tile.for`: its bounds are evaluated per lane, and lanes that finish early wait (inactive) until the
//!   others leave the loop. A warp whose lanes run a loop a different number of times has *diverged*; the
//!   warp-synchronous ops (`nvgpu.ldmatrix`, `nvgpu.stmatrix`, `nvgpu.mma.sync`, and `nvgpu.barrier`) then
//!   fail with [`SimError::Divergent`], which points at the loop. Ordinary per-thread ops run masked.
//! - Warps run until they reach `nvgpu.barrier`; when every warp of the block waits there (or has
//!   returned), all go on. So programs without data races give the answer the GPU gives.
//! - Memory: the kernel's global tiles are the caller's [`TensorData`] ([`SimArg::Tile`], updated in
//!   place); shared tiles come from `tile.alloc_shared` (laid out statically, 128-byte aligned, in the order of
//!   the ops; global tiles 256-byte aligned); registers hold scalars and vectors per lane. Every access is
//!   bounds-checked ([`SimError::OutOfBounds`] names the lane and index) and vector accesses are checked for
//!   alignment to their size. An access of several elements (vector, `ldmatrix` row, `cp.async`) moves
//!   elements consecutive in memory: along the last axis, or down a column of a rank-2 `#col_major` tile
//!   (global or shared), whose data the caller still gives in logical row-major order.
//! - `nvgpu.device_async_copy` reads global memory when it is issued, but its data lands in shared memory only
//!   when a `nvgpu.device_async_wait` of the issuing thread covers its group (or when the block ends).
//!   Reading or writing shared bytes that a pending copy will write is reported as
//!   [`SimError::AsyncHazard`].
//!
//! - mbarriers (`nvgpu.mbarrier.*`, [`mbarrier`]): phases, arrival counts and tx-counts; a warp whose
//!   `try_wait.parity` is not satisfied waits while the block's other warps run, and a wait that can never
//!   end (no warp makes progress) is an error at the wait.
//! - TMA (`nvgpu.tma.*`, [`tma`]): box copies through a tensor map with the swizzle mode's byte
//!   permutation and zero fill, completing on an mbarrier's tx-count; stores with their bulk groups; the
//!   race detector orders the async proxy's writes only through the mbarrier phase they complete.
//!
//! - warpgroup MMA (`nvgpu.warpgroup.mma`, [`wgmma`]): operands read from shared memory through matrix
//!   descriptors (their swizzle modes), the accumulator in the ISA's layout, pending until a
//!   `wgmma.wait_group` retires it; missing `wgmma.fence` and `fence.proxy.async` are errors.
//!
//! # Instruction semantics
//! Each warp-level instruction is implemented from the PTX ISA's description, not from the layout catalogue
//! of `tilec-layout` (so the two are independent; the seed tests check both against the hardware):
//! - `ldmatrix` `.x1/.x2/.x4` (`numTiles`), `.trans` (`transpose`): lanes `8i..8i+7` give the addresses of
//!   the 8 rows of matrix `i` (16 contiguous, 16-byte aligned bytes each; the other lanes' addresses are
//!   ignored); lane `t` receives row `t/4`, elements `2(t%4)` and `2(t%4)+1` of each matrix `i` in
//!   register `i` (`.trans`: column `t/4`, rows `2(t%4)`, `2(t%4)+1`). `stmatrix` is the inverse. A plain
//!   `ldmatrix` of 8-bit elements moves the same bytes: 16 elements per row, elements `4(t%4) .. 4(t%4)+3`
//!   of row `t/4` in register `i` (`vector<n x 4 x i8>`).
//! - `mma.sync` m16n8k16 (f16, bf16, s8, u8), m16n8k8 (f16, bf16, tf32), m16n8k4 (tf32), m16n8k32
//!   (s8, u8, s4, u4, e4m3, e5m2), m16n8k64 (s4, u4) and m8n8k4 (f16, four independent quad-pair products;
//!   `layoutA`/`layoutB` = `row`/`col` select `.row.col`, `.col.row`, ...). Each lane's fragment registers
//!   hold the elements given in the ISA's "Matrix Fragments for mma.mXnYkZ" sections; vector elements are in
//!   register order (element `[r][h]` of a `vector<RxHxT>` is half `h` of register `r`).
//! - Arithmetic of `mma.sync`: every product is exact; for each output element the K products are added
//!   in increasing k in f64, then C is added, and the sum is rounded once to the accumulator type. The
//!   hardware's internal order and rounding are not specified, so f32 results may differ from a GPU in the
//!   last bits for inputs whose sums are not exact; integer results are exact (wrapping to 32 bits). tf32
//!   inputs keep only their top 10 mantissa bits (the hardware ignores the low 13 bits).
//!
//! # Observing registers
//! An op with a `probe` attribute (`{probe = "r"}`), or of a kind listed in [`ProbeSpec::kinds`], has its
//! result recorded per lane each time a warp executes it; [`SimTrace::render`] prints the records in the
//! form the seed documents use (`lane 0: r0 = 1 3, r1 = 4 7`).
//!
//! # Bounded work
//! Each op a warp executes costs one unit of fuel ([`SimOptions::fuel`]); running out is
//! [`SimError::FuelExhausted`], so hostile programs terminate. Shared memory is limited to
//! [`SHARED_MEMORY_LIMIT`] bytes and per-thread vectors to [`MAX_VECTOR_ELEMENTS`] elements.

mod error;
mod exec;
mod matrix;
mod mbarrier;
mod memory;
mod mma;
mod race;
mod tma;
mod wgmma;

use std::fmt::Write as _;

pub use error::{LaneMask, Place, SimError};
pub use memory::SHARED_MEMORY_LIMIT;

use crate::body::{Func, OpId};
use crate::data::TensorData;
use crate::diag::Span;
use crate::ops::OpKind;
use crate::types::{Dim, ScalarType, Type};

/// Fuel of [`SimOptions::default`]: warp-operations over the whole launch.
pub const DEFAULT_FUEL: u64 = 20_000_000;

/// The largest per-thread vector the simulator accepts (a thread has at most 255 32-bit registers).
pub const MAX_VECTOR_ELEMENTS: u64 = 1024;

/// The launch configuration: how many thread blocks, along x, y and z.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
}

impl Launch {
    /// One thread block.
    pub const SINGLE: Launch = Launch { grid: [1, 1, 1] };

    pub fn grid(x: u32, y: u32, z: u32) -> Launch {
        Launch { grid: [x, y, z] }
    }
}

impl Default for Launch {
    fn default() -> Launch {
        Launch::SINGLE
    }
}

/// A kernel argument: a global tile's contents, or a scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum SimArg {
    /// A global tile. Its shape must match the argument's static extents; `?` extents take the data's.
    Tile(TensorData),
    /// A scalar argument (rounded to the argument's type).
    Scalar(f64),
}

/// The interpreter's arguments run on the simulator as they are (the usual oracle check: interpret the
/// kernel as written, simulate it lowered, compare).
impl From<&crate::interp::ArgValue> for SimArg {
    fn from(value: &crate::interp::ArgValue) -> SimArg {
        match value {
            crate::interp::ArgValue::Tensor(t) => SimArg::Tile(t.clone()),
            crate::interp::ArgValue::Scalar(_, x) => SimArg::Scalar(*x),
        }
    }
}

impl SimArg {
    pub fn as_tile(&self) -> Option<&TensorData> {
        match self {
            SimArg::Tile(t) => Some(t),
            SimArg::Scalar(_) => None,
        }
    }

    pub fn into_tile(self) -> Option<TensorData> {
        match self {
            SimArg::Tile(t) => Some(t),
            SimArg::Scalar(_) => None,
        }
    }
}

/// Which ops have their results recorded per lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeSpec {
    /// Ops carrying a `probe` attribute (a string naming the record, or `true`).
    pub marked: bool,
    /// Every op of these kinds (e.g. [`OpKind::LdMatrix`]).
    pub kinds: Vec<OpKind>,
}

impl ProbeSpec {
    /// Record nothing.
    pub fn none() -> ProbeSpec {
        ProbeSpec { marked: false, kinds: Vec::new() }
    }

    /// Record the ops marked with a `probe` attribute (the default).
    pub fn marked() -> ProbeSpec {
        ProbeSpec { marked: true, kinds: Vec::new() }
    }

    /// Record marked ops and every op of these kinds.
    pub fn with_kinds(kinds: &[OpKind]) -> ProbeSpec {
        ProbeSpec { marked: true, kinds: kinds.to_vec() }
    }
}

impl Default for ProbeSpec {
    fn default() -> ProbeSpec {
        ProbeSpec::marked()
    }
}

/// Options of [`simulate_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// The most warp-operations the launch may execute.
    pub fuel: u64,
    pub probes: ProbeSpec,
    /// Report data races between the warps of a block ([`race`]): on by default.
    pub race_detection: bool,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions { fuel: DEFAULT_FUEL, probes: ProbeSpec::default(), race_detection: true }
    }
}

/// The per-lane values of one op's result, recorded when one warp executed it once.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub op: OpId,
    /// The `probe` attribute's string, else the result's source name, else the op's name.
    pub name: String,
    pub span: Span,
    pub block: [u32; 3],
    pub warp: u32,
    /// The recorded value's type (a scalar or a vector).
    pub ty: Type,
    /// For each lane 0..32, its value's elements in order (one for a scalar), or `None` when inactive.
    pub lanes: Vec<Option<Vec<f64>>>,
}

impl Probe {
    /// A lane's elements grouped into 32-bit registers (two f16 per register, one f32, four i8, ...).
    pub fn registers(&self, lane: usize) -> Option<Vec<Vec<f64>>> {
        let values = self.lanes.get(lane)?.as_ref()?;
        let per_reg = (32 / self.ty.element_type().bit_width().clamp(1, 32)).max(1) as usize;
        Some(values.chunks(per_reg).map(<[f64]>::to_vec).collect())
    }

    /// `lane 0: r0 = 1 3, r1 = 4 7` for each lane, one line each (inactive lanes say so).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for lane in 0..self.lanes.len() {
            let _ = write!(out, "lane {lane}:");
            match self.registers(lane) {
                None => out.push_str(" inactive"),
                Some(regs) => {
                    for (r, values) in regs.iter().enumerate() {
                        let sep = if r == 0 { " " } else { ", " };
                        let text: Vec<String> = values.iter().map(|v| format_value(*v)).collect();
                        let _ = write!(out, "{sep}r{r} = {}", text.join(" "));
                    }
                }
            }
            out.push('\n');
        }
        out
    }
}

/// A number as the seed documents print it: integers without a fraction.
fn format_value(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// What a simulation observed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimTrace {
    /// The recorded results, in execution order.
    pub probes: Vec<Probe>,
    /// Warp-operations executed (the fuel used).
    pub warp_ops: u64,
    /// Thread blocks run.
    pub blocks: u64,
}

impl SimTrace {
    /// The records with this name.
    pub fn probes_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Probe> + 'a {
        self.probes.iter().filter(move |p| p.name == name)
    }

    /// Every record as a header (`probe "r" (vector<4x2xf16>) in block (0, 0, 0), warp 0`) and its lanes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for p in &self.probes {
            let [x, y, z] = p.block;
            let _ = writeln!(out, "probe \"{}\" ({}) in block ({x}, {y}, {z}), warp {}", p.name, p.ty, p.warp);
            out.push_str(&p.render());
        }
        out
    }
}

/// The function's `num_warps` attribute ([`crate::KernelAttrs`], default 4 as everywhere; a malformed one,
/// which the verifier reports, counts as the default).
pub fn num_warps(func: &Func) -> u32 {
    crate::KernelAttrs::of(func).map_or(crate::ops::kernel::DEFAULT_NUM_WARPS, |a| a.num_warps.clamp(0, 32))
}

/// Runs `func` on the launch's grid with the default options (marked ops probed). Global tiles in `args` are
/// updated in place.
pub fn simulate(func: &Func, args: &mut [SimArg], launch: &Launch) -> Result<SimTrace, SimError> {
    simulate_with(func, args, launch, &SimOptions::default())
}

/// Runs `func` on the launch's grid. Global tiles in `args` are updated in place; on error they hold what
/// was written before it.
pub fn simulate_with(func: &Func, args: &mut [SimArg], launch: &Launch, options: &SimOptions) -> Result<SimTrace, SimError> {
    exec::run(func, args, launch, options)
}

/// Arguments for a kernel whose tiles all have static shapes (or whose `?` extents are given in
/// `dynamic`, in order of appearance): inputs filled by [`TensorData::random`] from `seed`, scalars 0.
pub fn random_args(func: &Func, dynamic: &[usize], seed: u64) -> Result<Vec<SimArg>, SimError> {
    let mut dynamic = dynamic.iter().copied();
    let mut args = Vec::new();
    for (i, &arg) in func.args().iter().enumerate() {
        match func.body.ty(arg) {
            Type::Tile(t) => {
                let mut shape = Vec::new();
                for d in &t.shape {
                    match d {
                        Dim::Static(n) => shape.push(*n as usize),
                        Dim::Dynamic => shape.push(dynamic.next().ok_or_else(|| SimError::Arguments {
                            span: func.body.value(arg).span.to(func.span),
                            message: format!("argument #{i} has a '?' extent and no size was given for it"),
                        })?),
                    }
                }
                args.push(SimArg::Tile(TensorData::random(&shape, t.elem, seed.wrapping_add(i as u64))));
            }
            Type::Scalar(ScalarType::Index) | Type::Scalar(_) => args.push(SimArg::Scalar(0.0)),
            Type::Vector(_) => {
                return Err(SimError::Arguments { span: func.span, message: format!("argument #{i} is a vector") });
            }
        }
    }
    Ok(args)
}
