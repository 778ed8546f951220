//! `tilec check FILE [--verify-diagnostics]`: parse and verify, diagnostics only.

use crate::cli::CheckArgs;
use crate::error::DriverError;
use crate::input::{parse_and_verify, read_source};

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
    let module = parse_and_verify(&source)?;
    let mut ops = 0usize;
    for f in &module.funcs {
        f.body.walk(f.entry, &mut |_| ops += 1);
    }
    Ok(format!("{}: ok ({} function(s), {ops} op(s))\n", source.name, module.funcs.len()))
}
