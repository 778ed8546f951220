//! Misuse of the nvgpu instructions, and the machine model's corner cases: each gives the expected
//! diagnostic (never a panic), or the expected values.

use tilec_ir::data::TensorData;
use tilec_ir::sim::{simulate, simulate_with, LaneMask, Launch, ProbeSpec, SimArg, SimError, SimOptions};
use tilec_ir::{parse_module, verify::verify_module, Diagnostic, Func, ScalarType, SourceFile};

fn parse(text: &str) -> Func {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    module.funcs.into_iter().next().expect("a kernel")
}

fn parse_unverified(text: &str) -> Func {
    parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}")).funcs.into_iter().next().expect("a kernel")
}

fn tile(shape: &[usize], elem: ScalarType) -> SimArg {
    SimArg::Tile(TensorData::zeros(shape, elem))
}

fn iota(shape: &[usize], elem: ScalarType) -> SimArg {
    let n = shape.iter().product::<usize>();
    SimArg::Tile(TensorData { shape: shape.to_vec(), elem, values: (0..n).map(|i| i as f64).collect() })
}

/// The error's diagnostic rendered against the source: `name:line:col: error: ...` with the source line.
fn render(text: &str, e: SimError) -> String {
    let d: Diagnostic = e.into();
    SourceFile::new("t.tir", text).render(&[d], false)
}

const LDMATRIX_AT: &str = "tile.func @k(%S: tile<256xf16, global>, %O: tile<32x8xf16, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c8 = tile.constant 8 : index
  %c16 = tile.constant 16 : index
  %shift = tile.constant SHIFT : index
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<16x16xf16, shared>
  %row = tile.rem %tid, %c16 : index
  %m = tile.div %tid, %c16 : index
  %col0 = tile.mul %m, %c8 : index
  %col = tile.add %col0, %shift : index
  %v = nvgpu.ldmatrix %s[%row, %col] {numTiles = 4, transpose = false} : vector<4x2xf16>
  tile.return
}
";

#[test]
fn misaligned_ldmatrix_row_names_lane_and_address() {
    let text = LDMATRIX_AT.replace("SHIFT", "1");
    let func = parse(&text);
    let err = simulate(&func, &mut [iota(&[256], ScalarType::F16), tile(&[32, 8], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    match &err {
        SimError::Misaligned { lane, address, align, .. } => assert_eq!((*lane, *address, *align), (0, 2, 16)),
        other => panic!("{other:?}"),
    }
    let out = render(&text, err);
    assert!(out.starts_with("t.tir:12:"), "{out}");
    assert!(out.contains("lane 0 gives shared address 0x2, which is not 16-byte aligned"), "{out}");
    assert!(out.contains("16-byte aligned"), "{out}");
}

#[test]
fn ldmatrix_row_past_the_end_of_the_tile_is_out_of_bounds() {
    // Column 8 + 8 = 16 would be fine, column 9.. is past the row: shift 8 puts lanes 16-31 at column 16.
    let func = parse(&LDMATRIX_AT.replace("SHIFT", "8"));
    let err = simulate(&func, &mut [iota(&[256], ScalarType::F16), tile(&[32, 8], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    match err {
        SimError::OutOfBounds { lane, index, space, .. } => {
            assert_eq!((lane, index, space), (16, vec![0, 16], "shared"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn out_of_bounds_global_load_names_lane_and_index() {
    let text = "tile.func @k(%S: tile<64xf32, global>) attributes {num_warps = 1} {
  %c40 = tile.constant 40 : index
  %tid = nvgpu.thread_id x : index
  %i = tile.add %tid, %c40 : index
  %x = nvgpu.load %S[%i] : f32
  tile.return
}
";
    let err = simulate(&parse(text), &mut [tile(&[64], ScalarType::F32)], &Launch::SINGLE).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SimError::OutOfBounds { lane: 24, .. }), "{err:?}");
    assert!(msg.contains("lane 24 accesses global tile of shape [64] at index [64]"), "{msg}");
    assert!(render(text, err).starts_with("t.tir:5:"));
}

#[test]
fn misaligned_vector_load() {
    let text = "tile.func @k(%S: tile<64xf16, global>) attributes {num_warps = 1} {
  %c1 = tile.constant 1 : index
  %x = nvgpu.load %S[%c1] : vector<2xf16>
  tile.return
}
";
    let err = simulate(&parse(text), &mut [tile(&[64], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Misaligned { lane: 0, address: 2, align: 4, space: "global", .. }), "{err:?}");
}

const DIVERGENT: &str = "tile.func @k(%S: tile<32xi32, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %zero = tile.constant 0 : i32
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<16x16xf16, shared>
  %sum = tile.for %i = %c0 to %tid step %c1 iter_args(%acc = %zero) -> (i32) {
    %ii = tile.cast %i : i32
    %next = tile.add %acc, %ii : i32
    BODY
    tile.yield %next
  }
  nvgpu.store %sum, %S[%tid]
  tile.return
}
";

#[test]
fn divergent_sync_op_points_at_the_loop() {
    let text = DIVERGENT.replace("BODY", "%v = nvgpu.ldmatrix %s[%c0, %c0] {numTiles = 1} : vector<1x2xf16>");
    let err = simulate(&parse(&text), &mut [tile(&[32], ScalarType::I32)], &Launch::SINGLE).unwrap_err();
    match &err {
        SimError::Divergent { active, loop_span, op, .. } => {
            assert_eq!(*active, LaneMask(!1));
            assert_eq!(active.to_string(), "1-31");
            assert_eq!(*op, "nvgpu.ldmatrix");
            assert!(loop_span.is_some());
        }
        other => panic!("{other:?}"),
    }
    let out = render(&text, err);
    assert!(out.contains("needs all 32 lanes of the warp converged, but only lanes 1-31 are active"), "{out}");
    assert!(out.contains("the warp diverged here"), "{out}");
}

#[test]
fn divergent_loop_without_sync_ops_runs_masked_and_reconverges() {
    // Lane t sums 0 + 1 + ... + (t - 1); then the warp is converged again for the ldmatrix after the loop.
    let text = DIVERGENT.replace("BODY", "").replace(
        "  nvgpu.store %sum, %S[%tid]",
        "  %v = nvgpu.ldmatrix %s[%c0, %c0] {numTiles = 1} : vector<1x2xf16>\n  nvgpu.store %sum, %S[%tid]",
    );
    let mut args = [tile(&[32], ScalarType::I32)];
    simulate(&parse(&text), &mut args, &Launch::SINGLE).expect("runs");
    let got = &args[0].as_tile().expect("tile").values;
    let expected: Vec<f64> = (0..32).map(|t| f64::from(t * (t - 1) / 2)).collect();
    assert_eq!(got, &expected);
}

#[test]
fn divergent_barrier_is_an_error() {
    let text = DIVERGENT.replace("BODY", "nvgpu.barrier");
    let err = simulate(&parse(&text), &mut [tile(&[32], ScalarType::I32)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Divergent { op: "nvgpu.barrier", .. }), "{err:?}");
}

#[test]
fn endless_loop_runs_out_of_fuel() {
    let text = "tile.func @k() attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %big = tile.constant 1000000000000 : index
  tile.for %i = %c0 to %big step %c1 {
    %x = tile.add %i, %c1 : index
    tile.yield
  }
  tile.return
}
";
    let options = SimOptions { fuel: 10_000, probes: ProbeSpec::none(), ..SimOptions::default() };
    let err = simulate_with(&parse(text), &mut [], &Launch::SINGLE, &options).unwrap_err();
    assert!(matches!(err, SimError::FuelExhausted { fuel: 10_000, .. }), "{err:?}");
    // A huge grid is bounded the same way.
    let text = "tile.func @k() attributes {num_warps = 1} {\n  tile.return\n}\n";
    let err = simulate_with(&parse(text), &mut [], &Launch::grid(1 << 20, 1 << 20, 1), &options).unwrap_err();
    assert!(matches!(err, SimError::FuelExhausted { .. }), "{err:?}");
}

const ASYNC: &str = "tile.func @k(%G: tile<256xf16, global>, %O: tile<256xf16, global>) attributes {num_warps = 1} {
  %c8 = tile.constant 8 : index
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<256xf16, shared>
  %i = tile.mul %tid, %c8 : index
  nvgpu.device_async_copy %G[%i], %s[%i], 8 SRC
  nvgpu.device_async_create_group
  WAIT
  %x = nvgpu.load %s[%i] : vector<8xf16>
  nvgpu.store %x, %O[%i]
  tile.return
}
";

#[test]
fn reading_shared_memory_before_the_async_copy_lands_is_detected() {
    let text = ASYNC.replace(" SRC", "").replace("WAIT", "");
    let err = simulate(&parse(&text), &mut [iota(&[256], ScalarType::F16), tile(&[256], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::AsyncHazard { lane: 0, address: 0, .. }), "{err:?}");
    assert!(err.to_string().contains("wait for its group first"));
}

#[test]
fn async_copy_lands_at_the_wait_with_zero_fill() {
    let text = ASYNC.replace("WAIT", "nvgpu.device_async_wait {numGroups = 0}");
    let mut args = [iota(&[256], ScalarType::F16), tile(&[256], ScalarType::F16)];
    simulate(&parse(&text.replace(" SRC", "")), &mut args, &Launch::SINGLE).expect("runs");
    assert_eq!(args[1], args[0]);
    // With src_elements = 3 only 3 of each 8 elements are read; the rest are zero.
    let text = text.replace(" SRC", ", %c3").replace("  %c8 = tile.constant 8 : index", "  %c8 = tile.constant 8 : index\n  %c3 = tile.constant 3 : index");
    let mut args = [iota(&[256], ScalarType::F16), tile(&[256], ScalarType::F16)];
    simulate(&parse(&text), &mut args, &Launch::SINGLE).expect("runs");
    let got = &args[1].as_tile().expect("tile").values;
    let expected: Vec<f64> = (0..256).map(|i| if i % 8 < 3 { i as f64 } else { 0.0 }).collect();
    assert_eq!(got, &expected);
}

#[test]
fn wrong_fragment_type_is_a_diagnostic_not_a_panic() {
    // m16n8k16 needs 8 elements of A per lane; the verifier would say so too, the simulator must not crash.
    let text = "tile.func @k() attributes {num_warps = 1} {
  %a = tile.fill 1.0 : vector<2x2xf16>
  %b = tile.fill 1.0 : vector<2x2xf16>
  %c = tile.fill 0.0 : vector<2x2xf32>
  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : vector<2x2xf32>
  tile.return
}
";
    let err = simulate(&parse_unverified(text), &mut [], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::FragmentType { .. }), "{err:?}");
    assert!(err.to_string().contains("m16n8k16 holds 8 elements of A per lane"), "{err}");
    // .col.row exists only for m8n8k4.
    let text = text.replace("vector<2x2xf16>\n  %b", "vector<4x2xf16>\n  %b").replace("[16, 8, 16]}", "[16, 8, 16], layoutA = col}");
    let module = parse_module(&text).expect("parses");
    let diags = verify_module(&module).unwrap_err();
    assert!(diags.to_string().contains("exists only as layoutA = row, layoutB = col"), "{diags}");
    let err = simulate(&module.funcs[0], &mut [], &Launch::SINGLE).unwrap_err();
    assert!(err.to_string().contains("only as '.row.col'"), "{err}");
}

#[test]
fn tile_level_ops_must_be_lowered_first() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/copy_s2r.tir")).expect("example");
    let func = parse(&text);
    let err = simulate(&func, &mut [tile(&[16, 16], ScalarType::F16), tile(&[16, 16], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Unsupported { op: "tile.copy_g2s", .. }), "{err:?}");
}

#[test]
fn arguments_are_checked() {
    let func = parse("tile.func @k(%S: tile<64xf32, global>) attributes {num_warps = 1} {\n  tile.return\n}\n");
    let err = simulate(&func, &mut [tile(&[32], ScalarType::F32)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Arguments { .. }), "{err:?}");
    let err = simulate(&func, &mut [], &Launch::SINGLE).unwrap_err();
    assert!(err.to_string().contains("takes 1 arguments, 0 were given"), "{err}");
}

#[test]
fn warps_meet_at_barriers_and_blocks_see_their_ids() {
    // Two warps, two blocks: each thread writes its id to shared memory, then (after the barrier) reads its
    // mirror image's, written by the other warp, and stores it with the block id added.
    let text = "tile.func @k(%O: tile<2x64xindex, global>) attributes {num_warps = 2} {
  %c63 = tile.constant 63 : index
  %tid = nvgpu.thread_id x : index
  %bid = tile.block_id x : index
  %s = tile.alloc_shared : tile<64xindex, shared>
  nvgpu.store %tid, %s[%tid]
  nvgpu.barrier
  %j = tile.sub %c63, %tid : index
  %x = nvgpu.load %s[%j] : index
  %y = tile.add %x, %bid : index
  %w = nvgpu.warp_id : index
  %l = nvgpu.lane_id : index
  nvgpu.store %y, %O[%bid, %tid] {probe = \"y\"}
  tile.return
}
";
    let mut args = [tile(&[2, 64], ScalarType::Index)];
    let trace = simulate(&parse(text), &mut args, &Launch::grid(2, 1, 1)).expect("runs");
    let got = &args[0].as_tile().expect("tile").values;
    let expected: Vec<f64> = (0..2).flat_map(|b| (0..64).map(move |t| f64::from(63 - t + b))).collect();
    assert_eq!(got, &expected);
    assert_eq!(trace.blocks, 2);
    // `probe` on an op without a result records nothing.
    assert!(trace.probes.is_empty());
}

#[test]
fn predicated_store_skips_lanes_where_the_mask_is_false() {
    let text = "tile.func @k(%O: tile<32xf32, global>) attributes {num_warps = 1} {
  %c16 = tile.constant 16 : index
  %one = tile.constant 1.0 : f32
  %tid = nvgpu.thread_id x : index
  %p = tile.cmp lt %tid, %c16 : i1
  nvgpu.store %one, %O[%tid] if %p
  tile.return
}
";
    let mut args = [tile(&[32], ScalarType::F32)];
    simulate(&parse(text), &mut args, &Launch::SINGLE).expect("runs");
    let got = &args[0].as_tile().expect("tile").values;
    assert_eq!(got.iter().sum::<f64>(), 16.0);
    assert_eq!(got[15], 1.0);
    assert_eq!(got[16], 0.0);
}

#[test]
fn probes_record_every_ldmatrix_when_asked() {
    let func = parse(&LDMATRIX_AT.replace("SHIFT", "0"));
    let options = SimOptions { probes: ProbeSpec::with_kinds(&[tilec_ir::OpKind::LdMatrix]), ..SimOptions::default() };
    let trace = simulate_with(&func, &mut [tile(&[256], ScalarType::F16), tile(&[32, 8], ScalarType::F16)], &Launch::SINGLE, &options).expect("runs");
    assert_eq!(trace.probes.len(), 1);
    assert_eq!(trace.probes[0].name, "v");
    assert_eq!(trace.probes[0].registers(3).expect("lane 3").len(), 4);
    assert!(trace.render().starts_with("probe \"v\" (vector<4x2xf16>) in block (0, 0, 0), warp 0\nlane 0: r0 = 0 0, r1 = 0 0"), "{}", trace.render());
}

#[test]
fn integer_division_by_zero_is_reported() {
    let text = "tile.func @k() attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %tid = nvgpu.thread_id x : index
  %x = tile.div %tid, %c0 : index
  tile.return
}
";
    let err = simulate(&parse(text), &mut [], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::DivisionByZero { lane: 0, .. }), "{err:?}");
}

/// The mirror-image exchange of `warps_meet_at_barriers_and_blocks_see_their_ids`, with or without its
/// barrier (and with or without the second warp's store, for a write-after-read race).
fn exchange(barrier: &str) -> String {
    format!(
        "tile.func @k(%O: tile<64xindex, global>) attributes {{num_warps = 2}} {{
  %c63 = tile.constant 63 : index
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<64xindex, shared>
  nvgpu.store %tid, %s[%tid]
  {barrier}
  %j = tile.sub %c63, %tid : index
  %x = nvgpu.load %s[%j] : index
  nvgpu.store %x, %O[%tid]
  tile.return
}}
"
    )
}

#[test]
fn the_race_detector_reports_accesses_of_two_warps_with_no_barrier_between() {
    let mut args = [tile(&[64], ScalarType::Index)];
    simulate(&parse(&exchange("nvgpu.barrier")), &mut args, &Launch::SINGLE).expect("the barrier orders the exchange");
    let text = exchange("");
    let err = simulate(&parse(&text), &mut [tile(&[64], ScalarType::Index)], &Launch::SINGLE).unwrap_err();
    // Warp 0 runs first: it reads elements 32..63 before warp 1 stores them (write after read), both in one
    // interval between barriers.
    let SimError::Race { op, does, space, first_op, first_warp, did, at, span, first_span, .. } = err.clone() else {
        panic!("expected a race, got {err:?}");
    };
    assert_eq!((op, does, space, first_op, first_warp, did, at.warp), ("nvgpu.store", "writes", "shared", "nvgpu.load", 0, "read", 1));
    assert_eq!(&text[span.start as usize..span.end as usize], "nvgpu.store %tid, %s[%tid]");
    assert_eq!(&text[first_span.start as usize..first_span.end as usize], "%x = nvgpu.load %s[%j] : index");
    let d: Diagnostic = err.into();
    let rendered = SourceFile::new("race.tir", &text).render(&[d], false);
    assert!(rendered.contains("the other access: 'nvgpu.load' in warp 0"), "{rendered}");
    // Switched off, the same program runs (and computes what the hardware might not).
    let options = SimOptions { race_detection: false, ..SimOptions::default() };
    simulate_with(&parse(&text), &mut [tile(&[64], ScalarType::Index)], &Launch::SINGLE, &options).expect("no detector");
}

#[test]
fn an_async_copy_writes_shared_memory_when_it_lands() {
    // Thread t copies elements 8t .. 8t+7 and reads element 511 - t, which a thread of the other warp copied:
    // warp 0 reads before warp 1's copies land (at warp 1's wait) in the same interval, a race. A barrier
    // after the wait orders them.
    let text = |barrier: &str| {
        format!(
            "tile.func @k(%G: tile<512xf16, global>, %O: tile<512xf16, global>) attributes {{num_warps = 2}} {{
  %c8 = tile.constant 8 : index
  %c511 = tile.constant 511 : index
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<512xf16, shared>
  %i = tile.mul %tid, %c8 : index
  %j = tile.sub %c511, %tid : index
  nvgpu.device_async_copy %G[%i], %s[%i], 8
  nvgpu.device_async_create_group
  nvgpu.device_async_wait
  {barrier}
  %x = nvgpu.load %s[%j] : f16
  nvgpu.store %x, %O[%j]
  tile.return
}}
"
        )
    };
    let ok = text("nvgpu.barrier");
    simulate(&parse(&ok), &mut [tile(&[512], ScalarType::F16), tile(&[512], ScalarType::F16)], &Launch::SINGLE).expect("ordered");
    let racy = text("");
    let err = simulate(&parse(&racy), &mut [tile(&[512], ScalarType::F16), tile(&[512], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Race { first_op: "nvgpu.device_async_copy" | "nvgpu.load", .. }), "{err:?}");
}
