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
//!     {"f32": 1.5}
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
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut out = Vec::new();
        for _ in 0..self.count {
            let u = next();
            match self.elem.as_str() {
                "f16" => out.extend(f32_to_f16_bits((2.0 * u - 1.0) as f32).to_le_bytes()),
                "bf16" => out.extend((((2.0 * u - 1.0) as f32).to_bits() >> 16).to_le_bytes()[..2].iter()),
                "f32" => out.extend(((2.0 * u - 1.0) as f32).to_le_bytes()),
                "i8" => out.push(((u * 16.0).floor() as i8 - 8) as u8),
                _ => return None,
            }
        }
        Some(out)
    }
}

/// f32 to IEEE half bits (round toward zero; inputs here are in [-1, 1)), without a dependency.
fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let man = bits & 0x7f_ffff;
    if exp <= 0 {
        if exp < -10 {
            return sign;
        }
        let man = (man | 0x80_0000) >> (1 - exp);
        return sign | (man >> 13) as u16;
    }
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | ((exp as u16) << 10) | (man >> 13) as u16
}
