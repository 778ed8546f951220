//! Embedding tilec's pass library in another compiler.
//!
//! The "host" compiler builds tile IR from Rust with `FuncBuilder`, registers a pass of its own next to
//! the built-in ones (here: one that counts ops per function and tags each function with the count), and
//! runs a pipeline string through the `PassManager`, with IR printing and timing.
//!
//! Run with `cargo run -p tilec-passes --example embed`.

use tilec_ir::builder::FuncBuilder;
use tilec_ir::{Attribute, Diagnostic, MemorySpace, Module, ScalarType, Span, TileType};
use tilec_ir::Target;
use tilec_passes::{Pass, PassContext, PassManager, PassRegistry};

/// What `count-ops` leaves in the context for the host to read.
#[derive(Debug, Default, PartialEq)]
pub struct OpCounts {
    /// (function, number of ops including nested ones), one entry per run of the pass.
    pub per_func: Vec<(String, usize)>,
}

/// The host compiler's pass: counts ops, records them in an [`OpCounts`] report, tags each function with
/// an `embed.op_count` attribute (visible in printed IR; a dotted name is a host compiler's own attribute, which tilec carries without checking) and leaves a remark.
#[derive(Default)]
pub struct CountOps;

impl Pass for CountOps {
    fn name(&self) -> &'static str {
        "count-ops"
    }

    fn description(&self) -> &'static str {
        "Count the ops of every function and tag it with 'embed.op_count'"
    }

    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let mut n = 0usize;
            func.body.walk(func.entry, &mut |_| n += 1);
            func.attrs.insert("embed.op_count".to_string(), Attribute::Int(n as i64));
            cx.report_or_default::<OpCounts>().per_func.push((func.name.clone(), n));
            cx.remark(Span::UNKNOWN, format!("@{} has {n} ops", func.name));
        }
        Ok(())
    }
}

/// A kernel as a host compiler might emit it: scale a 16x16 f32 tile by 2, with some redundant index
/// arithmetic for the cleanup passes to remove.
pub fn build_module() -> Module {
    let mut b = FuncBuilder::new("scale");
    let x = b.arg(TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Global));
    let zero = b.index(0);
    let one = b.index(1);
    let row = b.mul(zero, one); // 0 * 1: folds to 0
    let zero_again = b.index(0); // a duplicate: CSE merges it
    let col = b.add(zero_again, zero);
    let s = b.alloc_shared(TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Shared));
    b.copy_g2s(x, &[row, col], s);
    let r = b.copy_s2r(s, &[], TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Register));
    let two = b.fill(2.0, TileType::new(&[16, 16], ScalarType::F32, MemorySpace::Register));
    let y = b.mul(r, two);
    b.copy_r2g(y, x, &[row, col]);
    b.ret();
    Module { funcs: vec![b.finish()] }
}

/// Runs `count-ops,canonicalize,cse,dce,count-ops` and returns what the host would print.
pub fn run() -> Result<(String, OpCounts), String> {
    let mut registry = PassRegistry::with_builtin();
    registry.register_pass::<CountOps>();
    let pipeline = "count-ops,canonicalize,cse,canonicalize,dce,count-ops";
    let pm = PassManager::from_pipeline(&registry, pipeline)
        .map_err(|d| d.to_string())?
        .print_ir_after("count-ops")
        .timing(true);
    let mut module = build_module();
    let mut cx = PassContext::new(Target::Sm80);
    let report = pm.run(&mut module, &mut cx).map_err(|e| e.to_string())?;

    let mut out = String::new();
    out.push_str(&format!("pipeline: {pipeline}\n\n"));
    if let Some(last) = report.dumps.last() {
        out.push_str(&last.to_string());
        out.push('\n');
    }
    for remark in &cx.remarks {
        out.push_str(&format!("remark [{}]: {}\n", remark.pass, remark.message));
    }
    let counts = cx.take_report::<OpCounts>().unwrap_or_default();
    if let Some(timing) = report.timing {
        out.push('\n');
        out.push_str(&timing.to_string());
    }
    Ok((out, counts))
}

#[allow(dead_code)]
fn main() {
    match run() {
        Ok((text, _)) => print!("{text}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
