//! `tilec check FILE [--target T] [--verify-diagnostics]`: parse, verify, and lower for the target as far as
//! LLVM IR, diagnostics only. "ok" means `tilec FILE --target T -o out.ptx` compiles it: the check runs the same
//! pipeline and the same backend translation (with its target rules) as compilation, so what the pipeline
//! cannot lower is reported here at the op, never after an "ok".

use tilec_passes::{PassContext, PassManager, PassRegistry};

use crate::cli::CheckArgs;
use crate::error::DriverError;
use crate::input::{diagnostics, parse_and_verify, read_source};
use crate::target::parse_target;

/// Returns the text to print on success.
pub fn run(args: &CheckArgs) -> Result<String, DriverError> {
    let source = read_source(&args.input)?;
    if args.verify_diagnostics {
        // MLIR's -verify-diagnostics: the file's `// expected-error {{...}}` comments must match exactly
        // the diagnostics produced, no more and no fewer.
        // A `// pipeline: ...` header runs the passes too, so pass failures can be expected like parse errors.
        return match tilec_passes::expect::verify_diagnostics(&source) {
            Ok(n) => Ok(format!("{}: ok ({n} expected diagnostic(s) matched)\n", source.name)),
            Err(mismatches) => Err(DriverError::Usage(format!(
                "diagnostics do not match the expectations in {}:\n{}",
                source.name,
                mismatches.join("\n")
            ))),
        };
    }
    let target = parse_target(&args.target)?;
    let mut module = parse_and_verify(&source)?;
    let mut ops = 0usize;
    for f in &module.funcs {
        f.body.walk(f.entry, &mut |_| ops += 1);
    }
    let pipeline = tilec_passes::full_pipeline(target);
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &pipeline)
        .map_err(|d| DriverError::Usage(format!("the default pipeline does not parse: {}", d.message)))?;
    pm.run(&mut module, &mut PassContext::new(target)).map_err(|e| diagnostics(&source, e.diagnostics.0))?;
    tilec_lower_ptx::emit_ir(&module, target, tilec_lower_ptx::Backend::Llvm, tilec_lower_ptx::OptLevel::O0)
        .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
    Ok(format!("{}: ok ({} function(s), {ops} op(s); lowers for {target})\n", source.name, module.funcs.len()))
}
