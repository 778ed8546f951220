//! Embedding tilec: a host program compiles a kernel through the front door, `tilec_compiler`.
//!
//! 1. [`tilec_compiler::compile`] with [`Options`]: the kernel as written (`examples/gemm.tir`) to PTX for
//!    sm_80, with each kernel's launch description.
//! 2. A [`Compiler`] with a pass of the host's own registered beside the built-in ones, named in a pipeline
//!    string, leaving remarks.
//! 3. Launch-time specialization: the kernel compiled for a launch whose rows are not 16-byte aligned
//!    (`K = 130` halves), which needs narrower copies ([`tilec_compiler::compile_for_extents`]).
//!
//! Run with `cargo run -p tilec-compiler --example embed`; `compiler/tests/embed.rs` runs it as a test.

use tilec_compiler::{Compiler, Emit, Options, Target};
use tilec_ir::{Attribute, Diagnostic, Module, SourceFile, Span};
use tilec_passes::{Pass, PassContext};

/// The kernel the host compiles.
pub const GEMM: &str = include_str!("../../examples/gemm.tir");

/// The host's pass: tags every function with the host's own attribute and leaves a remark.
#[derive(Default)]
pub struct TagKernels;

impl Pass for TagKernels {
    fn name(&self) -> &'static str {
        "host-tag"
    }

    fn description(&self) -> &'static str {
        "Tag every function with 'host.compiled_by'"
    }

    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            func.attrs.insert("host.compiled_by".to_string(), Attribute::Str("embed".to_string()));
            cx.remark(Span::UNKNOWN, format!("tagged @{}", func.name));
        }
        Ok(())
    }
}

/// Runs the three steps and returns what the host would print; an error is rendered against the source.
pub fn run() -> Result<String, String> {
    let source = SourceFile::new("examples/gemm.tir", GEMM);
    let render = |d: Vec<Diagnostic>| source.render(&d, false);
    let module = tilec_ir::parse_module(GEMM).map_err(|d| render(d.0))?;
    let mut out = String::new();

    // 1. The defaults (sm_80, LLVM, -O3, PTX), one call.
    let compiled = tilec_compiler::compile(module.clone(), &Options::default()).map_err(|e| render(e.diagnostics()))?;
    for kernel in &compiled.kernels {
        out += &format!(
            "@{}: {} bytes of PTX, block {:?}, {} B shared, {} parameter(s)\n",
            kernel.name,
            compiled.ptx().len(),
            kernel.block,
            kernel.shared_bytes,
            kernel.params.len()
        );
    }

    // 2. A pass of the host's own, after the whole default pipeline; the nvgpu-level IR this time.
    let mut compiler = Compiler::new();
    compiler.registry_mut().register_pass::<TagKernels>();
    let target = Target::Sm90;
    let options = Options {
        target,
        emit: Emit::Nvgpu,
        pipeline: Some(format!("{},host-tag", tilec_passes::full_pipeline(target))),
        ..Options::default()
    };
    let lowered = compiler.compile(module.clone(), &options).map_err(|e| render(e.diagnostics()))?;
    for remark in &lowered.log.remarks {
        out += &format!("remark [{}]: {}\n", remark.pass, remark.message);
    }
    if lowered.output.contains("host.compiled_by = \"embed\"") {
        out += &format!("@gemm lowered for {target} and tagged by the host\n");
    }

    // 3. A launch with M = N = 128, K = 130: rows of A are 260 bytes, not a multiple of 16.
    let extents = [Some(vec![128, 130]), Some(vec![130, 128]), Some(vec![128, 128])];
    let func = module.funcs.first().ok_or("no kernel")?;
    let (specialized, variant) =
        compiler.compile_for_extents(func, &Options::default(), &extents).map_err(|e| render(e.diagnostics()))?;
    if let Some(variant) = variant {
        out += &format!("{variant}\n");
    }
    out += &format!("specialized: {} bytes of PTX\n", specialized.ptx().len());
    Ok(out)
}

#[allow(dead_code)]
fn main() {
    match run() {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprint!("{e}");
            std::process::exit(1);
        }
    }
}
