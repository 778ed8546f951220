//! Outside the op catalogue (`ir/src/ops/`), library code reads and builds ops through typed views, never by
//! an operand-group or attribute name in a string (issue 15: `.attr("…")`, `.operand("…")`, `.group("…")`
//! were looked up in 336 places). This keeps the count at zero.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_op_is_read_by_a_string_name_outside_the_catalogue() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["ir/src", "passes/src", "lower-ptx/src", "driver/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    let catalogue = root.join("ir/src/ops");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&catalogue)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if [".attr(\"", ".operand(\"", ".group(\""].iter().any(|p| line.contains(p)) {
                found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "use the typed views (tilec_ir::typed) instead:\n{}", found.join("\n"));
    assert!(files.len() > 50, "only {} files read", files.len());
}
