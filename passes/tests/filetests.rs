//! File tests, Cranelift style: each `tests/filetests/*.tir` names its pipeline in a header, holds its
//! input, and below it the expected output, so a test sits beside its input:
//!
//! ```text
//! // pipeline: canonicalize,cse,dce
//! tile.func @f(...) { ... }
//! // ----- expected
//! // tile.func @f(...) {
//! // ...
//! ```
//! Run with `TILEC_BLESS=1` to rewrite the expected sections from the current output (then review the diff).

use std::path::Path;

use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry};

const SEPARATOR: &str = "// ----- expected";

fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let pipeline = text
        .lines()
        .find_map(|l| l.strip_prefix("// pipeline:"))
        .ok_or("no '// pipeline:' header")?
        .trim()
        .to_string();
    let (input, expected) = text.split_once(SEPARATOR).unwrap_or((&text, ""));
    let mut module = tilec_ir::parse_module(input).map_err(|d| format!("input does not parse: {d}"))?;
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &pipeline).map_err(|d| d.message)?;
    pm.run(&mut module, &mut PassContext::new(Target::Sm80)).map_err(|e| e.to_string())?;
    let output = tilec_ir::print_module(&module);
    let expected: String = expected
        .lines()
        .filter_map(|l| l.strip_prefix("// ").or_else(|| l.strip_prefix("//")))
        .map(|l| format!("{l}\n"))
        .collect();
    if output == expected {
        return Ok(());
    }
    if std::env::var_os("TILEC_BLESS").is_some() {
        let quoted: String = output.lines().map(|l| format!("// {l}\n")).collect();
        std::fs::write(path, format!("{}{SEPARATOR}\n{quoted}", input.trim_end_matches('\n').to_string() + "\n")).unwrap();
        return Ok(());
    }
    Err(format!("output differs\n--- expected:\n{expected}--- got:\n{output}"))
}

#[test]
fn filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "tir"));
    paths.sort();
    assert!(!paths.is_empty());
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| run_file(p).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
