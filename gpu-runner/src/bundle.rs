//! The launch bundle: everything needed to run one kernel, written by `tilec` on the build machine.
//!
//! `bundle.json` sits in a directory beside the PTX and the input files:
//! ```json
//! {
//!   "ptx": "kernel.ptx",
//!   "kernel": "gemm",
//!   "grid": [2, 2, 1],
//!   "block": [128, 1, 1],
//!   "shared_bytes": 16384,
//!   "repeat": 0,
//!   "params": [
//!     {"buffer": {"input": "A.bin", "output": null}},
//!     {"buffer": {"zeros": 262144, "output": "C.out.bin"}},
//!     {"i64": 256},
//!     {"f32": 1.5},
//!     {"tensormap": {"buffer": 0, "data_type": 6, "elem_bytes": 2, "shape": [100, 72], "box": [64, 64], "swizzle": "128b"}}
//!   ]
//! }
//! ```
//! Buffers are raw little-endian device bytes ([`tilec_ir::data::TensorData::to_le_bytes`] on the other side).

use serde::{Deserialize, Serialize};

/// One kernel launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bundle {
    /// PTX file, relative to the bundle directory.
    pub ptx: String,
    /// The kernel's name in the PTX.
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory bytes (above 48 KiB the launcher raises the kernel's limit).
    #[serde(default)]
    pub shared_bytes: u32,
    /// When positive: launch this many extra times and report the median time.
    #[serde(default)]
    pub repeat: u32,
    /// Kernel parameters in order.
    pub params: Vec<Param>,
}

/// A kernel parameter.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Param {
    /// A device buffer: filled from a file or with zeros, optionally copied back to a file after the run.
    Buffer(Buffer),
    I32(i32),
    I64(i64),
    F32(f32),
    /// A TMA tensor map over a buffer parameter, encoded at launch (`crate::tensor_map`).
    #[serde(rename = "tensormap")]
    TensorMap(crate::tensor_map::TensorMapParam),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Buffer {
    /// Initial contents, a file relative to the bundle directory.
    #[serde(default)]
    pub input: Option<String>,
    /// Or this many zero bytes.
    #[serde(default)]
    pub zeros: Option<usize>,
    /// Or pseudo-random values made here (for timing runs whose inputs are too big to carry).
    #[serde(default)]
    pub random: Option<RandomFill>,
    /// Where to write the contents after the run.
    #[serde(default)]
    pub output: Option<String>,
}

/// Pseudo-random contents: `count` elements of `elem` (`f16`, `bf16`, `f32`, `i8`), uniform in [-1, 1) for
/// floats and in -8..8 for integers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RandomFill {
    pub elem: String,
    pub count: usize,
}

impl RandomFill {
    /// The little-endian bytes, or `None` for an element type it does not know.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        let elem = crate::bench::spec::Elem::from_name(&self.elem)?;
        Some(crate::bench::data::random_bytes(elem, self.count, crate::bench::data::DEFAULT_STATE))
    }
}
