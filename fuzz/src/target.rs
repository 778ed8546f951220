//! The fuzz target: one input through everything tilec does with a `.tir` file, with panics caught and
//! turned into [`Finding`]s.
//!
//! Stages: lexer → `expect::diagnose` and `verify_diagnostics` (what `tilec check` runs) → diagnostics
//! rendering → parser → verifier → printer round trip (the printed module re-parses, verifies and prints
//! the same) → the reference interpreter on the input → the default pass pipeline, then every registered
//! pass on its own (so passes get fuzzed as they are registered) → the interpreter on the optimised module,
//! whose results must equal the input's → the warp simulator on every nvgpu-level module (the input, or a
//! lowering's output). Everything runs with small fuel and small shapes.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use tilec_ir::interp::{self, ArgShapes, ArgValue, Limits};
use tilec_ir::sim::{self, SimArg, SimOptions};
use tilec_ir::syntax::lexer::lex;
use tilec_ir::types::{Dim, ScalarType, Type};
use tilec_ir::verify::verify_module;
use tilec_ir::{expect, parse_module, print_module, Func, Module, SourceFile};
use tilec_ir::Target;
use tilec_compiler::{CompileError, Compiler, Options};
use tilec_passes::{default_pipeline, full_pipeline};

/// What kind of bug an input revealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A Rust panic outside the pass manager.
    Panic,
    /// The pass manager caught a panic in a pass.
    PassPanicked,
    /// A pass turned verified IR into IR that does not verify.
    PassBrokeIr,
    /// A verified module printed to text that does not re-parse, re-verify or print the same.
    RoundTrip,
    /// The interpreter gives different results before and after the pass pipeline.
    Miscompile,
    /// The process died (stack overflow, abort): found by the supervisor of the `tilec-fuzz` binary.
    Abort,
    /// One input ran longer than the supervisor's limit (a hang, or time exponential in the input).
    Hang,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Panic => "panic",
            FindingKind::PassPanicked => "pass-panicked",
            FindingKind::PassBrokeIr => "pass-broke-ir",
            FindingKind::RoundTrip => "round-trip",
            FindingKind::Miscompile => "miscompile",
            FindingKind::Abort => "abort",
            FindingKind::Hang => "hang",
        }
    }
}

/// A bug found by an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// What went wrong (the panic message, the diagnostic, the differing values).
    pub message: String,
    /// Where: the panic's `file:line:col`, or the pass and stage. Two inputs with the same kind and
    /// signature are taken to be the same bug (the minimiser keeps the signature).
    pub signature: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}: {}", self.kind.name(), self.signature, self.message)
    }
}

/// How far an input got, for statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reached {
    /// Rejected by the parser.
    Parse,
    /// Parsed; rejected by the verifier.
    Verify,
    /// Verified; the pipeline ran (or failed with a diagnostic).
    Passes,
    /// A kernel of it ran to completion in the interpreter or the simulator.
    Executed,
}

/// Knobs of the target. The defaults keep one iteration in the low milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct TargetConfig {
    /// Interpreter fuel (element operations over the grid).
    pub interp_fuel: u64,
    /// Simulator fuel (warp-operations over the grid).
    pub sim_fuel: u64,
    /// The extent of every `?` of an argument.
    pub extent: usize,
    /// Arguments with more elements than this are not run (the interpreter would allocate them first).
    pub max_arg_elements: u64,
    /// Stack of the thread the target runs on: a recursion that depends on the input overflows it.
    pub stack_bytes: usize,
}

impl Default for TargetConfig {
    fn default() -> TargetConfig {
        TargetConfig { interp_fuel: 1 << 22, sim_fuel: 200_000, extent: 16, max_arg_elements: 1 << 16, stack_bytes: 2 << 20 }
    }
}

thread_local! {
    /// Set while the target runs on this thread: its panics are recorded here instead of printed.
    static CAPTURE: RefCell<Option<Vec<(String, String)>>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records the message and location of panics on threads running the
/// target, and leaves every other panic to the previous hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let captured = CAPTURE.with(|c| {
                let mut c = c.borrow_mut();
                let Some(list) = c.as_mut() else { return false };
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".to_string());
                let location = info.location().map_or_else(|| "unknown".to_string(), |l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                list.push((message, location));
                true
            });
            if !captured {
                previous(info);
            }
        }));
    });
}

/// Runs the target on `input` on a thread with a [`TargetConfig::stack_bytes`] stack, catching panics.
/// `Ok` says how far the input got; `Err` is a bug. (A stack overflow aborts the process: the
/// supervisor of a fuzz run catches that.)
pub fn check(input: &str, config: &TargetConfig) -> Result<Reached, Finding> {
    install_hook();
    let owned = input.to_string();
    let config = *config;
    let thread = std::thread::Builder::new().name("tilec-fuzz-target".into()).stack_size(config.stack_bytes).spawn(move || {
        CAPTURE.with(|c| *c.borrow_mut() = Some(Vec::new()));
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&owned, &config)));
        let panics = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
        (outcome, panics)
    });
    let handle = match thread {
        Ok(h) => h,
        Err(e) => return Err(Finding { kind: FindingKind::Abort, message: format!("cannot spawn the target thread: {e}"), signature: "spawn".into() }),
    };
    let (outcome, panics) = match handle.join() {
        Ok(r) => r,
        Err(_) => (Err(Box::new("the target thread died") as Box<dyn std::any::Any + Send>), Vec::new()),
    };
    match outcome {
        Ok(Ok(reached)) => Ok(reached),
        Ok(Err(mut finding)) => {
            // A pass panic was caught by the pass manager; the hook saw where it happened.
            if finding.kind == FindingKind::PassPanicked {
                if let Some((_, location)) = panics.first() {
                    finding.signature = format!("{} ({location})", finding.signature);
                }
            }
            Err(finding)
        }
        Err(_) => {
            let (message, location) = panics.into_iter().next().unwrap_or_else(|| ("unknown panic".into(), "unknown".into()));
            Err(Finding { kind: FindingKind::Panic, message, signature: location })
        }
    }
}

/// The target proper; panics propagate to [`check`].
pub fn target(input: &str, config: &TargetConfig) -> Result<Reached, Finding> {
    let _ = lex(input);
    let source = SourceFile::new("fuzz.tir", input);
    // What `tilec check` and `tilec check --verify-diagnostics` do, rendering included.
    let diagnostics = expect::diagnose(input);
    let _ = source.render(&diagnostics, false);
    let _ = expect::verify_diagnostics(&source);

    let module = match parse_module(input) {
        Ok(m) => m,
        Err(d) => {
            let _ = source.render(&d.0, true);
            return Ok(Reached::Parse);
        }
    };
    if let Err(d) = verify_module(&module) {
        let _ = source.render(&d.0, false);
        return Ok(Reached::Verify);
    }
    round_trip(&module, "the input")?;

    let mut reached = Reached::Passes;
    let original = run_module(&module, config);
    if original.iter().any(|r| r.is_some()) {
        reached = Reached::Executed;
    }

    // Through the front door (`tilec_compiler::Compiler::lower`, what `tilec` and `tilec sim` run), without a
    // backend: the tile-level pipeline, the whole pipeline down to nvgpu for two targets, then each
    // registered pass alone (most decline IR they were not meant for, with a diagnostic; none may panic).
    let compiler = Compiler::new();
    let mut pipelines: Vec<(String, Target)> = vec![
        (default_pipeline(Target::Sm80).to_string(), Target::Sm80),
        (full_pipeline(Target::Sm80), Target::Sm80),
        (full_pipeline(Target::Sm90), Target::Sm90),
    ];
    pipelines.extend(compiler.registry().names().into_iter().map(|n| (n.to_string(), Target::Sm80)));
    for (pipeline, target) in pipelines {
        let options = Options { pipeline: Some(pipeline.clone()), ..Options::for_target(target) };
        let optimised = match compiler.lower(module.clone(), &options) {
            Ok(lowered) => lowered.module,
            Err(CompileError::Pass { diagnostics, .. }) => {
                let Some(first) = diagnostics.0.first() else { continue };
                let broke = first.notes.iter().any(|n| n.message.contains("the pass broke it"));
                if first.message.contains("' panicked: ") {
                    let pass = first.message.split('\'').nth(1).unwrap_or("?");
                    return Err(Finding { kind: FindingKind::PassPanicked, message: first.message.clone(), signature: format!("pass {pass}") });
                }
                if broke {
                    let pass = first.message.split('\'').nth(1).unwrap_or("?");
                    return Err(Finding {
                        kind: FindingKind::PassBrokeIr,
                        message: diagnostics.to_string(),
                        signature: format!("pass {pass}"),
                    });
                }
                // A diagnostic: the pass declined the input, which is allowed.
                let _ = source.render(&diagnostics.0, false);
                continue;
            }
            // A pipeline that does not parse (none of these), or an input that does not verify (verified above).
            Err(_) => continue,
        };
        round_trip(&optimised, &format!("the output of '{pipeline}'"))?;
        let grids: Vec<Option<[u32; 3]>> = original.iter().map(|r| r.as_ref().map(|r| r.grid)).collect();
        let after = run_module_with(&optimised, config, &grids);
        if after.iter().any(|r| r.is_some()) {
            reached = Reached::Executed;
        }
        for ((before, after), func) in original.iter().zip(&after).zip(&module.funcs) {
            if let (Some(before), Some(after)) = (before, after) {
                if let Some(diff) = compare(before, after) {
                    return Err(Finding {
                        kind: FindingKind::Miscompile,
                        message: format!("@{}: {diff} after '{pipeline}'", func.name),
                        signature: format!("pipeline {pipeline}"),
                    });
                }
            }
        }
    }
    Ok(reached)
}

/// Prints, re-parses, re-verifies and re-prints a verified module.
fn round_trip(module: &Module, what: &str) -> Result<(), Finding> {
    let printed = print_module(module);
    let fail = |message: String| Finding { kind: FindingKind::RoundTrip, message, signature: what.to_string() };
    let reparsed = parse_module(&printed).map_err(|d| fail(format!("{what} prints to text that does not parse: {d}\n{printed}")))?;
    verify_module(&reparsed).map_err(|d| fail(format!("{what} prints to text that does not verify: {d}\n{printed}")))?;
    let again = print_module(&reparsed);
    if again != printed {
        return Err(fail(format!("{what} prints differently after a round trip:\n{printed}\n---\n{again}")));
    }
    Ok(())
}

/// Whether a function uses nvgpu ops (then the simulator runs it; the interpreter rejects it).
fn is_nvgpu_level(func: &Func) -> bool {
    let mut nvgpu = false;
    func.body.walk(func.entry, &mut |id| nvgpu |= func.body.op(id).kind.is_nvgpu());
    nvgpu
}

/// The element count of every argument once `?` is `extent`, if none exceeds `max`.
fn small_enough(func: &Func, extent: usize, max: u64) -> bool {
    func.args().iter().all(|&a| match func.body.ty(a) {
        Type::Tile(t) => {
            let n = t.shape.iter().try_fold(1u64, |acc, d| {
                let e = match d {
                    Dim::Static(n) => *n,
                    Dim::Dynamic => extent as u64,
                };
                acc.checked_mul(e)
            });
            n.is_some_and(|n| n <= max)
        }
        _ => true,
    })
}

/// Which engine ran a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Interpreter,
    Simulator,
}

/// A function's arguments after a successful run.
#[derive(Clone, Debug)]
struct RunResult {
    engine: Engine,
    grid: [u32; 3],
    /// Per argument: its element type and values (a scalar is one value).
    args: Vec<(ScalarType, Vec<f64>)>,
}

/// Runs each function of the module (at most four) in the interpreter, or the simulator for nvgpu-level
/// code; the results of the runs that finished.
fn run_module(module: &Module, config: &TargetConfig) -> Vec<Option<RunResult>> {
    run_module_with(module, config, &[])
}

/// As [`run_module`], launching function `i` on `grids[i]` when given (the original's grid, for a
/// lowered function whose grid cannot be derived again).
fn run_module_with(module: &Module, config: &TargetConfig, grids: &[Option<[u32; 3]>]) -> Vec<Option<RunResult>> {
    module.funcs.iter().take(4).enumerate().map(|(i, f)| run_func(f, config, grids.get(i).copied().flatten())).collect()
}

/// The most blocks a run may have.
const MAX_BLOCKS: u64 = 16;

fn run_func(func: &Func, config: &TargetConfig, grid: Option<[u32; 3]>) -> Option<RunResult> {
    if !small_enough(func, config.extent, config.max_arg_elements) {
        return None;
    }
    let shapes = ArgShapes { default_extent: config.extent, ..ArgShapes::default() };
    let mut args = interp::default_args(func, &shapes, 7).ok()?;
    let grid = match grid {
        Some(g) => g,
        None => interp::default_launch(func, &args).ok()?.grid,
    };
    if grid.iter().map(|&g| u64::from(g)).product::<u64>() > MAX_BLOCKS {
        return None;
    }
    let types: Vec<ScalarType> = func.args().iter().map(|&a| func.body.ty(a).element_type()).collect();
    if is_nvgpu_level(func) {
        let mut sim_args: Vec<SimArg> = args
            .into_iter()
            .map(|a| match a {
                ArgValue::Tensor(t) => SimArg::Tile(t),
                ArgValue::Scalar(_, x) => SimArg::Scalar(x),
            })
            .collect();
        let options = SimOptions { fuel: config.sim_fuel, ..SimOptions::default() };
        sim::simulate_with(func, &mut sim_args, &sim::Launch::grid(grid[0], grid[1], grid[2]), &options).ok()?;
        let values = sim_args.iter().map(|a| match a {
            SimArg::Tile(t) => t.values.clone(),
            SimArg::Scalar(x) => vec![*x],
        });
        return Some(RunResult { engine: Engine::Simulator, grid, args: types.into_iter().zip(values).collect() });
    }
    let limits = Limits { fuel: config.interp_fuel, max_shared_bytes: 1 << 18, max_tile_elements: 1 << 16 };
    interp::run_with_limits(func, &mut args, &interp::Launch::new(grid), &limits).ok()?;
    let values = args.iter().map(|a| match a {
        ArgValue::Tensor(t) => t.values.clone(),
        ArgValue::Scalar(_, x) => vec![*x],
    });
    Some(RunResult { engine: Engine::Interpreter, grid, args: types.into_iter().zip(values).collect() })
}

/// The tolerance of comparing the simulator with the interpreter (the same as `tilec sim` and
/// `tilec compare`): their MMAs round partial sums differently. The same engine must agree exactly.
fn tolerance(elem: ScalarType) -> (f64, f64) {
    match elem {
        ScalarType::F32 | ScalarType::TF32 | ScalarType::F64 => (1e-3, 1e-3),
        ScalarType::F16 | ScalarType::BF16 => (1e-2, 1e-2),
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => (1e-1, 1e-1),
        _ => (0.0, 0.0),
    }
}

/// The first difference between two runs' argument values (NaN equals NaN; bit-exact within one engine,
/// within [`tolerance`] between the interpreter and the simulator).
fn compare(a: &RunResult, b: &RunResult) -> Option<String> {
    if a.args.len() != b.args.len() {
        return Some(format!("{} arguments vs {}", a.args.len(), b.args.len()));
    }
    let same_engine = a.engine == b.engine;
    for (i, ((elem, x), (_, y))) in a.args.iter().zip(&b.args).enumerate() {
        if x.len() != y.len() {
            return Some(format!("argument #{i} has {} elements vs {}", x.len(), y.len()));
        }
        let (atol, rtol) = if same_engine { (0.0, 0.0) } else { tolerance(*elem) };
        for (j, (p, q)) in x.iter().zip(y).enumerate() {
            let same = p.to_bits() == q.to_bits()
                || (p.is_nan() && q.is_nan())
                || (!same_engine && p == q)
                || (p - q).abs() <= atol + rtol * p.abs();
            if !same {
                return Some(format!(
                    "argument #{i} element {j} is {p} ({:?}) before the passes and {q} ({:?}) after",
                    a.engine, b.engine
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_run_without_findings() {
        let gemm = include_str!("../../examples/gemm.tir");
        assert_eq!(check(gemm, &TargetConfig::default()), Ok(Reached::Executed));
        let seed = include_str!("../../examples/seeds/ldmatrix_x4.tir");
        assert_eq!(check(seed, &TargetConfig::default()), Ok(Reached::Executed));
    }

    #[test]
    fn garbage_is_rejected_by_the_parser() {
        assert_eq!(check("tile.func @f( {", &TargetConfig::default()), Ok(Reached::Parse));
    }
}
