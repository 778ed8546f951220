//! `CopyPlan`s on their own: the GEMM's A and B tiles (gemm.tir: 128x128x32 block tile, f16, 4 warps),
//! the fallback to per-thread loads, swizzled sources, and 8-bit tiles read by ldmatrix as 16-bit pairs
//! (checked against the PTX ISA's description of ldmatrix, value by value).

use tilec_ir::layout::{hardware_layout, ldmatrix_row_addresses, row_major, Layout, LinearLayout, Swizzle};
use tilec_ir::ScalarType;
use tilec_passes::layout_assignment::assign_mma;
use tilec_passes::lower::{b16_pair_view, CopyInstr, CopyPlan, SharedSource};

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

/// A column-major s8 A: on the transpose its fragment's four consecutive k of one m are four storage rows
/// (no pair view, no ldmatrix), so loads of elements consecutive in memory, i.e. down a column, as wide as
/// the register order allows: single elements.
#[test]
fn column_major_s8_falls_back_to_loads_down_the_columns() {
    let asg = assign_mma(64, 64, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let a = CopyPlan::new(source(64, 64, 8, Layout::ColMajor), &asg.a).unwrap();
    assert_eq!(a.instr, CopyInstr::Load { width: 1 }, "{a}");
    assert!(a.transposed);
}

// ---- 8-bit elements through ldmatrix, as 16-bit pairs ----------------------------------------------------

/// The same layout with `row` and `col` exchanged (the layout of the transposed tile).
fn transposed(l: &LinearLayout) -> LinearLayout {
    let ins: Vec<(String, Vec<Vec<u32>>)> =
        l.in_dim_names().iter().map(|d| (d.to_string(), l.bases(d).unwrap().iter().map(|b| vec![b[1], b[0]]).collect())).collect();
    LinearLayout::new(ins, [("row", l.out_dim_size("col").unwrap()), ("col", l.out_dim_size("row").unwrap())]).unwrap()
}

/// The claim the 8-bit plans rest on, in the catalogue's own terms: the m16n8k32 s8 (and u8) A fragment,
/// viewed as 16-bit pairs of adjacent k, is the m16n8k16 f16 A fragment, which is `ldmatrix.x4`. The
/// B fragment (four consecutive k = four rows per register) has no such view; its transpose (a K-contiguous
/// B) does, and it is the transpose of the f16 B fragment.
#[test]
fn s8_fragments_as_b16_pairs_are_the_f16_fragments() {
    let layout = |name: &str| hardware_layout(name).unwrap_or_else(|| panic!("{name}")).layout.clone();
    for t in ["s8", "u8"] {
        let a = b16_pair_view(&layout(&format!("mma.m16n8k32.{t}.a")), "register").unwrap();
        assert_eq!(a, layout("mma.m16n8k16.f16.a"));
        assert_eq!(a, layout("ldmatrix.x4"));
        let b = layout(&format!("mma.m16n8k32.{t}.b"));
        let why = b16_pair_view(&b, "register").unwrap_err();
        assert!(why.contains("register bit 0"), "{why}");
        assert_eq!(b16_pair_view(&transposed(&b), "register").unwrap(), transposed(&layout("mma.m16n8k16.f16.b")));
    }
    // The same fact value by value, from the PTX ISA's two descriptions: ldmatrix.x4 gives lane t, in
    // register i, the bytes 4(t%4) .. 4(t%4)+3 of row t/4 of matrix i (matrix i at rows 8(i&1), byte
    // columns 16(i>>1)); the s8 A fragment's value 4i+b of lane t must be that element.
    let a = hardware_layout("mma.m16n8k32.s8.a").unwrap();
    for lane in 0..32 {
        for i in 0..4 {
            for b in 0..4 {
                let isa = (8 * (i & 1) + lane / 4, 16 * (i >> 1) + 4 * (lane % 4) + b);
                assert_eq!(a.coord(4 * i + b, lane), Some(isa), "lane {lane} register {i} byte {b}");
            }
        }
    }
}

/// Where the PTX ISA's `ldmatrix` (not `.trans`) of bytes puts value `v` of `lane` for one instance of a
/// plan: register `i = v / 4` is matrix `i` (of each group of `num`), byte `v % 4`; lane `t` receives bytes
/// `4(t%4) ..` of the row whose address lane `8i + t/4` supplies. Rows run along the storage order: for a
/// transposed plan (column-major tile) a "row" is a column.
fn ldmatrix_b8_element(plan: &CopyPlan, instance: usize, lane: u32, warp: u32, v: u32) -> (u32, u32) {
    let CopyInstr::LdMatrix { num, trans: false } = plan.instr else { panic!("not a plain ldmatrix: {plan}") };
    let (i, byte) = (v / 4, v % 4);
    assert!(i < num);
    let (r, c) = plan.address(instance, 8 * i + lane / 4, warp);
    let along = 4 * (lane % 4) + byte;
    if plan.transposed {
        (r + along, c)
    } else {
        (r, c + along)
    }
}

/// Every value of every lane and warp of every instance lands where the destination layout says.
fn check_against_isa(plan: &CopyPlan, dst: &LinearLayout) {
    let warps = 1u32 << dst.in_dim_size("warp").unwrap_or(1).trailing_zeros();
    for (n, inst) in plan.instances.iter().enumerate() {
        for warp in 0..warps {
            for lane in 0..32 {
                for v in 0..plan.values_per_instance {
                    let want = dst.apply(&[inst.first_register + v, lane, warp]).unwrap();
                    assert_eq!(ldmatrix_b8_element(plan, n, lane, warp, v), (want[0], want[1]), "instance {n} warp {warp} lane {lane} value {v}");
                }
            }
        }
    }
}

/// A of gemm_s8_128.tir (128x64 s8, 4 warps as 2x2, each holding a 64x64 slice; swizzled as the swizzle
/// pass does, 16-byte chunks): one m16n8k32 A fragment is a 16x32 block of bytes = a 16x16 block of pairs =
/// one ldmatrix.x4 (matrices at rows +8 and byte columns +16). 64x64 is 4 (m) x 2 (k) blocks, k fastest in
/// the register order: 8 instances of 16 values.
const S8_A_PLAN: &str = "\
copy plan: shared 128x64 (8-bit, #swizzle<2, 4, 3, #row_major>) -> 128 register values per thread
  instruction: ldmatrix.x4 x 8 per warp (16 values per lane each)
  8-bit elements moved as 16-bit pairs: a register value pair (2i, 2i+1) is one b16 element
  lane bits -> row address: [(1,0) (2,0) (4,0) (8,0) (0,16)]
  warp bits -> offset: [(64,0) (0,0)]
  #0: registers 0..16 <- origin (0, 0)
  #1: registers 16..32 <- origin (0, 32)
  #2: registers 32..48 <- origin (16, 0)
  #3: registers 48..64 <- origin (16, 32)
  #4: registers 64..80 <- origin (32, 0)
  #5: registers 80..96 <- origin (32, 32)
  #6: registers 96..112 <- origin (48, 0)
  #7: registers 112..128 <- origin (48, 32)
";

#[test]
fn gemm_s8_a_is_eight_ldmatrix_x4_of_pairs() {
    let asg = assign_mma(128, 128, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(2, 4, 3).unwrap(), base: Box::new(Layout::RowMajor) };
    let a = CopyPlan::for_fragments(source(128, 64, 8, swz.clone()), &asg.a, Some(16)).unwrap();
    assert_eq!(a.to_string(), S8_A_PLAN);
    assert_eq!(a.instr, CopyInstr::LdMatrix { num: 4, trans: false });
    assert!(a.moves_pairs() && !a.transposed);
    check_against_isa(&a, &asg.a);
    // Unswizzled, and without the fragment size, the same plan.
    assert_eq!(CopyPlan::new(row_major_source(128, 64, 8), &asg.a).unwrap().instances, a.instances);
}

/// Row-major s8 B (64x128): four consecutive k per register are four storage rows, so no pair view and no
/// ldmatrix: single-byte loads, with the reason.
#[test]
fn row_major_s8_b_falls_back_to_byte_loads() {
    let asg = assign_mma(128, 128, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(2, 4, 5).unwrap(), base: Box::new(Layout::RowMajor) };
    let b = CopyPlan::for_fragments(source(64, 128, 8, swz), &asg.b, Some(8)).unwrap();
    assert_eq!(b.instr, CopyInstr::Load { width: 1 }, "{b}");
    let why = b.fallback_reason.clone().unwrap();
    assert!(why.contains("16-bit pairs: the destination does not step one column with register bit 0"), "{why}");
}

/// Column-major (K-contiguous) s8 B, cuBLAS's TN form: on the transpose its fragment holds four consecutive
/// k of one n in each register, adjacent bytes of a storage row, so plain ldmatrix of pairs. One B fragment
/// is 8 values (two registers): with the fragment size the plan takes ldmatrix.x2, one fragment per
/// instance (an x4 result would be split into fragments byte by byte); without it, x4.
#[test]
fn column_major_s8_b_is_ldmatrix_of_pairs() {
    let asg = assign_mma(128, 128, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(2, 4, 3).unwrap(), base: Box::new(Layout::ColMajor) };
    let b = CopyPlan::for_fragments(source(64, 128, 8, swz.clone()), &asg.b, Some(8)).unwrap();
    assert_eq!(b.instr, CopyInstr::LdMatrix { num: 2, trans: false }, "{b}");
    assert!(b.transposed && b.moves_pairs());
    assert_eq!((b.instruction_count(), b.values_per_instance), (16, 8));
    check_against_isa(&b, &asg.b);
    let wide = CopyPlan::new(source(64, 128, 8, swz), &asg.b).unwrap();
    assert_eq!(wide.instr, CopyInstr::LdMatrix { num: 4, trans: false }, "{wide}");
    check_against_isa(&wide, &asg.b);
}

/// A swizzle that moves single bytes (Swizzle<1, 0, 6>: offset bit 6 flips bit 0) splits the pairs: the
/// shared layout has no pair view, and the plan falls back to loads.
#[test]
fn swizzle_that_splits_byte_pairs_falls_back() {
    let asg = assign_mma(128, 128, 64, ScalarType::I8, ScalarType::I32, 4).unwrap();
    let swz = Layout::Swizzled { swizzle: Swizzle::new(1, 0, 6).unwrap(), base: Box::new(Layout::RowMajor) };
    let a = CopyPlan::new(source(128, 64, 8, swz), &asg.a).unwrap();
    assert!(matches!(a.instr, CopyInstr::Load { .. }), "{a}");
    let why = a.fallback_reason.clone().unwrap();
    assert!(why.contains("the shared layout moves an odd number of columns"), "{why}");
}
