//! tilec's GPU launcher: runs a [`Bundle`] (PTX compiled elsewhere, raw input buffers, launch configuration) with
//! the CUDA driver, opened at run time, and writes the output buffers back. No LLVM and no MLIR: the binary is
//! under 1 MB, so it can be carried to a GPU machine. Checking the numbers is `tilec`'s job.
//!
//! Any bundle can be timed: with `repeat` set, the runner launches it `warmup` times untimed and `repeat` times
//! each between two CUDA events (as [`bench`] does), and reports the median and, given the bundle's `flops`,
//! the throughput ([`RunRecord`], one JSON line each with `--json`). A timing bundle's inputs are made here
//! from its seed, so that it carries no data at any size (`tilec bundle --generate`).
//!
//! [`bench`] times a GEMM kernel against cuBLAS (opened at run time as well) on inputs made on the GPU
//! machine, and checks the kernel's result against cuBLAS's. [`tune`] runs the candidate configurations of one
//! kernel that way and ranks them (`tilec tune`).

pub mod bench;
pub mod bundle;
pub mod persistent;
pub mod tensor_map;
pub mod tune;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
/// The driver's context and stream types, for callers of [`bench::run`] and [`run_bundle`].
pub use cudarc::driver::{CudaContext, CudaStream};
use cudarc::nvrtc::Ptx;

pub use crate::bundle::{Buffer, Bundle, Param, RandomFill, TensorDesc};

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Bundle(String),
    #[error("no usable GPU: {0} (run `tilec sim` to check numerics on the CPU)")]
    NoGpu(String),
    /// libcublas is missing or unusable (the bench needs it; plain bundles do not).
    #[error("{0}")]
    NoCublas(String),
    #[error("{kernel}: {message}")]
    Launch { kernel: String, message: String },
    /// A CUDA driver call other than a launch failed (events, streams).
    #[error("CUDA: {0}")]
    Cuda(String),
}

impl RunError {
    /// 2 for a missing GPU, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if matches!(self, RunError::NoGpu(_) | RunError::NoCublas(_)) { 2 } else { 1 }
    }
}

/// What one bundle run gave: a JSON line of `tilec-gpu-runner --json FILE DIR...`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// The bundle directory.
    pub bundle: String,
    pub kernel: String,
    pub label: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// The kernel arguments' names and shapes (`Q=128x4096x64`), from the buffers' descriptions.
    pub shapes: Vec<String>,
    pub warmup: u32,
    /// Timed launches (0: the bundle was run once, not timed).
    pub launches: u32,
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    /// The bundle's `flops` over the median time, in TF/s.
    pub tflops: Option<f64>,
    pub gpu: String,
}

impl RunRecord {
    /// The report line after the directory: `ok`, or `ok, median 1.234 ms (min 1.2) over 20 launches, 345.6 TF/s`.
    pub fn summary(&self) -> String {
        match (self.median_ms, self.min_ms) {
            (Some(median), Some(min)) => {
                let rate = self.tflops.map(|t| format!(", {t:.1} TF/s")).unwrap_or_default();
                format!("ok, median {median:.4} ms (min {min:.4}) over {} launches{rate}", self.launches)
            }
            _ => "ok".into(),
        }
    }
}

/// Runs every bundle directory in order on GPU 0; prints one line per bundle and, with `json`, appends one
/// [`RunRecord`] per bundle that ran.
pub fn run_all(dirs: &[PathBuf], json: Option<&Path>) -> Result<(), RunError> {
    let ctx = bench::open_bench_gpu()?;
    let stream = ctx.default_stream();
    let mut failed = 0;
    for dir in dirs {
        match run_bundle(&ctx, &stream, dir) {
            Ok(record) => {
                println!("{}: {}", dir.display(), record.summary());
                if let Some(path) = json {
                    append_record(path, &record)?;
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("{}: error: {e}", dir.display());
            }
        }
    }
    if failed > 0 {
        return Err(RunError::Bundle(format!("{failed} of {} bundle(s) failed", dirs.len())));
    }
    Ok(())
}

/// Appends one record as a JSON line to `path`.
pub fn append_record(path: &Path, record: &RunRecord) -> Result<(), RunError> {
    use std::io::Write;
    let line = serde_json::to_string(record).map_err(|e| RunError::Bundle(format!("JSON: {e}")))?;
    let fail = |e: std::io::Error| RunError::Bundle(format!("{}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(fail)?;
    writeln!(file, "{line}").map_err(fail)
}

/// Opens GPU 0 through the driver library.
pub fn open_gpu() -> Result<Arc<CudaContext>, RunError> {
    // cudarc panics when libcuda cannot be opened; that is an environment problem, reported as one.
    quietly(|| CudaContext::new(0))
        .map_err(|_| RunError::NoGpu("the CUDA driver library (libcuda.so) could not be loaded".into()))?
        .map_err(|e| RunError::NoGpu(format!("{e:?}")))
}

/// Runs `f`, turning a panic into an error without printing it. cudarc panics when a library it opens at run
/// time is missing (or lacks a symbol); for this program that is a fact about the machine, not a bug.
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(default_hook);
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a library call failed".into())
    })
}

/// Loads `kernel` from PTX text, raising its dynamic shared-memory limit when it needs more than 48 KiB.
pub fn load_kernel(ctx: &Arc<CudaContext>, ptx: String, kernel: &str, shared_bytes: u32) -> Result<CudaFunction, RunError> {
    let fail = |message: String| RunError::Launch { kernel: kernel.to_string(), message };
    let module = ctx.load_module(Ptx::from_src(ptx)).map_err(|e| fail(format!("loading the PTX failed: {e:?}")))?;
    let function = module.load_function(kernel).map_err(|e| fail(format!("no such kernel: {e:?}")))?;
    if shared_bytes > 48 * 1024 {
        use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        let bytes = i32::try_from(shared_bytes).map_err(|_| fail(format!("{shared_bytes} bytes of shared memory")))?;
        function
            .set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)
            .map_err(|e| fail(format!("raising the shared memory limit failed: {e:?}")))?;
    }
    Ok(function)
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, RunError> {
    std::fs::read(dir.join(name)).map_err(|e| RunError::Bundle(format!("{}: {e}", dir.join(name).display())))
}

/// The file name of a bundle's description inside its directory.
pub const BUNDLE_JSON: &str = "bundle.json";

/// Reads `DIR/bundle.json`.
pub fn read_bundle_json(dir: &Path) -> Result<Bundle, RunError> {
    let text = read(dir, BUNDLE_JSON)?;
    serde_json::from_slice(&text).map_err(|e| RunError::Bundle(format!("{}: {e}", dir.join(BUNDLE_JSON).display())))
}

/// Runs one bundle directory: one launch, then, when `repeat` is set, `warmup` untimed and `repeat` timed ones
/// (each between its own pair of CUDA events); writes the output buffers (after all launches) and returns the record.
pub fn run_bundle(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, dir: &Path) -> Result<RunRecord, RunError> {
    let bundle = read_bundle_json(dir)?;
    let ptx = String::from_utf8(read(dir, &bundle.ptx)?).map_err(|_| RunError::Bundle("PTX is not UTF-8".into()))?;
    let fail = |message: String| RunError::Launch { kernel: bundle.kernel.clone(), message };
    let function = load_kernel(ctx, ptx, &bundle.kernel, bundle.shared_bytes)?;
    // Device buffers, in parameter order.
    let mut buffers: Vec<Option<CudaSlice<u8>>> = Vec::new();
    for param in &bundle.params {
        buffers.push(match param {
            Param::Buffer(b) => {
                let bytes = match (&b.input, b.zeros, &b.random) {
                    (Some(file), _, _) => read(dir, file)?,
                    (None, Some(n), _) => vec![0u8; n],
                    (None, None, Some(fill)) => fill
                        .bytes()
                        .ok_or_else(|| RunError::Bundle(format!("cannot make random '{}' elements", fill.elem)))?,
                    (None, None, None) => return Err(RunError::Bundle("a buffer needs `input`, `zeros` or `random`".into())),
                };
                // A zero-length allocation is not allowed: keep one byte.
                let bytes = if bytes.is_empty() { vec![0u8] } else { bytes };
                Some(stream.clone_htod(&bytes).map_err(|e| fail(format!("upload failed: {e:?}")))?)
            }
            _ => None,
        });
    }
    // Tensor maps, over the buffers' device addresses (which stay put for the bundle's launches).
    let mut tensor_maps: Vec<Option<tensor_map::TensorMapArg>> = Vec::new();
    for param in &bundle.params {
        tensor_maps.push(match param {
            Param::TensorMap(t) => {
                let args = tensor_map::encode_args(t).map_err(|m| fail(format!("tensor map: {m}")))?;
                let Some(Some(buffer)) = buffers.get(t.buffer) else {
                    return Err(fail(format!("tensor map: parameter {} is not a buffer", t.buffer)));
                };
                let (address, _sync) = cudarc::driver::DevicePtr::device_ptr(buffer, stream);
                Some(tensor_map::encode(&args, address).map_err(|m| fail(format!("tensor map: {m}")))?)
            }
            _ => None,
        });
    }
    let grid = persistent::launch_grid(ctx, &function, bundle.persistent, bundle.grid, bundle.block, bundle.shared_bytes).map_err(fail)?;
    let cfg = LaunchConfig {
        grid_dim: (grid[0], grid[1], grid[2]),
        block_dim: (bundle.block[0], bundle.block[1], bundle.block[2]),
        shared_mem_bytes: bundle.shared_bytes,
    };
    let launch = |buffers: &Vec<Option<CudaSlice<u8>>>| -> Result<(), RunError> {
        let mut args = stream.launch_builder(&function);
        for ((param, buffer), map) in bundle.params.iter().zip(buffers).zip(&tensor_maps) {
            match (param, buffer) {
                (Param::TensorMap(_), _) => match map {
                    Some(map) => args.arg(map),
                    None => return Err(fail("internal: tensor map missing".into())),
                },
                (Param::I32(v), _) => args.arg(v),
                (Param::I64(v), _) => args.arg(v),
                (Param::F32(v), _) => args.arg(v),
                (Param::Buffer(_), Some(buf)) => args.arg(buf),
                (Param::Buffer(_), None) => return Err(fail("internal: buffer missing".into())),
            };
        }
        // SAFETY: the parameter list is the kernel's signature as recorded by the compiler in the bundle.
        unsafe { args.launch(cfg) }.map_err(|e| fail(format!("launch failed: {e:?}")))?;
        Ok(())
    };
    launch(&buffers)?;
    stream.synchronize().map_err(|e| fail(format!("kernel failed: {e:?}")))?;
    let timing = if bundle.repeat > 0 { Some(bench::time(ctx, stream, bundle.warmup, bundle.repeat, || launch(&buffers))?) } else { None };
    for (param, buffer) in bundle.params.iter().zip(&buffers) {
        if let (Param::Buffer(b), Some(buf)) = (param, buffer) {
            if let Some(out) = &b.output {
                let bytes: Vec<u8> = stream.clone_dtoh(buf).map_err(|e| fail(format!("download failed: {e:?}")))?;
                std::fs::write(dir.join(out), bytes).map_err(|e| RunError::Bundle(format!("{out}: {e}")))?;
            }
        }
    }
    let shapes = tune::argument_shapes(&bundle);
    Ok(RunRecord {
        bundle: dir.display().to_string(),
        kernel: bundle.kernel.clone(),
        label: bundle.label.clone(),
        grid,
        block: bundle.block,
        shared_bytes: bundle.shared_bytes,
        shapes,
        warmup: bundle.warmup,
        launches: timing.map_or(0, |t| t.launches),
        median_ms: timing.map(|t| t.median_ms),
        min_ms: timing.map(|t| t.min_ms),
        tflops: timing.and_then(|t| bundle.flops.map(|f| f / (t.median_ms * 1e-3) / 1e12)),
        gpu: ctx.name().unwrap_or_else(|e| format!("unknown GPU ({e:?})")),
    })
}
