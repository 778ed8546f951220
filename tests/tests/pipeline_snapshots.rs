//! Snapshots (insta, under `tests/snapshots/pipeline__*.snap`) of the default pipeline on the examples: for
//! every `examples/*.tir` (the seeds under `examples/seeds/` are nvgpu-level already and are left out), the
//! nvgpu-level IR that `full_pipeline(Target::Sm80)` produces (what `tilec FILE --emit nvgpu` prints), so
//! that any change of the lowering — a different warp grid, copy plan, swizzle, instruction count, address
//! arithmetic — shows up in review.
//!
//! A missing snapshot fails the test (it is never written silently). To create or update snapshots, run
//! `INSTA_UPDATE=always cargo test -p tilec-tests --test pipeline_snapshots` (or `cargo insta review`) and
//! read every changed `.snap` file before committing it.

use std::path::{Path, PathBuf};

use tilec_compiler::{Emit, Options};
use tilec_ir::parse_module;
use tilec_tests::{display_path, examples_dir};

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// Asserts a snapshot that must already exist unless the run explicitly asks insta to write snapshots
/// (the same rule as `tests/snapshots.rs`).
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

/// The tile-level examples: `examples/*.tir`, not recursing into `examples/seeds/`.
fn tile_examples() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples/ is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "tir"))
        .collect();
    found.sort();
    found
}

/// The target an example is lowered for: sm_80, or the first its `// targets:` line names when that line leaves
/// out sm_80 (`examples/gemm_hopper.tir`: sm_90a only), as scripts/validate-ptx.sh reads the line.
fn example_target(text: &str) -> tilec_ir::Target {
    let targets: Vec<&str> = text.lines().find_map(|l| l.strip_prefix("// targets:")).map(|t| t.split_whitespace().collect()).unwrap_or_default();
    match targets.first() {
        Some(first) if !targets.contains(&"sm_80") => first.parse().unwrap_or_else(|e| panic!("// targets: {first}: {e}")),
        _ => tilec_ir::Target::Sm80,
    }
}

/// Parses `path` and compiles it through the front door to nvgpu-level IR for sm_80 or its own target
/// ([`example_target`]; the whole default pipeline, verifying after every pass): what `tilec FILE --emit nvgpu`
/// prints.
fn lower(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = parse_module(&text).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
    let options = Options { emit: Emit::Nvgpu, target: example_target(&text), ..Options::default() };
    match tilec_compiler::compile(module, &options) {
        Ok(compiled) => compiled.output,
        Err(e) => {
            let messages: Vec<String> = e.diagnostics().iter().map(|d| d.to_string()).collect();
            panic!("{}: the default pipeline failed: {}", path.display(), messages.join("; "));
        }
    }
}

#[test]
fn default_pipeline_on_examples() {
    let examples = tile_examples();
    assert!(examples.len() >= 5, "expected the tile-level examples under examples/, found {examples:?}");
    for path in examples {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = format!("pipeline__examples__{stem}");
        let target = example_target(&std::fs::read_to_string(&path).unwrap_or_default());
        let description = format!("full_pipeline(Target::{target:?}) on {}, printed", display_path(&path));
        assert_existing_snapshot(&name, &description, &lower(&path));
    }
}

/// The snapshots are what the driver prints too: the pipeline is deterministic (two runs, same text).
#[test]
fn default_pipeline_is_deterministic() {
    for path in tile_examples() {
        assert_eq!(lower(&path), lower(&path), "{}: two runs of the default pipeline differ", path.display());
    }
}
