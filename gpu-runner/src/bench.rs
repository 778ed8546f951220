//! `tilec bench` / `tilec-gpu-runner bench`: a GEMM kernel timed against cuBLAS in the same process, on the
//! same inputs, with the kernel's result checked against cuBLAS's.
//!
//! For one [`BenchBundle`] (one shape): A, B and C are made on the host from the bundle's seed (uniform in
//! [-1, 1) rounded to the type; int8 in -8..8) and uploaded once. Both sides first run once from the same
//! initial C (so kernels with `beta` are compared on equal terms) and the results are compared
//! ([`check`]). Then each side runs `warmup` untimed launches and `repeat` timed ones, every launch between
//! its own pair of CUDA events; the report gives the median (and the JSON record the minimum too).
//! Throughput is `2 M N K / time` — TF/s, or TOP/s for int8. What cuBLAS cannot do is reported as such.

pub mod check;
pub mod cublas;
pub mod data;
pub mod spec;

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use serde::Serialize;

pub use crate::bench::cublas::Cublas;
pub use crate::bench::spec::{BenchBundle, BenchParam, Elem, GemmSpec, MatrixLayout, Operand, Role, BENCH_JSON};
use crate::RunError;

/// Median and minimum of the timed launches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub launches: u32,
}

/// One benchmarked shape: what `--json` appends (one JSON object per line).
#[derive(Clone, Debug, Serialize)]
pub struct BenchRecord {
    pub kernel: String,
    pub label: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: String,
    pub b: String,
    pub c: String,
    pub a_layout: MatrixLayout,
    pub b_layout: MatrixLayout,
    pub c_layout: MatrixLayout,
    pub alpha: Option<f32>,
    pub beta: Option<f32>,
    /// `TF/s`, or `TOP/s` for integer GEMMs.
    pub unit: String,
    pub warmup: u32,
    pub repeat: u32,
    pub tilec_ms: f64,
    pub tilec_ms_min: f64,
    pub tilec_tflops: f64,
    pub cublas_ms: Option<f64>,
    pub cublas_ms_min: Option<f64>,
    pub cublas_tflops: Option<f64>,
    /// tilec's throughput over cuBLAS's.
    pub ratio: Option<f64>,
    /// `ok`, `failed`, or `not checked` (cuBLAS could not compute this GEMM).
    pub check: String,
    pub check_detail: String,
    pub max_abs_err: Option<f64>,
    /// The largest error as a fraction of its tolerance (see [`check`]).
    pub worst_fraction: Option<f64>,
    /// How cuBLAS was called when not in the plain form, or why it was not.
    pub cublas_note: Option<String>,
    pub gpu: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// The outcome of one shape.
#[derive(Clone, Debug)]
pub struct BenchOutcome {
    /// The report line, e.g. `gemm 4096x4096x4096 f16*f16->f32: tilec 0.372 ms 369.4 TF/s | cuBLAS ...`.
    pub line: String,
    pub record: BenchRecord,
}

impl BenchOutcome {
    /// False when the results differ beyond the tolerance (not when cuBLAS could not run).
    pub fn passed(&self) -> bool {
        self.record.check != "failed"
    }
}

/// Reads `DIR/bench.json` and the PTX it names.
pub fn read_bundle(dir: &Path) -> Result<(BenchBundle, String), RunError> {
    let path = dir.join(BENCH_JSON);
    let text = std::fs::read(&path).map_err(|e| RunError::Bundle(format!("{}: {e}", path.display())))?;
    let bundle: BenchBundle =
        serde_json::from_slice(&text).map_err(|e| RunError::Bundle(format!("{}: {e}", path.display())))?;
    let ptx_path = dir.join(&bundle.ptx);
    let ptx = std::fs::read_to_string(&ptx_path).map_err(|e| RunError::Bundle(format!("{}: {e}", ptx_path.display())))?;
    Ok((bundle, ptx))
}

/// Appends one record as a JSON line to `path`.
pub fn append_json(path: &Path, record: &BenchRecord) -> Result<(), RunError> {
    let line = serde_json::to_string(record).map_err(|e| RunError::Bundle(format!("JSON: {e}")))?;
    let fail = |e: std::io::Error| RunError::Bundle(format!("{}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(fail)?;
    writeln!(file, "{line}").map_err(fail)
}

/// `tilec-gpu-runner bench DIR... [--json FILE]`: every bench bundle in order on GPU 0, one line each.
/// A bundle that fails to run or to check is reported and the others still run; the result is an error if any did.
pub fn run_dirs(dirs: &[PathBuf], json: Option<&Path>) -> Result<(), RunError> {
    let ctx = open_bench_gpu()?;
    let stream = ctx.default_stream();
    let cublas = Cublas::new(&stream)?;
    let mut failed = 0;
    let mut poisoned: Option<&Path> = None;
    for dir in dirs {
        if let Some(culprit) = poisoned {
            // A kernel fault (misaligned or illegal address, ...) is sticky: every later call on this context
            // fails with it, so later bundles would report the earlier bundle's fault as their own.
            failed += 1;
            eprintln!(
                "{}: not run: the GPU context is unusable after the fault in {}; run this bundle in a separate process",
                dir.display(),
                culprit.display()
            );
            continue;
        }
        let outcome = read_bundle(dir).and_then(|(bundle, ptx)| run(&ctx, &stream, &cublas, &bundle, ptx));
        if outcome.is_err() && stream.synchronize().is_err() {
            poisoned = Some(dir);
        }
        match outcome {
            Ok(outcome) => {
                println!("{}", outcome.line);
                if !outcome.passed() {
                    failed += 1;
                }
                if let Some(path) = json {
                    append_json(path, &outcome.record)?;
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("{}: error: {e}", dir.display());
            }
        }
    }
    if failed > 0 {
        return Err(RunError::Bundle(format!("{failed} of {} bench bundle(s) failed to run or to check", dirs.len())));
    }
    Ok(())
}

/// GPU 0, for benchmarking: with cudarc's per-buffer event tracking off, so nothing but the kernels runs
/// between the timing events (one stream only, so there is nothing to synchronise).
pub fn open_bench_gpu() -> Result<Arc<CudaContext>, RunError> {
    let ctx = crate::open_gpu()?;
    // SAFETY: the bench uses the default stream alone.
    unsafe { ctx.disable_event_tracking() };
    Ok(ctx)
}

/// A kernel argument, resolved.
enum Arg {
    Pointer(Role),
    I64(i64),
    F32(f32),
    TensorMap(crate::tensor_map::TensorMapArg),
}

fn cuda(what: &str) -> impl Fn(cudarc::driver::DriverError) -> RunError + '_ {
    move |e| RunError::Cuda(format!("{what}: {e:?}"))
}

/// Times `launch`: `warmup` untimed calls, then `repeat` calls each between two events.
pub(crate) fn time(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, warmup: u32, repeat: u32, mut launch: impl FnMut() -> Result<(), RunError>) -> Result<Timing, RunError> {
    for _ in 0..warmup {
        launch()?;
    }
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut events = Vec::new();
    for _ in 0..repeat.max(1) {
        events.push((ctx.new_event(flags).map_err(cuda("cuEventCreate"))?, ctx.new_event(flags).map_err(cuda("cuEventCreate"))?));
    }
    for (start, end) in &events {
        start.record(stream).map_err(cuda("cuEventRecord"))?;
        launch()?;
        end.record(stream).map_err(cuda("cuEventRecord"))?;
    }
    stream.synchronize().map_err(cuda("the timed launches failed"))?;
    let mut times = Vec::new();
    for (start, end) in &events {
        times.push(f64::from(start.elapsed_ms(end).map_err(cuda("cuEventElapsedTime"))?));
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    Ok(Timing { median_ms: median, min_ms: times[0], launches: times.len() as u32 })
}

/// Runs one bench bundle: our kernel and cuBLAS on the same inputs, checked, then timed (cuBLAS's int8 on
/// zero-padded copies when M, N or K is not a multiple of 4, which it needs).
pub fn run(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, cublas: &Cublas, bundle: &BenchBundle, ptx: String) -> Result<BenchOutcome, RunError> {
    let g = &bundle.gemm;
    g.validate().map_err(RunError::Bundle)?;
    let fail = |message: String| RunError::Launch { kernel: bundle.kernel.clone(), message };
    let function = crate::load_kernel(ctx, ptx, &bundle.kernel, bundle.shared_bytes)?;

    // Inputs, from the seed.
    let count = |role| g.elements(role).ok_or_else(|| RunError::Bundle(format!("{role:?} is too large")));
    let host_a = data::random_bytes(g.a.elem, count(Role::A)?, data::state_for(bundle.seed, 0));
    let host_b = data::random_bytes(g.b.elem, count(Role::B)?, data::state_for(bundle.seed, 1));
    let host_c0 = data::random_bytes(g.c.elem, count(Role::C)?, data::state_for(bundle.seed, 2));
    let upload = |bytes: &[u8]| stream.clone_htod(bytes).map_err(|e| fail(format!("upload failed: {e:?}")));
    let dev_a = upload(&host_a)?;
    let dev_b = upload(&host_b)?;
    let dev_c = upload(&host_c0)?;

    // The kernel's parameters.
    let mut args = Vec::new();
    for p in &bundle.params {
        args.push(match p {
            BenchParam::Pointer(role) => Arg::Pointer(*role),
            BenchParam::Extent { of, axis } => {
                let (rows, cols) = g.shape(*of);
                let extent = match axis {
                    0 => rows,
                    1 => cols,
                    _ => return Err(RunError::Bundle(format!("{of:?} has no axis {axis}"))),
                };
                Arg::I64(extent as i64)
            }
            BenchParam::Alpha => Arg::F32(g.alpha.ok_or_else(|| RunError::Bundle("the kernel takes alpha but the bundle gives none".into()))?),
            BenchParam::Beta => Arg::F32(g.beta.ok_or_else(|| RunError::Bundle("the kernel takes beta but the bundle gives none".into()))?),
            BenchParam::LogicalGrid(axis) => {
                Arg::I64(i64::from(*bundle.grid.get(*axis).ok_or_else(|| RunError::Bundle(format!("the grid has no axis {axis}")))?))
            }
            BenchParam::TensorMap { of, data_type, box_shape, swizzle, transposed } => {
                let (rows, cols) = g.shape(*of);
                let op = g.operand(*of);
                // The map's tensor is the matrix's memory as row-major: its transpose when column-major.
                let shape = match (op.layout, transposed) {
                    (MatrixLayout::RowMajor, false) => vec![rows, cols],
                    (MatrixLayout::ColMajor, true) => vec![cols, rows],
                    (layout, _) => {
                        return Err(RunError::Bundle(format!("a tensor map over {of:?} ({layout:?}) that is{} transposed", if *transposed { "" } else { " not" })))
                    }
                };
                let param = crate::tensor_map::TensorMapParam {
                    buffer: 0,
                    data_type: *data_type,
                    elem_bytes: op.elem.bytes() as u32,
                    shape,
                    box_shape: box_shape.clone(),
                    swizzle: swizzle.clone(),
                };
                let args = crate::tensor_map::encode_args(&param).map_err(|m| fail(format!("tensor map: {m}")))?;
                let buffer = match of {
                    Role::A => &dev_a,
                    Role::B => &dev_b,
                    Role::C => &dev_c,
                };
                let (address, _sync) = cudarc::driver::DevicePtr::device_ptr(buffer, stream);
                Arg::TensorMap(crate::tensor_map::encode(&args, address).map_err(|m| fail(format!("tensor map: {m}")))?)
            }
        });
    }
    let grid = crate::persistent::launch_grid(ctx, &function, bundle.persistent, bundle.grid, bundle.block, bundle.shared_bytes).map_err(fail)?;
    let cfg = LaunchConfig {
        grid_dim: (grid[0], grid[1], grid[2]),
        block_dim: (bundle.block[0], bundle.block[1], bundle.block[2]),
        shared_mem_bytes: bundle.shared_bytes,
    };
    let launch_ours = |c: &CudaSlice<u8>| -> Result<(), RunError> {
        let mut builder = stream.launch_builder(&function);
        for arg in &args {
            match arg {
                Arg::Pointer(Role::A) => builder.arg(&dev_a),
                Arg::Pointer(Role::B) => builder.arg(&dev_b),
                Arg::Pointer(Role::C) => builder.arg(c),
                Arg::I64(v) => builder.arg(v),
                Arg::F32(v) => builder.arg(v),
                Arg::TensorMap(map) => builder.arg(map),
            };
        }
        // SAFETY: the parameter list is the kernel's signature as the compiler recorded it in the bundle, and
        // the buffers have the sizes of the GEMM's matrices.
        unsafe { builder.launch(cfg) }.map(|_| ()).map_err(|e| fail(format!("launch failed: {e:?}")))
    };

    // Correctness: one run each from the same initial C.
    launch_ours(&dev_c)?;
    stream.synchronize().map_err(|e| fail(format!("the kernel failed: {e:?}")))?;
    let ours: Vec<u8> = stream.clone_dtoh(&dev_c).map_err(|e| fail(format!("download failed: {e:?}")))?;

    let (alpha, beta) = (g.alpha.unwrap_or(1.0), g.beta.unwrap_or(0.0));
    // cuBLAS's int8 GEMM needs extents that are multiples of 4: it gets zero-padded copies then (zeros add
    // nothing to the sums), and its C is cropped back; the padded GEMM is what is timed.
    let padded = g.integer() && [g.m, g.n, g.k].iter().any(|x| x % 4 != 0);
    let (cg, ca, cb, cc0) = if padded {
        let up = |x: u64| x.div_ceil(4) * 4;
        let pg = GemmSpec { m: up(g.m), n: up(g.n), k: up(g.k), ..g.clone() };
        let pad = |role: Role, bytes: &[u8]| {
            let (r, c) = g.shape(role);
            let (pr, pc) = pg.shape(role);
            let op = g.operand(role);
            data::pad(bytes, (r as usize, c as usize), (pr as usize, pc as usize), op.elem.bytes(), op.layout)
        };
        (pg.clone(), Cow::Owned(pad(Role::A, &host_a)), Cow::Owned(pad(Role::B, &host_b)), Cow::Owned(pad(Role::C, &host_c0)))
    } else {
        (g.clone(), Cow::Borrowed(host_a.as_slice()), Cow::Borrowed(host_b.as_slice()), Cow::Borrowed(host_c0.as_slice()))
    };
    let plan = cublas::plan(&cg);
    let mut cublas_note = plan.as_ref().err().map(|why| format!("cuBLAS not run: {why}"));
    let mut reference = None;
    let mut cublas_timing = None;
    if let Ok(plan) = &plan {
        cublas_note = match (&plan.note, padded) {
            (Some(n), true) => Some(format!("{n}; M, N, K padded with zeros to {}x{}x{} for cuBLAS's int8", cg.m, cg.n, cg.k)),
            (None, true) => Some(format!("M, N, K padded with zeros to {}x{}x{} for cuBLAS's int8", cg.m, cg.n, cg.k)),
            (note, false) => note.clone(),
        };
        // The operands cuBLAS reads: the kernel's buffers, or copies (int8's TN form, padded extents).
        let operand = |o: &cublas::PlanOperand| -> Result<Option<CudaSlice<u8>>, RunError> {
            let bytes = if o.role == Role::A { &ca } else { &cb };
            if !o.transposed_copy {
                return if padded { upload(bytes).map(Some) } else { Ok(None) };
            }
            let (rows, cols) = cg.shape(o.role);
            let op = cg.operand(o.role);
            let (lines, len) = data::storage(op.layout, rows as usize, cols as usize);
            upload(&data::transpose(bytes, lines, len, op.elem.bytes())).map(Some)
        };
        let first_copy = operand(&plan.first)?;
        let second_copy = operand(&plan.second)?;
        let ptr = |role: Role, copy: &Option<CudaSlice<u8>>| -> u64 {
            match (copy, role) {
                (Some(buf), _) => buf.device_ptr(stream).0,
                (None, Role::A) => dev_a.device_ptr(stream).0,
                (None, _) => dev_b.device_ptr(stream).0,
            }
        };
        let (first, second) = (ptr(plan.first.role, &first_copy), ptr(plan.second.role, &second_copy));
        let dev_ref = upload(&cc0)?;
        let c_ptr = dev_ref.device_ptr(stream).0;
        // SAFETY: live allocations of this context holding the matrices the plan names, with the plan's sizes.
        let call = || unsafe { cublas.gemm(plan, first, second, c_ptr, alpha, beta) };
        match call() {
            Ok(()) => {
                stream.synchronize().map_err(|e| fail(format!("cuBLAS failed: {e:?}")))?;
                let c: Vec<u8> = stream.clone_dtoh(&dev_ref).map_err(|e| fail(format!("download failed: {e:?}")))?;
                reference = Some(if padded {
                    let (pr, pc) = cg.shape(Role::C);
                    data::crop(&c, (pr as usize, pc as usize), (g.m as usize, g.n as usize), g.c.elem.bytes(), g.c.layout)
                } else {
                    c
                });
                cublas_timing = Some(time(ctx, stream, bundle.warmup, bundle.repeat, || {
                    call().map_err(|e| fail(format!("cuBLAS failed: {e}")))
                })?);
            }
            Err(status) => {
                cublas_note = Some(format!("cuBLAS refused this GEMM: {status}"));
            }
        }
    }

    let report = reference.as_ref().map(|r: &Vec<u8>| check::compare(g, &host_a, &host_b, &host_c0, &ours, r));
    let ours_timing = time(ctx, stream, bundle.warmup, bundle.repeat, || launch_ours(&dev_c))?;

    // The report.
    let integer = g.integer();
    let unit = if integer { "TOP/s" } else { "TF/s" };
    let rate = |t: &Timing| g.ops() / (t.median_ms * 1e-3) / 1e12;
    let mut line = format!(
        "{} {}x{}x{} {}{}: tilec {:.3} ms {:.1} {unit}",
        bundle.kernel,
        g.m,
        g.n,
        g.k,
        g.types(),
        g.layouts(),
        ours_timing.median_ms,
        rate(&ours_timing)
    );
    match &cublas_timing {
        Some(t) => line.push_str(&format!(
            " | cuBLAS {:.3} ms {:.1} {unit} | ratio {:.2}",
            t.median_ms,
            rate(t),
            rate(&ours_timing) / rate(t)
        )),
        None => line.push_str(" | cuBLAS: none"),
    }
    let (check, detail) = match &report {
        Some(r) => (if r.ok() { "ok" } else { "failed" }, r.summary(integer)),
        None => ("not checked", "no cuBLAS result to check against".to_string()),
    };
    line.push_str(&format!(" | check {}", if report.is_some() { detail.clone() } else { "not done".into() }));
    if let Some(note) = &cublas_note {
        line.push_str(&format!(" [{note}]"));
    }
    let record = BenchRecord {
        kernel: bundle.kernel.clone(),
        label: bundle.label.clone(),
        m: g.m,
        n: g.n,
        k: g.k,
        a: g.a.elem.name().into(),
        b: g.b.elem.name().into(),
        c: g.c.elem.name().into(),
        a_layout: g.a.layout,
        b_layout: g.b.layout,
        c_layout: g.c.layout,
        alpha: g.alpha,
        beta: g.beta,
        unit: unit.into(),
        warmup: bundle.warmup,
        repeat: bundle.repeat,
        tilec_ms: ours_timing.median_ms,
        tilec_ms_min: ours_timing.min_ms,
        tilec_tflops: rate(&ours_timing),
        cublas_ms: cublas_timing.map(|t| t.median_ms),
        cublas_ms_min: cublas_timing.map(|t| t.min_ms),
        cublas_tflops: cublas_timing.as_ref().map(rate),
        ratio: cublas_timing.as_ref().map(|t| rate(&ours_timing) / rate(t)),
        check: check.into(),
        check_detail: detail,
        max_abs_err: report.as_ref().map(|r| r.max_abs_err),
        worst_fraction: report.as_ref().map(|r| r.worst_fraction),
        cublas_note,
        gpu: ctx.name().unwrap_or_else(|e| format!("unknown GPU ({e:?})")),
        grid,
        block: bundle.block,
    };
    Ok(BenchOutcome { line, record })
}
