//! `CopyPlan`s on their own: the GEMM's A and B tiles (gemm.tir: 128x128x32 block tile, f16, 4 warps),
//! the fallback to per-thread loads, and swizzled sources.

use tilec_ir::layout::{ldmatrix_row_addresses, row_major, Layout, Swizzle};
use tilec_ir::ScalarType;
use tilec_passes::layout_assignment::assign_mma;
use tilec_passes::lower::{CopyInstr, CopyPlan, SharedSource};

fn source(rows: u32, cols: u32, bits: u32, layout: Layout) -> SharedSource {
    SharedSource { rows, cols, elem_bits: bits, memory: layout.to_linear(rows, cols).unwrap(), memory_name: layout.to_string() }
}

fn row_major_source(rows: u32, cols: u32, bits: u32) -> SharedSource {
    SharedSource { rows, cols, elem_bits: bits, memory: row_major(rows, cols).unwrap(), memory_name: "row-major".into() }
}

/// A (128x32, f16, row-major in shared memory), by hand: 4 warps as 2x2, so each warp holds a 64x32 slice
/// of A (A is replicated over the two warps of a row: warp bit 1 maps to (0, 0), warp bit 0 to row 64).
/// One m16n8k16 A fragment is a 16x16 block = one ldmatrix.x4 (matrices at rows +8 = lanes 8..15, cols
/// +8 = lanes 16..23, exactly the catalogue's `ldmatrix.x4`). 64x32 is 4 (m) x 2 (k) blocks; the layout
/// puts the k repetition in the lower register bits, so the 8 instances in temporal order start at
/// (0,0) (0,16) (16,0) (16,16) ... (48,16), each filling 8 consecutive register values.
const A_PLAN: &str = "\
copy plan: shared 128x32 (16-bit, row-major) -> 64 register values per thread
  instruction: ldmatrix.x4 x 8 per warp (8 values per lane each)
  lane bits -> row address: [(1,0) (2,0) (4,0) (8,0) (0,8)]
  warp bits -> offset: [(64,0) (0,0)]
  #0: registers 0..8 <- origin (0, 0)
  #1: registers 8..16 <- origin (0, 16)
  #2: registers 16..24 <- origin (16, 0)
  #3: registers 24..32 <- origin (16, 16)
  #4: registers 32..40 <- origin (32, 0)
  #5: registers 40..48 <- origin (32, 16)
  #6: registers 48..56 <- origin (48, 0)
  #7: registers 56..64 <- origin (48, 16)
";

/// B (32x128, f16, row-major = k-major), by hand: each warp holds a 32(k)x64(n) slice (B replicated over
/// the two warps of a column: warp bit 0 maps to (0, 0), warp bit 1 to col 64). One m16n8k16 B fragment is
/// 16(k)x8(n), held transposed relative to memory (lane t has k = 2(t%4), 2(t%4)+1 of column n = t/4), so
/// it is ldmatrix .trans; the layout's n repetition is the next register bit (col +8), so two neighbouring
/// n8 fragments form one 16x16 ldmatrix.x4.trans (matrices: k+8 = lanes 8..15, n+8 = lanes 16..23).
/// 32x64 is 2 (k) x 4 (n-pairs): 8 instances, n-pairs fastest.
const B_PLAN: &str = "\
copy plan: shared 32x128 (16-bit, row-major) -> 64 register values per thread
  instruction: ldmatrix.x4.trans x 8 per warp (8 values per lane each)
  lane bits -> row address: [(1,0) (2,0) (4,0) (8,0) (0,8)]
  warp bits -> offset: [(0,0) (0,64)]
  #0: registers 0..8 <- origin (0, 0)
  #1: registers 8..16 <- origin (0, 16)
  #2: registers 16..24 <- origin (0, 32)
  #3: registers 24..32 <- origin (0, 48)
  #4: registers 32..40 <- origin (16, 0)
  #5: registers 40..48 <- origin (16, 16)
  #6: registers 48..56 <- origin (16, 32)
  #7: registers 56..64 <- origin (16, 48)
";

#[test]
fn gemm_a_is_eight_ldmatrix_x4() {
    let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let a = CopyPlan::new(row_major_source(128, 32, 16), &asg.a).unwrap();
    assert_eq!(a.to_string(), A_PLAN);
    assert_eq!(a.instr, CopyInstr::LdMatrix { num: 4, trans: false });
    assert_eq!(a.instruction_count(), 8);
    // The lanes' row addresses are the catalogue's ldmatrix.x4 addresses.
    let addresses = ldmatrix_row_addresses(4).unwrap();
    for lane in 0..32 {
        let want = addresses.apply(&[lane]).unwrap();
        assert_eq!(a.address(0, lane, 0), (want[0], want[1]), "lane {lane}");
    }
    // Warp 1 (w_m = 1) reads rows 64.., warp 2 (w_n = 1) the same rows as warp 0.
    assert_eq!(a.address(7, 0, 1), (64 + 48, 16));
    assert_eq!(a.address(7, 0, 2), (48, 16));
}

#[test]
fn gemm_b_is_eight_ldmatrix_x4_trans() {
    let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let b = CopyPlan::new(row_major_source(32, 128, 16), &asg.b).unwrap();
    assert_eq!(b.to_string(), B_PLAN);
    assert_eq!(b.instr, CopyInstr::LdMatrix { num: 4, trans: true });
    assert_eq!(b.instruction_count(), 8);
}

#[test]
fn single_b_fragment_is_x2_trans() {
    // mma.tir's B: 16x8, one n8 fragment: ldmatrix.x2.trans, one instance.
    let asg = assign_mma(16, 8, 16, ScalarType::F16, ScalarType::F32, 1).unwrap();
    let b = CopyPlan::new(row_major_source(16, 8, 16), &asg.b).unwrap();
    assert_eq!(b.instr, CopyInstr::LdMatrix { num: 2, trans: true });
    assert_eq!(b.instruction_count(), 1);
}

#[test]
fn f32_accumulator_falls_back_to_vector_loads() {
    let asg = assign_mma(16, 8, 16, ScalarType::F16, ScalarType::F32, 1).unwrap();
    let c = CopyPlan::new(row_major_source(16, 8, 32), &asg.c).unwrap();
    assert_eq!(c.instr, CopyInstr::Load { width: 2 });
    assert_eq!(c.instruction_count(), 2);
    assert!(c.fallback_reason.as_deref().unwrap().contains("16-bit"), "{c}");
    assert!(c.to_string().contains("fallback: ldmatrix moves 16-bit elements, these are 32-bit"));
}

#[test]
fn chunk_preserving_swizzle_keeps_ldmatrix() {
    // Swizzle<3, 3, 3> on element offsets moves whole 8-element (16-byte) chunks: still ldmatrix.x4,
    // same instances; the addresses stay logical (row, col), the swizzle is applied by the backend.
    let asg = assign_mma(128, 128, 64, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(3, 3, 3).unwrap(), base: Box::new(Layout::RowMajor) };
    let a = CopyPlan::new(source(128, 64, 16, swz), &asg.a).unwrap();
    assert_eq!(a.instr, CopyInstr::LdMatrix { num: 4, trans: false });
    assert_eq!(a.instruction_count(), 16);
    assert!(a.to_string().contains("#swizzle<3, 3, 3, #row_major>"));
}

#[test]
fn swizzle_that_splits_rows_falls_back_with_a_reason() {
    // Swizzle<2, 2, 3> permutes 4-element (8-byte) pieces, so an 8-element ldmatrix row is no longer
    // contiguous or aligned (row 1 starts at offset 32 ^ 4): no ldmatrix fits; vector loads still do.
    let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(2, 2, 3).unwrap(), base: Box::new(Layout::RowMajor) };
    let a = CopyPlan::new(source(128, 32, 16, swz), &asg.a).unwrap();
    assert!(matches!(a.instr, CopyInstr::Load { .. }), "{a}");
    let why = a.fallback_reason.clone().unwrap();
    assert!(why.contains("ldmatrix.x4: row (1, 0) is not 16-byte aligned in shared memory"), "{why}");
}

/// A column-major A (128x32 f16, swizzled as the swizzle pass does: 256-byte storage rows, which are the
/// tile's columns), by hand. The plan is made on the transpose, where A's fragment is the `.trans` one: lane
/// t holds (k = 2(t%4), 2(t%4)+1; m = t/4) of each 8x8 block, i.e. a column-major tile's storage row (a
/// column k) delivers its 8 m-values across lanes. So ldmatrix.x4.trans; lane i of each group of 8
/// addresses column k0 + i of the block (rows m0 .. m0+7 are consecutive in memory), the matrices at +8
/// rows (lanes 8..15) and +8 columns (16..23) as in the row-major plan. The instances and warp offsets are
/// A_PLAN's: the same register values of the same tile.
const A_COL_PLAN: &str = "\
copy plan: shared 128x32 (16-bit, #swizzle<3, 3, 4, #col_major>) -> 64 register values per thread
  instruction: ldmatrix.x4.trans x 8 per warp (8 values per lane each)
  planned on the transpose: the tile's storage runs down its columns
  lane bits -> column address: [(0,1) (0,2) (0,4) (8,0) (0,8)]
  warp bits -> offset: [(64,0) (0,0)]
  #0: registers 0..8 <- origin (0, 0)
  #1: registers 8..16 <- origin (0, 16)
  #2: registers 16..24 <- origin (16, 0)
  #3: registers 24..32 <- origin (16, 16)
  #4: registers 32..40 <- origin (32, 0)
  #5: registers 40..48 <- origin (32, 16)
  #6: registers 48..56 <- origin (48, 0)
  #7: registers 56..64 <- origin (48, 16)
";

#[test]
fn column_major_a_is_ldmatrix_x4_trans_of_columns() {
    let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(3, 3, 4).unwrap(), base: Box::new(Layout::ColMajor) };
    let a = CopyPlan::new(source(128, 32, 16, swz), &asg.a).unwrap();
    assert_eq!(a.to_string(), A_COL_PLAN);
    assert_eq!(a.instr, CopyInstr::LdMatrix { num: 4, trans: true });
    assert!(a.transposed);
}

/// A column-major B (32x128) is the row-major B^T the mma's `.col` operand wants: plain ldmatrix.x4.
#[test]
fn column_major_b_is_plain_ldmatrix_x4() {
    let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(2, 3, 3).unwrap(), base: Box::new(Layout::ColMajor) };
    let b = CopyPlan::new(source(32, 128, 16, swz), &asg.b).unwrap();
    assert_eq!(b.instr, CopyInstr::LdMatrix { num: 4, trans: false }, "{b}");
    assert_eq!(b.instruction_count(), 8);
    // Lane 1 addresses the next column (n + 1) at the same k: consecutive k of one column are contiguous.
    assert_eq!(b.address(0, 1, 0), (0, 1));
}

/// 8-bit elements (no ldmatrix) from a column-major tile: loads of elements consecutive in memory, i.e.
/// down a column, as wide as the register order allows (the s8 A fragment holds 4 consecutive k of one m:
/// a row, so single elements).
#[test]
fn column_major_s8_falls_back_to_loads_down_the_columns() {
    let asg = assign_mma(64, 64, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let a = CopyPlan::new(source(64, 64, 8, Layout::ColMajor), &asg.a).unwrap();
    assert_eq!(a.instr, CopyInstr::Load { width: 1 }, "{a}");
    assert!(a.transposed);
}
