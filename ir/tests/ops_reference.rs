//! `docs/ops.md` is what the catalogue generates (`tilec_ir::ops::reference::markdown`): the reference cannot
//! drift from the ops. `UPDATE_OPS_DOC=1` rewrites it. Each op's example is the first line of the examples
//! (`examples/**/*.tir`, then the lit tests) that uses it, so the examples are real, parsed code.

use std::path::{Path, PathBuf};

use tilec_ir::ops::reference::markdown;
use tilec_ir::OpKind;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.tir` file under `dir`, sorted, recursively.
fn tir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            tir_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tir") {
            out.push(path);
        }
    }
}

fn example_lines() -> Vec<String> {
    let mut files = Vec::new();
    tir_files(&root().join("examples"), &mut files);
    tir_files(&root().join("tests/lit"), &mut files);
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| text.lines().map(|l| l.trim().to_string()).collect::<Vec<_>>())
        .filter(|l| !l.starts_with("//") && !l.contains("CHECK") && !l.contains("RUN:"))
        .collect()
}

#[test]
fn docs_ops_md_is_generated_from_the_catalogue() {
    let lines = example_lines();
    let example = |kind: OpKind| -> Option<String> {
        let name = kind.name();
        lines
            .iter()
            .find(|l| l.split(|c: char| c.is_whitespace() || c == '(').any(|word| word == name))
            .map(|l| l.split(" //").next().unwrap_or(l).trim_end().to_string())
    };
    let generated = markdown(&example);
    let path = root().join("docs/ops.md");
    if std::env::var_os("UPDATE_OPS_DOC").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "docs/ops.md is stale: regenerate it with `UPDATE_OPS_DOC=1 cargo test --release -p tilec-ir --test ops_reference`"
    );
}

#[test]
fn every_op_is_in_the_reference_with_its_attributes() {
    let text = markdown(&|_| None);
    for def in tilec_ir::ops::OP_DEFS {
        assert!(text.contains(&format!("### `{}`", def.name)), "{} is missing", def.name);
        for a in def.attributes {
            assert!(text.contains(&format!("| `{}` |", a.name)), "{}'s attribute {} is missing", def.name, a.name);
        }
    }
    assert!(text.contains("| `numTiles` | a non-negative integer | required |"));
    assert!(text.contains("| `transpose` | true or false | `false` |"));
    assert!(text.contains("Lowers on: sm_90 and newer."));
}
