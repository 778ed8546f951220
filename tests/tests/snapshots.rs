//! Snapshots (insta, under `tests/snapshots/`, named after their input): the printed IR of every example and
//! the rendered diagnostics of representative corpus files, so that a change of output, message or caret
//! shows up in review.
//!
//! A missing snapshot fails the test (it is never written silently). To create or update snapshots, run
//! `INSTA_UPDATE=always cargo test -p tilec-tests --test snapshots` (or `cargo insta review`) and read every
//! changed `.snap` file before committing it.

use std::path::Path;

use tilec_ir::{parse_module, print_module};
use tilec_tests::{diagnostics_dir, display_path, examples_dir, files_with_extension, render_diagnostics};

fn snapshot_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// `examples/seeds/foo.tir` → `examples__seeds__foo`.
fn snapshot_name(prefix: &str, path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    format!("{prefix}__{}", parts.join("__"))
}

/// Asserts a snapshot that must already exist unless the run explicitly asks insta to write snapshots.
fn assert_existing_snapshot(name: &str, description: &str, value: &str) {
    let file = snapshot_dir().join(format!("{name}.snap"));
    let updating = matches!(std::env::var("INSTA_UPDATE").as_deref(), Ok("always" | "new" | "unseen"));
    assert!(
        updating || file.exists(),
        "snapshot {} is missing: create it with INSTA_UPDATE=always and review it",
        file.display()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(snapshot_dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_description(description);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, value));
}

#[test]
fn printed_examples() {
    let root = tilec_tests::repo_root();
    for path in files_with_extension(&examples_dir(), "tir") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let module = parse_module(&text).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
        let name = snapshot_name("print", &path, &root);
        assert_existing_snapshot(&name, &format!("print_module(parse({}))", display_path(&path)), &print_module(&module));
    }
}

/// Representative corpus files: one or two per group, with notes, several errors, and carets mid-line.
const DIAGNOSTIC_SNAPSHOTS: &[&str] = &[
    "lexer/unterminated_string.tir",
    "lexer/integer_too_large.tir",
    "lexer/unterminated_layout.tir",
    "parser/unknown_op_did_you_mean.tir",
    "parser/redefinition_of_value.tir",
    "parser/truncated_missing_brace.tir",
    "parser/attr_dict_missing_comma.tir",
    "types/zero_extent.tir",
    "layout/linear_garbage.tir",
    "structure/several_independent_errors.tir",
    "structure/several_parse_errors.tir",
    "verify/mma/shape_mismatch.tir",
    "verify/copy_s2r/window_larger_than_tile.tir",
];

#[test]
fn rendered_diagnostics() {
    let root = diagnostics_dir();
    for rel in DIAGNOSTIC_SNAPSHOTS {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let shown = display_path(&path);
        let rendered = render_diagnostics(&shown, &text);
        assert!(!rendered.is_empty(), "{shown} produced no diagnostics");
        let name = snapshot_name("diagnostics", &path, &root);
        assert_existing_snapshot(&name, &format!("rendered diagnostics of {shown}"), &rendered);
    }
}
