//! End to end: the GEMM examples through `layout-assignment,swizzle,lower-tile-to-nvgpu`, then the
//! bank-conflict analyzer on the lowered (nvgpu-level) kernel.

use tilec_passes::bank_conflicts::{analyze_bank_conflicts, BankConflictOptions, BankConflictReport};
use tilec_passes::swizzle::SwizzleReport;
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry};

fn lowered(path: &str, pipeline: &str) -> (BankConflictReport, PassContext) {
    let file = format!("{}/../examples/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap();
    let mut module = tilec_ir::parse_module(&text).unwrap_or_else(|d| panic!("{d}"));
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), pipeline).unwrap();
    let mut cx = PassContext::new(Target::Sm80);
    pm.run(&mut module, &mut cx).unwrap_or_else(|e| panic!("{e:?}"));
    let report = analyze_bank_conflicts(&module.funcs[0], &BankConflictOptions::default());
    let source = tilec_ir::SourceFile::new(path, text);
    println!("{}", report.render(Some(&source)));
    (report, cx)
}

/// Wavefronts of the lowered accesses to each shared tile (by name): (actual, minimum).
fn per_tile(r: &BankConflictReport, tile: &str) -> (u32, u32) {
    let t = r.accesses.iter().filter(|a| a.tile == tile).fold((0, 0), |(w, m), a| (w + a.total.wavefronts, m + a.total.min_wavefronts));
    assert!(t.1 > 0, "no accesses to {tile}");
    t
}

/// `examples/gemm.tir` (f16, 128x128 block, K-tile 32, 4 warps): A is 128x32 (64-byte rows, read with
/// ldmatrix.x4), B is 32x128 (256-byte rows, ldmatrix.x4.trans). Warps 0-3, first 2 iterations of the
/// K loop.
#[test]
fn gemm_f16() {
    let (before, _) = lowered("gemm.tir", "layout-assignment,lower-tile-to-nvgpu");
    let (after, cx) = lowered("gemm.tir", "layout-assignment,swizzle,lower-tile-to-nvgpu");
    for r in &cx.remarks {
        println!("remark: {}", r.message);
    }
    assert!(before.unanalyzed.is_empty() && after.unanalyzed.is_empty());
    // Before: cp.async conflict-free; A's ldmatrix 4-way, B's 8-way.
    assert_eq!(per_tile(&before, "%sa"), (1152, 384));
    assert_eq!(per_tile(&before, "%sb"), (2176, 384));
    assert!(!before.is_conflict_free());
    // After: every access at its minimum.
    assert!(after.is_conflict_free(), "{after}");
    assert_eq!(per_tile(&after, "%sa"), (384, 384));
    assert_eq!(per_tile(&after, "%sb"), (384, 384));
    let report = cx.report::<SwizzleReport>().unwrap();
    let layouts: Vec<String> = report.tiles.iter().map(|t| t.layout.as_ref().unwrap().to_string()).collect();
    assert_eq!(layouts, ["#swizzle<2, 3, 3, #row_major>", "#swizzle<3, 3, 4, #row_major>"]);
    assert_eq!(report.tiles[1].lowered_after, Some(after.total_for_tile(report.tiles[1].tile)));
}

/// `examples/gemm_s8.tir` (s8, 64x64 block, K-tile 64): the lowering reads 8-bit operands with
/// `nvgpu.load` (ldmatrix is b16): A as 4-byte vectors (4 consecutive k), B as single bytes (the m16n8k32
/// B fragment holds 4 consecutive k of one n, which are 64 bytes apart in a row-major KxN tile). The
/// rule's Swizzle<2, 4, 3> clears A; for B's byte loads (rows k, k+4, k+8, k+12 at once) it leaves
/// conflicts, and the pass's search (checked by lowering) picks Swizzle<2, 4, 4>.
#[test]
fn gemm_s8() {
    let (before, _) = lowered("gemm_s8.tir", "layout-assignment,lower-tile-to-nvgpu");
    let (after, cx) = lowered("gemm_s8.tir", "layout-assignment,swizzle,lower-tile-to-nvgpu");
    for r in &cx.remarks {
        println!("remark: {}", r.message);
    }
    assert_eq!(per_tile(&before, "%sa"), (576, 192));
    assert_eq!(per_tile(&before, "%sb"), (2112, 576));
    assert!(after.is_conflict_free(), "{after}");
    let report = cx.report::<SwizzleReport>().unwrap();
    let layouts: Vec<String> = report.tiles.iter().map(|t| t.layout.as_ref().unwrap().to_string()).collect();
    assert_eq!(layouts, ["#swizzle<2, 4, 3, #row_major>", "#swizzle<2, 4, 4, #row_major>"]);
}
