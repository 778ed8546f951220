//! The pass manager: verification after each pass, IR dumps, timing, failures.

use tilec_ir::{Diagnostic, Module, OpKind, OpSpec, Span, Target};
use tilec_passes::{
    DumpPoint, Pass, PassContext, PassManager, PassRegistry, TimingKind, Verify,
};

const INPUT: &str = "tile.func @f(%out: tile<16x8xi32, global>) {
  %c0 = tile.constant 0 : index
  %a = tile.constant 2 : i32
  %b = tile.constant 3 : i32
  %c = tile.mul %a, %b : i32
  %d = tile.mul %a, %b : i32
  %s = tile.splat %c : tile<16x8xi32, reg>
  tile.copy_r2g %s, %out[%c0, %c0]
  tile.return
}
";

fn module() -> Module {
    tilec_ir::parse_module(INPUT).unwrap()
}

/// Breaks the IR: erases the terminator of every function.
#[derive(Default)]
struct BreakTerminator;

impl Pass for BreakTerminator {
    fn name(&self) -> &'static str {
        "break-terminator"
    }
    fn description(&self) -> &'static str {
        "test pass: removes 'tile.return'"
    }
    fn run(&self, module: &mut Module, _: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let last = *func.body.block(func.entry).ops.last().unwrap();
            func.body.erase(last);
        }
        Ok(())
    }
}

/// Fails with a located diagnostic.
#[derive(Default)]
struct Refuse;

impl Pass for Refuse {
    fn name(&self) -> &'static str {
        "refuse"
    }
    fn description(&self) -> &'static str {
        "test pass: always fails"
    }
    fn run(&self, module: &mut Module, _: &mut PassContext) -> Result<(), Diagnostic> {
        let span = module.funcs[0].span;
        Err(Diagnostic::error(span, "no layout fits this tile").with_note("try a smaller tile"))
    }
}

#[derive(Default)]
struct Panics;

impl Pass for Panics {
    fn name(&self) -> &'static str {
        "panics"
    }
    fn description(&self) -> &'static str {
        "test pass: panics"
    }
    fn run(&self, _: &mut Module, _: &mut PassContext) -> Result<(), Diagnostic> {
        panic!("index out of bounds")
    }
}

/// Adds an unused constant at the start of every function (valid IR, visible in dumps).
#[derive(Default)]
struct AddConstant;

impl Pass for AddConstant {
    fn name(&self) -> &'static str {
        "add-constant"
    }
    fn description(&self) -> &'static str {
        "test pass: adds an unused constant"
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let first = func.body.block(func.entry).ops[0];
            let op = func.body.create_op(OpSpec::new(OpKind::Constant).attr("value", 99i64).result(tilec_ir::Type::INDEX));
            func.body.insert_before(first, op);
        }
        cx.remark(Span::UNKNOWN, "added a constant");
        Ok(())
    }
}

fn registry() -> PassRegistry {
    let mut r = PassRegistry::with_builtin();
    r.register_pass::<BreakTerminator>();
    r.register_pass::<Refuse>();
    r.register_pass::<Panics>();
    r.register_pass::<AddConstant>();
    r
}

fn manager(pipeline: &str) -> PassManager {
    PassManager::from_pipeline(&registry(), pipeline).unwrap()
}

#[test]
fn verifier_after_each_pass_names_the_pass() {
    let mut m = module();
    let err = manager("canonicalize,break-terminator,dce").run(&mut m, &mut PassContext::default()).unwrap_err();
    let d = &err.diagnostics.0;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "after pass 'break-terminator': a function body must end with 'tile.return'");
    assert_eq!(d[0].notes[0].message, "the IR verified before 'break-terminator'; the pass broke it");
    // The span is the verifier's own: at the op it concerns.
    assert!(!d[0].span.is_unknown());
}

#[test]
fn verify_each_can_be_switched_off() {
    let mut m = module();
    manager("break-terminator").verify_each(false).run(&mut m, &mut PassContext::default()).unwrap();
    assert!(tilec_ir::verify::verify_module(&m).is_err());
}

#[test]
fn verification_at_the_end_catches_a_broken_pass_without_naming_it() {
    let mut m = module();
    let err = manager("canonicalize,break-terminator,dce").verify(Verify::AtEnd).run(&mut m, &mut PassContext::default()).unwrap_err();
    let d = &err.diagnostics.0;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "after the pipeline: a function body must end with 'tile.return'");
    assert!(d[0].notes[0].message.contains("--verify-each"));
    // A pipeline that leaves valid IR passes, and the timing shows the one verification.
    let report = manager("canonicalize,dce").verify(Verify::AtEnd).timing(true).run(&mut module(), &mut PassContext::default()).unwrap();
    assert_eq!(report.timing.unwrap().names(), ["canonicalize", "dce", "(verifier)"]);
}

#[test]
fn input_that_does_not_verify_is_reported_before_any_pass() {
    let mut m = module();
    BreakTerminator.run(&mut m, &mut PassContext::default()).unwrap();
    let err = manager("dce").run(&mut m, &mut PassContext::default()).unwrap_err();
    assert!(err.diagnostics.0[0].message.starts_with("before the pipeline: the input does not verify: "));
}

#[test]
fn a_failing_pass_keeps_its_diagnostic_and_stops_the_pipeline() {
    let mut m = module();
    let err = manager("canonicalize,refuse,dce").print_ir_after_all(true).run(&mut m, &mut PassContext::default()).unwrap_err();
    let d = &err.diagnostics.0[0];
    assert_eq!(d.message, "no layout fits this tile");
    assert_eq!(d.notes[0].message, "try a smaller tile");
    let headers: Vec<_> = err.report.dumps.iter().map(|d| d.header.as_str()).collect();
    assert_eq!(
        headers,
        ["// -----// IR Dump After canonicalize //----- //", "// -----// IR Dump After refuse Failed //----- //"]
    );
}

#[test]
fn a_panicking_pass_becomes_a_diagnostic() {
    let mut m = module();
    let err = manager("panics").run(&mut m, &mut PassContext::default()).unwrap_err();
    assert_eq!(err.diagnostics.0[0].message, "pass 'panics' panicked: index out of bounds");
}

#[test]
fn print_ir_after_all() {
    let mut m = module();
    let report = manager("canonicalize,cse,dce").print_ir_after_all(true).run(&mut m, &mut PassContext::default()).unwrap();
    let headers: Vec<_> = report.dumps.iter().map(|d| d.header.as_str()).collect();
    assert_eq!(
        headers,
        [
            "// -----// IR Dump After canonicalize //----- //",
            "// -----// IR Dump After cse //----- //",
            "// -----// IR Dump After dce //----- //",
        ]
    );
    assert!(report.dumps.iter().all(|d| d.point == DumpPoint::After));
    // The last dump is the final IR.
    assert_eq!(report.dumps[2].ir, tilec_ir::print_module(&m));
    assert_eq!(
        report.dumps[2].ir,
        "tile.func @f(%out: tile<16x8xi32, global>) {
  %c0 = tile.constant 0 : index
  %s = tile.fill 6 : tile<16x8xi32, reg>
  tile.copy_r2g %s, %out[%c0, %c0]
  tile.return
}
"
    );
    assert!(report.dumps[0].to_string().starts_with("// -----// IR Dump After canonicalize //----- //\ntile.func @f("));
    assert!(report.timing.is_none());
}

#[test]
fn print_ir_before_and_after_named_passes() {
    let mut m = module();
    let pm = manager("add-constant,cse,add-constant,dce")
        .print_ir_before("add-constant")
        .print_ir_after("dce")
        .print_ir_after("no-such-pass");
    assert_eq!(pm.unmatched_print_filters(), ["no-such-pass"]);
    let report = pm.run(&mut m, &mut PassContext::default()).unwrap();
    let headers: Vec<_> = report.dumps.iter().map(|d| (d.pass.as_str(), d.point)).collect();
    assert_eq!(
        headers,
        [("add-constant", DumpPoint::Before), ("add-constant", DumpPoint::Before), ("dce", DumpPoint::After)]
    );
    assert_eq!(report.dumps[0].header, "// -----// IR Dump Before add-constant //----- //");
    assert_eq!(report.dumps[0].ir, INPUT);
    assert!(report.dumps[1].ir.contains("tile.constant 99 : index"));
    assert!(!report.dumps[2].ir.contains("tile.constant 99 : index"));
}

#[test]
fn print_ir_before_all() {
    let mut m = module();
    let report = manager("cse,dce").print_ir_before_all(true).run(&mut m, &mut PassContext::default()).unwrap();
    let headers: Vec<_> = report.dumps.iter().map(|d| d.header.as_str()).collect();
    assert_eq!(headers, ["// -----// IR Dump Before cse //----- //", "// -----// IR Dump Before dce //----- //"]);
}

#[test]
fn timing_report_lists_passes_in_pipeline_order() {
    let mut m = module();
    let report = manager("canonicalize,cse,canonicalize,dce").timing(true).run(&mut m, &mut PassContext::default()).unwrap();
    let timing = report.timing.unwrap();
    assert_eq!(timing.names(), ["canonicalize", "cse", "canonicalize", "dce", "(verifier)"]);
    assert_eq!(timing.rows[4].kind, TimingKind::Verifier);
    assert!(timing.rows[..4].iter().all(|r| r.kind == TimingKind::Pass));
    let text = timing.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "===-------------------------------------------------------------------------===");
    assert_eq!(lines[1].trim(), "... Execution time report ...");
    assert_eq!(lines[2], lines[0]);
    assert!(lines[3].starts_with("  Total Execution Time: ") && lines[3].ends_with(" seconds"));
    assert_eq!(lines[5], "  ----Wall Time----  ----Name----");
    let names: Vec<&str> = lines[6..].iter().map(|l| l.split("%)  ").nth(1).unwrap()).collect();
    assert_eq!(names, ["canonicalize", "cse", "canonicalize", "dce", "(verifier)", "Total"]);
    assert!(lines.last().unwrap().contains("Total"));

    // Without verification there is no verifier row; with printing there is a printing row.
    let report = manager("dce").timing(true).verify_each(false).print_ir_after_all(true).run(&mut module(), &mut PassContext::default()).unwrap();
    assert_eq!(report.timing.unwrap().names(), ["dce", "(print-ir)"]);
}

#[test]
fn a_manager_runs_many_modules_and_remarks_name_their_pass() {
    let pm = manager("add-constant,dce");
    let mut cx = PassContext::new(Target::Sm86);
    for _ in 0..3 {
        let mut m = module();
        pm.run(&mut m, &mut cx).unwrap();
    }
    assert_eq!(cx.remarks.len(), 3);
    assert!(cx.remarks.iter().all(|r| r.pass == "add-constant" && r.message == "added a constant"));
    assert_eq!(cx.current_pass(), None);
}

#[test]
fn manager_built_pass_by_pass() {
    let mut m = module();
    let pm = PassManager::new()
        .with_pass(tilec_passes::cleanup::Canonicalize)
        .with_pass(tilec_passes::cleanup::Dce);
    assert_eq!(pm.pass_names(), ["canonicalize", "dce"]);
    pm.run(&mut m, &mut PassContext::default()).unwrap();
    assert_eq!(m.funcs[0].body.block(m.funcs[0].entry).ops.len(), 4);
}
