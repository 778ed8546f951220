//! The bank-conflict analyzer on hand-written nvgpu-level programs with answers derived by hand.
//!
//! Reminder of the model (see `tilec_passes::bank_conflicts`): 32 banks of 4 bytes; bank of a byte address
//! `a` is `(a / 4) % 32`; a phase needs as many wavefronts as the most distinct words in one bank.

use tilec_passes::bank_conflicts::{
    analyze_bank_conflicts, AccessKind, BankConflictOptions, BankConflictReport, WarpSelection,
};

fn analyze_with(text: &str, options: &BankConflictOptions) -> BankConflictReport {
    let module = tilec_ir::parse_module(text.trim()).unwrap_or_else(|d| panic!("does not parse: {d}\n{text}"));
    tilec_ir::verify::verify_module(&module).unwrap_or_else(|d| panic!("does not verify: {d}\n{text}"));
    analyze_bank_conflicts(&module.funcs[0], options)
}

fn analyze(text: &str) -> BankConflictReport {
    analyze_with(text, &BankConflictOptions::default())
}

/// (min, actual) wavefronts of the `i`-th access, summed over its runs.
fn cost(r: &BankConflictReport, i: usize) -> (u32, u32) {
    let a = &r.accesses[i];
    (a.total.min_wavefronts, a.total.wavefronts)
}

/// A one-warp kernel with a shared tile `%s` of type `tile` and `body` after the usual constants.
fn kernel(tile: &str, body: &str) -> String {
    format!(
        r#"
tile.func @k(%G: tile<?x?xf16, global>) attributes {{num_warps = 1}} {{
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c2 = tile.constant 2 : index
  %c4 = tile.constant 4 : index
  %c8 = tile.constant 8 : index
  %c16 = tile.constant 16 : index
  %lane = nvgpu.lane_id : index
  %s = tile.alloc_shared : {tile}
{body}
  tile.return
}}"#
    )
}

#[test]
fn column_of_words_is_a_32_way_conflict() {
    // f32 32x32 row-major: lane l reads (l, 0) at byte 128 l: bank (32 l) % 32 = 0 for every lane, 32
    // different words → 32 wavefronts; the 128 bytes could come in 1.
    let r = analyze(&kernel("tile<32x32xf32, shared>", "  %x = nvgpu.load %s[%lane, %c0] : f32"));
    assert_eq!(cost(&r, 0), (1, 32));
    assert_eq!(r.accesses[0].conflict_factor(), 32.0);
    assert!(!r.is_conflict_free());
}

#[test]
fn row_of_words_and_broadcast_are_conflict_free() {
    // (0, l): consecutive words, one per bank.
    let r = analyze(&kernel("tile<32x32xf32, shared>", "  %x = nvgpu.load %s[%c0, %lane] : f32"));
    assert_eq!(cost(&r, 0), (1, 1));
    // Every lane reads word (0, 0): one word, broadcast.
    let r = analyze(&kernel("tile<32x32xf32, shared>", "  %x = nvgpu.load %s[%c0, %c0] : f32"));
    assert_eq!(cost(&r, 0), (1, 1));
    // Every lane reads column 0 of rows 0 and 1 alternately: two words (bank 0, words 0 and 32): 2-way.
    let r = analyze(&kernel(
        "tile<32x32xf32, shared>",
        "  %r = tile.rem %lane, %c2 : index\n  %x = nvgpu.load %s[%r, %c0] : f32",
    ));
    assert_eq!(cost(&r, 0), (1, 2));
}

#[test]
fn sub_word_and_stride_two() {
    // f16 (2 bytes): lanes 2k and 2k+1 share word k: 16 words in 16 banks.
    let r = analyze(&kernel("tile<32x64xf16, shared>", "  %x = nvgpu.load %s[%c0, %lane] : f16"));
    assert_eq!(cost(&r, 0), (1, 1));
    // f32 at column 2l: words 0, 2, ..., 62 → banks 0, 2, ..., 30 twice each: 2-way.
    let r = analyze(&kernel(
        "tile<32x64xf32, shared>",
        "  %c = tile.mul %lane, %c2 : index\n  %x = nvgpu.load %s[%c0, %c] : f32",
    ));
    assert_eq!(cost(&r, 0), (1, 2));
}

#[test]
fn vector_accesses_are_split_into_phases() {
    // 8 bytes per lane (vector<4xf16>), consecutive: 2 phases of 16 lanes x 8 B = 128 B each.
    let r = analyze(&kernel(
        "tile<8x128xf16, shared>",
        "  %c = tile.mul %lane, %c4 : index\n  %x = nvgpu.load %s[%c0, %c] : vector<4xf16>",
    ));
    assert_eq!(r.accesses[0].total.phases, 2);
    assert_eq!(cost(&r, 0), (2, 2));
    // 16 bytes per lane (vector<8xf16>), consecutive: 4 phases of 8 lanes.
    let r = analyze(&kernel(
        "tile<8x256xf16, shared>",
        "  %c = tile.mul %lane, %c8 : index\n  %x = nvgpu.load %s[%c0, %c] : vector<8xf16>",
    ));
    assert_eq!(r.accesses[0].total.phases, 4);
    assert_eq!(cost(&r, 0), (4, 4));
    // 16 bytes per lane down a column of a 64-wide f16 tile (128-byte rows): the 8 lanes of a phase all hit
    // banks 0-3 with different words: 8 wavefronts per phase, 32 in all instead of 4.
    let r = analyze(&kernel("tile<32x64xf16, shared>", "  %x = nvgpu.load %s[%lane, %c0] : vector<8xf16>"));
    assert_eq!(cost(&r, 0), (4, 32));
}

/// The ldmatrix.x4 address pattern of a 16x16 block: lane l gives row l % 16, column 8 (l / 16).
const LDMATRIX_X4: &str = "  %row = tile.rem %lane, %c16 : index
  %half = tile.div %lane, %c16 : index
  %col = tile.mul %half, %c8 : index";

#[test]
fn ldmatrix_on_row_major_tiles() {
    // 16-byte rows (16x8 f16 would need x2; use x4 of a 16x16 tile at 32-byte rows instead below).
    // 32-byte rows (16x16 f16): row r at chunk j is at byte 32 r + 16 j; within a 128-byte line rows
    // r, r+4 collide: matrix i (8 rows at one chunk) covers 4 distinct bank groups twice: 2-way, so
    // 4 phases x 2 = 8 wavefronts instead of 4.
    let body = format!("{LDMATRIX_X4}\n  %v = nvgpu.ldmatrix %s[%row, %col] {{numTiles = 4, transpose = false}} : vector<4x2xf16>");
    let r = analyze(&kernel("tile<16x16xf16, shared>", &body));
    assert_eq!(r.accesses[0].kind, AccessKind::LdMatrix { num_tiles: 4, transpose: false });
    assert_eq!(r.accesses[0].total.phases, 4);
    assert_eq!(cost(&r, 0), (4, 8));
    // 64-byte rows (16x32 f16): byte 64 r + 16 j → banks 16 (r % 2) + 4 j .. +3: only two bank groups
    // for the 8 rows of a matrix, 4 rows each: 4-way, 16 wavefronts instead of 4. (Not 2-way: that is
    // the 32-byte case above.)
    let r = analyze(&kernel("tile<16x32xf16, shared>", &body));
    assert_eq!(cost(&r, 0), (4, 16));
    // 128-byte rows (16x64 f16): every row of a matrix on the same 4 banks: 8-way.
    let r = analyze(&kernel("tile<16x64xf16, shared>", &body));
    assert_eq!(cost(&r, 0), (4, 32));
    // .trans reads the same addresses: same cost.
    let trans = body.replace("transpose = false", "transpose = true");
    let r = analyze(&kernel("tile<16x64xf16, shared>", &trans));
    assert_eq!(cost(&r, 0), (4, 32));
    // Swizzle<2, 3, 3> on the 64-byte rows: chunk j of row r moves to j ^ ((r / 2) % 4), so the 8 rows
    // of a matrix land on 8 different 16-byte bank groups: conflict-free.
    let r = analyze(&kernel("tile<16x32xf16, shared, #swizzle<2, 3, 3, #row_major>>", &body));
    assert_eq!(cost(&r, 0), (4, 4));
    // Swizzle<3, 3, 3> on the 128-byte rows: chunk j of row r moves to j ^ (r % 8).
    let r = analyze(&kernel("tile<16x64xf16, shared, #swizzle<3, 3, 3, #row_major>>", &body));
    assert_eq!(cost(&r, 0), (4, 4));
}

#[test]
fn ldmatrix_x1_and_x2_use_only_their_lanes() {
    // x1: only lanes 0-7 give addresses (rows 0-7 of a 128-byte-row tile: 8-way), one phase.
    let body = "  %v = nvgpu.ldmatrix %s[%lane, %c0] {numTiles = 1, transpose = false} : vector<1x2xf16>";
    let r = analyze(&kernel("tile<32x64xf16, shared>", body));
    assert_eq!(r.accesses[0].total.phases, 1);
    assert_eq!(cost(&r, 0), (1, 8));
    // x2 on 32-byte rows: rows 0-15: two phases, each 2-way.
    let body = "  %v = nvgpu.ldmatrix %s[%lane, %c0] {numTiles = 2, transpose = false} : vector<2x2xf16>";
    let r = analyze(&kernel("tile<32x16xf16, shared>", body));
    assert_eq!(cost(&r, 0), (2, 4));
}

#[test]
fn stmatrix_counts_like_ldmatrix() {
    let body = format!(
        "{LDMATRIX_X4}\n  %v = tile.fill 0.0 : vector<4x2xf16>\n  nvgpu.stmatrix %v, %s[%row, %col] {{numTiles = 4, transpose = false}}"
    );
    let r = analyze(&kernel("tile<16x32xf16, shared>", &body));
    assert_eq!(r.accesses[0].kind, AccessKind::StMatrix { num_tiles: 4, transpose: false });
    assert_eq!(cost(&r, 0), (4, 16));
}

#[test]
fn async_copies() {
    // Row-major chunk order over a 64-byte-row tile (4 chunks per row): lanes 8p..8p+7 write bytes
    // 128 p .. 128 p + 127: conflict-free, 4 phases.
    let body = "  %r = tile.div %lane, %c4 : index
  %q = tile.rem %lane, %c4 : index
  %c = tile.mul %q, %c8 : index
  nvgpu.device_async_copy %G[%r, %c], %s[%r, %c], 8";
    let r = analyze(&kernel("tile<8x32xf16, shared>", body));
    assert_eq!(r.accesses[0].kind, AccessKind::AsyncCopy);
    assert_eq!(cost(&r, 0), (4, 4));
    // Column order: lane l writes chunk 0 of row l of a 128-byte-row tile: 8-way in every phase.
    let body = "  nvgpu.device_async_copy %G[%lane, %c0], %s[%lane, %c0], 8";
    let r = analyze(&kernel("tile<32x64xf16, shared>", body));
    assert_eq!(cost(&r, 0), (4, 32));
    // 4-byte copies (2 x f16) of consecutive words: one phase.
    let body = "  %c = tile.mul %lane, %c2 : index\n  nvgpu.device_async_copy %G[%c0, %c], %s[%c0, %c], 2";
    let r = analyze(&kernel("tile<8x64xf16, shared>", body));
    assert_eq!(cost(&r, 0), (1, 1));
}

#[test]
fn masked_stores_count_only_active_lanes() {
    // Lanes 0-15 store (l, 0) of a 32-wide f32 tile; lanes 16-31 are masked off: 16-way.
    let body = "  %x = tile.constant 1.0 : f32
  %on = tile.cmp lt %lane, %c16 : i1
  nvgpu.store %x, %s[%lane, %c0] if %on";
    let r = analyze(&kernel("tile<32x32xf32, shared>", body));
    assert_eq!(cost(&r, 0), (1, 16));
}

#[test]
fn loops_are_evaluated_per_iteration() {
    // Iteration i: lane l reads (l, i) of a 32x32 f32 tile: 32-way each time. Default: 2 iterations.
    let body = "  tile.for %i = %c0 to %c16 step %c1 {
    %x = nvgpu.load %s[%lane, %i] : f32
    tile.yield
  }";
    let r = analyze(&kernel("tile<32x32xf32, shared>", body));
    assert_eq!(r.accesses[0].instances, 2);
    assert_eq!(cost(&r, 0), (2, 64));
    let options = BankConflictOptions { loop_iterations: 100, ..BankConflictOptions::default() };
    let r = analyze_with(&kernel("tile<32x32xf32, shared>", body), &options);
    assert_eq!(r.accesses[0].instances, 16);
    // Lanes whose loop ended are inactive: the bound is the lane, so iteration i has lanes i+1..31.
    let body = "  tile.for %i = %c0 to %lane step %c1 {
    %x = nvgpu.load %s[%i, %lane] : f32
    tile.yield
  }";
    let r = analyze_with(&kernel("tile<32x32xf32, shared>", body), &options);
    assert_eq!(r.accesses[0].instances, 31);
    assert!(r.is_conflict_free());
    // Loop-carried index: %j doubles each iteration (1, 2, 4, ...): stride-j words.
    let body = "  %n = tile.for %i = %c0 to %c4 step %c1 iter_args(%j = %c1) -> (index) {
    %c = tile.mul %lane, %j : index
    %x = nvgpu.load %s[%c0, %c] : f32
    %j2 = tile.mul %j, %c2 : index
    tile.yield %j2
  }";
    let r = analyze_with(&kernel("tile<1x1024xf32, shared>", body), &options);
    // stride 1: 1 wavefront; 2: 2; 4: 4; 8: 8.
    assert_eq!(cost(&r, 0), (4, 15));
}

#[test]
fn every_warp_is_evaluated() {
    // Warp w reads row w of a 4x128 f32 tile, lane l column l * (w + 1): warp 0 conflict-free, warp 1
    // stride 2 (2-way), warp 2 stride 3 (coprime with 32: free), warp 3 stride 4 (4-way).
    let text = r#"
tile.func @k() attributes {num_warps = 4} {
  %c1 = tile.constant 1 : index
  %lane = nvgpu.lane_id : index
  %warp = nvgpu.warp_id : index
  %s = tile.alloc_shared : tile<4x128xf32, shared>
  %w1 = tile.add %warp, %c1 : index
  %c = tile.mul %lane, %w1 : index
  %x = nvgpu.load %s[%warp, %c] : f32
  tile.return
}"#;
    let r = analyze(text);
    assert_eq!(r.warps, vec![0, 1, 2, 3]);
    assert_eq!(r.accesses[0].instances, 4);
    assert_eq!(cost(&r, 0), (4, 1 + 2 + 1 + 4));
    assert_eq!((r.accesses[0].worst.wavefronts, r.accesses[0].worst_warp), (4, 3));
    let only = BankConflictOptions { warps: WarpSelection::Only(vec![1]), ..BankConflictOptions::default() };
    assert_eq!(cost(&analyze_with(text, &only), 0), (1, 2));
}

#[test]
fn thread_id_block_id_and_dim() {
    // thread_id x of warp 1 is 32 + lane; block_id and tile.dim come from the options.
    let text = r#"
tile.func @k(%G: tile<?x?xf32, global>) attributes {num_warps = 2} {
  %c32 = tile.constant 32 : index
  %tid = nvgpu.thread_id x : index
  %b = tile.block_id x : index
  %d = tile.dim %G, 0 : index
  %s = tile.alloc_shared : tile<64x64xf32, shared>
  %r = tile.rem %tid, %c32 : index
  %bd = tile.add %b, %d : index
  %c = tile.rem %bd, %c32 : index
  %x = nvgpu.load %s[%r, %c] : f32
  tile.return
}"#;
    // Column (block + dim) % 32 is the same for all lanes, rows differ: 32-way in both warps.
    let r = analyze(text);
    assert_eq!(cost(&r, 0), (2, 64));
    let options = BankConflictOptions { block_id: [3, 0, 0], dim_extent: 7, ..BankConflictOptions::default() };
    assert_eq!(cost(&analyze_with(text, &options), 0), (2, 64));
}

#[test]
fn column_major_and_select() {
    // Column-major 32x32 f32: (l, 0) is consecutive in memory: conflict-free; select picks per lane.
    let body = "  %x = nvgpu.load %s[%lane, %c0] : f32";
    assert!(analyze(&kernel("tile<32x32xf32, shared, #col_major>", body)).is_conflict_free());
    let body = "  %odd = tile.rem %lane, %c2 : index
  %isodd = tile.cmp eq %odd, %c1 : i1
  %row = tile.select %isodd, %c1, %c0 : index
  %x = nvgpu.load %s[%row, %c0] : f32";
    // Even lanes word 0, odd lanes word 32: both bank 0: 2-way.
    assert_eq!(cost(&analyze(&kernel("tile<32x32xf32, shared>", body)), 0), (1, 2));
}

#[test]
fn unknown_addresses_are_listed() {
    // The row comes from memory: not analysed, with the reason.
    let text = r#"
tile.func @k(%I: tile<32xi32, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %lane = nvgpu.lane_id : index
  %s = tile.alloc_shared : tile<32x32xf32, shared>
  %i = nvgpu.load %I[%lane] : i32
  %x = nvgpu.load %s[%c0, %c0] : f32
  tile.return
}"#;
    let r = analyze(text);
    // The global load is not a shared access; the shared one is analysed.
    assert_eq!(r.accesses.len(), 1);
    assert!(r.unanalyzed.is_empty());
    let text = text.replace("%x = nvgpu.load %s[%c0, %c0] : f32", "%ii = tile.cast %i : index\n  %x = nvgpu.load %s[%ii, %c0] : f32");
    let r = analyze(&text);
    assert!(r.accesses.is_empty());
    assert_eq!(r.unanalyzed.len(), 1);
    assert!(r.unanalyzed[0].reason.contains("not computable"), "{}", r.unanalyzed[0].reason);
    assert!(r.to_string().contains("not analysed"));
}

#[test]
fn two_tiles_are_placed_apart() {
    // Two 16-byte-row tiles of 8 rows (128 bytes each): the second starts at 128, so (l % 8, 0) of %s
    // and of %t are both conflict-free, and the report names each tile.
    let text = r#"
tile.func @k() attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c8 = tile.constant 8 : index
  %lane = nvgpu.lane_id : index
  %s = tile.alloc_shared : tile<8x8xf16, shared>
  %t = tile.alloc_shared : tile<8x8xf16, shared>
  %r = tile.rem %lane, %c8 : index
  %x = nvgpu.load %s[%r, %c0] : vector<8xf16>
  %y = nvgpu.load %t[%r, %c0] : vector<8xf16>
  tile.return
}"#;
    let r = analyze(text);
    assert_eq!(r.accesses.len(), 2);
    assert_eq!((r.accesses[0].tile.as_str(), r.accesses[1].tile.as_str()), ("%s", "%t"));
    // Lanes 8p..8p+7 read rows 0-7: 128 distinct bytes, 1 wavefront per phase.
    assert_eq!(cost(&r, 0), (4, 4));
    assert_eq!(cost(&r, 1), (4, 4));
}

#[test]
fn the_table() {
    let body = format!("{LDMATRIX_X4}\n  %v = nvgpu.ldmatrix %s[%row, %col] {{numTiles = 4, transpose = true}} : vector<4x2xf16>");
    let text = kernel("tile<16x32xf16, shared>", &body);
    let r = analyze(&text);
    let table = r.render(Some(&tilec_ir::SourceFile::new("k.tir", text.trim())));
    assert!(table.contains("ldmatrix.x4.trans"), "{table}");
    assert!(table.contains("k.tir:13:"), "{table}");
    assert!(table.contains("4.00x"), "{table}");
    assert!(table.lines().any(|l| l.trim_start().starts_with("total")), "{table}");
    // Display: byte offsets instead of lines.
    assert!(r.to_string().contains('@'));
}
