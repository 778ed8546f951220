//! `tilec tune FILE --shape M,N,K`: searches a GEMM kernel's attributes on the GPU and writes the fastest.
//! `tilec tune FILE --arg NAME=SHAPE... [--flops N]`: the same for any other kernel (attention, softmax, ...),
//! timed on inputs the runner makes from the seed ([`kernel`]).
//!
//! The candidates are every combination of the function attributes the passes honour (the `--stages`,
//! `--warps` and `--fragments` lists):
//!
//! - `pipeline_stages` (2..=5 by default): the depth of software-pipeline's `cp.async` ring;
//! - `num_warps` (4 and 8): the warps of a block, split into a warp grid by layout-assignment;
//! - `fragments_ahead` (true and false): whether software-pipeline loads the next k-step's register fragments
//!   one iteration ahead.
//!
//! - `--param NAME=V,...`: kernel parameters (upper-case integer attributes such as `BM`, used in the body's
//!   shapes), `raster_group`, and `warp_tile` (`--param warp_tile=16x32,32x32`: a list value).
//!
//! The block tile and the K-tile are the tile shapes written in the kernel's body, not attributes: tune leaves
//! them as they are unless they are written with kernel parameters. Each candidate is compiled (the default pipeline, then PTX; then ptxas when one is found,
//! for its register count and to reject what it would reject); a candidate that does not lower (a warp grid
//! that does not divide the block tile, a copy the block's threads cannot share evenly, a ring over the
//! target's shared memory) is skipped, with the first line of its diagnostic on stderr and all of it with
//! `--verbose`.
//!
//! As `tilec bench`, the search runs two ways, sharing [`tilec_gpu_runner::tune`]:
//!
//! - here, on a machine with a GPU: every candidate is benchmarked in this process (checked against cuBLAS,
//!   timed), with a progress bar; the ranked table goes to stderr and the input with the fastest candidate's
//!   attributes to `-o` (standard output by default) or, with `--in-place`, back into the input file;
//! - with `--bundle DIR`: one bench bundle per candidate in `DIR/<file>_<candidate>/` (PTX, `bench.json`, and
//!   `tune.json` naming the candidate's attributes), for `tilec-gpu-runner tune DIR --json RECORDS` on the GPU
//!   machine; then `tilec tune FILE --results RECORDS` here writes the fastest candidate that checked.
//!
//! The output is the input as the IR printer prints it, with the attributes set on the kernel function: the
//! same program, in canonical form (comments are not kept). All files are written atomically.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use tilec_gpu_runner::bench::{self as runner, BenchBundle, GemmSpec};
use tilec_gpu_runner::tune::{self, attrs_text, AttrValue, Candidate, TuneJob, TuneRecord, TuneWork, TUNE_JSON};
use tilec_ir::{Attribute, Func, Module, SourceFile};
use tilec_passes::layout_assignment::{DEFAULT_NUM_WARPS, NUM_WARPS_ATTR, WARP_TILE_ATTR};
use tilec_passes::pipelining::{DEFAULT_STAGES, FRAGMENTS_AHEAD_ATTR, STAGES_ATTR};
use tilec_passes::rasterize::RASTER_GROUP_ATTR;

use crate::cli::{Backend, OnOff, TuneArgs};

mod kernel;
use crate::commands::bench::{abi_params, check_extents, gemm_extents, grid_for, open_gpu_unless_bundling, parse_shape, roles, write_bundle};
use tilec_compiler::Options;
use crate::commands::interp::select_func;
use crate::error::DriverError;
use crate::input::{compile_error, diagnostics, parse_and_verify, read_source, write_output};

/// The function attributes `tilec tune` sets (and the only ones `--results` may write).
pub const TUNED_ATTRS: [&str; 3] = [STAGES_ATTR, NUM_WARPS_ATTR, FRAGMENTS_AHEAD_ATTR];

/// `alpha` and `beta` for kernels that take them: `tilec bench`'s defaults (nonzero beta, so C is read too).
const ALPHA: f32 = 1.5;
const BETA: f32 = -0.5;

/// A compiled candidate, with its PTX and its shared memory (static and dynamic) for the report.
struct Compiled {
    job: TuneJob,
    ptx: String,
    shared_bytes: u64,
}

impl Compiled {
    /// The launch: grid, block, dynamic shared memory, persistent.
    fn launch(&self) -> ([u32; 3], [u32; 3], u32, bool) {
        match &self.job.work {
            TuneWork::Gemm { bundle, .. } => (bundle.grid, bundle.block, bundle.shared_bytes, bundle.persistent),
            TuneWork::Kernel { bundle, .. } => (bundle.grid, bundle.block, bundle.shared_bytes, bundle.persistent),
        }
    }
}

/// Adds a compiled candidate unless an earlier one is the same kernel (identical PTX and launch: e.g.
/// `fragments_ahead` on a wgmma kernel, which keeps no fragments in registers), which it names instead of timing
/// the same code twice.
fn push_distinct(compiled: &mut Vec<Compiled>, candidate: Compiled) {
    match compiled.iter().find(|c| c.ptx == candidate.ptx && c.launch() == candidate.launch()) {
        Some(twin) => eprintln!(
            "tilec tune: {}: the same kernel as {} (identical PTX and launch): not timed again",
            candidate.job.candidate.name, twin.job.candidate.name
        ),
        None => compiled.push(candidate),
    }
}

/// Compiles every candidate of `space` with `compile`, on as many threads as the machine has processors (at
/// most one per candidate): each compilation is independent (its own parse, passes, LLVM or MLIR context and
/// ptxas process), and a search of 16 candidates is mostly compilation and ptxas. The results come back in the
/// order of `space`, whatever the threads' timing, so the report, the skipped list and which of two identical
/// kernels is kept ([`push_distinct`]) are the same as one candidate after the other.
fn compile_all<F>(space: Vec<BTreeMap<String, AttrValue>>, compile: F) -> (Vec<Compiled>, Vec<Skipped>)
where
    F: Fn(&str, &BTreeMap<String, AttrValue>) -> Result<Compiled, Skipped> + Sync,
{
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, space.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<Compiled, Skipped>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(attrs) = space.get(i) else { break done };
                        done.push((i, compile(&candidate_name(attrs), attrs)));
                    }
                })
            })
            .collect();
        // A worker that panicked loses its candidates' results; the panic is not swallowed (none is expected:
        // the library code reachable from here has no unwrap/expect/panic, `make lint`).
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload))).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut compiled = Vec::new();
    let mut skipped = Vec::new();
    for (_, result) in results {
        match result {
            Ok(c) => push_distinct(&mut compiled, c),
            Err(skip) => skipped.push(skip),
        }
    }
    (compiled, skipped)
}

/// A candidate that was not compiled, and why.
struct Skipped {
    name: String,
    attrs: BTreeMap<String, AttrValue>,
    /// One line: `file:line:col: error: ...` or the backend's or ptxas's first line.
    reason: String,
    /// All of it.
    detail: String,
}

pub fn run(args: &TuneArgs) -> Result<String, DriverError> {
    if args.in_place && args.input == "-" {
        return Err(DriverError::Usage("--in-place needs an input file, not standard input".into()));
    }
    if args.results.is_some() {
        return apply_results(args);
    }
    if !args.args.is_empty() {
        return kernel::run(args);
    }
    let shape_text = args.shape.as_deref().ok_or_else(|| DriverError::Usage("--shape M,N,K is required (or --results FILE)".into()))?;
    let [m, n, k] = parse_shape(shape_text)?;
    if args.repeat == 0 {
        return Err(DriverError::Usage("--repeat must be at least 1".into()));
    }
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let space = candidates(args, &module, &source.name)?;

    let (gpu, target) = open_gpu_unless_bundling(args.bundle.is_some(), args.target.as_deref())?;

    let func = select_func(&module, args.func.as_deref())?;
    let roles = roles::infer(func).map_err(|d| diagnostics(&source, vec![d]))?;
    check_extents(&roles, [m, n, k])?;
    let gemm = GemmSpec {
        m,
        n,
        k,
        a: roles.operands[0],
        b: roles.operands[1],
        c: roles.operands[2],
        alpha: roles.alpha.map(|_| ALPHA),
        beta: roles.beta.map(|_| BETA),
    };
    gemm.validate().map_err(DriverError::Usage)?;
    // The input's own grid; a candidate that changes the block tile computes its own (`compile`).
    let grid = grid_for(func, &roles, &gemm).map_err(|d| diagnostics(&source, vec![d]))?;
    let backend = match args.backend {
        Backend::Llvm => "llvm",
        Backend::Mlir => "mlir",
    };
    let ptxas = tilec_lower_ptx::ptxas::Ptxas::locate().ok();
    if ptxas.is_none() {
        eprintln!("tilec tune: note: ptxas not found: candidates are not assembled here (no register counts; the GPU's driver assembles them); set PTXAS=/path/to/ptxas or put it on PATH");
    }
    let setup = Setup { source: &source, target, backend: args.backend, ptxas: ptxas.as_ref(), roles: &roles };

    let (jobs, skipped) = compile_all(space, |name, attrs| {
        let template = BenchBundle {
            ptx: "kernel.ptx".into(),
            kernel: String::new(),
            label: format!("{} ({backend}, {target}) {name}", source.name),
            grid,
            block: [0; 3],
            persistent: false,
            shared_bytes: 0,
            warmup: args.warmup,
            repeat: args.repeat,
            seed: args.seed,
            gemm: gemm.clone(),
            params: Vec::new(),
        };
        compile(&setup, func, name, attrs, template)
    });
    report_skipped(&skipped, jobs.is_empty(), args.verbose, target)?;

    match (&args.bundle, gpu) {
        (Some(dir), _) => write_candidates(&args.input, dir, &stem(&args.input, &func.name), &jobs, target),
        (None, Some((ctx, stream, cublas))) => {
            let jobs: Vec<TuneJob> = jobs.into_iter().map(|c| c.job).collect();
            let records = tune::run_jobs(&ctx, &stream, Some(&cublas), &jobs);
            eprint!("{}", tune::table(&records));
            if let Some(path) = &args.json {
                tune::append_records(Path::new(path), &records).map_err(|e| DriverError::Usage(e.to_string()))?;
            }
            let best = pick(&records, &func.name, Some([m, n, k]), "this run")?;
            write_best(args, &source, &module, &func.name, best, &records)?;
            let failed = records.iter().filter(|r| !r.usable()).count();
            if failed > 0 {
                return Err(DriverError::Usage(format!(
                    "{failed} of {} candidate(s) failed to run or to check (see above); the fastest of the others was written",
                    records.len()
                )));
            }
            Ok(String::new())
        }
        (None, None) => Err(DriverError::Environment("no GPU opened".into())),
    }
}

/// What every candidate's compilation shares.
struct Setup<'a> {
    source: &'a SourceFile,
    target: tilec_ir::Target,
    backend: Backend,
    ptxas: Option<&'a tilec_lower_ptx::ptxas::Ptxas>,
    roles: &'a roles::GemmRoles,
}

/// One searched attribute: its name and the values to try, in order (`None`: leave it unset, the compiler's
/// choice).
type Dim = (String, Vec<Option<AttrValue>>);

/// A checked `--param` value ([`crate::params::typed_value`]) as a candidate records it.
fn attr_value(value: Attribute) -> Result<AttrValue, String> {
    match value {
        Attribute::Int(n) => Ok(AttrValue::Int(n)),
        Attribute::Bool(b) => Ok(AttrValue::Bool(b)),
        Attribute::Str(s) | Attribute::Keyword(s) => Ok(AttrValue::Str(s)),
        Attribute::Array(items) => {
            items.iter().map(Attribute::as_int).collect::<Option<Vec<i64>>>().map(AttrValue::List).ok_or_else(|| "tune searches lists of integers only".to_string())
        }
        other => Err(format!("tune does not search values like {other}")),
    }
}

/// `a,b,[c, d]`: the values of one `--param NAME=V,...`, split at the commas outside brackets.
fn split_values(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// `--param NAME=V,...` lists, in order, each name and value read as `--param` reads them everywhere
/// ([`crate::params`]): a kernel parameter of `module` or a declared kernel attribute, values of its type;
/// `default` (for an attribute) leaves it unset.
fn param_lists(args: &TuneArgs, module: &Module, file: &str) -> Result<Vec<Dim>, DriverError> {
    let mut out: Vec<Dim> = Vec::new();
    for text in &args.params {
        let usage = |m: String| DriverError::Usage(format!("--param {text}: {m}"));
        let (name, values) = crate::params::split(text).map_err(usage)?;
        crate::params::check_name(name, module, file).map_err(usage)?;
        for warning in crate::params::without_effect(name, text, module) {
            eprintln!("tilec: warning: {warning}");
        }
        let mut parsed: Vec<Option<AttrValue>> = Vec::new();
        for v in split_values(values) {
            let value = if v.trim() == "default" && !tilec_ir::is_param_name(name) {
                None
            } else {
                Some(crate::params::typed_value(name, v).and_then(attr_value).map_err(usage)?)
            };
            if !parsed.contains(&value) {
                parsed.push(value);
            }
        }
        if parsed.iter().all(|v| matches!(v, Some(AttrValue::Int(_)))) {
            parsed.sort_by_key(|v| if let Some(AttrValue::Int(n)) = v { *n } else { 0 });
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(usage(format!("'{name}' is given twice")));
        }
        out.push((name.to_string(), parsed));
    }
    Ok(out)
}

/// The candidate attribute sets, in the order they are tried: every combination of the lists (warps, then
/// stages, then fragments ahead, then the `--param` lists in order).
fn candidates(args: &TuneArgs, module: &Module, file: &str) -> Result<Vec<BTreeMap<String, AttrValue>>, DriverError> {
    let dedup = |list: &[u32]| list.iter().copied().collect::<BTreeSet<u32>>();
    let stages = dedup(&args.stages);
    let warps = dedup(&args.warps);
    if let Some(s) = stages.iter().find(|s| !(1..=8).contains(*s)) {
        return Err(DriverError::Usage(format!("--stages {s}: software-pipeline takes 1..=8 stages")));
    }
    if let Some(w) = warps.iter().find(|w| !(1..=32).contains(*w)) {
        return Err(DriverError::Usage(format!("--warps {w}: a block has 1..=32 warps")));
    }
    let fragments: BTreeSet<bool> = args.fragments.iter().map(|f| *f == OnOff::On).collect();
    let ints = |set: &BTreeSet<u32>, default: &[u32]| -> Vec<Option<AttrValue>> {
        let list: Vec<u32> = if set.is_empty() { default.to_vec() } else { set.iter().copied().collect() };
        list.into_iter().map(|n| Some(AttrValue::Int(i64::from(n)))).collect()
    };
    let bools = if fragments.is_empty() { vec![true, false] } else { fragments.iter().rev().copied().collect() };
    // (name, values, the flag that gave them when one did)
    let mut dims: Vec<(Dim, Option<&str>)> = vec![
        ((NUM_WARPS_ATTR.to_string(), ints(&warps, &[4, 8])), (!warps.is_empty()).then_some("--warps")),
        ((STAGES_ATTR.to_string(), ints(&stages, &[2, 3, 4, 5])), (!stages.is_empty()).then_some("--stages")),
        ((FRAGMENTS_AHEAD_ATTR.to_string(), bools.into_iter().map(|b| Some(AttrValue::Bool(b))).collect()), (!fragments.is_empty()).then_some("--fragments")),
    ];
    for (name, values) in param_lists(args, module, file)? {
        match dims.iter_mut().find(|((n, _), _)| *n == name) {
            Some((_, Some(flag))) => return Err(DriverError::Usage(format!("--param {name}=... and {flag} give the same attribute: use one"))),
            Some(((_, list), None)) => *list = values,
            None => dims.push(((name, values), None)),
        }
    }
    let mut out: Vec<BTreeMap<String, AttrValue>> = vec![BTreeMap::new()];
    for ((name, values), _) in dims {
        let mut next = Vec::with_capacity(out.len() * values.len());
        for attrs in &out {
            for v in &values {
                let mut a = attrs.clone();
                if let Some(v) = v {
                    a.insert(name.clone(), v.clone());
                }
                next.push(a);
            }
        }
        out = next;
    }
    Ok(out)
}

/// `s4_w8_fon`: stages, warps, fragments ahead; then the other attributes (`_BK64`, `_r8`, `_wt64x64`,
/// `_wgmma`, `_cp_async`).
fn candidate_name(attrs: &BTreeMap<String, AttrValue>) -> String {
    let int = |k: &str| match attrs.get(k) {
        Some(AttrValue::Int(n)) => n.to_string(),
        _ => "d".into(),
    };
    let frags = match attrs.get(FRAGMENTS_AHEAD_ATTR) {
        Some(AttrValue::Bool(false)) => "off",
        _ => "on",
    };
    let params: String = attrs
        .iter()
        .filter(|(k, _)| !TUNED_ATTRS.contains(&k.as_str()))
        .map(|(k, v)| match v {
            AttrValue::List(items) if k == WARP_TILE_ATTR => format!("_wt{}", items.iter().map(i64::to_string).collect::<Vec<_>>().join("x")),
            AttrValue::List(items) => format!("_{k}{}", items.iter().map(i64::to_string).collect::<Vec<_>>().join("x")),
            AttrValue::Int(n) if k == RASTER_GROUP_ATTR => format!("_r{n}"),
            AttrValue::Int(n) => format!("_{k}{n}"),
            AttrValue::Bool(b) => format!("_{k}{}", if *b { "on" } else { "off" }),
            AttrValue::Str(s) => format!("_{s}"),
        })
        .collect();
    format!("s{}_w{}_f{frags}{params}", int(STAGES_ATTR), int(NUM_WARPS_ATTR))
}

/// The attributes as `(name, value as written)` for [`tilec_ir::set_func_attributes`].
fn attrs_as_text(attrs: &BTreeMap<String, AttrValue>) -> Vec<(String, String)> {
    attrs
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect()
}

/// Prints each candidate that did not lower (with the whole diagnostic under `--verbose`); an error when none
/// lowered.
fn report_skipped(skipped: &[Skipped], none_lowered: bool, verbose: bool, target: tilec_ir::Target) -> Result<(), DriverError> {
    for skip in skipped {
        eprintln!("tilec tune: skipped {} [{}]: {}", skip.name, attrs_text(&skip.attrs), skip.reason);
        if verbose {
            eprint!("{}", indent(&skip.detail));
        }
    }
    if none_lowered {
        return Err(DriverError::Usage(format!(
            "none of the {} candidate(s) lowers for {target}{}",
            skipped.len(),
            if verbose { "" } else { " (--verbose says why)" }
        )));
    }
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

/// Compiles one candidate: the kernel with `attrs` set, through the default pipeline, to PTX, through ptxas.
fn compile(setup: &Setup<'_>, func: &Func, name: &str, attrs: &BTreeMap<String, AttrValue>, template: BenchBundle) -> Result<Compiled, Skipped> {
    let skip = |detail: String| Skipped {
        name: name.to_string(),
        attrs: attrs.clone(),
        reason: detail.lines().next().unwrap_or_default().trim_start_matches("tilec: error: ").to_string(),
        detail,
    };
    // The candidate is the input with its attribute values set in the text, parsed again: kernel parameters
    // are specialized by the parser, the other attributes are read by the passes.
    let text = tilec_ir::set_func_attributes(&setup.source.text, &func.name, &attrs_as_text(attrs))
        .ok_or_else(|| skip(format!("could not set the attributes of @{} in the input", func.name)))?;
    let source = SourceFile::new(setup.source.name.clone(), text);
    let module = parse_and_verify(&source).map_err(|e| skip(e.render(false)))?;
    let f = module.funcs.into_iter().find(|g| g.name == func.name).ok_or_else(|| skip("the kernel disappeared".into()))?;
    // The grid follows the block tile, which a parameter may change.
    let grid = grid_for(&f, setup.roles, &template.gemm).map_err(|d| skip(diagnostics(&source, vec![d]).render(false)))?;
    let template = BenchBundle { grid, ..template };
    // A shape whose rows are not 16-byte aligned gets the narrower-copy variant, as in `tilec bench`.
    let options = Options { target: setup.target, backend: setup.backend.into(), ..Options::default() };
    let extents = gemm_extents(&f, setup.roles, &template.gemm);
    let single = tilec_compiler::specialize(&f, &options, &extents).map_err(|e| skip(compile_error(&source, e).render(false)))?.module;
    let emitted = tilec_compiler::emit(&single, &options).map_err(|e| skip(compile_error(setup.source, e).render(false)))?;
    let ptx = emitted.output;
    let kernel = emitted.kernels.into_iter().next().ok_or_else(|| skip("no kernel compiled".into()))?;
    let (mut registers, mut spill_bytes) = (None, None);
    if let Some(ptxas) = setup.ptxas {
        let report = ptxas.assemble(&ptx, setup.target).map_err(|e| skip(format!("ptxas: {e}")))?;
        if let Some(r) = report.kernel(&kernel.name) {
            registers = Some(r.registers);
            spill_bytes = Some(r.spill_stores + r.spill_loads);
        }
    }
    let params = abi_params(&kernel, setup.roles).map_err(|e| skip(e.render(false)))?;
    let shared_bytes = u32::try_from(kernel.dynamic_shared_bytes).map_err(|_| skip(format!("{} bytes of shared memory", kernel.dynamic_shared_bytes)))?;
    let candidate = Candidate {
        name: name.to_string(),
        func: func.name.clone(),
        source: setup.source.name.clone(),
        attrs: attrs.clone(),
        registers,
        spill_bytes,
    };
    let bundle = BenchBundle { kernel: kernel.name.clone(), block: kernel.block, persistent: kernel.persistent, shared_bytes, params, ..template };
    let job = TuneJob { candidate, work: TuneWork::Gemm { bundle, ptx: ptx.clone() }, origin: name.to_string() };
    Ok(Compiled { job, ptx, shared_bytes: kernel.shared_bytes })
}

/// Bundles are named after the file (several variants of one kernel may share its name), else the kernel.
fn stem(input: &str, func: &str) -> String {
    match Path::new(input).file_stem() {
        Some(s) if input != "-" => s.to_string_lossy().into_owned(),
        _ => func.to_string(),
    }
}

/// The files a candidate bundle consists of (what an earlier run left and this one may remove).
const CANDIDATE_FILES: [&str; 4] = [runner::BENCH_JSON, tilec_gpu_runner::BUNDLE_JSON, "kernel.ptx", TUNE_JSON];

/// Writes every candidate into `DIR/<stem>_<candidate>/`; candidates of an earlier run for the same file that
/// this run does not write are removed, so that `tilec-gpu-runner tune DIR` runs exactly this run's candidates.
fn write_candidates(input: &str, dir: &str, stem: &str, compiled: &[Compiled], target: tilec_ir::Target) -> Result<String, DriverError> {
    let root = Path::new(dir);
    let names: BTreeSet<String> = compiled.iter().map(|c| format!("{stem}_{}", c.job.candidate.name)).collect();
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("{stem}_")) && path.join(TUNE_JSON).is_file() && !names.contains(&name) {
                for file in CANDIDATE_FILES {
                    let _ = std::fs::remove_file(path.join(file));
                }
                if std::fs::remove_dir(&path).is_err() {
                    eprintln!("tilec tune: warning: {} holds a candidate of an earlier run and other files: left as it is", path.display());
                }
            }
        }
    }
    let mut out = String::new();
    for Compiled { job, ptx, shared_bytes } in compiled {
        let path = root.join(format!("{stem}_{}", job.candidate.name));
        match &job.work {
            TuneWork::Gemm { bundle, .. } => write_bundle(&path, bundle, ptx)?,
            TuneWork::Kernel { bundle, .. } => kernel::write_timing_bundle(&path, bundle, ptx)?,
        }
        let json = serde_json::to_string_pretty(&job.candidate).map_err(|e| DriverError::Usage(format!("{TUNE_JSON}: {e}")))?;
        write_output(&path.join(TUNE_JSON).display().to_string(), format!("{json}\n").as_bytes())?;
        let regs = match (job.candidate.registers, job.candidate.spill_bytes) {
            (Some(r), Some(s)) if s > 0 => format!(", {r} registers, {s} B spilled"),
            (Some(r), _) => format!(", {r} registers"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{}: @{} {} for {target}, block {}, {} B shared{regs}\n",
            path.display(),
            job.kernel(),
            job.candidate.attrs_text(),
            match &job.work {
                TuneWork::Gemm { bundle, .. } => bundle.block[0],
                TuneWork::Kernel { bundle, .. } => bundle.block[0],
            },
            shared_bytes
        ));
    }
    out.push_str(&format!(
        "{} candidate(s) in {dir}: run `tilec-gpu-runner tune {dir} --json RECORDS` on the GPU machine, then `tilec tune {input} --results RECORDS`\n",
        compiled.len()
    ));
    Ok(out)
}

/// `--results FILE`: the fastest candidate of the records, written as attributes.
fn apply_results(args: &TuneArgs) -> Result<String, DriverError> {
    let path = args.results.as_deref().unwrap_or_default();
    let shape = args.shape.as_deref().map(parse_shape).transpose()?;
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.func.as_deref())?;
    let records = read_records(path)?;
    let best = pick(&records, &func.name, shape, path)?;
    write_best(args, &source, &module, &func.name, best, &records)?;
    Ok(String::new())
}

/// The JSON lines of `tilec-gpu-runner tune --json` (blank lines ignored).
fn read_records(path: &str) -> Result<Vec<TuneRecord>, DriverError> {
    let text = std::fs::read_to_string(path).map_err(|e| DriverError::io(path, &e))?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str::<TuneRecord>(line).map_err(|e| {
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(message);
            DriverError::Io { path: format!("{path}:{}:{}", i + 1, e.column()), message: format!("not a tune record: {message}") }
        })?;
        records.push(record);
    }
    Ok(records)
}

/// The fastest usable record of kernel `func` (at `shape`, when given); an error when there is none or when
/// the records mix shapes and none was chosen.
fn pick<'r>(records: &'r [TuneRecord], func: &str, shape: Option<[u64; 3]>, from: &str) -> Result<&'r TuneRecord, DriverError> {
    let shape_text = |r: &TuneRecord| r.shape_text();
    let mine: Vec<&TuneRecord> = records.iter().filter(|r| r.func == func).collect();
    if mine.is_empty() {
        let others: BTreeSet<String> = records.iter().map(|r| format!("@{}", r.func)).collect();
        let others = if others.is_empty() { "none".to_string() } else { others.into_iter().collect::<Vec<_>>().join(", ") };
        return Err(DriverError::Usage(format!("{from}: no records for @{func} (records for: {others})")));
    }
    let mine: Vec<&TuneRecord> = match shape {
        Some([m, n, k]) => {
            let at: Vec<&TuneRecord> = mine.iter().copied().filter(|r| (r.m, r.n, r.k) == (m, n, k)).collect();
            if at.is_empty() {
                let have: BTreeSet<String> = mine.iter().map(|r| shape_text(r)).collect();
                return Err(DriverError::Usage(format!(
                    "{from}: no records of @{func} at {m}x{n}x{k} (they are at {})",
                    have.into_iter().collect::<Vec<_>>().join(", ")
                )));
            }
            at
        }
        None => {
            let shapes: BTreeSet<String> = mine.iter().map(|r| shape_text(r)).collect();
            if shapes.len() > 1 {
                return Err(DriverError::Usage(format!(
                    "{from}: the records of @{func} are at several shapes ({}): choose one with --shape M,N,K (a GEMM), or keep one shape's records in FILE",
                    shapes.into_iter().collect::<Vec<_>>().join(", ")
                )));
            }
            mine
        }
    };
    let total = mine.len();
    mine.into_iter()
        .filter(|r| r.usable())
        .min_by(|a, b| a.median_ms.unwrap_or(f64::INFINITY).total_cmp(&b.median_ms.unwrap_or(f64::INFINITY)))
        .ok_or_else(|| DriverError::Usage(format!("{from}: none of the {total} record(s) of @{func} ran and checked")))
}

/// The kernel's attributes as tune sees them: what it says, else the passes' defaults; and of the other
/// attributes in `keys`, those the kernel sets.
fn current_attrs<'k>(func: &Func, keys: impl Iterator<Item = &'k String>) -> BTreeMap<String, AttrValue> {
    let mut out = BTreeMap::new();
    for key in keys.filter(|k| !TUNED_ATTRS.contains(&k.as_str())) {
        if let Some(value) = func.attrs.get(key).and_then(|a| attr_value(a.clone()).ok()) {
            out.insert(key.clone(), value);
        }
    }
    for key in TUNED_ATTRS {
        let value = match func.attrs.get(key) {
            Some(Attribute::Int(n)) => AttrValue::Int(*n),
            Some(Attribute::Bool(b)) => AttrValue::Bool(*b),
            Some(_) => continue,
            None if key == STAGES_ATTR => AttrValue::Int(i64::from(DEFAULT_STAGES)),
            None if key == NUM_WARPS_ATTR => AttrValue::Int(i64::from(DEFAULT_NUM_WARPS)),
            None => AttrValue::Bool(true),
        };
        out.insert(key.to_string(), value);
    }
    out
}

/// Writes the input with `best`'s attributes set on kernel `func` (to `-o`, standard output, or the input
/// itself with `--in-place`) and says on stderr what was chosen.
fn write_best(args: &TuneArgs, source: &SourceFile, module: &Module, func: &str, best: &TuneRecord, records: &[TuneRecord]) -> Result<(), DriverError> {
    let index = module.funcs.iter().position(|f| f.name == func).ok_or_else(|| DriverError::Usage(format!("no kernel '@{func}' in the input")))?;
    let before = current_attrs(&module.funcs[index], best.attrs.keys());
    for key in best.attrs.keys() {
        if let Err(why) = crate::params::check_name(key, module, &source.name) {
            return Err(DriverError::Usage(format!("the record of candidate '{}' sets '{key}', which tilec tune cannot set: {why}", best.candidate)));
        }
    }
    // Set in the text, not re-printed: comments stay, and so do the parameter names in the body.
    let text = tilec_ir::set_func_attributes(&source.text, func, &attrs_as_text(&best.attrs))
        .ok_or_else(|| DriverError::Usage(format!("could not set the attributes of @{func} in {}", source.name)))?;
    let target = match (&args.output, args.in_place) {
        (_, true) => source.name.clone(),
        (Some(out), false) => out.clone(),
        (None, false) => "-".to_string(),
    };
    write_output(&target, text.as_bytes())?;
    let same_shape = |r: &&TuneRecord| r.func == func && r.shape_text() == best.shape_text();
    let usable = records.iter().filter(same_shape).filter(|r| r.usable()).count();
    let baseline = records
        .iter()
        .filter(same_shape)
        .filter(|r| r.usable() && r.attrs == before)
        .filter_map(|r| r.median_ms)
        .min_by(f64::total_cmp)
        .map(|ms| format!("; the input's own attributes: {ms:.4} ms"))
        .unwrap_or_default();
    let rate = best.rate.map(|r| format!(" ({r:.1} {})", best.unit)).unwrap_or_default();
    eprintln!(
        "tilec tune: @{func} at {}: {} is the fastest of {usable} candidate(s) {}, {:.4} ms{rate}{baseline}",
        best.shape_text(),
        attrs_text(&best.attrs),
        // A GEMM's candidates are checked against cuBLAS; other kernels' are timed only.
        if best.shapes.is_empty() { "that checked" } else { "that ran (timed; not checked)" },
        best.median_ms.unwrap_or(f64::NAN)
    );
    Ok(())
}
