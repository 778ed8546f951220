//! Tests of the reference interpreter (`tilec_ir::interp`). Every expected value comes from an independent
//! computation written here (plain loops over the inputs, or a hand-derived formula), never from the
//! interpreter itself.

use std::time::Instant;

use half::f16;
use tilec_ir::builder::FuncBuilder;
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgShapes, ArgValue, InterpError, Launch, Limits};
use tilec_ir::{Diagnostic, Func, MemorySpace, ScalarType, SourceFile, TileType};

// ---- helpers --------------------------------------------------------------------------------------------

fn example_text(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parses and verifies a one-function module.
fn parse(text: &str) -> Func {
    let module = tilec_ir::parse_module(text).unwrap_or_else(|d| panic!("parse failed:\n{d}\n{text}"));
    let diags = tilec_ir::verify::verify_func(&module.funcs[0]);
    assert!(diags.is_empty(), "verifier: {diags:?}\n{text}");
    module.funcs.into_iter().next().unwrap()
}

fn tensor(args: &[ArgValue], i: usize) -> &TensorData {
    args[i].as_tensor().expect("a tensor argument")
}

/// Runs a kernel with default (seeded) inputs and the derived launch; returns the inputs and the outputs.
fn run_defaults(func: &Func, shapes: &ArgShapes, seed: u64) -> (Vec<ArgValue>, Vec<ArgValue>, Launch) {
    let before = interp::default_args(func, shapes, seed).expect("default args");
    let launch = interp::default_launch(func, &before).expect("default launch");
    let mut after = before.clone();
    interp::run(func, &mut after, &launch).expect("run");
    (before, after, launch)
}

/// An independent f32 GEMM: `acc = 0; for k ascending: acc = acc + a*b` in f32 (the f16 products are exact
/// in f32, and Rust's f32 `+` is IEEE round to nearest even).
fn gemm_f32(a: &TensorData, b: &TensorData) -> Vec<f32> {
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += a.values[i * k + kk] as f32 * b.values[kk * n + j] as f32;
            }
            c[i * n + j] = acc;
        }
    }
    c
}

/// The exact product in f64, and the sum of |a||b| per element (for the error bound).
fn gemm_f64(a: &TensorData, b: &TensorData) -> (Vec<f64>, Vec<f64>) {
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    let (mut c, mut abs) = (vec![0f64; m * n], vec![0f64; m * n]);
    for i in 0..m {
        for j in 0..n {
            for kk in 0..k {
                let p = a.values[i * k + kk] * b.values[kk * n + j];
                c[i * n + j] += p;
                abs[i * n + j] += p.abs();
            }
        }
    }
    (c, abs)
}

fn assert_gemm_f32(before: &[ArgValue], after: &[ArgValue]) {
    let (a, b, c) = (tensor(before, 0), tensor(before, 1), tensor(after, 2));
    let expected = gemm_f32(a, b);
    assert_eq!(c.values.len(), expected.len());
    for (idx, (&got, &want)) in c.values.iter().zip(&expected).enumerate() {
        assert_eq!(got, f64::from(want), "C[{}][{}]", idx / c.shape[1], idx % c.shape[1]);
    }
    // And within the classical bound of recursive f32 summation: |error| <= gamma_K * sum |a||b|.
    let k = a.shape[1] as f64;
    let u = 2f64.powi(-24);
    let gamma = k * u / (1.0 - k * u);
    let (exact, abs) = gemm_f64(a, b);
    for ((&got, &want), &s) in c.values.iter().zip(&exact).zip(&abs) {
        assert!((got - want).abs() <= gamma * s, "{got} vs exact {want}, bound {}", gamma * s);
    }
}

/// The source text that an error's span covers.
fn spanned<'t>(text: &'t str, e: &InterpError) -> &'t str {
    let span = e.span();
    assert!(!span.is_unknown(), "{e} has no span");
    &text[span.range()]
}

// ---- the examples ---------------------------------------------------------------------------------------

#[test]
fn every_example_runs_and_writes_its_output() {
    let dir = format!("{}/../examples", env!("CARGO_MANIFEST_DIR"));
    let mut ran = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("tir") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let module = tilec_ir::parse_module(&text).unwrap();
        for func in &module.funcs {
            assert!(tilec_ir::verify::verify_func(func).is_empty());
            // The kernel's declared sample inputs (`sample_args`), else the default extents.
            let shapes = interp::sample_shapes(func).unwrap_or_else(|m| panic!("{}: sample_args {m}", path.display()));
            let (before, after, _) = run_defaults(func, &shapes, 1);
            // Every example stores a result over its (random) output: something must have changed.
            assert_ne!(before, after, "{} changed nothing", path.display());
            ran.push(func.name.clone());
        }
    }
    ran.sort();
    let variants = ["gemm_bf16", "gemm_f16_out", "gemm_bf16_out", "gemm_s8_128", "gemm_a_col", "gemm_b_col", "gemm_ab_col"];
    for name in ["copy_s2r", "gemm", "gemm_epilogue", "gemm_s8", "mma"].into_iter().chain(variants) {
        assert!(ran.iter().any(|r| r == name), "example {name} did not run ({ran:?})");
    }
}

#[test]
fn gemm_256_matches_an_f32_k_ascending_loop_and_the_error_bound() {
    let func = parse(&example_text("gemm.tir"));
    let shapes = ArgShapes::gemm(256, 256, 256);
    let before = interp::default_args(&func, &shapes, 42).unwrap();
    let launch = interp::default_launch(&func, &before).unwrap();
    assert_eq!(launch.grid, [2, 2, 1]);
    let mut after = before.clone();
    let start = Instant::now();
    interp::run(&func, &mut after, &launch).unwrap();
    eprintln!("gemm 256x256x256 interpreted in {:?}", start.elapsed());
    assert_gemm_f32(&before, &after);
}

#[test]
fn gemm_with_ragged_edges_zero_fills_loads_and_drops_stores() {
    // M=200, N=72, K=40 against a 128x128 block tile and a K step of 32: the last K step reads columns
    // 40..64 of A (zeros), and the second block row stores rows 200..256 (dropped).
    let func = parse(&example_text("gemm.tir"));
    let (before, after, launch) = run_defaults(&func, &ArgShapes::gemm(200, 72, 40), 3);
    assert_eq!(launch.grid, [2, 1, 1]);
    assert_eq!(tensor(&after, 2).shape, vec![200, 72]);
    assert_gemm_f32(&before, &after);
    // The inputs are untouched.
    assert_eq!(before[0], after[0]);
    assert_eq!(before[1], after[1]);
}

#[test]
fn gemm_s8_is_exact_against_an_i64_reference() {
    let func = parse(&example_text("gemm_s8.tir"));
    let (before, after, launch) = run_defaults(&func, &ArgShapes::gemm(100, 130, 70), 9);
    assert_eq!(launch.grid, [2, 3, 1]);
    let (a, b, c) = (tensor(&before, 0), tensor(&before, 1), tensor(&after, 2));
    let (m, k, n) = (100, 70, 130);
    let mut nonzero = 0;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0i64;
            for kk in 0..k {
                acc += a.values[i * k + kk] as i64 * b.values[kk * n + j] as i64;
            }
            nonzero += usize::from(acc != 0);
            assert_eq!(c.values[i * n + j], acc as f64, "C[{i}][{j}]");
        }
    }
    assert!(nonzero > m * n / 2);
}

#[test]
fn gemm_epilogue_matches_its_formula() {
    let func = parse(&example_text("gemm_epilogue.tir"));
    let (alpha, beta) = (1.5f32, -0.75f32);
    let shapes = ArgShapes::gemm(96, 80, 48).with_scalar("alpha", f64::from(alpha)).with_scalar("beta", f64::from(beta));
    let (before, after, launch) = run_defaults(&func, &shapes, 5);
    assert_eq!(launch.grid, [2, 2, 1]);
    let (a, b, c_in, c_out) = (tensor(&before, 0), tensor(&before, 1), tensor(&before, 2), tensor(&after, 2));
    let acc = gemm_f32(a, b);
    for (idx, &acc) in acc.iter().enumerate() {
        let ab = acc * alpha;
        let bc = c_in.values[idx] as f32 * beta;
        let want = f16::from_f32(ab + bc).to_f64();
        assert_eq!(c_out.values[idx], want, "C[{}][{}]", idx / 80, idx % 80);
    }
}

#[test]
fn mma_example_matches_a_hand_computation() {
    let func = parse(&example_text("mma.tir"));
    // A = 2 I (16x16), B[k][j] = k + j/2, C = 1: D[i][j] = 2 (i + j/2) + 1 = 2i + j + 1.
    let a = TensorData {
        shape: vec![16, 16],
        elem: ScalarType::F16,
        values: (0..256).map(|x| if x / 16 == x % 16 { 2.0 } else { 0.0 }).collect(),
    };
    let b = TensorData {
        shape: vec![16, 8],
        elem: ScalarType::F16,
        values: (0..128).map(|x| f64::from(x / 8) + f64::from(x % 8) / 2.0).collect(),
    };
    let c = TensorData { shape: vec![16, 8], elem: ScalarType::F32, values: vec![1.0; 128] };
    let d = TensorData::zeros(&[16, 8], ScalarType::F32);
    let mut args = vec![ArgValue::Tensor(a), ArgValue::Tensor(b), ArgValue::Tensor(c), ArgValue::Tensor(d)];
    interp::run(&func, &mut args, &Launch::new([1, 1, 1])).unwrap();
    let d = tensor(&args, 3);
    for i in 0..16 {
        for j in 0..8 {
            assert_eq!(d.values[i * 8 + j], (2 * i + j + 1) as f64, "D[{i}][{j}]");
        }
    }
}

#[test]
fn mma_rounds_every_partial_sum_to_f32_in_k_order() {
    // Rows 0 and 1 of A and column 0 of B are all 2^-12 (exact in f16). C[0][0] = 1: each product is 2^-24,
    // half an ulp of 1.0 in f32, so 1 + 2^-24 rounds back to 1 (ties to even) at every step and D[0][0] = 1
    // exactly, where an exact sum would give 1 + 16 * 2^-24. C[1][0] = 0, so D[1][0] sums the products exactly.
    let func = parse(&example_text("mma.tir"));
    let tiny = 2f64.powi(-12);
    let a = TensorData {
        shape: vec![16, 16],
        elem: ScalarType::F16,
        values: (0..256).map(|x| if x / 16 <= 1 { tiny } else { 0.0 }).collect(),
    };
    let b = TensorData {
        shape: vec![16, 8],
        elem: ScalarType::F16,
        values: (0..128).map(|x| if x % 8 == 0 { tiny } else { 0.0 }).collect(),
    };
    let mut c = TensorData::zeros(&[16, 8], ScalarType::F32);
    c.values[0] = 1.0;
    let d = TensorData::zeros(&[16, 8], ScalarType::F32);
    let mut args = vec![ArgValue::Tensor(a), ArgValue::Tensor(b), ArgValue::Tensor(c), ArgValue::Tensor(d)];
    interp::run(&func, &mut args, &Launch::new([1, 1, 1])).unwrap();
    let d = tensor(&args, 3);
    assert_eq!(d.values[0], 1.0);
    assert_eq!(d.values[8], 16.0 * 2f64.powi(-24));
}

#[test]
fn copy_s2r_example_copies_its_input() {
    let func = parse(&example_text("copy_s2r.tir"));
    let (before, after, launch) = run_defaults(&func, &ArgShapes::new(), 11);
    assert_eq!(launch.grid, [1, 1, 1]);
    assert_eq!(tensor(&after, 1).values, tensor(&before, 0).values);
    assert_ne!(tensor(&before, 1).values, tensor(&before, 0).values);
}

// ---- elementwise and scalar semantics -------------------------------------------------------------------

/// Runs `setup` in a one-block kernel and returns the scalars named in `results` (each stored through a
/// 1x1 register tile into its own 1x1 output of the given element type).
fn eval(setup: &str, results: &[(&str, &str)]) -> Result<Vec<f64>, InterpError> {
    let text = kernel_text(setup, results);
    let func = parse(&text);
    let mut args: Vec<ArgValue> = results
        .iter()
        .map(|(_, ty)| ArgValue::Tensor(TensorData::zeros(&[1, 1], ScalarType::from_name(ty).unwrap())))
        .collect();
    interp::run(&func, &mut args, &Launch::new([1, 1, 1]))?;
    Ok(args.iter().map(|a| a.as_tensor().unwrap().values[0]).collect())
}

fn kernel_text(setup: &str, results: &[(&str, &str)]) -> String {
    let params: Vec<String> =
        results.iter().enumerate().map(|(i, (_, ty))| format!("%o{i}: tile<1x1x{ty}, global>")).collect();
    let mut text = format!("tile.func @k({}) {{\n  %zero = tile.constant 0 : index\n{setup}\n", params.join(", "));
    for (i, (name, ty)) in results.iter().enumerate() {
        text += &format!(
            "  %t{i} = tile.splat %{name} : tile<1x1x{ty}, reg>\n  tile.copy_r2g %t{i}, %o{i}[%zero, %zero]\n"
        );
    }
    text + "  tile.return\n}\n"
}

#[test]
fn integer_arithmetic_truncates_and_wraps() {
    let got = eval(
        "  %a = tile.constant -7 : i32\n  %b = tile.constant 2 : i32\n  %q = tile.div %a, %b : i32\n  %r = tile.rem %a, %b : i32\n\
         %big = tile.constant 2147483647 : i32\n  %w = tile.add %big, %b : i32\n  %m = tile.mul %big, %big : i32\n\
         %lo = tile.min %a, %b : i32\n  %hi = tile.max %a, %b : i32\n\
         %x = tile.constant 3 : u8\n  %y = tile.constant 5 : u8\n  %u = tile.sub %x, %y : u8",
        &[("q", "i32"), ("r", "i32"), ("w", "i32"), ("m", "i32"), ("lo", "i32"), ("hi", "i32"), ("u", "u8")],
    )
    .unwrap();
    let want = [
        f64::from(-7i32 / 2),
        f64::from(-7i32 % 2),
        f64::from(i32::MAX.wrapping_add(2)),
        f64::from(i32::MAX.wrapping_mul(i32::MAX)),
        -7.0,
        2.0,
        f64::from(3u8.wrapping_sub(5)),
    ];
    assert_eq!(got, want);
}

#[test]
fn float_arithmetic_is_correctly_rounded_in_the_result_type() {
    let got = eval(
        "  %one = tile.constant 1.0 : f32\n  %three = tile.constant 3.0 : f32\n  %d = tile.div %one, %three : f32\n\
         %h1 = tile.constant 1.0 : f16\n  %h2 = tile.constant 0.00048828125 : f16\n  %hs = tile.add %h1, %h2 : f16\n\
         %h3 = tile.constant 0.3 : f16\n  %h4 = tile.constant 0.7 : f16\n  %hm = tile.mul %h3, %h4 : f16\n\
         %f = tile.constant 0.1 : f32\n  %g = tile.constant 0.2 : f32\n  %fs = tile.add %f, %g : f32",
        &[("d", "f32"), ("hs", "f16"), ("hm", "f16"), ("fs", "f32")],
    )
    .unwrap();
    let h = |x: f64| f16::from_f64(x);
    let want = [
        f64::from(1f32 / 3f32),
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even, 1.
        1.0,
        f16::from_f32(h(0.3).to_f32() * h(0.7).to_f32()).to_f64(),
        f64::from(0.1f32 + 0.2f32),
    ];
    assert_eq!(got, want);
}

#[test]
fn casts_round_floats_and_truncate_to_integers_with_saturation() {
    let got = eval(
        "  %x = tile.constant 300.7 : f32\n  %i = tile.cast %x : i8\n  %n = tile.constant -2.9 : f32\n  %j = tile.cast %n : i32\n\
         %t = tile.constant 0.333333343267 : f32\n  %h = tile.cast %t : f16\n  %k = tile.constant 70000 : i32\n  %kh = tile.cast %k : f16\n\
         %b = tile.constant 1.00390625 : f32\n  %bb = tile.cast %b : bf16",
        &[("i", "i8"), ("j", "i32"), ("h", "f16"), ("kh", "f16"), ("bb", "bf16")],
    )
    .unwrap();
    let want = [
        // f32 to i8 saturates, as cvt.rzi.s8.f32 does (PTX clamps float-to-integer conversions).
        127.0,
        -2.0,
        f16::from_f32(1f32 / 3f32).to_f64(),
        f64::INFINITY,
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7 in bf16: to even, 1.
        1.0,
    ];
    assert_eq!(got, want);
}

#[test]
fn cmp_select_and_loops_with_carried_values() {
    // sum of 0, 3, 6, 9 = 18; a loop that runs zero times yields its initial value.
    let got = eval(
        "  %c0 = tile.constant 0 : index\n  %c3 = tile.constant 3 : index\n  %c10 = tile.constant 10 : index\n\
         %z = tile.constant 0 : i32\n  %init = tile.constant 5 : i32\n\
         %sum = tile.for %i = %c0 to %c10 step %c3 iter_args(%acc = %z) -> (i32) {\n\
         %ii = tile.cast %i : i32\n    %next = tile.add %acc, %ii : i32\n    tile.yield %next\n  }\n\
         %none = tile.for %i = %c10 to %c0 step %c3 iter_args(%acc = %init) -> (i32) {\n    tile.yield %acc\n  }\n\
         %p = tile.cmp lt %sum, %init : i1\n  %s = tile.select %p, %sum, %init : i32\n\
         %q = tile.cmp ne %sum, %init : i1",
        &[("sum", "i32"), ("none", "i32"), ("s", "i32"), ("q", "i1")],
    )
    .unwrap();
    assert_eq!(got, [(0..10).step_by(3).sum::<i32>() as f64, 5.0, 5.0, 1.0]);
}

#[test]
fn grid_attribute_and_block_ids() {
    // Each block stores 10 * x + y at (x, y): checks the grid, the block ids and that every block runs.
    let body = "  %x = tile.block_id x : index\n  %y = tile.block_id y : index\n  %c10 = tile.constant 10 : index\n\
                %t = tile.mul %x, %c10 : index\n  %v = tile.add %t, %y : index\n  %vi = tile.cast %v : i32\n\
                %r = tile.splat %vi : tile<1x1xi32, reg>\n  tile.copy_r2g %r, %out[%x, %y]\n  tile.return\n}\n";
    for attrs in ["attributes {grid = [3, 2]} ", ""] {
        let func = parse(&format!("tile.func @ids(%out: tile<3x2xi32, global>) {attrs}{{\n{body}"));
        let mut args = vec![ArgValue::Tensor(TensorData::zeros(&[3, 2], ScalarType::I32))];
        let launch = interp::default_launch(&func, &args).unwrap();
        assert_eq!(launch.grid, [3, 2, 1], "{attrs}");
        interp::run(&func, &mut args, &launch).unwrap();
        assert_eq!(tensor(&args, 0).values, vec![0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
    }
}

// ---- default arguments and launches ----------------------------------------------------------------------

#[test]
fn default_args_are_seeded_and_sized() {
    let func = parse(&example_text("gemm.tir"));
    let a1 = interp::default_args(&func, &ArgShapes::new(), 1).unwrap();
    assert_eq!(a1, interp::default_args(&func, &ArgShapes::new(), 1).unwrap());
    assert_ne!(a1, interp::default_args(&func, &ArgShapes::new(), 2).unwrap());
    for i in 0..3 {
        assert_eq!(tensor(&a1, i).shape, vec![interp::DEFAULT_EXTENT, interp::DEFAULT_EXTENT]);
    }
    assert_ne!(tensor(&a1, 0).values, tensor(&a1, 1).values, "arguments get distinct data");
    let sized = interp::default_args(&func, &ArgShapes::new().with("A", &[8, 4]), 1).unwrap();
    assert_eq!(tensor(&sized, 0).shape, vec![8, 4]);
    let small = ArgShapes { default_extent: 16, ..ArgShapes::new() };
    assert_eq!(tensor(&interp::default_args(&func, &small, 1).unwrap(), 2).shape, vec![16, 16]);
}

#[test]
fn default_args_reject_unknown_names_and_shapes_that_contradict_the_type() {
    let gemm = parse(&example_text("gemm.tir"));
    let e = interp::default_args(&gemm, &ArgShapes::new().with("X", &[4, 4]), 1).unwrap_err();
    assert!(matches!(e, InterpError::Defaults { .. }) && e.to_string().contains("'X'"), "{e}");
    let mma = parse(&example_text("mma.tir"));
    let e = interp::default_args(&mma, &ArgShapes::new().with("A", &[16, 8]), 1).unwrap_err();
    assert!(matches!(e, InterpError::Defaults { .. }) && e.to_string().contains("does not fit"), "{e}");
    let e = interp::default_args(&gemm, &ArgShapes::new().with("A", &[1 << 20, 1 << 20]), 1).unwrap_err();
    assert!(e.to_string().contains("too large"), "{e}");
}

#[test]
fn shape_args_give_shapes_without_values_at_any_size() {
    // 2048 heads of 4096x64 (2^29 elements a tensor): over what default_args fills.
    let func = parse(&example_text("attention_fwd.tir"));
    let (bh, s, d) = (2048, 4096, 64);
    let shapes = ArgShapes::new().with("Q", &[bh, s, d]).with("K", &[bh, s, d]).with("V", &[bh, s, d]).with("O", &[bh, s, d]);
    assert!(interp::default_args(&func, &shapes, 1).unwrap_err().to_string().contains("too large"));
    let args = interp::shape_args(&func, &shapes, 1).unwrap();
    assert_eq!(tensor(&args, 0).shape, vec![bh, s, d]);
    assert_eq!(tensor(&args, 1).shape, vec![bh, s, d]);
    assert!(args.iter().all(|a| a.as_tensor().is_some_and(|t| t.values.is_empty())));
    // The launch follows from the shapes alone: one block per 128 query rows (the file's BM) on x, one per
    // head on z.
    assert_eq!(interp::default_launch(&func, &args).unwrap().grid, [(s / 128) as u32, 1, bh as u32]);
    // The same checks of names and shapes as default_args.
    let e = interp::shape_args(&func, &ArgShapes::new().with("Q", &[2, 3]), 1).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    // Scalars are the same values default_args gives.
    let gemm = parse(&example_text("gemm_epilogue.tir"));
    let filled = interp::default_args(&gemm, &ArgShapes::new(), 3).unwrap();
    let hollow = interp::shape_args(&gemm, &ArgShapes::new(), 3).unwrap();
    for (f, h) in filled.iter().zip(&hollow) {
        match (f, h) {
            (ArgValue::Scalar(..), _) => assert_eq!(f, h),
            (ArgValue::Tensor(f), ArgValue::Tensor(h)) => assert_eq!((&f.shape, h.values.len()), (&h.shape, 0)),
            _ => panic!("argument kinds differ"),
        }
    }
}

#[test]
fn default_launch_errors_when_the_grid_cannot_be_derived() {
    // block_id is used, but the store's offsets are not block_id * constant.
    let text = "tile.func @k(%out: tile<?x?xf32, global>) {\n  %x = tile.block_id x : index\n  %c1 = tile.constant 1 : index\n\
                %o = tile.add %x, %c1 : index\n  %r = tile.fill 1.0 : tile<4x4xf32, reg>\n  tile.copy_r2g %r, %out[%o, %o]\n  tile.return\n}\n";
    let func = parse(text);
    let args = vec![ArgValue::Tensor(TensorData::zeros(&[8, 8], ScalarType::F32))];
    let e = interp::default_launch(&func, &args).unwrap_err();
    assert!(matches!(e, InterpError::Defaults { .. }) && e.to_string().contains("grid"), "{e}");
    // A grid with an empty axis: the verifier reports it at the attribute; unverified, the interpreter too.
    let bad_text = text.replace(") {\n  %x", ") attributes {grid = [0, 1]} {\n  %x");
    let bad = tilec_ir::parse_module(&bad_text).unwrap().funcs.remove(0);
    let diags = tilec_ir::verify::verify_func(&bad);
    assert!(diags.iter().any(|d| d.message.contains("'grid' must be one to three positive integers")), "{diags:?}");
    let e = interp::default_launch(&bad, &args).unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
}

// ---- errors: each variant from a small program, never a panic ------------------------------------------

/// Checks an error: that its span covers `needle` in the source, and that it renders as a diagnostic.
fn check_error(text: &str, e: &InterpError, needle: &str) {
    assert!(spanned(text, e).contains(needle), "{e}: span covers {:?}, expected {needle:?}", spanned(text, e));
    let d: Diagnostic = e.clone().into();
    assert_eq!(d.span, e.span());
    let rendered = SourceFile::new("t.tir", text).render(&[d], false);
    assert!(rendered.contains("error: ") && rendered.contains(needle), "{rendered}");
}

/// A kernel the verifier refuses with `refusal`, run by the interpreter all the same.
fn run_unverified(setup: &str, refusal: &str) -> (String, InterpError) {
    let text = kernel_text(setup, &[]);
    let func = tilec_ir::parse_module(&text).unwrap().funcs.remove(0);
    let diags = tilec_ir::verify::verify_func(&func);
    assert!(diags.iter().any(|d| d.message.contains(refusal)), "{diags:?}");
    let e = interp::run_with_limits(&func, &mut [], &Launch::new([1, 1, 1]), &Limits::default()).unwrap_err();
    (text, e)
}

fn run_text(setup: &str, limits: &Limits) -> (String, InterpError) {
    let text = kernel_text(setup, &[]);
    let func = parse(&text);
    let e = interp::run_with_limits(&func, &mut [], &Launch::new([1, 1, 1]), limits).unwrap_err();
    (text, e)
}

#[test]
fn division_and_remainder_by_zero_are_errors() {
    let (text, e) = run_text(
        "  %a = tile.constant 1 : i32\n  %z = tile.constant 0 : i32\n  %q = tile.div %a, %z : i32",
        &Limits::default(),
    );
    assert!(matches!(e, InterpError::DivisionByZero { op: "tile.div", .. }), "{e}");
    check_error(&text, &e, "tile.div");
    let (text, e) = run_text(
        "  %a = tile.fill 1 : tile<2x2xi8, reg>\n  %z = tile.fill 0 : tile<2x2xi8, reg>\n  %q = tile.rem %a, %z : tile<2x2xi8, reg>",
        &Limits::default(),
    );
    assert!(matches!(e, InterpError::DivisionByZero { op: "tile.rem", .. }), "{e}");
    check_error(&text, &e, "tile.rem");
    // Float division by zero is IEEE: infinity, no error.
    let got = eval("  %a = tile.constant 1.0 : f32\n  %z = tile.constant 0.0 : f32\n  %q = tile.div %a, %z : f32", &[("q", "f32")]);
    assert_eq!(got.unwrap(), [f64::INFINITY]);
}

#[test]
fn index_overflow_is_an_error() {
    let (text, e) = run_text("  %a = tile.constant 4294967296 : index\n  %b = tile.mul %a, %a : index", &Limits::default());
    assert!(matches!(e, InterpError::IndexOverflow { op: "tile.mul", .. }), "{e}");
    check_error(&text, &e, "tile.mul");
}

#[test]
fn non_positive_loop_steps_are_errors() {
    for step in ["0", "-1"] {
        let setup = format!(
            "  %c0 = tile.constant 0 : index\n  %c4 = tile.constant 4 : index\n  %s = tile.constant {step} : index\n\
             tile.for %i = %c0 to %c4 step %s {{\n    tile.yield\n  }}"
        );
        // The verifier refuses a constant step <= 0 at the step; the interpreter still guards IR that skipped it.
        let (text, e) = run_unverified(&setup, "needs a positive step");
        assert!(matches!(e, InterpError::NonPositiveStep { step: s, .. } if s.to_string() == step), "{e}");
        check_error(&text, &e, "tile.for");
    }
}

#[test]
fn a_runaway_loop_runs_out_of_fuel() {
    let setup = "  %c0 = tile.constant 0 : index\n  %c1 = tile.constant 1 : index\n  %big = tile.constant 4503599627370496 : index\n\
                 %r = tile.for %i = %c0 to %big step %c1 iter_args(%x = %c0) -> (index) {\n    %y = tile.add %x, %c1 : index\n    tile.yield %y\n  }";
    let limits = Limits { fuel: 1 << 20, ..Limits::default() };
    let start = Instant::now();
    let (text, e) = run_text(setup, &limits);
    assert!(matches!(e, InterpError::OutOfFuel { limit, .. } if limit == 1 << 20), "{e}");
    assert!(start.elapsed().as_secs() < 10);
    check_error(&text, &e, "tile.");
}

#[test]
fn absurd_allocations_are_errors_before_anything_runs() {
    // The verifier refuses both (no target holds them); the interpreter's own limits still guard IR that
    // skipped the verifier.
    let (text, e) = run_unverified("  %s = tile.alloc_shared : tile<1024x1024xf32, shared>", "more than the 232448 bytes");
    assert!(matches!(e, InterpError::SharedMemoryTooLarge { bytes: 4194304, .. }), "{e}");
    check_error(&text, &e, "tile.alloc_shared");
    let (text, e) = run_unverified("  %t = tile.fill 0.0 : tile<16384x8192xf32, reg>", "(255 a thread has, less 16 for the rest of the kernel)");
    assert!(matches!(e, InterpError::TileTooLarge { elements: 134217728, .. }), "{e}");
    check_error(&text, &e, "tile.fill");
    // Two allocations that fit alone (4 KiB, 2 KiB) but not together under a 5 KiB limit.
    let limits = Limits { max_shared_bytes: 5 * 1024, ..Limits::default() };
    let (text, e) = run_text(
        "  %a = tile.alloc_shared : tile<32x32xf32, shared>\n  %b = tile.alloc_shared : tile<32x32xf16, shared>",
        &limits,
    );
    assert!(matches!(e, InterpError::SharedMemoryTooLarge { bytes: 6144, limit: 5120, .. }), "{e}");
    check_error(&text, &e, "%b = tile.alloc_shared");
}

#[test]
fn shared_windows_out_of_bounds_are_errors() {
    let (text, e) = run_text(
        "  %c8 = tile.constant 8 : index\n  %s = tile.alloc_shared : tile<16x16xf16, shared>\n\
         %r = tile.copy_s2r %s[%c8, %zero] : tile<8x8xf16, reg>\n  %q = tile.copy_s2r %s[%zero, %c8] : tile<16x16xf16, reg>",
        &Limits::default(),
    );
    assert!(matches!(e, InterpError::OutOfBounds { op: "tile.copy_s2r", .. }), "{e}");
    check_error(&text, &e, "%q = tile.copy_s2r");
    let (text, e) = run_text(
        "  %m = tile.constant -1 : index\n  %s = tile.alloc_shared : tile<16x16xf16, shared>\n\
         %r = tile.fill 1.0 : tile<4x4xf16, reg>\n  tile.copy_r2s %r, %s[%m, %zero]",
        &Limits::default(),
    );
    assert!(matches!(e, InterpError::OutOfBounds { op: "tile.copy_r2s", .. }), "{e}");
    check_error(&text, &e, "tile.copy_r2s");
}

#[test]
fn nvgpu_ops_are_refused_with_a_pointer_to_the_simulator() {
    let (text, e) = run_text("  %l = nvgpu.lane_id : index", &Limits::default());
    assert!(matches!(e, InterpError::NvgpuOp { op: "nvgpu.lane_id", .. }), "{e}");
    check_error(&text, &e, "nvgpu.lane_id");
    assert!(e.to_string().contains("tilec sim"));
}

#[test]
fn argument_mismatches_are_errors() {
    let text = example_text("mma.tir");
    let func = parse(&text);
    let good = interp::default_args(&func, &ArgShapes::new(), 1).unwrap();
    let launch = Launch::new([1, 1, 1]);

    let e = interp::run(&func, &mut good[..3].to_vec(), &launch).unwrap_err();
    assert!(matches!(e, InterpError::ArgCount { expected: 4, found: 3, .. }), "{e}");
    check_error(&text, &e, "@mma");

    let mut args = good.clone();
    args[1] = ArgValue::Scalar(ScalarType::F16, 1.0);
    let e = interp::run(&func, &mut args, &launch).unwrap_err();
    assert!(matches!(e, InterpError::ArgType { index: 1, .. }), "{e}");
    check_error(&text, &e, "%B");

    let mut args = good.clone();
    args[0] = ArgValue::Tensor(TensorData::zeros(&[16, 16], ScalarType::BF16));
    let e = interp::run(&func, &mut args, &launch).unwrap_err();
    assert!(matches!(e, InterpError::ArgType { index: 0, .. }), "{e}");

    let mut args = good.clone();
    args[3] = ArgValue::Tensor(TensorData::zeros(&[16, 16], ScalarType::F32));
    let e = interp::run(&func, &mut args, &launch).unwrap_err();
    assert!(matches!(e, InterpError::ArgShape { index: 3, .. }), "{e}");
    check_error(&text, &e, "%D");

    // A tensor whose values do not fill its shape.
    let mut args = good.clone();
    args[3] = ArgValue::Tensor(TensorData { shape: vec![16, 8], elem: ScalarType::F32, values: vec![0.0; 3] });
    assert!(matches!(interp::run(&func, &mut args, &launch), Err(InterpError::ArgShape { index: 3, .. })));

    // A scalar of the wrong type.
    let epi = parse(&example_text("gemm_epilogue.tir"));
    let mut args = interp::default_args(&epi, &ArgShapes::gemm(8, 8, 8), 1).unwrap();
    args[3] = ArgValue::Scalar(ScalarType::F16, 1.0);
    assert!(matches!(interp::run(&epi, &mut args, &launch), Err(InterpError::ArgType { index: 3, .. })));
}

#[test]
fn a_zero_grid_is_an_invalid_launch() {
    let func = parse(&example_text("copy_s2r.tir"));
    let mut args = interp::default_args(&func, &ArgShapes::new(), 1).unwrap();
    let e = interp::run(&func, &mut args, &Launch::new([1, 0, 1])).unwrap_err();
    assert!(matches!(e, InterpError::InvalidLaunch { grid: [1, 0, 1] }), "{e}");
    assert!(Diagnostic::from(e).span.is_unknown());
}

#[test]
fn unverified_ir_is_an_error_not_a_panic() {
    // An add of a register tile and an index, built without the verifier.
    let mut b = FuncBuilder::new("bad");
    let out = b.arg(TileType::new(&[2, 2], ScalarType::F32, MemorySpace::Global));
    let i = b.index(1);
    let t = b.fill(1.0, TileType::new(&[2, 2], ScalarType::F32, MemorySpace::Register));
    let sum = b.add(t, i);
    b.copy_r2g(sum, out, &[i, i]);
    b.ret();
    let func = b.finish();
    assert!(!tilec_ir::verify::verify_func(&func).is_empty());
    let mut args = vec![ArgValue::Tensor(TensorData::zeros(&[2, 2], ScalarType::F32))];
    let e = interp::run(&func, &mut args, &Launch::new([1, 1, 1])).unwrap_err();
    assert!(matches!(e, InterpError::Malformed { .. }), "{e}");
}
