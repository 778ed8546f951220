//! MLIR's `-verify-diagnostics` over the pass pipeline: a `.tir` file whose header names a pipeline
//! (`// pipeline: layout-assignment,lower-tile-to-nvgpu`, optionally `// target: sm_90`) is parsed, verified
//! and run through it, so pass failures can be tested like parse and verifier errors, with
//! `// expected-error {{...}}` comments beside the op (see `tilec_ir::expect`).

use tilec_ir::{Diagnostic, SourceFile, Span};

use crate::context::PassContext;
use crate::manager::PassManager;
use crate::registry::PassRegistry;
use tilec_ir::Target;

/// The value of a `// KEY: value` header line.
fn header<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.trim_start().strip_prefix("//")?.trim_start().strip_prefix(key)?.strip_prefix(':').map(str::trim))
}

/// The diagnostics of parsing and verifying `text` and, when its header names a pipeline, of running it.
pub fn diagnose(text: &str) -> Vec<Diagnostic> {
    let Some(pipeline) = header(text, "pipeline") else { return tilec_ir::expect::diagnose(text) };
    let target = match header(text, "target").map(str::parse::<Target>) {
        None => Target::Sm80,
        Some(Ok(t)) => t,
        Some(Err(e)) => return vec![Diagnostic::error(Span::UNKNOWN, format!("// target: {e}"))],
    };
    let mut module = match tilec_ir::parse_module(text) {
        Ok(m) => m,
        Err(d) => return d.0,
    };
    if let Err(d) = tilec_ir::verify::verify_module(&module) {
        return d.0;
    }
    let registry = PassRegistry::with_builtin();
    let pm = match PassManager::from_pipeline(&registry, pipeline) {
        Ok(pm) => pm,
        Err(d) => return vec![Diagnostic::error(Span::UNKNOWN, format!("// pipeline: {}", d.message))],
    };
    match pm.run(&mut module, &mut PassContext::new(target)) {
        Ok(_) => Vec::new(),
        Err(e) => e.diagnostics.0,
    }
}

/// [`diagnose`], then the file's expectations checked against what was produced.
pub fn verify_diagnostics(source: &SourceFile) -> Result<usize, Vec<String>> {
    tilec_ir::expect::check(source, &diagnose(&source.text))
}
