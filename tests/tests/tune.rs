//! `tilec tune` without a GPU: the candidate bundles it writes for `tilec-gpu-runner tune` (one per attribute
//! set that lowers, each with distinct attributes; the others skipped with the reason), and the input it writes
//! from the runner's records (`--results`), whose expected attributes come from the records this test makes up.
//! Running the candidates needs the GPU machine (`tilec-gpu-runner tune`), never CI.
//!
//! The binary: `tilec_tests::cli::tilec`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tilec_ir::Attribute;
use tilec_tests::cli::{assert_fails, assert_ok, run, stderr};

fn temp_dir(name: &str) -> PathBuf {
    tilec_tests::cli::temp_dir("tune", name)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A small GEMM: a 16x64 block tile, k-steps of 16. Its A tile (16x16 f16, 512 bytes) is 4-byte cp.async
/// chunks for exactly 128 threads: 4 warps lower, 8 warps (256 threads for 128 chunks) do not.
const SMALL: &str = "\
// A small GEMM for the tune tests.
tile.func @small(%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>) attributes {num_warps = 4} {
  %bm = tile.block_id x : index
  %bn = tile.block_id y : index
  %c0 = tile.constant 0 : index
  %c16 = tile.constant 16 : index
  %c64 = tile.constant 64 : index
  %K = tile.dim %A, 1 : index
  %m0 = tile.mul %bm, %c16 : index
  %n0 = tile.mul %bn, %c64 : index
  %sa = tile.alloc_shared : tile<16x16xf16, shared>
  %sb = tile.alloc_shared : tile<16x64xf16, shared>
  %zero = tile.fill 0.0 : tile<16x64xf32, reg>
  %acc = tile.for %k = %c0 to %K step %c16 iter_args(%c = %zero) -> (tile<16x64xf32, reg>) {
    tile.copy_g2s %A[%m0, %k], %sa
    tile.copy_g2s %B[%k, %n0], %sb
    %a = tile.copy_s2r %sa : tile<16x16xf16, reg>
    %b = tile.copy_s2r %sb : tile<16x64xf16, reg>
    %d = tile.mma %a, %b, %c : tile<16x64xf32, reg>
    tile.yield %d
  }
  tile.copy_r2g %acc, %C[%m0, %n0]
  tile.return
}
";

fn small_kernel(dir: &Path) -> String {
    let path = dir.join("small.tir");
    std::fs::write(&path, SMALL).unwrap();
    path.display().to_string()
}

/// The candidate directories under `dir`, by name.
fn candidates(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    out.sort();
    out
}

#[test]
fn bundles_hold_one_candidate_per_attribute_set_that_lowers() {
    let tmp = temp_dir("bundle");
    let input = small_kernel(&tmp);
    let out = tmp.join("cands");
    let o = run(&["tune", &input, "--shape", "64,128,64", "--target", "sm_80", "--bundle", &out.display().to_string(), "--stages", "2,3", "--warps", "4,16"]);
    assert_ok(&o);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = stderr(&o);

    // 2 stage counts x 2 fragment settings x {4, 16} warps = 8 candidates; the 4 with 16 warps do not lower (16x64
    // over 16 warps leaves less than an m16n8 instruction per warp).
    let dirs = candidates(&out);
    let names: Vec<String> = dirs.iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["small_s2_w4_foff", "small_s2_w4_fon", "small_s3_w4_foff", "small_s3_w4_fon"], "{stdout}\n{err}");
    let mut seen = BTreeSet::new();
    for dir in &dirs {
        let files: BTreeSet<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(files, BTreeSet::from(["bench.json".to_string(), "kernel.ptx".to_string(), "tune.json".to_string()]), "{}", dir.display());
        let tune = read_json(&dir.join("tune.json"));
        assert_eq!(tune["func"], "small");
        assert_eq!(tune["attrs"]["num_warps"], 4);
        assert!(seen.insert(tune["attrs"].to_string()), "two candidates with the same attributes: {}", tune["attrs"]);
        let stages = tune["attrs"]["pipeline_stages"].as_i64().unwrap();
        let ahead = tune["attrs"]["fragments_ahead"].as_bool().unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name, format!("small_s{stages}_w4_f{}", if ahead { "on" } else { "off" }));
        // The bench bundle: the shape asked for, the block of 4 warps, the grid of the 16x64 block tile.
        let bench = read_json(&dir.join("bench.json"));
        assert_eq!((bench["gemm"]["m"].clone(), bench["gemm"]["n"].clone(), bench["gemm"]["k"].clone()), (json!(64), json!(128), json!(64)));
        assert_eq!(bench["block"], json!([128, 1, 1]));
        assert_eq!(bench["grid"], json!([4, 2, 1]));
        assert!(std::fs::read_to_string(dir.join("kernel.ptx")).unwrap().contains(".target sm_80"));
    }
    // Two stages and three make different rings.
    let ptx = |name: &str| std::fs::read_to_string(out.join(name).join("kernel.ptx")).unwrap();
    assert_ne!(ptx("small_s2_w4_fon"), ptx("small_s3_w4_fon"));
    // The skipped ones, each with the lowering's reason.
    for name in ["s2_w16_fon", "s2_w16_foff", "s3_w16_fon", "s3_w16_foff"] {
        let line = err.lines().find(|l| l.contains(&format!("skipped {name} "))).unwrap_or_else(|| panic!("{name} not reported as skipped:\n{err}"));
        assert!(line.contains("num_warps=16") && line.contains("16x64 tile cannot be split over 4x4 warps"), "{line}");
    }
    assert!(stdout.contains("4 candidate(s) in"), "{stdout}");

    // --verbose shows the whole diagnostic, located in the input.
    let o = run(&["tune", &input, "--shape", "64,128,64", "--target", "sm_80", "--bundle", &out.display().to_string(), "--stages", "2", "--warps", "16", "-v"]);
    assert_fails(&o, 1, "none of the 2 candidate(s) lowers for sm_80");
    assert!(stderr(&o).contains("%d = tile.mma %a, %b, %c") && stderr(&o).contains("small.tir:19:5: error"), "{}", stderr(&o));

    // A second run with fewer candidates replaces the first run's: the runner sees only its own.
    let o = run(&["tune", &input, "--shape", "64,128,64", "--target", "sm_80", "--bundle", &out.display().to_string(), "--stages", "3", "--fragments", "off", "--warps", "4"]);
    assert_ok(&o);
    let names: Vec<String> = candidates(&out).iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["small_s3_w4_foff"]);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// One record as `tilec-gpu-runner tune --json` writes it.
fn record(func: &str, stages: i64, warps: i64, ahead: bool, shape: u64, ms: Option<f64>, check: &str) -> String {
    json!({
        "candidate": format!("s{stages}_w{warps}_f{}", if ahead { "on" } else { "off" }),
        "func": func, "kernel": func, "source": "small.tir",
        "attrs": {"pipeline_stages": stages, "num_warps": warps, "fragments_ahead": ahead},
        "m": shape, "n": shape, "k": shape,
        "median_ms": ms, "min_ms": ms, "rate": ms.map(|t| 1.0 / t), "unit": "TF/s",
        "cublas_ms": 0.1, "ratio": 0.5, "check": check, "detail": "", "registers": 96, "spill_bytes": 0, "gpu": "test"
    })
    .to_string()
}

fn func_attr(text: &str, name: &str) -> Option<Attribute> {
    let module = tilec_ir::parse_module(text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    module.funcs[0].attrs.get(name).cloned()
}

#[test]
fn results_write_the_fastest_candidate_that_checked() {
    let tmp = temp_dir("results");
    let input = small_kernel(&tmp);
    let results = tmp.join("records.jsonl");
    // The fastest record computed a wrong result and another did not run: neither may win. The winner is
    // s3_w4_foff at 0.20 ms; the kernel's own attributes (4 stages by default, 4 warps, fragments ahead) 0.30 ms.
    let lines = [
        record("small", 2, 8, true, 256, Some(0.10), "failed"),
        record("small", 2, 4, true, 256, None, "error"),
        record("small", 4, 4, true, 256, Some(0.30), "ok"),
        record("small", 3, 4, false, 256, Some(0.20), "ok"),
        record("small", 5, 4, true, 256, Some(0.25), "not checked"),
        record("other", 2, 4, true, 256, Some(0.01), "ok"),
    ];
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let results = results.display().to_string();

    // To standard output by default.
    let o = run(&["tune", &input, "--results", &results]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(func_attr(&text, "pipeline_stages"), Some(Attribute::Int(3)), "{text}");
    assert_eq!(func_attr(&text, "num_warps"), Some(Attribute::Int(4)));
    assert_eq!(func_attr(&text, "fragments_ahead"), Some(Attribute::Bool(false)));
    let err = stderr(&o);
    assert!(err.contains("fragments_ahead=false num_warps=4 pipeline_stages=3 is the fastest of 3 candidate(s) that checked, 0.2000 ms"), "{err}");
    assert!(err.contains("the input's own attributes: 0.3000 ms"), "{err}");
    // Only the attributes changed: the body prints as the input's does.
    let mut tuned = tilec_ir::parse_module(&text).unwrap();
    let original = tilec_ir::parse_module(SMALL).unwrap();
    for key in ["pipeline_stages", "fragments_ahead"] {
        tuned.funcs[0].attrs.remove(key);
    }
    assert_eq!(tilec_ir::print_module(&tuned), tilec_ir::print_module(&original));

    // -o FILE, and --in-place on a copy of the input.
    let out = tmp.join("tuned.tir").display().to_string();
    assert_ok(&run(&["tune", &input, "--results", &results, "-o", &out]));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    assert_ok(&run(&["tune", &input, "--results", &results, "--in-place"]));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
    std::fs::write(&input, SMALL).unwrap();

    // Records at two shapes: --shape chooses.
    let two_shapes = tmp.join("two.jsonl");
    let lines = [record("small", 2, 4, true, 256, Some(0.5), "ok"), record("small", 5, 8, true, 512, Some(0.9), "ok")];
    std::fs::write(&two_shapes, lines.join("\n")).unwrap();
    let two_shapes = two_shapes.display().to_string();
    assert_fails(&run(&["tune", &input, "--results", &two_shapes]), 1, "several shapes (256x256x256, 512x512x512): choose one with --shape");
    let o = run(&["tune", &input, "--results", &two_shapes, "--shape", "512,512,512"]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!((func_attr(&text, "pipeline_stages"), func_attr(&text, "num_warps")), (Some(Attribute::Int(5)), Some(Attribute::Int(8))));
    assert_fails(&run(&["tune", &input, "--results", &two_shapes, "--shape", "64,64,64"]), 1, "no records of @small at 64x64x64");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn bad_results_and_bad_usage_are_refused() {
    let tmp = temp_dir("refused");
    let input = small_kernel(&tmp);
    let write = |name: &str, text: &str| {
        let p = tmp.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let other = write("other.jsonl", &record("other", 2, 4, true, 64, Some(1.0), "ok"));
    assert_fails(&run(&["tune", &input, "--results", &other]), 1, "no records for @small (records for: @other)");
    let none_ok = write("failed.jsonl", &[record("small", 2, 4, true, 64, Some(1.0), "failed"), record("small", 3, 4, true, 64, None, "not run")].join("\n"));
    assert_fails(&run(&["tune", &input, "--results", &none_ok]), 1, "none of the 2 record(s) of @small ran and checked");
    let garbled = write("garbled.jsonl", &format!("{}\n{{\"candidate\": 3}}\n", record("small", 2, 4, true, 64, Some(1.0), "ok")));
    assert_fails(&run(&["tune", &input, "--results", &garbled]), 1, "garbled.jsonl:2:");
    let foreign = write("foreign.jsonl", &record("small", 2, 4, true, 64, Some(1.0), "ok").replace("\"num_warps\"", "\"unroll\""));
    assert_fails(&run(&["tune", &input, "--results", &foreign]), 1, "sets 'unroll', which tilec tune cannot set: 'unroll' is neither a kernel parameter");
    assert_fails(&run(&["tune", &input, "--results", "no/such.jsonl"]), 1, "no/such.jsonl");
    // Nothing was written to the input by the refused runs.
    assert_eq!(std::fs::read_to_string(&input).unwrap(), SMALL);

    assert_fails(&run(&["tune", &input]), 1, "--shape");
    let d = tmp.join("b").display().to_string();
    assert_fails(&run(&["tune", &input, "--shape", "64,64,64", "--bundle", &d, "--stages", "9"]), 1, "--stages 9");
    assert_fails(&run(&["tune", &input, "--shape", "64,64,64", "--bundle", &d, "--json", "x.jsonl"]), 1, "--json");
    assert_fails(&run(&["tune", &input, "--shape", "64,64,64", "--bundle", &d, "--results", &other]), 1, "--results");
    assert_fails(&run(&["tune", "-", "--results", &other, "--in-place"]), 1, "--in-place needs an input file");
    assert_fails(&run(&["tune", "examples/gemm.tir", "--shape", "64,64,64", "--bundle", &d, "--target", "sm_70"]), 1, "sm_70");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Tuning on this machine needs a GPU and cuBLAS: without them (CI) tilec says so and exits 2 before compiling.
#[test]
fn tuning_here_without_a_gpu_is_an_environment_error() {
    let tmp = temp_dir("gpu");
    let input = small_kernel(&tmp);
    let o = run(&["tune", &input, "--shape", "256,256,256", "--stages", "2", "--warps", "4", "--repeat", "3", "--warmup", "1"]);
    match o.status.code() {
        Some(2) => {
            let err = stderr(&o);
            assert!(err.contains("no usable GPU") || err.contains("cuBLAS could not be loaded"), "{err}");
            eprintln!("tuning_here_without_a_gpu_is_an_environment_error: no GPU here, checked the exit code 2 only");
        }
        Some(0) => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            assert_eq!(func_attr(&text, "pipeline_stages"), Some(Attribute::Int(2)), "{text}");
        }
        other => panic!("tilec tune exited with {other:?}:\n{}", stderr(&o)),
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The small GEMM with its block tile as kernel parameters (`BM`, `BN`).
const SMALL_PARAMS: &str = "\
// The small GEMM, block tile BM x BN.
tile.func @small(%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>) attributes {BM = 16, BN = 64, num_warps = 4} {
  %bm = tile.block_id x : index
  %bn = tile.block_id y : index
  %c0 = tile.constant 0 : index
  %c16 = tile.constant 16 : index
  %cm = tile.constant BM : index
  %cn = tile.constant BN : index
  %K = tile.dim %A, 1 : index
  %m0 = tile.mul %bm, %cm : index
  %n0 = tile.mul %bn, %cn : index
  %sa = tile.alloc_shared : tile<BMx16xf16, shared>
  %sb = tile.alloc_shared : tile<16xBNxf16, shared>
  %zero = tile.fill 0.0 : tile<BMxBNxf32, reg>
  %acc = tile.for %k = %c0 to %K step %c16 iter_args(%c = %zero) -> (tile<BMxBNxf32, reg>) {
    tile.copy_g2s %A[%m0, %k], %sa
    tile.copy_g2s %B[%k, %n0], %sb
    %a = tile.copy_s2r %sa : tile<BMx16xf16, reg>
    %b = tile.copy_s2r %sb : tile<16xBNxf16, reg>
    %d = tile.mma %a, %b, %c : tile<BMxBNxf32, reg>
    tile.yield %d
  }
  tile.copy_r2g %acc, %C[%m0, %n0]
  tile.return
}
";

#[test]
fn kernel_parameters_are_tuned_and_written_back_into_the_text() {
    let tmp = temp_dir("params");
    let input = tmp.join("small.tir");
    std::fs::write(&input, SMALL_PARAMS).unwrap();
    let input = input.display().to_string();
    let out = tmp.join("cands");
    let o = run(&[
        "tune", &input, "--shape", "64,128,64", "--target", "sm_80", "--bundle", &out.display().to_string(), "--stages", "2", "--warps", "4",
        "--fragments", "on", "--param", "BM=16,32", "--param", "BN=64",
    ]);
    assert_ok(&o);
    let names: Vec<String> = candidates(&out).iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["small_s2_w4_fon_BM16_BN64", "small_s2_w4_fon_BM32_BN64"], "{}", stderr(&o));
    // The block tile sets the grid: 64x128 in 16x64 tiles is 4x2 blocks, in 32x64 tiles 2x2.
    for (name, bm, grid) in [("small_s2_w4_fon_BM16_BN64", 16, json!([4, 2, 1])), ("small_s2_w4_fon_BM32_BN64", 32, json!([2, 2, 1]))] {
        let dir = out.join(name);
        assert_eq!(read_json(&dir.join("tune.json"))["attrs"]["BM"], bm);
        assert_eq!(read_json(&dir.join("bench.json"))["grid"], grid, "{name}");
    }

    // --results writes the fastest record's values into the attribute list and leaves the rest of the text
    // (comments, the parameter names in the body) as written.
    let mut rec: Value = serde_json::from_str(&record("small", 2, 4, true, 64, Some(0.2), "ok")).unwrap();
    rec["attrs"]["BM"] = json!(32);
    rec["attrs"]["BN"] = json!(64);
    let slow = record("small", 2, 4, true, 64, Some(0.3), "ok");
    let records = tmp.join("records.jsonl");
    std::fs::write(&records, format!("{slow}\n{rec}\n")).unwrap();
    let best = tmp.join("best.tir");
    let o = run(&["tune", &input, "--results", &records.display().to_string(), "-o", &best.display().to_string()]);
    assert_ok(&o);
    let text = std::fs::read_to_string(&best).unwrap();
    assert_eq!(func_attr(&text, "BM"), Some(Attribute::Int(32)));
    assert_eq!(func_attr(&text, "pipeline_stages"), Some(Attribute::Int(2)));
    assert!(text.starts_with("// The small GEMM, block tile BM x BN.\n"), "{text}");
    assert!(text.contains("tile.alloc_shared : tile<BMx16xf16, shared>"), "{text}");
    let module = tilec_ir::parse_module(&text).unwrap();
    let printed = tilec_ir::print_module(&module);
    assert!(printed.contains("tile<32x16xf16, shared>") && printed.contains("tile<32x64xf32, reg>"), "{printed}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Records as `tilec-gpu-runner tune --json` writes them for a kernel that is not a GEMM: no M, N, K, the
/// arguments' shapes instead, `not checked`.
fn kernel_record(candidate: &str, attrs: Value, ms: f64) -> String {
    json!({
        "candidate": candidate, "func": "attention_fwd", "kernel": "attention_fwd", "source": "attention_fwd.tir",
        "attrs": attrs, "m": 0, "n": 0, "k": 0, "shapes": ["Q=8x256x64", "K=8x256x64", "V=8x256x64", "O=8x256x64"],
        "median_ms": ms, "min_ms": ms, "rate": 1.0 / ms, "unit": "TF/s", "cublas_ms": null, "ratio": null,
        "check": "not checked", "detail": "timed only", "registers": 255, "spill_bytes": 0, "gpu": "test"
    })
    .to_string()
}

#[test]
fn any_kernel_is_tuned_through_timing_bundles_made_at_its_argument_shapes() {
    let tmp = temp_dir("kernel");
    let input = format!("{}/../examples/attention_fwd.tir", env!("CARGO_MANIFEST_DIR"));
    let out = tmp.join("cands");
    // 8 heads of 256 queries, d = 64; K is [8, 256, 64] row-major like Q and V. Rows per warp stay 16 (the P·V mma
    // says [16, D]), so 4 warps take BM = 64 and 8 warps BM = 128, and warp_tile must span BN: 4 of the 16 sets lower.
    let flops = 4.0 * 8.0 * 256.0 * 256.0 * 64.0;
    let o = run(&[
        "tune", &input, "--bundle", &out.display().to_string(), "--target", "sm_90", "--arg", "Q=8x256x64", "--arg", "K=8x256x64", "--arg",
        "V=8x256x64", "--arg", "O=8x256x64", "--flops", &flops.to_string(), "--stages", "2", "--warps", "4,8", "--fragments", "on", "--param",
        "BM=64,128", "--param", "BN=32,64", "--param", "warp_tile=16x32,16x64", "--repeat", "7", "--warmup", "2", "--seed", "5",
    ]);
    assert_ok(&o);
    let err = stderr(&o);
    let names: Vec<String> = candidates(&out).iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    let expected = [(4, 64, 32), (4, 64, 64), (8, 128, 32), (8, 128, 64)];
    let want: Vec<String> = expected.iter().map(|(w, bm, bn)| format!("attention_fwd_s2_w{w}_fon_BM{bm}_BN{bn}_wt16x{bn}")).collect();
    assert_eq!(names, want, "{err}");
    // The inconsistent sets are skipped, with the reason at the op.
    assert_eq!(err.matches("tilec tune: skipped").count(), 12, "{err}");
    assert!(err.contains("skipped s2_w4_fon_BM64_BN32_wt16x64") && err.contains("attention_fwd.tir:") && err.contains("warp_tile = [16, 64] does not split"), "{err}");
    for ((warps, bm, bn), name) in expected.iter().zip(&want) {
        let dir = out.join(name);
        let tune = read_json(&dir.join("tune.json"));
        assert_eq!((tune["attrs"]["BM"].clone(), tune["attrs"]["warp_tile"].clone()), (json!(bm), json!([16, bn])), "{name}");
        assert!(!dir.join("bench.json").exists() && dir.join("kernel.ptx").is_file());
        let b = read_json(&dir.join("bundle.json"));
        // One block per BM query rows on x, one per head on z.
        assert_eq!(b["grid"], json!([256 / bm, 1, 8]), "{name}");
        assert_eq!(b["block"], json!([32 * warps, 1, 1]));
        assert_eq!((b["repeat"].clone(), b["warmup"].clone(), b["flops"].clone()), (json!(7), json!(2), json!(flops)));
        // Buffers: made by the runner from seed 5, one stream per argument; each names its argument.
        let buffers: Vec<&Value> = b["params"].as_array().unwrap().iter().filter_map(|p| p.get("buffer")).collect();
        let described: Vec<(String, Value, String, u64, u64)> = buffers
            .iter()
            .map(|b| {
                let (t, r) = (&b["tensor"], &b["random"]);
                (t["name"].as_str().unwrap().to_string(), t["shape"].clone(), t["layout"].as_str().unwrap().to_string(), r["count"].as_u64().unwrap(), r["stream"].as_u64().unwrap())
            })
            .collect();
        assert_eq!(
            described,
            [
                ("Q".to_string(), json!([8, 256, 64]), "row_major".to_string(), 8 * 256 * 64, 0),
                ("K".to_string(), json!([8, 256, 64]), "row_major".to_string(), 8 * 256 * 64, 1),
                ("V".to_string(), json!([8, 256, 64]), "row_major".to_string(), 8 * 256 * 64, 2),
                ("O".to_string(), json!([8, 256, 64]), "row_major".to_string(), 8 * 256 * 64, 3),
            ]
        );
        assert!(buffers.iter().all(|b| b["random"]["seed"] == json!(5) && b["input"].is_null() && b["output"].is_null()));
    }

    // --results: the fastest record's attributes, the list value written as the IR writes lists.
    let records = tmp.join("records.jsonl");
    let lines = [
        kernel_record("s2_w4_fon_BM64_BN32_wt16x32", json!({"BM": 64, "BN": 32, "warp_tile": [16, 32], "num_warps": 4, "pipeline_stages": 2, "fragments_ahead": true}), 0.5),
        kernel_record("s3_w8_fon_BM128_BN64_wt16x64", json!({"BM": 128, "BN": 64, "warp_tile": [16, 64], "num_warps": 8, "pipeline_stages": 3, "fragments_ahead": true}), 0.4),
    ];
    std::fs::write(&records, lines.join("\n") + "\n").unwrap();
    let o = run(&["tune", &input, "--results", &records.display().to_string()]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("warp_tile = [16, 64]") && text.contains("BM = 128") && text.contains("num_warps = 8") && text.contains("pipeline_stages = 3"), "{text}");
    // The written kernel parses and keeps its body (the parameters' names in the shapes).
    assert!(tilec_ir::parse_module(&text).is_ok() && text.contains("tile.alloc_shared : tile<BMxDxf16, shared>"), "{text}");
    let err = stderr(&o);
    assert!(err.contains("@attention_fwd at Q=8x256x64 K=8x256x64 V=8x256x64 O=8x256x64:") && err.contains("2 candidate(s) that ran (timed; not checked), 0.4000 ms"), "{err}");

    // A list value only for warp_tile, and of two positive extents.
    for bad in ["warp_tile=16x32x8", "warp_tile=16", "BM=16x32", "warp_tile=0x32"] {
        assert_fails(&run(&["tune", &input, "--bundle", &out.display().to_string(), "--arg", "Q=8x256x64", "--param", bad]), 1, "--param");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn timing_bundles_carry_no_data_at_any_size() {
    let tmp = temp_dir("timing-bundle");
    let input = format!("{}/../examples/attention_fwd.tir", env!("CARGO_MANIFEST_DIR"));
    let dir = tmp.join("b");
    // The benchmark's shape: 4 * 32 heads of 4096 queries, d = 128 (4 x 128 MiB of f16): nothing is filled here.
    let o = run(&[
        "bundle", &input, "-o", &dir.display().to_string(), "--target", "sm_90", "--no-oracle", "--repeat", "20", "--warmup", "3", "--flops",
        "1099511627776", "--param", "D=128", "--arg", "Q=128x4096x128", "--arg", "K=128x4096x128", "--arg", "V=128x4096x128", "--arg",
        "O=128x4096x128",
    ]);
    assert_ok(&o);
    let files: BTreeSet<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(files, ["bundle.json", "kernel.ptx", "meta.json"].iter().map(|s| s.to_string()).collect());
    let b = read_json(&dir.join("bundle.json"));
    // One block per BM = 128 query rows (the file's default), one per head.
    assert_eq!(b["grid"], json!([4096 / 128, 1, 128]));
    assert_eq!((b["repeat"].clone(), b["warmup"].clone(), b["flops"].clone()), (json!(20), json!(3), json!(1099511627776.0)));
    let q = &b["params"][0]["buffer"];
    assert_eq!(q["random"], json!({"elem": "f16", "count": 128 * 4096 * 128, "seed": 1, "stream": 0}));
    assert_eq!(q["tensor"], json!({"name": "Q", "elem": "f16", "shape": [128, 4096, 128], "layout": "row_major"}));
    // The extents follow the pointer as i64 parameters.
    assert_eq!((b["params"][1].clone(), b["params"][2].clone()), (json!({"i64": 128}), json!({"i64": 4096})));
    // Values from files need the oracle's bundle.
    let values = tmp.join("q.txt");
    std::fs::write(&values, "1 2 3").unwrap();
    let o = run(&["bundle", &input, "-o", &dir.display().to_string(), "--no-oracle", "--param", "D=128", "--input", &format!("Q={}", values.display())]);
    assert_fails(&o, 1, "--input gives values");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Kernel attributes are searched like parameters (`--param mma=wgmma,mma_sync --param copy_g2s=default,cp_async`,
/// each value read as `tilec compile --param` reads it); a combination the target cannot lower is skipped with
/// the reason `tilec check` gives (wgmma needs M in multiples of 64: the small kernel's M is 16), and the
/// fastest record's string attributes are written back into the text in the IR's syntax.
#[test]
fn kernel_attributes_are_searched_and_illegal_combinations_skipped_with_the_reason() {
    let tmp = temp_dir("attrs");
    let input = small_kernel(&tmp);
    let out = tmp.join("out");
    let d = out.display().to_string();
    let o = run(&[
        "tune", &input, "--shape", "64,128,64", "--target", "sm_90a", "--bundle", &d, "--param", "num_warps=4", "--param", "pipeline_stages=2",
        "--fragments", "on", "--param", "mma=wgmma,mma_sync", "--param", "copy_g2s=default,cp_async",
    ]);
    assert_ok(&o);
    let err = stderr(&o);
    assert_eq!(err.matches("tilec tune: skipped").count(), 2, "{err}");
    assert!(err.contains("skipped s2_w4_fon_wgmma [fragments_ahead=true mma=\"wgmma\" num_warps=4 pipeline_stages=2]"), "{err}");
    assert!(err.contains("cannot use wgmma: M = 16 is not a multiple of 64"), "{err}");
    let names: Vec<String> = candidates(&out).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["small_s2_w4_fon_cp_async_mma_sync", "small_s2_w4_fon_mma_sync"]);
    let t = read_json(&out.join("small_s2_w4_fon_cp_async_mma_sync").join("tune.json"));
    assert_eq!(t["attrs"], json!({"copy_g2s": "cp_async", "fragments_ahead": true, "mma": "mma_sync", "num_warps": 4, "pipeline_stages": 2}));
    // "default" leaves the attribute unset.
    let t = read_json(&out.join("small_s2_w4_fon_mma_sync").join("tune.json"));
    assert_eq!(t["attrs"].get("copy_g2s"), None, "{t}");

    // The fastest record's attributes, strings included, written as the IR writes them.
    let records = tmp.join("records.jsonl");
    let rec = |name: &str, copy: Option<&str>, ms: f64| {
        let mut attrs = json!({"pipeline_stages": 2, "num_warps": 4, "fragments_ahead": true, "mma": "mma_sync"});
        if let Some(c) = copy {
            attrs["copy_g2s"] = json!(c);
        }
        json!({
            "candidate": name, "func": "small", "kernel": "small", "source": "small.tir", "attrs": attrs,
            "m": 64, "n": 128, "k": 64, "median_ms": ms, "min_ms": ms, "rate": 1.0 / ms, "unit": "TF/s",
            "cublas_ms": 0.1, "ratio": 0.5, "check": "ok", "detail": "", "registers": 96, "spill_bytes": 0, "gpu": "test"
        })
        .to_string()
    };
    std::fs::write(&records, format!("{}\n{}\n", rec("s2_w4_fon_mma_sync", None, 0.3), rec("s2_w4_fon_cp_async_mma_sync", Some("cp_async"), 0.2))).unwrap();
    let o = run(&["tune", &input, "--results", &records.display().to_string()]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(func_attr(&text, "copy_g2s"), Some(Attribute::Str("cp_async".into())), "{text}");
    assert_eq!(func_attr(&text, "mma"), Some(Attribute::Str("mma_sync".into())), "{text}");
    assert!(stderr(&o).contains("copy_g2s=\"cp_async\""), "the winner is named: {}", stderr(&o));

    // Names and values are checked as everywhere else; a flag and a --param for the same attribute clash.
    let bad = |extra: &[&str], needle: &str| {
        let mut a = vec!["tune", input.as_str(), "--shape", "64,128,64", "--target", "sm_90a", "--bundle", d.as_str()];
        a.extend_from_slice(extra);
        assert_fails(&run(&a), 1, needle);
    };
    bad(&["--param", "mma=wgmma,wgmm"], "--param mma=wgmma,wgmm: 'mma' must be \"wgmma\" or \"mma_sync\", found wgmm");
    bad(&["--param", "num_warp=4,8"], "did you mean 'num_warps'?");
    bad(&["--param", "copy_g2s=tma", "--param", "copy_g2s=cp_async"], "'copy_g2s' is given twice");
    bad(&["--warps", "4", "--param", "num_warps=8"], "--param num_warps=... and --warps give the same attribute");
    let _ = std::fs::remove_dir_all(&tmp);
}
