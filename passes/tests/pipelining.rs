//! `software-pipeline`: the pipelined GEMMs still give what the tile-level interpreter gives, in the warp
//! simulator (which reports reading shared memory that an un-waited `cp.async` will write as
//! `AsyncHazard`), for 2, 3 and 4 stages and for trip counts below, at and above the stage count
//! (remainder iterations, zero-filled prefetches past the end); and the loop has the expected shape.

mod common;

use common::small_integers;
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgShapes, ArgValue};
use tilec_ir::sim::{self, SimArg};
use tilec_ir::{Attribute, Module, OpKind};
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry};

fn load(name: &str) -> Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    tilec_ir::parse_module(&text).unwrap()
}

/// An example with `attrs` added to its function's attribute list.
fn load_with_attrs(name: &str, attrs: &str) -> Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    tilec_ir::parse_module(&text.replacen("attributes {", &format!("attributes {{{attrs}, "), 1)).unwrap()
}

/// An example with one piece of its text replaced.
fn load_edited(name: &str, from: &str, to: &str) -> Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(text.contains(from), "{name} has no '{from}'");
    tilec_ir::parse_module(&text.replacen(from, to, 1)).unwrap()
}

fn pipelined(name: &str, stages: u32) -> Module {
    pipelined_with(name, &format!("stages={stages}"))
}

fn pipelined_with(name: &str, options: &str) -> Module {
    pipeline_module(name, load(name), options)
}

fn pipeline_module(name: &str, mut m: Module, options: &str) -> Module {
    let pipeline = format!("layout-assignment,swizzle,lower-tile-to-nvgpu,software-pipeline{{{options}}},canonicalize,cse,canonicalize,dce");
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &pipeline).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{name}: {d}"));
    m
}

/// Interpreter on the original, simulator on the pipelined kernel: every tensor bit for bit (small
/// integer inputs make every f32 sum exact).
fn check(name: &str, shapes: &ArgShapes, stages: u32, seed: u64) {
    check_module(name, load(name), shapes, stages, seed);
}

fn check_module(name: &str, original: Module, shapes: &ArgShapes, stages: u32, seed: u64) {
    let func = &original.funcs[0];
    let mut args = interp::default_args(func, shapes, seed).unwrap();
    for (i, a) in args.iter_mut().enumerate() {
        if let ArgValue::Tensor(t) = a {
            small_integers(t, seed + i as u64);
        }
    }
    let launch = interp::default_launch(func, &args).unwrap();
    let mut sim_args: Vec<SimArg> = args.iter().map(SimArg::from).collect();
    interp::run(func, &mut args, &launch).unwrap();
    let low = pipeline_module(name, original.clone(), &format!("stages={stages}"));
    let options = sim::SimOptions { fuel: 1 << 34, ..Default::default() };
    sim::simulate_with(&low.funcs[0], &mut sim_args, &sim::Launch { grid: launch.grid }, &options)
        .unwrap_or_else(|e| panic!("{name} with {stages} stages in the simulator: {e:?}"));
    let want: Vec<TensorData> = args.into_iter().filter_map(|a| a.as_tensor().cloned()).collect();
    let got: Vec<TensorData> = sim_args.into_iter().filter_map(SimArg::into_tile).collect();
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        let bad = (0..w.values.len()).filter(|&k| w.values[k].to_bits() != g.values[k].to_bits()).count();
        assert_eq!(bad, 0, "{name}, {stages} stages: tensor #{i} differs at {bad} elements");
    }
}

#[test]
fn gemm_matches_the_interpreter_for_every_stage_count() {
    // K = 8, 40: fewer k-steps than stages (only remainder iterations, prefetches past the end);
    // K = 128: a whole number of unrolled groups for 2 and 4 stages; K = 160, 224: groups plus remainders.
    for stages in [2, 3, 4] {
        for (m, n, k) in [(200, 72, 40), (130, 8, 8), (128, 128, 128), (64, 136, 160), (72, 80, 224)] {
            check("gemm.tir", &ArgShapes::gemm(m, n, k), stages, 3 + stages as u64);
        }
    }
}

#[test]
fn gemm_epilogue_and_s8_match() {
    let shapes = ArgShapes::gemm(72, 80, 48).with_scalar("alpha", 2.0).with_scalar("beta", -1.0);
    check("gemm_epilogue.tir", &shapes, 3, 4);
    for (m, n, k) in [(64, 64, 64), (72, 48, 336)] {
        check("gemm_s8.tir", &ArgShapes::gemm(m, n, k), 4, 6);
    }
}

/// Synchronous copies (`global_alignment` below 4: masked element loads and a vector store per chunk) go
/// through the ring like cp.async: with every operand synchronous and with one of them on cp.async, at
/// shapes whose rows are not 4-byte aligned (odd K, odd N), for trip counts below and above the stages.
#[test]
fn synchronous_copies_match_in_the_ring() {
    for (attrs, stages) in [("global_alignment = 2", 3), ("global_alignment = [2, 16, 16]", 4), ("global_alignment = [16, 2, 16]", 2)] {
        for (m, n, k) in [(130, 72, 41), (72, 133, 200), (64, 64, 30)] {
            let (n, k) = if attrs.contains("[2,") { (n - n % 8, k) } else if attrs.contains("[16, 2") { (n, k - k % 8) } else { (n, k) };
            check_module(&format!("gemm.tir with {attrs}"), load_with_attrs("gemm.tir", attrs), &ArgShapes::gemm(m, n, k), stages, 9);
        }
    }
    check_module("gemm_s8.tir", load_with_attrs("gemm_s8.tir", "global_alignment = 1"), &ArgShapes::gemm(67, 45, 37), 3, 10);
}

/// Copies between tiles stored in different orders transpose through registers (4x4 int8 or 2x2 f16 blocks):
/// a row-major int8 B into a K-contiguous shared B (read with ldmatrix), a column-major f16 A into a
/// row-major shared A; aligned and odd shapes (element-wise loads), in the ring.
#[test]
fn transposing_copies_match_in_the_ring() {
    let s8 = || load_edited("gemm_s8_128.tir", "tile<64x128xi8, shared>", "tile<64x128xi8, shared, #col_major>");
    for (m, n, k) in [(200, 80, 48), (128, 128, 192)] {
        check_module("gemm_s8_128.tir, B transposed", s8(), &ArgShapes::gemm(m, n, k), 3, 11);
    }
    let s8_odd = load_edited("gemm_s8_128.tir", "tile<64x128xi8, shared>", "tile<64x128xi8, shared, #col_major>");
    let text = tilec_ir::print_module(&s8_odd).replacen("attributes {", "attributes {global_alignment = 1, ", 1);
    check_module("gemm_s8_128.tir, B transposed, odd", tilec_ir::parse_module(&text).unwrap(), &ArgShapes::gemm(67, 45, 37), 2, 12);
    let f16 = load_edited("gemm_a_col.tir", "tile<128x32xf16, shared, #col_major>", "tile<128x32xf16, shared>");
    for (m, n, k) in [(200, 72, 40), (64, 136, 160)] {
        check_module("gemm_a_col.tir, A transposed", f16.clone(), &ArgShapes::gemm(m, n, k), 4, 13);
    }
}

/// The default stage count leaves a loop whose copies are all synchronous single-stage (measured no
/// slower: see `pipeline_func`), with a remark; one cp.async operand keeps the ring.
#[test]
fn loops_with_only_synchronous_copies_stay_single_stage_by_default() {
    let run = |attrs: &str| {
        let mut m = load_with_attrs("gemm.tir", attrs);
        let pipeline = "layout-assignment,swizzle,lower-tile-to-nvgpu,software-pipeline";
        let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), pipeline).unwrap();
        let mut cx = PassContext::new(Target::Sm90);
        pm.run(&mut m, &mut cx).unwrap();
        let remarks: Vec<String> = cx.remarks.iter().map(|r| r.message.clone()).collect();
        (count(&m, OpKind::AllocShared), remarks)
    };
    let (allocs, remarks) = run("global_alignment = 2");
    assert_eq!(allocs, 2, "{remarks:?}");
    assert!(remarks.iter().any(|r| r.contains("all its copies are synchronous")), "{remarks:?}");
    let (allocs, _) = run("global_alignment = 2, pipeline_stages = 3");
    assert_eq!(allocs, 6);
    let (allocs, _) = run("global_alignment = [2, 16, 16]");
    assert_eq!(allocs, 8);
}

fn count(m: &Module, kind: OpKind) -> usize {
    let f = &m.funcs[0];
    let mut n = 0;
    f.body.walk(f.entry, &mut |o| n += usize::from(f.body.op(o).kind == kind));
    n
}

#[test]
fn the_ring_has_stages_allocations_and_one_barrier_per_k_step() {
    for stages in [2u32, 3, 4] {
        let m = pipelined("gemm.tir", stages);
        let f = &m.funcs[0];
        // A and B, one allocation per stage.
        assert_eq!(count(&m, OpKind::AllocShared), 2 * stages as usize);
        // Every wait inside a loop leaves stages-2 groups in flight; one wait 0 after the loops.
        let mut waits = Vec::new();
        f.body.walk(f.entry, &mut |o| {
            let op = f.body.op(o);
            if op.kind == OpKind::DeviceAsyncWait {
                waits.push(op.attr("numGroups").and_then(Attribute::as_int).unwrap_or(0));
            }
        });
        assert!(waits.iter().filter(|&&n| n == stages as i64 - 2).count() >= stages as usize, "{waits:?}");
        // The unrolled main loop: `stages` k-steps, one barrier and one commit each, none of the
        // write-after-read barriers of the single-stage loop.
        let main = f.body.block(f.entry).ops.iter().copied().find(|&o| f.body.op(o).kind == OpKind::For).expect("main loop");
        let body = &f.body.block(f.body.op(main).regions[0]).ops;
        let of = |k: OpKind| body.iter().filter(|&&o| f.body.op(o).kind == k).count();
        assert_eq!(of(OpKind::Barrier), stages as usize);
        assert_eq!(of(OpKind::DeviceAsyncCreateGroup), stages as usize);
        assert_eq!(of(OpKind::MmaSync), 64 * stages as usize);
    }
}

#[test]
fn the_default_pipeline_runs_it_and_stages_come_from_the_function() {
    assert!(tilec_passes::lowering_pipeline(Target::Sm90).contains("software-pipeline"));
    let text = std::fs::read_to_string(format!("{}/../examples/gemm.tir", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace("attributes {num_warps = 4", "attributes {pipeline_stages = 3, num_warps = 4");
    let mut m = tilec_ir::parse_module(&text).unwrap();
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &tilec_passes::full_pipeline(Target::Sm90)).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap();
    assert_eq!(count(&m, OpKind::AllocShared), 6);
    // One stage: left alone.
    let text = text.replace("pipeline_stages = 3", "pipeline_stages = 1");
    let mut m = tilec_ir::parse_module(&text).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap();
    assert_eq!(count(&m, OpKind::AllocShared), 2);
}

#[test]
fn bad_stage_options_are_diagnosed() {
    let r = PassRegistry::with_builtin();
    assert!(PassManager::from_pipeline(&r, "software-pipeline{stages=1}").is_err());
    assert!(PassManager::from_pipeline(&r, "software-pipeline{stages=x}").is_err());
    assert!(PassManager::from_pipeline(&r, "software-pipeline{depth=3}").is_err());
    assert!(PassManager::from_pipeline(&r, "software-pipeline{fragments=maybe}").is_err());
    assert!(PassManager::from_pipeline(&r, "software-pipeline{stages=3 fragments=off}").is_ok());
}

#[test]
fn loading_fragments_ahead_changes_no_bit_on_random_floats() {
    // Uniform random f16 inputs: f32 sums are inexact, so any change in the order of the mma.syncs
    // along an accumulator would show. Main loop plus remainder iterations (K = 160 with 4 stages).
    let original = load("gemm.tir");
    let func = &original.funcs[0];
    let args = interp::default_args(func, &ArgShapes::gemm(64, 136, 160), 11).unwrap();
    let launch = interp::default_launch(func, &args).unwrap();
    let mut outs = Vec::new();
    for options in ["stages=4 fragments=off", "stages=4 fragments=on", "stages=2"] {
        let low = pipelined_with("gemm.tir", options);
        let mut sim_args: Vec<SimArg> = args.iter().map(|a| SimArg::Tile(a.as_tensor().unwrap().clone())).collect();
        let options = sim::SimOptions { fuel: 1 << 34, ..Default::default() };
        sim::simulate_with(&low.funcs[0], &mut sim_args, &sim::Launch { grid: launch.grid }, &options).unwrap();
        outs.push(sim_args[2].as_tile().unwrap().values.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
    assert!(outs[0] == outs[1], "fragments ahead changed the result");
    assert!(outs[0] == outs[2], "2 stages and 4 stages differ");
}
