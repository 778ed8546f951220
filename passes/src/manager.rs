//! [`PassManager`]: runs passes over a module in order, verifying after each (or, with
//! [`Verify::AtEnd`], once after the last: what a release `tilec` does unless `--verify-each`), printing
//! IR around the passes asked for, and timing them.
//!
//! ```
//! use tilec_ir::Target;
//! use tilec_passes::{PassContext, PassManager, PassRegistry};
//!
//! let mut module = tilec_ir::parse_module(
//!     "tile.func @f() {\n  %a = tile.constant 2 : index\n  %b = tile.add %a, %a : index\n  tile.return\n}\n",
//! ).unwrap();
//! let registry = PassRegistry::with_builtin();
//! let pm = PassManager::from_pipeline(&registry, "canonicalize,dce").unwrap()
//!     .print_ir_after("canonicalize")
//!     .timing(true);
//! let mut cx = PassContext::new(Target::Sm80);
//! let report = pm.run(&mut module, &mut cx).unwrap();
//! assert_eq!(report.dumps.len(), 1);
//! assert_eq!(report.timing.unwrap().names()[..2], ["canonicalize", "dce"]);
//! ```

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use tilec_ir::verify::verify_module;
use tilec_ir::{print_module, Diagnostic, Diagnostics, Module, Span};

use crate::context::PassContext;
use crate::pass::Pass;
use crate::registry::PassRegistry;
use crate::timing::{TimingKind, TimingReport};

/// Whether a dump was taken before or after its pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpPoint {
    Before,
    After,
    /// After a pass that failed, or whose output did not verify.
    AfterFailure,
}

/// The IR printed around one pass, for `--print-ir-before/after`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrDump {
    pub pass: String,
    pub point: DumpPoint,
    /// `// -----// IR Dump After canonicalize //----- //`, as MLIR writes it.
    pub header: String,
    pub ir: String,
}

impl IrDump {
    fn new(pass: &str, point: DumpPoint, module: &Module) -> IrDump {
        let what = match point {
            DumpPoint::Before => format!("Before {pass}"),
            DumpPoint::After => format!("After {pass}"),
            DumpPoint::AfterFailure => format!("After {pass} Failed"),
        };
        IrDump { pass: pass.to_string(), point, header: format!("// -----// IR Dump {what} //----- //"), ir: print_module(module) }
    }
}

/// The header line, then the IR.
impl fmt::Display for IrDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.header)?;
        f.write_str(&self.ir)
    }
}

/// What a run produced besides the changed module: the IR dumps asked for, in order, and the timing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    pub dumps: Vec<IrDump>,
    /// Present when timing was switched on.
    pub timing: Option<TimingReport>,
}

/// A run that stopped: the diagnostics, and what was dumped and timed up to that point.
#[derive(Debug, thiserror::Error)]
#[error("{diagnostics}")]
pub struct PipelineError {
    pub diagnostics: Diagnostics,
    pub report: RunReport,
}

/// Which passes to print the IR before or after.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum PassFilter {
    #[default]
    None,
    All,
    Named(Vec<String>),
}

impl PassFilter {
    fn matches(&self, pass: &str) -> bool {
        match self {
            PassFilter::None => false,
            PassFilter::All => true,
            PassFilter::Named(names) => names.iter().any(|n| n == pass),
        }
    }

    fn add(&mut self, name: &str) {
        match self {
            PassFilter::All => {}
            PassFilter::Named(names) => names.push(name.to_string()),
            PassFilter::None => *self = PassFilter::Named(vec![name.to_string()]),
        }
    }

    fn names(&self) -> &[String] {
        match self {
            PassFilter::Named(names) => names,
            _ => &[],
        }
    }
}

/// When the pass manager runs the verifier ([`PassManager::verify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// The input, and the IR after every pass: a broken pass is named (MLIR's `-verify-each`). The
    /// default, and what the tests use.
    EachPass,
    /// Only the IR the last pass leaves: a pass that broke the IR is still caught, but not named.
    /// Cheaper (one verification instead of one per pass).
    AtEnd,
    /// Never.
    Off,
}

/// Runs a list of passes. Built from a pipeline string with [`PassManager::from_pipeline`] or pass by
/// pass with [`PassManager::add`]; configured with the builder methods; [`PassManager::run`] may be called
/// on any number of modules.
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    verify: Verify,
    print_before: PassFilter,
    print_after: PassFilter,
    timing: bool,
}

impl Default for PassManager {
    fn default() -> PassManager {
        PassManager::new()
    }
}

impl PassManager {
    /// No passes; verification after each pass on; no printing; no timing.
    pub fn new() -> PassManager {
        PassManager {
            passes: Vec::new(),
            verify: Verify::EachPass,
            print_before: PassFilter::None,
            print_after: PassFilter::None,
            timing: false,
        }
    }

    /// The passes of a pipeline string, built from the registry.
    pub fn from_pipeline(registry: &PassRegistry, pipeline: &str) -> Result<PassManager, Diagnostic> {
        let pipeline = crate::pipeline::Pipeline::parse(pipeline)?;
        Ok(PassManager { passes: registry.build_pipeline(&pipeline)?, ..PassManager::new() })
    }

    /// Appends a pass.
    pub fn add(&mut self, pass: Box<dyn Pass>) -> &mut PassManager {
        self.passes.push(pass);
        self
    }

    /// Appends a pass (builder style).
    pub fn with_pass(mut self, pass: impl Pass + 'static) -> PassManager {
        self.passes.push(Box::new(pass));
        self
    }

    /// The names of the passes, in order.
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Verify the input and the IR after every pass ([`Verify::EachPass`], the default), or never
    /// ([`Verify::Off`]).
    pub fn verify_each(mut self, on: bool) -> PassManager {
        self.verify = if on { Verify::EachPass } else { Verify::Off };
        self
    }

    /// When to verify (see [`Verify`]).
    pub fn verify(mut self, when: Verify) -> PassManager {
        self.verify = when;
        self
    }

    /// `--print-ir-before-all`.
    pub fn print_ir_before_all(mut self, on: bool) -> PassManager {
        self.print_before = if on { PassFilter::All } else { PassFilter::None };
        self
    }

    /// `--print-ir-after-all`.
    pub fn print_ir_after_all(mut self, on: bool) -> PassManager {
        self.print_after = if on { PassFilter::All } else { PassFilter::None };
        self
    }

    /// `--print-ir-before=NAME` (may be given several times).
    pub fn print_ir_before(mut self, pass: &str) -> PassManager {
        self.print_before.add(pass);
        self
    }

    /// `--print-ir-after=NAME` (may be given several times).
    pub fn print_ir_after(mut self, pass: &str) -> PassManager {
        self.print_after.add(pass);
        self
    }

    /// `--timing`: measure each pass and return a [`TimingReport`].
    pub fn timing(mut self, on: bool) -> PassManager {
        self.timing = on;
        self
    }

    /// Names given to `print_ir_before`/`print_ir_after` that are not in this pipeline (the driver may warn
    /// about them, with [`PassRegistry::suggest`]).
    pub fn unmatched_print_filters(&self) -> Vec<String> {
        let names = self.pass_names();
        let mut out: Vec<String> = self
            .print_before
            .names()
            .iter()
            .chain(self.print_after.names())
            .filter(|n| !names.contains(&n.as_str()))
            .cloned()
            .collect();
        out.dedup();
        out
    }

    /// Runs every pass in order. Stops at the first pass that fails, panics, or (with `verify_each`)
    /// leaves IR that does not verify; that error names the pass.
    pub fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<RunReport, PipelineError> {
        let mut run = Run { report: RunReport::default(), timing: TimingReport::default(), verify: Duration::ZERO, printing: Duration::ZERO };
        let result = self.run_passes(module, cx, &mut run);
        cx.current_pass = None;
        if self.timing {
            let mut timing = run.timing;
            if self.verify != Verify::Off {
                timing.push("(verifier)", TimingKind::Verifier, run.verify);
            }
            if !run.printing.is_zero() {
                timing.push("(print-ir)", TimingKind::Printing, run.printing);
            }
            run.report.timing = Some(timing);
        }
        match result {
            Ok(()) => Ok(run.report),
            Err(diagnostics) => Err(PipelineError { diagnostics, report: run.report }),
        }
    }

    fn run_passes(&self, module: &mut Module, cx: &mut PassContext, run: &mut Run) -> Result<(), Diagnostics> {
        if self.verify == Verify::EachPass {
            let start = Instant::now();
            let verified = verify_module(module);
            run.verify += start.elapsed();
            verified.map_err(|d| prefix(d, "before the pipeline: the input does not verify: "))?;
        }
        for pass in &self.passes {
            let name = pass.name();
            if self.print_before.matches(name) {
                let start = Instant::now();
                run.report.dumps.push(IrDump::new(name, DumpPoint::Before, module));
                run.printing += start.elapsed();
            }
            cx.current_pass = Some(name);
            let start = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| pass.run(module, cx)));
            run.timing.push(name, TimingKind::Pass, start.elapsed());
            let failure = match outcome {
                Ok(Ok(())) => None,
                // The pass's own diagnostic, as the user reads it (the pass is named by `--print-ir-after`'s
                // dump of the failure, not in the message).
                Ok(Err(d)) => Some(Diagnostics(vec![d])),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_string());
                    Some(Diagnostics(vec![Diagnostic::error(Span::UNKNOWN, format!("pass '{name}' panicked: {what}"))
                        .with_note("this is a bug in the pass")]))
                }
            };
            let failure = failure.or_else(|| {
                if self.verify != Verify::EachPass {
                    return None;
                }
                let start = Instant::now();
                let verified = verify_module(module);
                run.verify += start.elapsed();
                verified.err().map(|d| {
                    let mut d = prefix(d, &format!("after pass '{name}': "));
                    if let Some(first) = d.0.first_mut() {
                        first.notes.push(tilec_ir::diag::Note {
                            span: None,
                            message: format!("the IR verified before '{name}'; the pass broke it"),
                        });
                    }
                    d
                })
            });
            if let Some(diagnostics) = failure {
                if self.print_after.matches(name) {
                    run.report.dumps.push(IrDump::new(name, DumpPoint::AfterFailure, module));
                }
                return Err(diagnostics);
            }
            if self.print_after.matches(name) {
                let start = Instant::now();
                run.report.dumps.push(IrDump::new(name, DumpPoint::After, module));
                run.printing += start.elapsed();
            }
        }
        if self.verify == Verify::AtEnd {
            let start = Instant::now();
            let verified = verify_module(module);
            run.verify += start.elapsed();
            verified.map_err(|d| {
                let mut d = prefix(d, "after the pipeline: ");
                if let Some(first) = d.0.first_mut() {
                    first.notes.push(tilec_ir::diag::Note {
                        span: None,
                        message: "a pass left IR that does not verify; verify after every pass (`--verify-each`) to name it"
                            .to_string(),
                    });
                }
                d
            })?;
        }
        Ok(())
    }
}

struct Run {
    report: RunReport,
    timing: TimingReport,
    verify: Duration,
    printing: Duration,
}

fn prefix(mut diagnostics: Diagnostics, text: &str) -> Diagnostics {
    for d in &mut diagnostics.0 {
        d.message = format!("{text}{}", d.message);
    }
    diagnostics
}
