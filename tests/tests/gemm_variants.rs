//! The GEMM variants of issue 9, each lowered as `tilec sim` and `tilec bundle` lower it (the default
//! pipeline: layout assignment, swizzle, lowering to nvgpu, 4-stage software pipelining, cleanup) for sm_80
//! and sm_90, run on the warp simulator, and compared with the reference interpreter on the original kernel
//! at shapes that are not multiples of the 128x128 block tile (zero-filled loads past the edges of A, B and
//! C, predicated stores of C, fewer k-steps than pipeline stages):
//!
//! - `gemm_bf16.tir`: bf16 inputs, f32 accumulation (mma.sync m16n8k16 .bf16);
//! - `gemm_f16_out.tir`, `gemm_bf16_out.tir`: C = alpha·A·B + beta·C with fp16 / bf16 C;
//! - `gemm_s8_128.tir`: s8 inputs, exact i32 accumulation at the 128x128x64 block tile;
//! - `gemm_s8_b_col.tir`: the same with a column-major (K-contiguous) B, cuBLAS's TN int8 form;
//! - `gemm_a_col.tir`, `gemm_b_col.tir`, `gemm_ab_col.tir`: A and/or B column-major in global memory.
//!
//! Small integer inputs (-3..=3) make every f32 partial sum exact, so the simulator (one rounding per mma)
//! and the interpreter (one rounding per k) agree bit for bit; seeded uniform inputs are compared within
//! `tilec compare`'s tolerance. The interpreter works on logical values whatever the storage order, so for
//! the column-major variants it is independent of how the lowering and the simulator address memory.
//!
//! The run-time requirements the lowering records (`async_copy_requirements`) hold at these shapes: the
//! extent along each tile's contiguous axis is a multiple of 8 elements (16 for s8).

use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgShapes, ArgValue};
use tilec_ir::sim::{self, SimArg};
use tilec_ir::{Module, OpKind};
use tilec_ir::Target;

fn load(name: &str) -> Module {
    let path = tilec_tests::examples_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tilec_ir::parse_module(&text).unwrap_or_else(|d| panic!("{name}: {d}"))
}

fn lowered(name: &str, target: Target) -> Module {
    let m = tilec_compiler::lower(load(name), &tilec_compiler::Options::for_target(target))
        .unwrap_or_else(|e| panic!("{name} for {target:?}: {e:?}"))
        .module;
    tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{name}: {d}"));
    m
}

fn small_integers(t: &mut TensorData, seed: u64) {
    for (i, v) in t.values.iter_mut().enumerate() {
        let mut x = (i as u64) ^ (seed << 40);
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 29;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 32;
        *v = (x % 7) as f64 - 3.0;
    }
}

/// `tilec compare`'s tolerance for float results; integers exactly.
fn tolerance(elem: tilec_ir::ScalarType) -> (f64, f64) {
    use tilec_ir::ScalarType::*;
    match elem {
        F32 => (1e-3, 1e-3),
        F16 | BF16 => (1e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

/// Interpreter on the original, simulator on the lowering for `target`; with `integers`, every element bit
/// for bit, else within the tolerance. Returns how many output elements were compared.
fn check(name: &str, shapes: &ArgShapes, target: Target, seed: u64, integers: bool) -> usize {
    let original = load(name);
    let func = &original.funcs[0];
    let mut args = interp::default_args(func, shapes, seed).unwrap_or_else(|e| panic!("{name}: {e}"));
    if integers {
        for (i, a) in args.iter_mut().enumerate() {
            if let ArgValue::Tensor(t) = a {
                small_integers(t, seed + i as u64);
            }
        }
    }
    let launch = interp::default_launch(func, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut sim_args: Vec<SimArg> = args.iter().map(SimArg::from).collect();
    interp::run(func, &mut args, &launch).unwrap_or_else(|e| panic!("{name} in the interpreter: {e}"));
    let low = lowered(name, target);
    let options = sim::SimOptions { fuel: 1 << 34, ..Default::default() };
    sim::simulate_with(&low.funcs[0], &mut sim_args, &sim::Launch { grid: launch.grid }, &options)
        .unwrap_or_else(|e| panic!("{name} for {target:?} in the simulator: {e:?}"));
    let mut compared = 0;
    for (i, (want, got)) in args.iter().zip(&sim_args).enumerate() {
        let (ArgValue::Tensor(w), SimArg::Tile(g)) = (want, got) else { continue };
        assert_eq!(w.shape, g.shape);
        let (atol, rtol) = if integers { (0.0, 0.0) } else { tolerance(w.elem) };
        let cols = w.shape.get(1).copied().unwrap_or(1).max(1);
        let bad: Vec<usize> = (0..w.values.len())
            .filter(|&k| {
                let (x, y) = (w.values[k], g.values[k]);
                // A NaN on either side is never close (only bit-identical).
                let close = (x - y).abs() <= atol + rtol * x.abs();
                x.to_bits() != y.to_bits() && !close
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{name} for {target:?} at {:?}: tensor #{i} differs at {} of {} elements, first at ({}, {}): interpreter {} vs simulator {}",
            w.shape,
            bad.len(),
            w.values.len(),
            bad[0] / cols,
            bad[0] % cols,
            w.values[bad[0]],
            g.values[bad[0]]
        );
        compared += w.values.len();
    }
    compared
}

const TARGETS: [Target; 2] = [Target::Sm80, Target::Sm90];

/// 16-bit variants: M = 200 (1 block + 72 rows), N = 72, K = 40 (one full k-step and 8); and
/// 264 x 136 x 72 (2 blocks + 8 rows, 1 block + 8 columns, 2 k-steps + 8).
const SHAPES_16: [(usize, usize, usize); 2] = [(200, 72, 40), (264, 136, 72)];

fn check_all(name: &str, shapes: &[(usize, usize, usize)], epilogue: bool) {
    for &target in &TARGETS {
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let mut s = ArgShapes::gemm(m, n, k);
            if epilogue {
                s = s.with_scalar("alpha", 2.0).with_scalar("beta", -1.0);
            }
            let compared = check(name, &s, target, 7 + i as u64, true);
            assert_eq!(compared, m * k + k * n + m * n, "{name}: A, B and C compared");
            check(name, &s, target, 11 + i as u64, false);
        }
    }
}

#[test]
fn bf16_inputs() {
    check_all("gemm_bf16.tir", &SHAPES_16, false);
}

#[test]
fn alpha_beta_epilogue_with_f16_output() {
    check_all("gemm_f16_out.tir", &SHAPES_16, true);
}

#[test]
fn alpha_beta_epilogue_with_bf16_output() {
    check_all("gemm_bf16_out.tir", &SHAPES_16, true);
}

/// s8 rows must be a multiple of 16 elements: 200 x 80 x 48 (K less than one 64-deep k-step) and
/// 264 x 144 x 80 (K = 64 + 16).
#[test]
fn s8_at_the_128x128x64_block_tile_is_exact() {
    check_all("gemm_s8_128.tir", &[(200, 80, 48), (264, 144, 80)], false);
}

/// Column-major s8 B at the same tile and shapes (K a multiple of 16: the 16-byte cp.async chunks of B
/// now run along k).
#[test]
fn s8_with_column_major_b_is_exact() {
    check_all("gemm_s8_b_col.tir", &[(200, 80, 48), (264, 144, 80)], false);
}

/// How the s8 operands are read: A (row-major, four consecutive k per 32-bit register) with plain
/// `ldmatrix.x4` of byte pairs, a row-major B (four consecutive k = four rows per register) with
/// single-byte loads, and a column-major B with plain `ldmatrix.x2` of byte pairs (one 8-byte B fragment
/// per instruction).
#[test]
fn s8_operands_use_ldmatrix_of_byte_pairs_where_k_is_contiguous() {
    let reads = |name: &str| -> Vec<String> {
        let m = lowered(name, Target::Sm90);
        let f = &m.funcs[0];
        let mut out = Vec::new();
        f.body.walk(f.entry, &mut |id| {
            let op = f.body.op(id);
            let what = match op.kind {
                OpKind::LdMatrix => {
                    let trans = op.attr("transpose").and_then(tilec_ir::Attribute::as_bool).unwrap_or(false);
                    let num = op.attr("numTiles").and_then(tilec_ir::Attribute::as_int).unwrap_or(0);
                    format!("ldmatrix.x{num}{} {}", if trans { ".trans" } else { "" }, f.body.ty(op.results[0]))
                }
                OpKind::Load => format!("load {}", f.body.ty(op.results[0])),
                _ => return,
            };
            let tile = op.operand("src").and_then(|v| f.body.value(v).name.clone()).unwrap_or_default();
            if !tile.starts_with('s') {
                return;
            }
            let item = format!("{} {what}", tile.split("_stage").next().unwrap_or_default());
            if !out.contains(&item) {
                out.push(item);
            }
        });
        out.sort();
        out
    };
    assert_eq!(reads("gemm_s8_128.tir"), ["sa ldmatrix.x4 vector<4x4xi8>", "sb load i8"]);
    assert_eq!(reads("gemm_s8_b_col.tir"), ["sa ldmatrix.x4 vector<4x4xi8>", "sb ldmatrix.x2 vector<2x4xi8>"]);
}

#[test]
fn column_major_a() {
    check_all("gemm_a_col.tir", &SHAPES_16, false);
}

#[test]
fn column_major_b() {
    check_all("gemm_b_col.tir", &SHAPES_16, false);
}

#[test]
fn column_major_a_and_b() {
    check_all("gemm_ab_col.tir", &SHAPES_16, false);
}

/// How the column-major operands are read: `cp.async` into column-major (swizzled) shared tiles, then
/// `ldmatrix.trans` for a column-major A (its m16n8k16 fragment is row-major) and plain `ldmatrix` for a
/// column-major B (its fragment holds k pairs of one column: consecutive in a column-major tile), the
/// opposite of the row-major operands in `gemm.tir`.
#[test]
fn column_major_operands_use_the_other_ldmatrix() {
    let transposes = |name: &str| -> Vec<(String, bool)> {
        let m = lowered(name, Target::Sm90);
        let f = &m.funcs[0];
        let mut out = Vec::new();
        f.body.walk(f.entry, &mut |id| {
            let op = f.body.op(id);
            if op.kind == OpKind::LdMatrix {
                let tile = op.operand("src").and_then(|v| f.body.value(v).name.clone()).unwrap_or_default();
                let trans = op.attr("transpose").and_then(tilec_ir::Attribute::as_bool).unwrap_or(false);
                // Stage buffers are named after their tile (%sa_stage1, ...).
                let tile = tile.split("_stage").next().unwrap_or_default().to_string();
                if !out.contains(&(tile.clone(), trans)) {
                    out.push((tile, trans));
                }
            }
        });
        out.sort();
        out
    };
    let pairs = |v: &[(&str, bool)]| v.iter().map(|&(t, b)| (t.to_string(), b)).collect::<Vec<_>>();
    assert_eq!(transposes("gemm.tir"), pairs(&[("sa", false), ("sb", true)]));
    assert_eq!(transposes("gemm_a_col.tir"), pairs(&[("sa", true), ("sb", true)]));
    assert_eq!(transposes("gemm_b_col.tir"), pairs(&[("sa", false), ("sb", false)]));
    assert_eq!(transposes("gemm_ab_col.tir"), pairs(&[("sa", true), ("sb", false)]));
}
