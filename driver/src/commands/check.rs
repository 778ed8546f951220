//! `tilec check FILE [--target T] [--verify-diagnostics]`: parse, verify, and lower for the target as far as
//! LLVM IR, diagnostics only. "ok" means `tilec FILE --target T -o out.ptx` compiles it: the check runs the same
//! pipeline and the same backend translation (with its target rules) as compilation, so what the pipeline
//! cannot lower is reported here at the op, never after an "ok".

use tilec_compiler::{Emit, OptLevel, Options};

use crate::cli::CheckArgs;
use crate::error::DriverError;
use crate::input::{compile_error, parse_and_verify, print_warnings, read_source_with, NO_FUNCTIONS};
use crate::target::parse_target;

/// Returns the text to print on success.
pub fn run(args: &CheckArgs) -> Result<String, DriverError> {
    let source = read_source_with(&args.input, &args.params)?;
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
    let module = parse_and_verify(&source)?;
    let mut ops = 0usize;
    for f in &module.funcs {
        f.body.walk(f.entry, &mut |_| ops += 1);
    }
    let funcs = module.funcs.len();
    if funcs == 0 {
        print_warnings(&source, &[tilec_ir::Diagnostic::warning(tilec_ir::Span::new(0, 0), NO_FUNCTIONS)]);
    }
    // The whole pipeline and the LLVM translation (unoptimised: only its target rules matter here).
    let options = Options { target, emit: Emit::Llvm, opt_level: OptLevel::O0, ..Options::default() };
    let compiled = match tilec_compiler::compile(module, &options) {
        Ok(compiled) => compiled,
        Err(e) => {
            if let Some(log) = e.log() {
                print_warnings(&source, &log.pass_warnings);
            }
            return Err(compile_error(&source, e));
        }
    };
    print_warnings(&source, &compiled.log.pass_warnings);
    let warned = match compiled.log.pass_warnings.len() {
        0 => String::new(),
        n => format!(", {n} warning(s)"),
    };
    Ok(format!("{}: ok ({funcs} function(s), {ops} op(s); lowers for {target}{warned})\n", source.name))
}
