//! CLI misuse through the real `tilec` binary: every failure exits with 1 (2 for a missing environment)
//! and a message, never 101 and never a Rust panic message; a failed compile leaves no output behind.
//!
//! The binary: `tilec_tests::cli::tilec` (`$TILEC`, else the one beside this test's target directory).

use std::path::Path;

use tilec_tests::cli::{assert_fails, assert_no_panic, run, run_with_stdin, stderr};
use tilec_tests::{diagnostics_dir, display_path, examples_dir, files_with_extension, repo_root};

fn temp_dir(name: &str) -> std::path::PathBuf {
    tilec_tests::cli::temp_dir("cli", name)
}

const GEMM: &str = "examples/gemm.tir";
const INVALID: &str = "tests/diagnostics/parser/undefined_value.tir";

#[test]
fn help_exits_0_and_documents_the_exit_codes() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in ["Usage", "Exit codes", "0  success", "1  user error", "2  environment error"] {
        assert!(out.contains(needle), "--help lacks {needle:?}:\n{out}");
    }
    for sub in ["check", "interp", "sim", "layout"] {
        let o = run(&[sub, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{sub} --help: {}", stderr(&o));
    }
}

#[test]
fn missing_input_file() {
    let o = run(&["/nonexistent/input.tir"]);
    assert_fails(&o, 1, "/nonexistent/input.tir");
    let o = run(&["check", "no-such-file.tir"]);
    assert_fails(&o, 1, "no-such-file.tir");
    for sub in ["interp", "sim"] {
        assert_fails(&run(&[sub, "no-such-file.tir"]), 1, "no-such-file.tir");
    }
}

#[test]
fn no_input_file_and_unknown_flags() {
    assert_fails(&run(&[]), 1, "no input file");
    assert_fails(&run(&[GEMM, "--no-such-flag"]), 1, "--no-such-flag");
    assert_fails(&run(&["check"]), 1, "required");
    assert_fails(&run(&[GEMM, "--emit", "bogus"]), 1, "bogus");
}

#[test]
fn directory_as_input() {
    assert_fails(&run(&["examples"]), 1, "examples");
    assert_fails(&run(&["check", "examples"]), 1, "examples");
    // A path through a file (ENOTDIR).
    assert_fails(&run(&["check", "examples/gemm.tir/x.tir"]), 1, "gemm.tir/x.tir");
}

#[test]
fn unreadable_input_file() {
    let dir = temp_dir("unreadable");
    let file = dir.join("secret.tir");
    std::fs::copy(repo_root().join(GEMM), &file).unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap_or_else(|e| panic!("{e}"));
    }
    if std::fs::read(&file).is_ok() {
        // Running as root: permissions do not stop reads. The other read failures are tested above.
        eprintln!("note: running as root, mode 000 does not make a file unreadable; skipped");
        return;
    }
    let path = file.to_string_lossy().into_owned();
    assert_fails(&run(&["check", &path]), 1, "secret.tir");
    assert_fails(&run(&[&path]), 1, "secret.tir");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn invalid_utf8_input_is_a_diagnostic() {
    let dir = temp_dir("utf8");
    let file = dir.join("bad.tir");
    std::fs::write(&file, b"tile.func @f() {\n  \xff\xfe\n  tile.return\n}\n").unwrap_or_else(|e| panic!("{e}"));
    let o = run(&["check", &file.to_string_lossy()]);
    assert_fails(&o, 1, "bad.tir:2:");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unwritable_output() {
    let o = run(&[GEMM, "-o", "/nonexistent/dir/x.tir"]);
    assert_fails(&o, 1, "/nonexistent/dir/x");
    // A directory as the output.
    let dir = temp_dir("outdir");
    let o = run(&[GEMM, "-o", &dir.to_string_lossy()]);
    assert_fails(&o, 1, "error");
    assert!(dir.is_dir(), "the directory given as output was replaced");
    // The temporary file written beside it is gone.
    let prefix = format!(".{}.tilec-", dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    let parent = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let left: Vec<String> = std::fs::read_dir(&parent)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(&prefix)).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "temporary files left in {}: {left:?}", parent.display());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_compile_leaves_no_output_and_keeps_an_old_one() {
    let dir = temp_dir("nooutput");
    let out = dir.join("out.tir");
    let out_s = out.to_string_lossy().into_owned();
    // Nothing there before: nothing there after.
    let o = run(&[INVALID, "-o", &out_s]);
    assert_fails(&o, 1, "error:");
    assert!(!out.exists(), "a failed compile created {}", out.display());
    // A file there before: untouched.
    std::fs::write(&out, "previous contents\n").unwrap_or_else(|e| panic!("{e}"));
    let o = run(&[INVALID, "-o", &out_s]);
    assert_fails(&o, 1, "error:");
    assert_eq!(std::fs::read_to_string(&out).unwrap_or_default(), "previous contents\n");
    // A failing pipeline (unknown pass) after a successful parse: also untouched.
    let o = run(&[GEMM, "--pipeline", "no-such-pass", "-o", &out_s]);
    assert_fails(&o, 1, "unknown pass");
    assert_eq!(std::fs::read_to_string(&out).unwrap_or_default(), "previous contents\n");
    // No temporary files left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["out.tir"], "files left in {}", dir.display());
    // And a successful compile replaces it.
    let o = run(&[GEMM, "-o", &out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&out).unwrap_or_default().contains("tile.func @gemm"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_pass_and_bad_pipelines() {
    let o = run(&[GEMM, "--pipeline", "canonicalise"]);
    assert_fails(&o, 1, "unknown pass 'canonicalise'");
    assert!(stderr(&o).contains("did you mean 'canonicalize'"), "{}", stderr(&o));
    for bad in ["cse,,dce", "cse{", "cse{x=1}", "{}", "dce}"] {
        assert_fails(&run(&[GEMM, "--pipeline", bad]), 1, "error");
    }
    // --print-ir-after naming a pass this pipeline does not run is a warning, not a failure ...
    let o = run(&[GEMM, "--emit", "tir", "--pipeline", "cse", "--print-ir-after", "dce"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    // ... and naming no pass at all (a typo, trial finding 23) is an error with a suggestion.
    let o = run(&[GEMM, "--emit", "nvgpu", "--print-ir-after", "layout-assignmnt"]);
    assert_fails(&o, 1, "--print-ir-before/after 'layout-assignmnt' names no pass");
    assert!(stderr(&o).contains("did you mean 'layout-assignment'?"), "{}", stderr(&o));
}

/// What `tilec input.tir -o out.EXT` writes: the extension picks --emit, PTX without one (or for standard
/// output, or an extension that names nothing), and an explicit --emit wins.
#[test]
fn emit_follows_the_output_extension() {
    let dir = temp_dir("emit");
    let cases = [
        ("out.ptx", None, ".target sm_80"),
        ("out.ll", None, "target triple = \"nvptx64-nvidia-cuda\""),
        ("out.mlir", None, "gpu.module"),
        ("out.tir", None, "tile.func @gemm"),
        ("out.nvgpu", None, "nvgpu.mma.sync"),
        ("out.s", None, ".target sm_80"),
        ("out", None, ".target sm_80"),
        ("tir.ptx", Some("tir"), "tile.func @gemm"),
    ];
    for (name, emit, needle) in cases {
        let path = dir.join(name).to_string_lossy().into_owned();
        let mut args = vec![GEMM, "-o", &path];
        if let Some(emit) = emit {
            args.extend(["--emit", emit]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(text.contains(needle), "{args:?} wrote no {needle:?}:\n{}", text.lines().take(5).collect::<Vec<_>>().join("\n"));
    }
    // Standard output: PTX, the same PTX as -o out.ptx.
    let o = run(&[GEMM]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ptx = std::fs::read_to_string(dir.join("out.ptx")).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&o.stdout), ptx);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--target native` picks the GPU present; without one it is an environment error (exit 2) that says what
/// to pass instead.
#[test]
fn native_target_needs_a_gpu() {
    let o = run(&[GEMM, "--target", "native", "-o", "/dev/null"]);
    match o.status.code() {
        Some(2) => assert_fails(&o, 2, "no GPU: --target native needs one; pass --target sm_80"),
        Some(0) => {}
        other => panic!("tilec --target native exited with {other:?}:\n{}", stderr(&o)),
    }
    assert_no_panic(&o);
}

/// A misspelt name gets a suggestion only when it is a likely typo; otherwise the valid names.
#[test]
fn did_you_mean_only_for_close_names() {
    let o = run_with_stdin(&["check", "-"], Some(b"tile.func @f() {\n  tile.retrun\n}\n"));
    assert_fails(&o, 1, "did you mean 'tile.return'?");
    let o = run_with_stdin(&["check", "-"], Some(b"tile.func @f() {\n  tile.gather\n}\n"));
    assert_fails(&o, 1, "available operations: ");
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
    assert!(stderr(&o).contains("tile.return") && stderr(&o).contains("tile.mma"), "{}", stderr(&o));
    let o = run(&[GEMM, "--pipeline", "vectorize"]);
    assert_fails(&o, 1, "available passes: canonicalize, check-resources, cse, dce");
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
    let o = run(&["layout", "ldmatrix.x4.tran"]);
    assert_fails(&o, 1, "did you mean 'ldmatrix.x4.trans'?");
    let o = run(&["layout", "wgmma"]);
    assert_fails(&o, 1, "available layouts: ");
}

#[test]
fn unknown_target() {
    assert_fails(&run(&[GEMM, "--target", "sm_99"]), 1, "unknown target 'sm_99'");
    assert_fails(&run(&[GEMM, "--target", ""]), 1, "unknown target");
}

#[test]
fn bad_shape_grid_and_arg() {
    for shape in ["1,2", "0,1,1", "a,b,c", "-1,2,3", "1,2,3,4", "", "99999999999999999999999,1,1"] {
        assert_fails(&run(&["interp", GEMM, &format!("--shape={shape}")]), 1, "--shape");
    }
    for grid in ["0", "1,2,3,4", "x", "-1", "4294967296"] {
        assert_fails(&run(&["interp", GEMM, &format!("--grid={grid}")]), 1, "--grid");
    }
    for arg in ["A", "A=0x4", "A=axb", "A=", "nosuch=4x4", "A=4x4x4"] {
        let o = run(&["interp", GEMM, "--shape", "16,16,16", &format!("--arg={arg}")]);
        assert_fails(&o, 1, "error");
    }
    assert_fails(&run(&["interp", GEMM, "--func", "nosuch"]), 1, "nosuch");
    assert_fails(&run(&["interp", GEMM, "--input", "A=/nonexistent/file"]), 1, "/nonexistent/file");
    assert_fails(&run(&["interp", GEMM, "--seed", "x"]), 1, "--seed");
}

#[test]
fn unknown_layout_name() {
    assert_fails(&run(&["layout", "no.such.layout"]), 1, "unknown layout 'no.such.layout'");
    assert_fails(&run(&["layout"]), 1, "error");
    assert_fails(&run(&["layout", "ldmatrix.x4", "--svg", "/nonexistent/dir/x.svg"]), 1, "/nonexistent/dir/x.svg");
}

#[test]
fn stdin_as_input() {
    let gemm = std::fs::read(examples_dir().join("gemm.tir")).unwrap_or_default();
    let o = run_with_stdin(&["check", "-"], Some(&gemm));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("<stdin>: ok"));
    let o = run_with_stdin(&["-", "--emit", "tir"], Some(&gemm));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("tile.func @gemm"));
    let o = run_with_stdin(&["check", "-"], Some(b"tile.func @f() {\n  %x = tile.bogus\n}\n"));
    assert_fails(&o, 1, "<stdin>:2:");
    // Empty standard input: no kernels; not a crash.
    let o = run_with_stdin(&["check", "-"], Some(b""));
    assert_no_panic(&o);
}

/// Every file of the diagnostics corpus, through the real binary: exit 1 with `file:line:col: error:`,
/// and `--verify-diagnostics` agrees with its expectations.
#[test]
fn diagnostics_corpus_through_the_binary() {
    let files = files_with_extension(&diagnostics_dir(), "tir");
    assert!(files.len() >= 60, "only {} corpus files", files.len());
    let header = |line: &str, name: &str| {
        line.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')).is_some_and(|rest| {
            let mut parts = rest.splitn(3, ':');
            let (l, c, tail) = (parts.next(), parts.next(), parts.next());
            l.is_some_and(|l| l.parse::<u32>().is_ok()) && c.is_some_and(|c| c.parse::<u32>().is_ok()) && tail.is_some_and(|t| t.starts_with(" error:"))
        })
    };
    let mut failures = Vec::new();
    for file in &files {
        let name = display_path(file);
        // Pass failures (tests/diagnostics/passes/, a `// pipeline:` header) come from the compiler proper.
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let pipeline = text.lines().find_map(|l| l.strip_prefix("// pipeline:")).map(str::trim);
        let o = match pipeline {
            Some(p) => run(&[&name, "--pipeline", p, "--emit", "nvgpu", "-o", "-"]),
            None => run(&["check", &name]),
        };
        let err = stderr(&o);
        if o.status.code() != Some(1) || err.contains("panicked") || !err.lines().any(|l| header(l, &name)) {
            failures.push(format!("{name}: exit {:?}\n{err}", o.status.code()));
        }
        let o = run(&["check", "--verify-diagnostics", &name]);
        if o.status.code() != Some(0) {
            failures.push(format!("{name}: --verify-diagnostics exit {:?}\n{}", o.status.code(), stderr(&o)));
        }
    }
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
}

// ---- GPU run plumbing, checked without a GPU ------------------------------------------------------------

/// `tilec bundle` lays out the launch (buffers in ABI order, run-time extents as i64 parameters) and the
/// oracle's results; `tilec compare` accepts the oracle's own results and rejects a corrupted one.
#[test]
fn bundle_marshals_the_launch_and_compare_checks_it() {
    let dir = temp_dir("bundle");
    let bundle = dir.join("gemm");
    let b = bundle.to_string_lossy().into_owned();
    let o = run(&["bundle", GEMM, "-o", &b, "--shape=200,72,40"]);
    assert_eq!(o.status.code(), Some(0), "bundle failed:\n{}", stderr(&o));
    let json = std::fs::read_to_string(bundle.join("bundle.json")).unwrap_or_else(|e| panic!("bundle.json: {e}"));
    let launch: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("bundle.json: {e}"));
    // gemm(%A: ?x?, %B: ?x?, %C: ?x?): pointer, then both extents, for each tile in order.
    let params = launch["params"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<String> = params.iter().map(|p| p.as_object().and_then(|o| o.keys().next().cloned()).unwrap_or_default()).collect();
    assert_eq!(kinds, ["buffer", "i64", "i64", "buffer", "i64", "i64", "buffer", "i64", "i64"]);
    let extents: Vec<i64> = params.iter().filter_map(|p| p["i64"].as_i64()).collect();
    assert_eq!(extents, [200, 40, 40, 72, 200, 72], "A is MxK, B is KxN, C is MxN");
    assert_eq!(launch["grid"], serde_json::json!([2, 1, 1]), "ceil(200/128) x ceil(72/128) blocks");
    assert_eq!(launch["block"], serde_json::json!([128, 1, 1]), "num_warps = 4");
    assert_eq!(std::fs::metadata(bundle.join("C.bin")).map(|m| m.len()).ok(), Some(200 * 72 * 4), "f32 C");
    // Stand in for the GPU with the oracle's own results: bit-exact.
    for name in ["A", "B", "C"] {
        let _ = std::fs::copy(bundle.join(format!("{name}.expected.bin")), bundle.join(format!("{name}.out.bin")));
    }
    let o = run(&["compare", &b]);
    assert_eq!(o.status.code(), Some(0), "compare failed:\n{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("%C: 200x72xf32: bit-exact"));
    // One f32 of C off by a lot: a mismatch at its coordinates, exit 1.
    let out = bundle.join("C.out.bin");
    let mut bytes = std::fs::read(&out).unwrap_or_default();
    let at = (3 * 72 + 5) * 4;
    bytes[at..at + 4].copy_from_slice(&1000.0f32.to_le_bytes());
    let _ = std::fs::write(&out, bytes);
    let o = run(&["compare", &b]);
    assert_fails(&o, 1, "MISMATCH");
    assert!(stderr(&o).contains("first at [3, 5]"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `#col_major` global tile's buffer holds its columns one after another (what the kernel reads): the
/// bundle of `gemm_a_col.tir` writes the transpose of the A that `gemm.tir`'s bundle writes (same seed, same
/// logical 200x40 A), records the layout, and `tilec compare` reads the GPU's buffer back as the logical
/// tensor (a corrupted element is reported at its logical coordinates).
#[test]
fn bundle_stores_col_major_tensors_column_by_column() {
    let dir = temp_dir("bundle-col");
    let (row, col) = (dir.join("row"), dir.join("col"));
    for (example, out) in [(GEMM, &row), ("examples/gemm_a_col.tir", &col)] {
        let o = run(&["bundle", example, "-o", &out.to_string_lossy(), "--shape=200,72,40"]);
        assert_eq!(o.status.code(), Some(0), "bundle {example} failed:\n{}", stderr(&o));
    }
    let halves = |path: &Path| -> Vec<u16> {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
    };
    let (m, k) = (200, 40);
    let a_row = halves(&row.join("A.bin"));
    let a_col = halves(&col.join("A.bin"));
    assert_eq!(a_row.len(), m * k);
    assert_ne!(a_row, a_col, "the column-major buffer is not the row-major one");
    for r in 0..m {
        for c in 0..k {
            assert_eq!(a_col[c * m + r], a_row[r * k + c], "A({r}, {c})");
        }
    }
    assert_eq!(halves(&col.join("B.bin")), halves(&row.join("B.bin")), "B is row-major in both");
    let meta = std::fs::read_to_string(col.join("meta.json")).unwrap_or_default();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap_or_else(|e| panic!("meta.json: {e}"));
    let layouts: Vec<&str> = meta["tensors"].as_array().map(|t| t.iter().filter_map(|x| x["layout"].as_str()).collect()).unwrap_or_default();
    assert_eq!(layouts, ["col_major", "row_major", "row_major"]);
    // The oracle's own results stand in for the GPU's: bit-exact.
    for name in ["A", "B", "C"] {
        let _ = std::fs::copy(col.join(format!("{name}.expected.bin")), col.join(format!("{name}.out.bin")));
    }
    let c = col.to_string_lossy().into_owned();
    let o = run(&["compare", &c]);
    assert_eq!(o.status.code(), Some(0), "compare failed:\n{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("%A: 200x40xf16: bit-exact"));
    // Storage element 3 * 200 + 5 of A is its logical (5, 3).
    let out = col.join("A.out.bin");
    let mut bytes = std::fs::read(&out).unwrap_or_default();
    let at = (3 * m + 5) * 2;
    bytes[at..at + 2].copy_from_slice(&0x7bffu16.to_le_bytes());
    let _ = std::fs::write(&out, bytes);
    let o = run(&["compare", &c]);
    assert_fails(&o, 1, "MISMATCH");
    assert!(stderr(&o).contains("first at [5, 3]"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tilec run` needs a GPU: without one (CI) it says so and exits 2; with one it must pass.
#[test]
fn run_without_a_gpu_is_an_environment_error() {
    let o = run(&["run", "examples/copy_s2r.tir", "--check"]);
    match o.status.code() {
        Some(2) => assert_fails(&o, 2, "no usable GPU"),
        Some(0) => assert!(String::from_utf8_lossy(&o.stdout).contains("bit-exact")),
        other => panic!("tilec run exited with {other:?}:\n{}", stderr(&o)),
    }
    assert_no_panic(&o);
}

/// `-o /dev/null` writes into the device: the atomic temp-file-and-rename must not replace the device node
/// (it did once, and as root that turned /dev/null into a regular file for the whole machine).
#[cfg(unix)]
#[test]
fn output_to_a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let o = run(&[GEMM, "--emit", "tir", "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let kind = std::fs::metadata("/dev/null").map(|m| m.file_type().is_char_device());
    assert_eq!(kind.ok(), Some(true), "/dev/null is no longer a character device");
}
