//! The lowered examples run on the warp simulator (`tilec_ir::sim`) and give what the tile-level
//! interpreter (`tilec_ir::interp`) gives on the original program.
//!
//! Inputs are small integers (-3..=3) for the float tiles, so every product and partial sum is exact in
//! f32 and the interpreter's per-step rounding and the simulator's single rounding agree bit for bit;
//! [`random_floats_within_bound`] also checks uniform [-1, 1) inputs against the f32 accumulation bound.

mod common;

use common::small_integers;
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgShapes, ArgValue};
use tilec_ir::sim::{self, SimArg};
use tilec_passes::layout_assignment::assign_layouts;
use tilec_passes::lower::lower_tile_to_nvgpu;

fn load(name: &str) -> tilec_ir::Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    tilec_ir::parse_module(&text).unwrap()
}

fn lowered(name: &str) -> tilec_ir::Module {
    let mut m = load(name);
    assign_layouts(&mut m).unwrap_or_else(|d| panic!("{name}: {d}"));
    lower_tile_to_nvgpu(&mut m).unwrap_or_else(|d| panic!("{name}: {d}"));
    tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{name}: {d}"));
    m
}

/// Runs `name` in the interpreter and, lowered, in the simulator; returns the final tensors of both.
fn run_both(name: &str, shapes: &ArgShapes, seed: u64, integers: bool) -> (Vec<TensorData>, Vec<TensorData>) {
    let original = load(name);
    let func = &original.funcs[0];
    let mut args = interp::default_args(func, shapes, seed).unwrap();
    if integers {
        for (i, a) in args.iter_mut().enumerate() {
            if let ArgValue::Tensor(t) = a {
                small_integers(t, seed + i as u64);
            }
        }
    }
    let launch = interp::default_launch(func, &args).unwrap();
    let mut sim_args: Vec<SimArg> = args.iter().map(SimArg::from).collect();
    interp::run(func, &mut args, &launch).unwrap();
    let low = lowered(name);
    let sim_launch = sim::Launch { grid: launch.grid };
    let options = sim::SimOptions { fuel: 1 << 34, ..Default::default() };
    sim::simulate_with(&low.funcs[0], &mut sim_args, &sim_launch, &options)
        .unwrap_or_else(|e| panic!("{name} in the simulator: {e:?}"));
    let want = args.into_iter().filter_map(|a| a.as_tensor().cloned()).collect();
    let got = sim_args.into_iter().filter_map(SimArg::into_tile).collect();
    (want, got)
}

fn assert_same(name: &str, shapes: &str, want: &[TensorData], got: &[TensorData]) {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(w.shape, g.shape);
        let bad: Vec<usize> = (0..w.values.len()).filter(|&k| w.values[k].to_bits() != g.values[k].to_bits()).collect();
        assert!(
            bad.is_empty(),
            "{name} at {shapes}: tensor #{i} differs at {} elements, first at flat {} (interp {} vs sim {})",
            bad.len(),
            bad[0],
            w.values[bad[0]],
            g.values[bad[0]]
        );
    }
}

#[test]
fn copy_s2r_matches_bit_exactly() {
    let (want, got) = run_both("copy_s2r.tir", &ArgShapes::new(), 1, false);
    assert_same("copy_s2r.tir", "16x16", &want, &got);
}

#[test]
fn mma_matches() {
    let (want, got) = run_both("mma.tir", &ArgShapes::new(), 2, true);
    assert_same("mma.tir", "16x8x16", &want, &got);
}

#[test]
fn gemm_matches_at_several_shapes() {
    // (M, N, K): exact tiles, and shapes that are not multiples of the 128x128x32 block tile.
    for (m, n, k) in [(128, 128, 32), (200, 72, 40), (64, 136, 64), (130, 8, 8)] {
        let (want, got) = run_both("gemm.tir", &ArgShapes::gemm(m, n, k), 3, true);
        assert_same("gemm.tir", &format!("M={m} N={n} K={k}"), &want, &got);
    }
}

#[test]
fn gemm_epilogue_matches() {
    let shapes = ArgShapes::gemm(72, 80, 48).with_scalar("alpha", 2.0).with_scalar("beta", -1.0);
    let (want, got) = run_both("gemm_epilogue.tir", &shapes, 4, true);
    assert_same("gemm_epilogue.tir", "M=72 N=80 K=48", &want, &got);
}

#[test]
fn random_floats_within_bound() {
    // Uniform [-1, 1) f16 inputs: the interpreter rounds to f32 after every product, the simulator once per
    // mma.sync instruction (16 products). |error| <= K * 2^-24 * sum |a_i b_i| <= K^2 * 2^-24 here.
    let (m, n, k) = (96, 40, 48);
    let (want, got) = run_both("gemm.tir", &ArgShapes::gemm(m, n, k), 5, false);
    let bound = (k * k) as f64 * f64::powi(2.0, -24);
    let (w, g) = (&want[2], &got[2]);
    for i in 0..w.values.len() {
        assert!((w.values[i] - g.values[i]).abs() <= bound, "C[{i}]: interp {} sim {}", w.values[i], g.values[i]);
    }
}

#[test]
fn the_comparison_catches_a_wrong_lowering() {
    // Flip `transpose` on the B ldmatrix of the lowered mma.tir: the simulator must now disagree.
    let original = load("mma.tir");
    let func = &original.funcs[0];
    let mut args = interp::default_args(func, &ArgShapes::new(), 9).unwrap();
    for (i, a) in args.iter_mut().enumerate() {
        if let ArgValue::Tensor(t) = a {
            small_integers(t, i as u64);
        }
    }
    let launch = interp::default_launch(func, &args).unwrap();
    let mut sim_args: Vec<SimArg> = args.iter().map(|a| SimArg::Tile(a.as_tensor().unwrap().clone())).collect();
    interp::run(func, &mut args, &launch).unwrap();
    let mut low = lowered("mma.tir");
    let f = &mut low.funcs[0];
    let ld = (0..f.body.ops.len())
        .map(|i| tilec_ir::OpId(i as u32))
        .find(|&o| f.body.op(o).parent.is_some() && f.body.op(o).attr("transpose") == Some(&tilec_ir::Attribute::Bool(true)))
        .expect("a transposed ldmatrix for B");
    f.body.op_mut(ld).attrs.insert("transpose".into(), tilec_ir::Attribute::Bool(false));
    sim::simulate(&low.funcs[0], &mut sim_args, &sim::Launch { grid: launch.grid }).unwrap();
    assert_ne!(args[3].as_tensor().unwrap().values, sim_args[3].as_tile().unwrap().values);
}

#[test]
fn gemm_s8_matches_through_vector_loads() {
    // No ldmatrix for 8-bit elements yet: the copy plans fall back to per-thread loads; i32 results exact.
    // cp.async of 16 bytes needs rows that are multiples of 16 i8 elements (K and N here).
    for (m, n, k) in [(64, 64, 64), (72, 48, 80)] {
        let (want, got) = run_both("gemm_s8.tir", &ArgShapes::gemm(m, n, k), 6, false);
        assert_same("gemm_s8.tir", &format!("M={m} N={n} K={k}"), &want, &got);
    }
}
