//! `tilec bench FILE --shape M,N,K...`: a GEMM kernel against cuBLAS. The compiler and the timing share one
//! library ([`tilec_gpu_runner::bench`]), so the same benchmark runs two ways:
//!
//! - here, on a machine with a GPU: compile, then run each shape in this process (our kernel and cuBLAS on the
//!   same inputs, checked, timed), one line per shape, `--json` records appended;
//! - with `--bundle DIR`, on a machine without one: one small bench bundle per shape (PTX and `bench.json`, no
//!   data: the inputs are made from the seed where they run) for `tilec-gpu-runner bench DIR/*` on the GPU
//!   machine, which has no compiler.
//!
//! Benchmarks are not tests: nothing here runs in CI.

pub mod roles;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use tilec_gpu_runner::bench::{self as runner, BenchBundle, BenchParam, GemmSpec, Role};
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgValue};
use tilec_ir::{Func, ScalarType, Target, Type};
use tilec_lower_ptx::{AbiRole, KernelInfo};

use crate::cli::{Backend, BenchArgs};
use tilec_compiler::{alignment_variant, AlignmentVariant, Compiler, Options};
use crate::commands::interp::select_func;
use crate::error::DriverError;
use crate::target::{parse_target, target_of};
use crate::input::{compile_error, diagnostics, parse_and_verify, read_source};
use roles::GemmRoles;

/// `--shape M,N,K`.
pub fn parse_shape(text: &str) -> Result<[u64; 3], DriverError> {
    let dims: Vec<Option<u64>> = text.split(',').map(|p| p.trim().parse().ok().filter(|&n| n > 0)).collect();
    match dims.as_slice() {
        [Some(m), Some(n), Some(k)] => Ok([*m, *n, *k]),
        _ => Err(DriverError::Usage(format!("--shape '{text}': expected three positive integers M,N,K"))),
    }
}

pub fn run(args: &BenchArgs) -> Result<String, DriverError> {
    let shapes = args.shapes.iter().map(|s| parse_shape(s)).collect::<Result<Vec<_>, _>>()?;
    if args.bundle.is_some() && args.json.is_some() {
        return Err(DriverError::Usage(
            "--json records results, and with --bundle nothing runs here: give --json to `tilec-gpu-runner bench` instead".into(),
        ));
    }
    if args.repeat == 0 {
        return Err(DriverError::Usage("--repeat must be at least 1".into()));
    }
    let (gpu, target) = open_gpu_unless_bundling(args.bundle.is_some(), args.target.as_deref())?;

    let (source, settings) = crate::params::apply_params_with(read_source(&args.input)?, &args.params)?;
    let module = parse_and_verify(&source)?;
    // The settings name the variant: in the label (inside its parentheses, after the target) and the bundle.
    let setting_text: String = settings.iter().map(|s| format!(", {}={}", s.name, s.value_text().trim_matches('"'))).collect();
    let setting_label = match crate::params::label(&settings) {
        l if l.is_empty() => l,
        l => format!("_{l}"),
    };
    let func = select_func(&module, args.func.as_deref())?;
    let roles = roles::infer(func).map_err(|d| diagnostics(&source, vec![d]))?;
    for shape in &shapes {
        check_extents(&roles, *shape)?;
    }

    // Compile once per variant: M, N and K are run-time parameters of the kernel, but a shape whose rows are
    // not 16-byte aligned needs narrower copies (`alignment_variant`). The kernel as written is lowered once;
    // each new variant once more.
    let compiler = Compiler::new();
    let opt_level: tilec_lower_ptx::OptLevel =
        args.opt_level.parse().map_err(|e: tilec_lower_ptx::Error| DriverError::Usage(e.to_string()))?;
    let options = Options { target, backend: args.backend.into(), opt_level, ..Options::default() };
    let base = compiler.lower_kernel(func, &options).map_err(|e| compile_error(&source, e))?;
    let mut variants: HashMap<Option<String>, (String, KernelInfo)> = HashMap::new();
    let mut variant_for = |gemm: &GemmSpec| -> Result<(String, KernelInfo, Option<AlignmentVariant>), DriverError> {
        let extents = gemm_extents(func, &roles, gemm);
        let variant = base.funcs.first().and_then(|lowered| alignment_variant(func, lowered, &extents));
        let key = variant.as_ref().map(|v| v.attr.to_string());
        if let Some((ptx, kernel)) = variants.get(&key) {
            return Ok((ptx.clone(), kernel.clone(), variant));
        }
        let lowered;
        let single = match &variant {
            Some(v) => {
                lowered = compiler.lower_variant(func, &options, v, &extents).map_err(|e| compile_error(&source, e))?;
                &lowered
            }
            None => &base,
        };
        let emitted = compiler.emit(single, &options).map_err(|e| compile_error(&source, e))?;
        let kernel = emitted.kernels.into_iter().next().ok_or_else(|| DriverError::Usage("no kernel compiled".into()))?;
        variants.insert(key, (emitted.output.clone(), kernel.clone()));
        Ok((emitted.output, kernel, variant))
    };
    let backend = match args.backend {
        Backend::Llvm => "llvm",
        Backend::Mlir => "mlir",
    };

    // Bundles are named after the file (several variants of one kernel may share its name).
    let stem = match Path::new(&args.input).file_stem() {
        Some(s) if args.input != "-" => s.to_string_lossy().into_owned(),
        _ => func.name.clone(),
    };
    let mut out = String::new();
    let mut failed = 0;
    for &[m, n, k] in &shapes {
        let gemm = GemmSpec {
            m,
            n,
            k,
            a: roles.operands[0],
            b: roles.operands[1],
            c: roles.operands[2],
            alpha: roles.alpha.map(|_| args.alpha),
            beta: roles.beta.map(|_| args.beta),
        };
        gemm.validate().map_err(DriverError::Usage)?;
        let (ptx, kernel, variant) = variant_for(&gemm)?;
        let params = abi_params(&kernel, &roles)?;
        let label_variant = variant.as_ref().map_or_else(String::new, |v| format!(", {} = {}", tilec_passes::lower::GLOBAL_ALIGNMENT_ATTR, v.attr));
        if let Some(v) = &variant {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", v.note);
        }
        let grid = grid_for(func, &roles, &gemm).map_err(|d| diagnostics(&source, vec![d]))?;
        let bundle = BenchBundle {
            ptx: "kernel.ptx".into(),
            kernel: kernel.name.clone(),
            label: format!("{} ({backend}{opt}, {target}{setting_text}{label_variant})", source.name, opt = opt_suffix(opt_level)),
            grid,
            block: kernel.block,
            persistent: kernel.persistent,
            shared_bytes: u32::try_from(kernel.dynamic_shared_bytes)
                .map_err(|_| DriverError::Usage(format!("{} bytes of shared memory", kernel.dynamic_shared_bytes)))?,
            warmup: args.warmup,
            repeat: args.repeat,
            seed: args.seed,
            gemm,
            params,
        };
        match (&args.bundle, &gpu) {
            (Some(dir), _) => {
                let name = format!("{stem}{setting_label}_{m}x{n}x{k}{}", if backend == "llvm" { "" } else { "_mlir" });
                let path = Path::new(dir).join(&name);
                write_bundle(&path, &bundle, &ptx)?;
                out.push_str(&format!(
                    "{}: @{} {m}x{n}x{k} {} for {target}, grid [{}, {}, {}], block {}, {} B shared\n",
                    path.display(),
                    kernel.name,
                    bundle.gemm.types(),
                    grid[0],
                    grid[1],
                    grid[2],
                    kernel.block[0],
                    kernel.shared_bytes
                ));
            }
            (None, Some((ctx, stream, cublas))) => {
                let outcome = runner::run(ctx, stream, cublas, &bundle, ptx.clone()).map_err(|e| match e.exit_code() {
                    2 => DriverError::Environment(e.to_string()),
                    _ => DriverError::Usage(e.to_string()),
                })?;
                // One line as soon as each shape is done: a run over several large shapes takes a while.
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{}", outcome.line);
                let _ = stdout.flush();
                if !outcome.passed() {
                    failed += 1;
                }
                if let Some(path) = &args.json {
                    runner::append_json(Path::new(path), &outcome.record).map_err(|e| DriverError::Usage(e.to_string()))?;
                }
            }
            (None, None) => return Err(DriverError::Environment("no GPU opened".into())),
        }
    }
    if failed > 0 {
        return Err(DriverError::Usage(format!("{failed} of {} shape(s): tilec's result differs from cuBLAS's", shapes.len())));
    }
    Ok(out)
}

/// The GPU, its stream and a cuBLAS handle, for running benchmarks here.
pub(crate) type BenchGpu = (std::sync::Arc<tilec_gpu_runner::CudaContext>, std::sync::Arc<tilec_gpu_runner::CudaStream>, runner::Cublas);

/// For `tilec bench` and `tilec tune`: the GPU (none when only writing bundles: fail fast, before compiling,
/// when there is no GPU or no cuBLAS) and the target to compile for (`--target`, else the GPU's, else sm_90).
pub(crate) fn open_gpu_unless_bundling(bundling: bool, target: Option<&str>) -> Result<(Option<BenchGpu>, Target), DriverError> {
    let gpu = if bundling {
        None
    } else {
        let env = |e: tilec_gpu_runner::RunError| DriverError::Environment(e.to_string());
        let ctx = runner::open_bench_gpu().map_err(env)?;
        let stream = ctx.default_stream();
        let cublas = runner::Cublas::new(&stream).map_err(env)?;
        Some((ctx, stream, cublas))
    };
    let target = match (target, &gpu) {
        (Some("native"), Some((ctx, _, _))) | (None, Some((ctx, _, _))) => target_of(ctx)?,
        (Some(t), _) => parse_target(t)?,
        (None, None) => Target::Sm90,
    };
    Ok((gpu, target))
}

/// A shape must agree with the static extents of the kernel's tiles.
pub(crate) fn check_extents(roles: &GemmRoles, [m, n, k]: [u64; 3]) -> Result<(), DriverError> {
    let want = [[m, k], [k, n], [m, n]];
    for ((name, extents), want) in ["A", "B", "C"].iter().zip(&roles.extents).zip(want) {
        for axis in 0..2 {
            if let Some(fixed) = extents[axis] {
                if fixed != want[axis] {
                    return Err(DriverError::Usage(format!(
                        "--shape {m},{n},{k}: {name} would be {}x{}, but the kernel fixes its extent {axis} to {fixed}",
                        want[0], want[1]
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The launch grid, derived from the kernel's stores of C (`tilec_ir::interp::default_launch`), which reads
/// only the tensors' shapes: the tensors here carry no values, so no memory is spent on large shapes.
pub(crate) fn grid_for(func: &Func, roles: &GemmRoles, gemm: &GemmSpec) -> Result<[u32; 3], tilec_ir::Diagnostic> {
    let mut values = Vec::new();
    for (index, &arg) in func.args().iter().enumerate() {
        let shape = |role: Role| {
            let (r, c) = gemm.shape(role);
            vec![r as usize, c as usize]
        };
        let value = match func.body.ty(arg) {
            Type::Tile(t) => {
                let role = if index == roles.a {
                    Role::A
                } else if index == roles.b {
                    Role::B
                } else {
                    Role::C
                };
                ArgValue::Tensor(TensorData { shape: shape(role), elem: t.elem, values: Vec::new() })
            }
            Type::Scalar(s) => ArgValue::Scalar(*s, 1.0),
            _ => ArgValue::Scalar(ScalarType::F32, 0.0),
        };
        values.push(value);
    }
    interp::default_launch(func, &values).map(|l| l.grid).map_err(|e| e.to_diagnostic())
}

/// The PTX entry's parameters as bench roles, from the kernel's ABI.
pub(crate) fn abi_params(kernel: &KernelInfo, roles: &GemmRoles) -> Result<Vec<BenchParam>, DriverError> {
    let role = |arg: usize| {
        [(roles.a, Role::A), (roles.b, Role::B), (roles.c, Role::C)].into_iter().find(|&(i, _)| i == arg).map(|(_, r)| r)
    };
    kernel
        .abi
        .iter()
        .map(|p| match (&p.role, role(p.arg)) {
            (AbiRole::Pointer, Some(r)) => Ok(BenchParam::Pointer(r)),
            (AbiRole::Extent(axis), Some(r)) => Ok(BenchParam::Extent { of: r, axis: *axis }),
            (AbiRole::Value, None) if Some(p.arg) == roles.alpha && p.ty == "f32" => Ok(BenchParam::Alpha),
            (AbiRole::Value, None) if Some(p.arg) == roles.beta && p.ty == "f32" => Ok(BenchParam::Beta),
            // A persistent kernel's hidden logical grid (the bundle's `grid`).
            (AbiRole::Value, None) if kernel.logical_grid_axis(p.arg).is_some() => Ok(BenchParam::LogicalGrid(kernel.logical_grid_axis(p.arg).unwrap_or(0))),
            // A TMA tensor map over a matrix (sm_90a): the runner encodes it over the matrix's buffer.
            (AbiRole::TensorMap(k), Some(r)) => {
                let map = kernel.tensor_maps.get(*k).ok_or_else(|| DriverError::Usage(format!("the kernel's ABI names tensor map #{k}, which it lacks")))?;
                Ok(BenchParam::TensorMap {
                    of: r,
                    data_type: map.data_type,
                    box_shape: map.box_shape.clone(),
                    swizzle: map.swizzle.clone(),
                    transposed: map.transposed,
                })
            }
            _ => Err(DriverError::Usage(format!("the compiled kernel's parameter '{}' ({}) has no GEMM role", p.name, p.ty))),
        })
        .collect()
}

/// The logical shapes of the kernel's arguments for `gemm` (A, B, C; `None` for the scalars).
pub(crate) fn gemm_extents(func: &Func, roles: &GemmRoles, gemm: &GemmSpec) -> Vec<Option<Vec<u64>>> {
    (0..func.args().len())
        .map(|i| {
            [(roles.a, Role::A), (roles.b, Role::B), (roles.c, Role::C)].into_iter().find(|&(a, _)| a == i).map(|(_, r)| {
                let (rows, cols) = gemm.shape(r);
                vec![rows, cols]
            })
        })
        .collect()
}

/// `DIR/bench.json` and `DIR/kernel.ptx`.
pub(crate) fn write_bundle(dir: &Path, bundle: &BenchBundle, ptx: &str) -> Result<(), DriverError> {
    let shown = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|e| DriverError::io(&shown, &e))?;
    let json = serde_json::to_string_pretty(bundle).map_err(|e| DriverError::Usage(format!("bench.json: {e}")))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name).display().to_string();
        crate::input::write_output(&path, bytes)
    };
    write(&bundle.ptx, ptx.as_bytes())?;
    write(runner::BENCH_JSON, format!("{json}\n").as_bytes())
}

/// ` -O1` in a bench label for a level other than the default 3.
fn opt_suffix(level: tilec_lower_ptx::OptLevel) -> String {
    match level {
        tilec_lower_ptx::OptLevel::O3 => String::new(),
        other => format!(" -O{}", other.as_u32()),
    }
}
