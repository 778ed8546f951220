//! `tilec bench` without a GPU: the bench bundles it writes (the GEMM's roles, shapes, grid and the PTX
//! entry's parameters, and no data), what it refuses (kernels that are not GEMMs, bad shapes), and the exit
//! code 2 when asked to run here without a GPU. The timing and the check against cuBLAS run on the GPU machine
//! (`scripts/gpu-suite.sh`), never in CI.
//!
//! The binary: `tilec_tests::cli::tilec`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tilec_tests::cli::{assert_fails, run, stderr};

fn temp_dir(name: &str) -> PathBuf {
    tilec_tests::cli::temp_dir("bench", name)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The f16 GEMM at two shapes: one bundle each, named after the file and shape, holding only the PTX and
/// bench.json; roles, extents and grid as the kernel says.
#[test]
fn bench_bundles_describe_the_gemm_and_carry_no_data() {
    let dir = temp_dir("gemm");
    let d = dir.to_string_lossy().into_owned();
    let o = run(&["bench", "examples/gemm.tir", "--shape", "200,72,40", "--shape=4096,1024,8192", "--target", "sm_80", "--repeat", "7", "--bundle", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let small = dir.join("gemm_200x72x40");
    let mut files: Vec<String> = std::fs::read_dir(&small)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    files.sort();
    assert_eq!(files, ["bench.json", "kernel.ptx"], "a bench bundle holds no input data");
    let ptx = std::fs::read_to_string(small.join("kernel.ptx")).unwrap_or_default();
    assert!(ptx.contains(".target sm_80") && ptx.contains(".entry gemm("), "PTX for the target and the kernel");

    let b = read_json(&small.join("bench.json"));
    assert_eq!(b["kernel"], "gemm");
    assert_eq!(b["grid"], json!([2, 1, 1]), "ceil(200/128) x ceil(72/128) blocks");
    assert_eq!(b["block"], json!([128, 1, 1]));
    assert_eq!(b["repeat"], 7);
    let g = &b["gemm"];
    assert_eq!((g["m"].as_u64(), g["n"].as_u64(), g["k"].as_u64()), (Some(200), Some(72), Some(40)));
    assert_eq!(g["a"], json!({"elem": "f16", "layout": "row_major"}));
    assert_eq!(g["b"], json!({"elem": "f16", "layout": "row_major"}));
    assert_eq!(g["c"], json!({"elem": "f32", "layout": "row_major"}));
    assert_eq!((&g["alpha"], &g["beta"]), (&Value::Null, &Value::Null), "gemm.tir has no alpha/beta");
    // The PTX entry's parameters: each tile's pointer, then its two run-time extents, in signature order.
    let ext = |of: &str, axis: u32| json!({"extent": {"of": of, "axis": axis}});
    assert_eq!(
        b["params"],
        json!([{"pointer": "a"}, ext("a", 0), ext("a", 1), {"pointer": "b"}, ext("b", 0), ext("b", 1), {"pointer": "c"}, ext("c", 0), ext("c", 1)])
    );
    let big = read_json(&dir.join("gemm_4096x1024x8192").join("bench.json"));
    assert_eq!(big["grid"], json!([32, 8, 1]), "M / 128 x N / 128");
    assert_eq!(big["gemm"]["k"], 8192);
    let _ = std::fs::remove_dir_all(&dir);
}

/// alpha and beta become kernel parameters with the values asked for; int8 GEMMs keep their types.
#[test]
fn bench_bundles_carry_alpha_beta_and_integer_types() {
    let dir = temp_dir("epilogue");
    let d = dir.to_string_lossy().into_owned();
    let o = run(&["bench", "examples/gemm_epilogue.tir", "--shape", "72,80,48", "--alpha", "2", "--beta=-1", "--bundle", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = read_json(&dir.join("gemm_epilogue_72x80x48").join("bench.json"));
    assert_eq!((&b["gemm"]["alpha"], &b["gemm"]["beta"]), (&json!(2.0), &json!(-1.0)));
    assert_eq!(b["gemm"]["c"]["elem"], "f16");
    let params = b["params"].as_array().cloned().unwrap_or_default();
    assert_eq!(params[params.len() - 2..], [json!("alpha"), json!("beta")]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("for sm_90"), "--bundle defaults to sm_90");

    let o = run(&["bench", "examples/gemm_s8.tir", "--shape", "64,64,64", "--bundle", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = read_json(&dir.join("gemm_s8_64x64x64").join("bench.json"));
    assert_eq!((&b["gemm"]["a"]["elem"], &b["gemm"]["c"]["elem"]), (&json!("i8"), &json!("i32")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that is not a GEMM is refused with a located diagnostic, and nothing is written.
#[test]
fn bench_refuses_what_is_not_a_gemm() {
    let dir = temp_dir("refuse");
    let d = dir.to_string_lossy().into_owned();
    let o = run(&["bench", "examples/mma.tir", "--shape", "16,8,16", "--bundle", &d]);
    assert_fails(&o, 1, "examples/mma.tir:3:1: error: @mma does not look like a GEMM: it has 4 global tile argument(s), not 3");
    assert!(stderr(&o).contains("three rank-2 global tiles A (MxK), B (KxN), C (MxN)"), "{}", stderr(&o));
    let o = run(&["bench", "examples/copy_s2r.tir", "--shape", "16,16,16", "--bundle", &d]);
    assert_fails(&o, 1, "does not look like a GEMM");
    assert_eq!(std::fs::read_dir(&dir).map(|r| r.count()).ok(), Some(0), "no bundle for a refused kernel");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad options are user errors (exit 1) with a message.
#[test]
fn bench_argument_errors() {
    let d = temp_dir("args").to_string_lossy().into_owned();
    assert_fails(&run(&["bench", "examples/gemm.tir", "--shape", "64,64", "--bundle", &d]), 1, "--shape '64,64': expected three positive integers M,N,K");
    assert_fails(&run(&["bench", "examples/gemm.tir", "--shape", "0,64,64", "--bundle", &d]), 1, "expected three positive integers");
    assert_fails(&run(&["bench", "examples/gemm.tir", "--bundle", &d]), 1, "--shape");
    assert_fails(&run(&["bench", "examples/gemm.tir", "--shape", "64,64,64", "--repeat", "0", "--bundle", &d]), 1, "--repeat must be at least 1");
    assert_fails(&run(&["bench", "examples/gemm.tir", "--shape", "64,64,64", "--target", "sm_70", "--bundle", &d]), 1, "sm_70");
    assert_fails(&run(&["bench", "no/such.tir", "--shape", "64,64,64", "--bundle", &d]), 1, "no/such.tir");
    let _ = std::fs::remove_dir_all(&d);
}

/// Running the benchmark needs a GPU and cuBLAS: without them (CI) tilec says so and exits 2 before compiling;
/// with them the check against cuBLAS must pass.
#[test]
fn bench_without_a_gpu_is_an_environment_error() {
    let o = run(&["bench", "examples/gemm.tir", "--shape", "256,256,256", "--repeat", "3", "--warmup", "1"]);
    match o.status.code() {
        Some(2) => {
            let err = stderr(&o);
            assert!(err.contains("no usable GPU") || err.contains("cuBLAS could not be loaded"), "{err}");
            eprintln!("bench_without_a_gpu_is_an_environment_error: no GPU here, checked the exit code 2 only");
        }
        Some(0) => assert!(String::from_utf8_lossy(&o.stdout).contains("check ok"), "{}", String::from_utf8_lossy(&o.stdout)),
        other => panic!("tilec bench exited with {other:?}:\n{}", stderr(&o)),
    }
}

/// A shape whose rows break the kernel's 16-byte cp.async alignment would fault on the GPU (misaligned
/// address): `tilec bench` and `tilec bundle` compile the variant the shape allows instead (`global_alignment`
/// per argument), say so, and label the benchmark with it; an aligned ragged shape keeps the kernel as written.
#[test]
fn shapes_that_break_cp_async_alignment_get_a_narrower_variant() {
    let tmp = temp_dir("align");
    let dir = tmp.join("b").display().to_string();
    let read = |path: std::path::PathBuf| std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));

    // Odd K: rows of A are 82 bytes, copied by masked 2-byte loads; B's stay 16-byte cp.async.
    let o = run(&["bench", "examples/gemm.tir", "--shape", "64,64,41", "--target", "sm_90", "--bundle", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("compiled with global_alignment = [2, 16, 16]: %A with synchronous loads"), "{out}");
    let bundle = tmp.join("b").join("gemm_64x64x41");
    assert!(read(bundle.join("bench.json")).contains("global_alignment = [2, 16, 16]"));
    let ptx = read(bundle.join("kernel.ptx"));
    assert!(ptx.contains("ld.global.nc.b16") || ptx.contains("ld.global.nc.u16"), "no 2-byte loads of A");
    assert!(ptx.contains("cp.async.cg.shared.global"), "B lost its 16-byte cp.async");

    // Column-major A with 68 rows: its columns are 136 bytes, 8-byte aligned: 8-byte cp.async.
    let o = run(&["bench", "examples/gemm_a_col.tir", "--shape", "68,64,40", "--target", "sm_90", "--bundle", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("global_alignment = [8, 16, 16]: %A with cp.async of 8 bytes"));
    let ptx = read(tmp.join("b").join("gemm_a_col_68x64x40").join("kernel.ptx"));
    assert!(ptx.contains("cp.async.ca.shared.global") && ptx.contains("], 8, "), "no 8-byte cp.async");

    // tilec bundle alike: N = 44 makes B's rows 88 bytes.
    let out = tmp.join("bundle").display().to_string();
    let o = run(&["bundle", "examples/gemm.tir", "--shape", "64,44,40", "-o", &out, "--no-oracle"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("global_alignment = [16, 8, 16]: %B with cp.async of 8 bytes"));
    assert!(tmp.join("bundle").join("kernel.ptx").exists());

    // Aligned (if ragged against the block tile): no variant.
    let o = run(&["bench", "examples/gemm.tir", "--shape", "200,72,40", "--target", "sm_90", "--bundle", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("global_alignment"));
    assert!(!read(tmp.join("b").join("gemm_200x72x40").join("bench.json")).contains("global_alignment"));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `--param` as for compiling: the settings are applied to the kernel, name the bundle and appear in the label;
/// names and values are checked.
#[test]
fn bench_param_sets_parameters_and_kernel_attributes() {
    let dir = temp_dir("param");
    let d = dir.to_string_lossy().into_owned();
    let o = run(&[
        "bench", "examples/gemm_256x128.tir", "--shape", "512,256,256", "--target", "sm_90a", "--bundle", &d, "--param", "BK=64", "-D",
        "mma=mma_sync", "--param", "copy_g2s=cp_async", "--param", "pipeline_stages=3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bundle = dir.join("gemm_256x128_BK64_mma_mma_sync_copy_g2s_cp_async_pipeline_stages_3_512x256x256");
    let b = read_json(&bundle.join("bench.json"));
    assert_eq!(b["label"], "examples/gemm_256x128.tir (llvm, sm_90a, BK=64, mma=mma_sync, copy_g2s=cp_async, pipeline_stages=3)");
    let ptx = std::fs::read_to_string(bundle.join("kernel.ptx")).unwrap_or_default();
    assert!(ptx.contains("mma.sync") && !ptx.contains("wgmma") && !ptx.contains("cp.async.bulk.tensor"), "mma.sync, cp.async only");
    // 256x128 tiles over 512x256: the grid does not depend on BK.
    assert_eq!(b["grid"], json!([2, 2, 1]));
    for (bad, needle) in [
        ("BKK=64", "no kernel in examples/gemm_256x128.tir declares the parameter 'BKK'; did you mean 'BK'?"),
        ("mma=wgmm", "'mma' must be \"wgmma\" or \"mma_sync\", found wgmm"),
        ("num_warp=8", "did you mean 'num_warps'?"),
    ] {
        let o = run(&["bench", "examples/gemm_256x128.tir", "--shape", "512,256,256", "--bundle", &d, "--param", bad]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{bad}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
