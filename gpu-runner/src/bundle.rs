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
//!
//! A timing bundle (`tilec bundle --generate`) carries no data at all, so it travels at any size: every buffer
//! is `{"random": {"elem": "f16", "count": N, "seed": 1, "stream": 0}, "tensor": {...}}`, made where it runs
//! (seeded, uniform in [-1, 1)), and `repeat` / `warmup` / `flops` ask the runner for the median time of
//! `repeat` launches, each between CUDA events, and the throughput. Every buffer names the kernel argument it
//! holds ([`TensorDesc`]: name, element type, logical shape, layout), so that other harnesses (the PyTorch
//! comparison, `scripts/bench_attention.py`) can lay out their own tensors for the same launch.

use serde::{Deserialize, Serialize};

/// One kernel launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bundle {
    /// PTX file, relative to the bundle directory.
    pub ptx: String,
    /// The kernel's name in the PTX.
    pub kernel: String,
    /// The grid: the launch grid, or for a `persistent` kernel its logical grid (see [`crate::persistent`]).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// A persistent kernel: launched as P blocks along x ([`crate::persistent::launch_grid`]); its hidden
    /// grid arguments are among `params`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
    /// Dynamic shared memory bytes (above 48 KiB the launcher raises the kernel's limit).
    #[serde(default)]
    pub shared_bytes: u32,
    /// When positive: launch this many extra times, each between two CUDA events, and report the median time.
    #[serde(default)]
    pub repeat: u32,
    /// Untimed launches before the timed ones (after the first, checked one).
    #[serde(default)]
    pub warmup: u32,
    /// Floating-point operations one launch does, for the throughput figure (none: time only).
    #[serde(default)]
    pub flops: Option<f64>,
    /// Where the kernel came from (source file, backend, target), for the report.
    #[serde(default)]
    pub label: String,
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
    /// Which kernel argument the buffer holds (absent in bundles written before this field existed). Boxed:
    /// it is the largest field, and [`Param`]'s other variants are one number.
    #[serde(default)]
    pub tensor: Option<Box<TensorDesc>>,
}

/// The kernel argument a buffer holds, as the kernel's signature and the launch's shapes give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorDesc {
    /// The argument's name in the source, without `%`.
    pub name: String,
    /// Element type, the IR's name (`f16`, `f32`, ...).
    pub elem: String,
    /// The logical shape of this launch.
    pub shape: Vec<u64>,
    /// `row_major`, or `col_major` for a `#col_major` global tile (the last two axes stored transposed).
    pub layout: String,
}

/// Pseudo-random contents: `count` elements of `elem` (`f16`, `bf16`, `f32`, `i8`), uniform in [-1, 1) for
/// floats and in -8..8 for integers ([`crate::bench::data::random_bytes`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomFill {
    pub elem: String,
    pub count: usize,
    /// The run's seed; absent: one fixed state for every buffer (what bundles written before it hold).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Which stream of the seed (the argument's index): buffers of one seed get unrelated contents.
    #[serde(default)]
    pub stream: u64,
}

impl RandomFill {
    /// The little-endian bytes, or `None` for an element type it does not know.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        use crate::bench::data;
        let elem = crate::bench::spec::Elem::from_name(&self.elem)?;
        let state = self.seed.map_or(data::DEFAULT_STATE, |seed| data::state_for(seed, self.stream));
        Some(data::random_bytes(elem, self.count, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(seed: Option<u64>, stream: u64) -> RandomFill {
        RandomFill { elem: "f16".into(), count: 1000, seed, stream }
    }

    fn halves(bytes: &[u8]) -> Vec<f64> {
        (0..bytes.len() / 2).map(|i| crate::bench::data::value(crate::bench::Elem::F16, bytes, i)).collect()
    }

    #[test]
    fn fills_are_deterministic_per_seed_and_stream_and_in_range() {
        let a = fill(Some(7), 0).bytes().unwrap();
        assert_eq!(a.len(), 2000);
        assert_eq!(a, fill(Some(7), 0).bytes().unwrap(), "same seed and stream, same contents");
        assert_ne!(a, fill(Some(7), 1).bytes().unwrap(), "another stream (argument) differs");
        assert_ne!(a, fill(Some(8), 0).bytes().unwrap(), "another seed differs");
        // No seed: the fixed state of older bundles, the same for every stream.
        assert_eq!(fill(None, 0).bytes().unwrap(), fill(None, 3).bytes().unwrap());
        let values = halves(&a);
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)), "uniform in [-1, 1)");
        // Not degenerate: both signs, and a mean near 0 (1000 draws: |mean| < 0.1 with a wide margin).
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!(values.iter().any(|&v| v < -0.5) && values.iter().any(|&v| v > 0.5) && mean.abs() < 0.1, "mean {mean}");
        assert!(RandomFill { elem: "f64".into(), ..fill(Some(1), 0) }.bytes().is_none());
    }

    #[test]
    fn a_timing_bundle_parses_and_older_bundles_still_do() {
        let text = r#"{"ptx": "kernel.ptx", "kernel": "attention_fwd", "grid": [64, 1, 128], "block": [128, 1, 1],
            "shared_bytes": 0, "repeat": 20, "warmup": 3, "flops": 1.5e12, "label": "examples/attention_fwd.tir",
            "params": [{"buffer": {"random": {"elem": "f16", "count": 8, "seed": 1, "stream": 0},
                                   "tensor": {"name": "Q", "elem": "f16", "shape": [1, 2, 4], "layout": "row_major"}}},
                       {"i64": 2}]}"#;
        let b: Bundle = serde_json::from_str(text).unwrap();
        assert_eq!((b.repeat, b.warmup, b.flops), (20, 3, Some(1.5e12)));
        let Param::Buffer(q) = &b.params[0] else { panic!("a buffer") };
        assert_eq!(q.random, Some(RandomFill { elem: "f16".into(), count: 8, seed: Some(1), stream: 0 }));
        assert_eq!(q.tensor.as_ref().map(|t| (t.name.as_str(), t.shape.clone())), Some(("Q", vec![1, 2, 4])));
        let old = r#"{"ptx": "k.ptx", "kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1],
            "params": [{"buffer": {"random": {"elem": "f32", "count": 4}}}]}"#;
        let b: Bundle = serde_json::from_str(old).unwrap();
        assert_eq!((b.repeat, b.warmup, b.flops, b.label.as_str()), (0, 0, None, ""));
        let Param::Buffer(x) = &b.params[0] else { panic!("a buffer") };
        assert_eq!((x.random.as_ref().map(|r| r.seed), &x.tensor), (Some(None), &None));
    }
}
