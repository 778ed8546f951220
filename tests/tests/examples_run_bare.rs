//! Every example runs with `tilec sim FILE` and no flags (issue 16 item 8): the kernel's `sample_args`
//! attribute declares small shapes and scalar values where its extents are dynamic or it takes scalars. For a
//! tile-level kernel, `tilec sim` lowers it, simulates it and compares every tensor with the reference
//! interpreter (interp = sim, within `tilec compare`'s tolerance), failing otherwise; an nvgpu-level seed or
//! Hopper example (`examples/hopper/`) runs on the simulator alone (its own checks: mbarrier phases, wgmma and
//! TMA ordering, races). The directory is listed, not a fixed set: examples added later are held to it. An
//! example whose `// targets:` line leaves out sm_80 (the default target: `examples/gemm_hopper.tir` states
//! `mma = "wgmma"`, sm_90a only) runs for the first target that line names, as scripts/validate-ptx.sh reads it.

use tilec_tests::cli::{run, stderr};
use tilec_tests::examples_dir;

#[test]
fn every_example_runs_with_tilec_sim_and_no_flags() {
    let mut files = Vec::new();
    for dir in [examples_dir(), examples_dir().join("seeds"), examples_dir().join("hopper")] {
        let mut found: Vec<_> = std::fs::read_dir(&dir)
            .expect("examples/ is readable")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "tir"))
            .collect();
        found.sort();
        files.extend(found);
    }
    assert!(files.len() >= 20, "expected the examples and seeds, found {files:?}");
    let mut failures = Vec::new();
    for file in &files {
        let path = file.display().to_string();
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let targets: Vec<&str> = text.lines().find_map(|l| l.strip_prefix("// targets:")).map(|t| t.split_whitespace().collect()).unwrap_or_default();
        let o = match targets.first() {
            Some(first) if !targets.contains(&"sm_80") => run(&["sim", &path, "--target", first]),
            _ => run(&["sim", &path]),
        };
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let tile_level = !file.parent().is_some_and(|d| d.ends_with("seeds") || d.ends_with("hopper"));
        let compared = out.contains("compared with the interpreter") && !out.contains("MISMATCH");
        if o.status.code() != Some(0) || (tile_level && !compared) {
            failures.push(format!("{path}: exit {:?}\n{out}{}", o.status.code(), stderr(&o)));
        }
    }
    assert!(failures.is_empty(), "`tilec sim FILE` with no flags failed for:\n{}", failures.join("\n"));
}

/// The declared arguments are what the run uses (and flags override them by name).
#[test]
fn sample_args_are_used_and_overridden_by_flags() {
    let gemm = examples_dir().join("gemm.tir").display().to_string();
    let o = run(&["interp", &gemm]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("%A: 200x72xf16") && out.contains("%C: 200x136xf32"), "{out}{}", stderr(&o));
    let o = run(&["interp", &gemm, "--shape", "16,24,32"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("%A: 16x32xf16") && out.contains("%B: 32x24xf16") && out.contains("%C: 16x24xf32"), "{out}{}", stderr(&o));
    let epilogue = examples_dir().join("gemm_epilogue.tir").display().to_string();
    let o = run(&["interp", &epilogue, "--arg", "alpha=3"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("%alpha: f32 = 3") && out.contains("%beta: f32 = -0.5"), "{out}{}", stderr(&o));
}
