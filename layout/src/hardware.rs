//! The catalogue of hardware fragment layouts, each defined once as data.
//!
//! Every entry is a [`LinearLayout`] from `(register, lane)` to `(row, col)` of
//! the instruction's tile. `register` indexes the lane's *values* (elements) in
//! register order: value `v` of a `b`-bit element type lives in 32-bit register
//! `v / (32 / b)`, at bit offset `(v % (32 / b)) * b` (so an f16 fragment
//! `{a0, a1}` in one `.b32` register is values 0 and 1). This matches the PTX
//! ISA's `a_i`/`b_i`/`c_i` numbering.
//!
//! The bases are written from the formulas of the PTX ISA ("Warp-level Matrix
//! Fragments": `groupID = %laneid >> 2`, `threadID_in_group = %laneid % 4`), and
//! for WMMA from the hardware measurements in seed 003. A basis is one
//! `(row, col)` pair per input bit: e.g. `row = groupID + 8 * (i >> 1)` puts
//! `row 1, 2, 4` on lane bits 2, 3, 4 and `row 8` on value bit 1.
//!
//! The warpgroup layouts (`wgmma.m64n<N>k16.f32.d`, sm_90a) span the 128 threads of a warpgroup: their
//! `lane` dimension is the thread's index in the warpgroup (7 bits, the warp in the top two), from the PTX
//! ISA's wgmma D fragment figure (checked against the ISA's formula in `tests/wgmma_d.rs`), and the A
//! operand of a wgmma that reads A from registers (`wgmma.m64k16.f16.a`, ..., `tests/wgmma_a.rs`).
//!
//! Every fragment listed here has power-of-two extents, so each is an exact
//! linear layout. Two kinds are not bijective and say so in
//! [`HardwareLayout::note`]: the `mma.m8n8k4` fragments (a warp runs four
//! independent 8x8x4 MMAs, one per *quad-pair* `{4q..4q+3, 4q+16..4q+19}`; lane
//! bits 2 and 3 pick the quad-pair and map to zero, so each element of one MMA's
//! tile is held by four lanes, one per quad-pair, each about its own MMA) and
//! none other. A fragment with a non-power-of-two extent could not be written
//! here; [`LinearLayout::new`] rejects such sizes with
//! [`LayoutError::NotPowerOfTwo`] rather than approximating.

use std::sync::OnceLock;

use crate::error::LayoutError;
use crate::linear::LinearLayout;

/// A hardware (instruction-defined) fragment layout with its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardwareLayout {
    /// Stable name, e.g. `mma.m16n8k16.f16.a`, `ldmatrix.x4.trans`.
    pub name: String,
    /// `(register, lane) -> (row, col)`.
    pub layout: LinearLayout,
    /// Width of one element in bits.
    pub element_bits: u32,
    /// Rows of the tile.
    pub rows: u32,
    /// Columns of the tile.
    pub cols: u32,
    /// Where the layout comes from (formula or measurement).
    pub source: &'static str,
    /// Anything a user must know that the layout alone does not say.
    pub note: Option<&'static str>,
}

impl HardwareLayout {
    /// `[rows, cols]`.
    pub fn shape(&self) -> [u32; 2] {
        [self.rows, self.cols]
    }

    /// Number of values (elements) each lane holds.
    pub fn values_per_lane(&self) -> u32 {
        self.layout.in_dim_size("register").unwrap_or(1)
    }

    /// Number of 32-bit registers each lane holds (at least 1).
    pub fn registers_per_lane(&self) -> u32 {
        (self.values_per_lane() * self.element_bits).div_ceil(32)
    }

    /// `(row, col)` of value `value` of lane `lane`, `None` if out of range.
    pub fn coord(&self, value: u32, lane: u32) -> Option<(u32, u32)> {
        match self.layout.apply(&[value, lane]).ok()?.as_slice() {
            [row, col] => Some((*row, *col)),
            _ => None,
        }
    }

    /// Every `(lane, value)` that holds element `(row, col)`, in lane order.
    pub fn owners(&self, row: u32, col: u32) -> Vec<(u32, u32)> {
        let mut owners = Vec::new();
        for lane in 0..self.layout.in_dim_size("lane").unwrap_or(32) {
            for value in 0..self.values_per_lane() {
                if self.coord(value, lane) == Some((row, col)) {
                    owners.push((lane, value));
                }
            }
        }
        owners
    }

    /// The lane and value holding `(row, col)` (the lowest lane when several
    /// do), by solving the layout rather than searching.
    pub fn owner(&self, row: u32, col: u32) -> Option<(u32, u32)> {
        match self.layout.find_input(&[row, col])?.as_slice() {
            [value, lane] => Some((*lane, *value)),
            _ => None,
        }
    }
}

/// Names of all catalogued hardware layouts, in catalogue order.
pub fn hardware_layout_names() -> Vec<&'static str> {
    catalogue().iter().map(|h| h.name.as_str()).collect()
}

/// The hardware layout of that name, if catalogued.
pub fn hardware_layout(name: &str) -> Option<&'static HardwareLayout> {
    catalogue().iter().find(|h| h.name == name)
}

/// All catalogued hardware layouts.
pub fn hardware_layouts() -> &'static [HardwareLayout] {
    catalogue()
}

/// The row addresses `ldmatrix.x{num}` / `stmatrix.x{num}` expect:
/// `lane -> (row, col)` of the first element of the 8-element row that the lane
/// supplies, with the placement this catalogue uses (matrix `i`, supplied by
/// lanes `8i..8i+7`, at rows `8 * (i & 1)`, columns `8 * (i >> 1)`). Lanes whose
/// address is ignored (8..31 for `.x1`, 16..31 for `.x2`) map to zero.
pub fn ldmatrix_row_addresses(num: u32) -> Result<LinearLayout, LayoutError> {
    let (rows, cols, bit3, bit4) = match num {
        1 => (8, 8, Z, Z),
        2 => (16, 8, r(8), Z),
        4 => (16, 16, r(8), c(8)),
        _ => return Err(LayoutError::BadInput(format!("ldmatrix .x{num}: expected 1, 2 or 4"))),
    };
    LinearLayout::new([("lane", bases(&[r(1), r(2), r(4), bit3, bit4]))], [("row", rows), ("col", cols)])
}

// ---- the catalogue -----------------------------------------------------------

type Basis = [u32; 2];
const Z: Basis = [0, 0];
const fn r(n: u32) -> Basis {
    [n, 0]
}
const fn c(n: u32) -> Basis {
    [0, n]
}

fn bases(list: &[Basis]) -> Vec<Vec<u32>> {
    list.iter().map(|b| b.to_vec()).collect()
}

/// Lane bits 0..4 of the "groupID rows" pattern shared by most mma fragments:
/// `threadID_in_group` scales `tig` along one axis, `groupID` walks the other.
const fn lanes_rows_by_group(tig0: Basis, tig1: Basis) -> [Basis; 5] {
    [tig0, tig1, r(1), r(2), r(4)]
}
const fn lanes_cols_by_group(tig0: Basis, tig1: Basis) -> [Basis; 5] {
    [tig0, tig1, c(1), c(2), c(4)]
}
/// m8n8k4: lane bits 0, 1 = threadID within the quad, bits 2, 3 = quad-pair
/// (broadcast), bit 4 = high group.
const fn lanes_quad_pair(tig0: Basis, tig1: Basis, high: Basis) -> [Basis; 5] {
    [tig0, tig1, Z, Z, high]
}

const QUAD_PAIR_NOTE: &str = "mma.m8n8k4 is four independent 8x8x4 MMAs per warp, one per quad-pair \
    (lanes 4q..4q+3 and 4q+16..4q+19); lane bits 2 and 3 select the quad-pair and map to zero, so this \
    layout describes one MMA's tile and each element is held by one lane of every quad-pair";

struct Entry {
    name: String,
    rows: u32,
    cols: u32,
    bits: u32,
    register: Vec<Basis>,
    /// Five lane bits for a warp's fragments; seven for a warpgroup's (the thread's index in it, 0..128).
    lane: Vec<Basis>,
    source: &'static str,
    note: Option<&'static str>,
}

fn entry(name: impl Into<String>, [rows, cols]: [u32; 2], bits: u32, register: &[Basis], lane: [Basis; 5], source: &'static str) -> Entry {
    Entry { name: name.into(), rows, cols, bits, register: register.to_vec(), lane: lane.to_vec(), source, note: None }
}

fn catalogue() -> &'static [HardwareLayout] {
    static CATALOGUE: OnceLock<Vec<HardwareLayout>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        // Invariant: every entry is a valid layout (the catalogue tests check each one against the
        // hardware tables); an invalid entry would be left out rather than abort a user's compile.
        entries()
            .into_iter()
            .filter_map(|e| {
                let layout = LinearLayout::new(
                    [("register", bases(&e.register)), ("lane", bases(&e.lane))],
                    [("row", e.rows), ("col", e.cols)],
                )
                .ok()?;
                Some(HardwareLayout { name: e.name, layout, element_bits: e.bits, rows: e.rows, cols: e.cols, source: e.source, note: e.note })
            })
            .collect()
    })
}

fn entries() -> Vec<Entry> {
    let mut v = Vec::new();

    // ldmatrix / stmatrix m8n8 .b16: lane t holds row t/4, cols 2(t%4), 2(t%4)+1 of
    // matrix i in register i; .trans transposes each 8x8 matrix.
    const LDSM: &str = "PTX ISA ldmatrix/stmatrix m8n8 .b16 fragment (seed 000): lane t, register i, half h -> \
        matrix i row t/4, col 2(t%4)+h; matrix i at rows 8(i&1), cols 8(i>>1)";
    let plain = lanes_rows_by_group(c(2), c(4));
    let trans = lanes_cols_by_group(r(2), r(4));
    for op in ["ldmatrix", "stmatrix"] {
        for (x, shape, mats) in [("x1", [8, 8], &[][..]), ("x2", [16, 8], &[r(8)][..]), ("x4", [16, 16], &[r(8), c(8)][..])] {
            let reg: Vec<Basis> = [c(1)].iter().chain(mats).copied().collect();
            v.push(entry(format!("{op}.{x}"), shape, 16, &reg, plain, LDSM));
            let reg: Vec<Basis> = [r(1)].iter().chain(mats).copied().collect();
            v.push(entry(format!("{op}.{x}.trans"), shape, 16, &reg, trans, LDSM));
        }
    }

    // mma.m8n8k4 .f16 (Volta quad-pairs). PTX ISA "Matrix Fragments for mma.m8n8k4 with .f16".
    const M8N8K4: &str = "PTX ISA mma.m8n8k4 .f16: row/col = %laneid % 4 (+4 for %laneid >= 16) or i; \
        f32 C: row = (tig & 1) + (i & 2) (+4 high), col = (i & 4) + (tig & 2) + (i & 1)";
    let quad = |e: Entry| Entry { note: Some(QUAD_PAIR_NOTE), ..e };
    v.push(quad(entry("mma.m8n8k4.f16.a.row", [8, 4], 16, &[c(1), c(2)], lanes_quad_pair(r(1), r(2), r(4)), M8N8K4)));
    v.push(quad(entry("mma.m8n8k4.f16.a.col", [8, 4], 16, &[r(1), r(2)], lanes_quad_pair(c(1), c(2), r(4)), M8N8K4)));
    v.push(quad(entry("mma.m8n8k4.f16.b.row", [4, 8], 16, &[c(1), c(2)], lanes_quad_pair(r(1), r(2), c(4)), M8N8K4)));
    v.push(quad(entry("mma.m8n8k4.f16.b.col", [4, 8], 16, &[r(1), r(2)], lanes_quad_pair(c(1), c(2), c(4)), M8N8K4)));
    v.push(quad(entry("mma.m8n8k4.f16.c", [8, 8], 16, &[c(1), c(2), c(4)], lanes_quad_pair(r(1), r(2), r(4)), M8N8K4)));
    v.push(quad(entry("mma.m8n8k4.f32.c", [8, 8], 32, &[c(1), r(2), c(4)], lanes_quad_pair(r(1), c(2), r(4)), M8N8K4)));

    // The m16n8 accumulator shared by every m16n8kK shape: row = groupID (+8 for
    // c2, c3), col = tig*2 + (i & 1).
    const C16X8: &str = "PTX ISA mma.m16n8k* accumulator: row = groupID (+8 for c2, c3), col = threadID_in_group*2 + (i & 1)";
    let acc = |name: &str, bits| entry(name, [16, 8], bits, &[c(1), r(8)], lanes_rows_by_group(c(2), c(4)), C16X8);

    // m16n8k8
    const K8: &str = "PTX ISA mma.m16n8k8: .f16/.bf16 A row = groupID (+8 for a2, a3), col = tig*2 + (i & 1); \
        B row = tig*2 + i, col = groupID. .tf32 A row = groupID (+8 for a1, a3), col = tig (+4 for a2, a3); \
        B row = tig (+4 for b1), col = groupID";
    for t in ["f16", "bf16"] {
        v.push(entry(format!("mma.m16n8k8.{t}.a"), [16, 8], 16, &[c(1), r(8)], lanes_rows_by_group(c(2), c(4)), K8));
        v.push(entry(format!("mma.m16n8k8.{t}.b"), [8, 8], 16, &[r(1)], lanes_cols_by_group(r(2), r(4)), K8));
    }
    v.push(entry("mma.m16n8k8.tf32.a", [16, 8], 32, &[r(8), c(4)], lanes_rows_by_group(c(1), c(2)), K8));
    v.push(entry("mma.m16n8k8.tf32.b", [8, 8], 32, &[r(4)], lanes_cols_by_group(r(1), r(2)), K8));
    v.push(acc("mma.m16n8k8.f32.c", 32));
    v.push(acc("mma.m16n8k8.f16.c", 16));

    // m16n8k16 .f16/.bf16
    const K16: &str = "PTX ISA mma.m16n8k16 .f16/.bf16: A row = groupID (+8 for a2, a3, a6, a7), \
        col = tig*2 + (i & 1) (+8 for i >= 4); B row = tig*2 + (i & 1) (+8 for i >= 2), col = groupID";
    for t in ["f16", "bf16"] {
        v.push(entry(format!("mma.m16n8k16.{t}.a"), [16, 16], 16, &[c(1), r(8), c(8)], lanes_rows_by_group(c(2), c(4)), K16));
        v.push(entry(format!("mma.m16n8k16.{t}.b"), [16, 8], 16, &[r(1), r(8)], lanes_cols_by_group(r(2), r(4)), K16));
    }
    v.push(acc("mma.m16n8k16.f32.c", 32));
    v.push(acc("mma.m16n8k16.f16.c", 16));

    // m16n8k32 .s8/.u8
    const K32: &str = "PTX ISA mma.m16n8k32 .s8/.u8: A row = groupID (+8 for a4..a7, a12..a15), \
        col = tig*4 + (i & 3) (+16 for i >= 8); B row = tig*4 + (i & 3) (+16 for i >= 4), col = groupID";
    for t in ["s8", "u8"] {
        v.push(entry(format!("mma.m16n8k32.{t}.a"), [16, 32], 8, &[c(1), c(2), r(8), c(16)], lanes_rows_by_group(c(4), c(8)), K32));
        v.push(entry(format!("mma.m16n8k32.{t}.b"), [32, 8], 8, &[r(1), r(2), r(16)], lanes_cols_by_group(r(4), r(8)), K32));
    }
    v.push(acc("mma.m16n8k32.s32.c", 32));

    // m16n8k64 .s4/.u4
    const K64: &str = "PTX ISA mma.m16n8k64 .s4/.u4: A row = groupID (+8 for a8..a15, a24..a31), \
        col = tig*8 + (i & 7) (+32 for i >= 16); B row = tig*8 + (i & 7) (+32 for i >= 8), col = groupID";
    for t in ["s4", "u4"] {
        v.push(entry(format!("mma.m16n8k64.{t}.a"), [16, 64], 4, &[c(1), c(2), c(4), r(8), c(32)], lanes_rows_by_group(c(8), c(16)), K64));
        v.push(entry(format!("mma.m16n8k64.{t}.b"), [64, 8], 4, &[r(1), r(2), r(4), r(32)], lanes_cols_by_group(r(8), r(16)), K64));
    }
    v.push(acc("mma.m16n8k64.s32.c", 32));

    // WMMA integer fragments, as measured in seed 003 (identical for .row and
    // .col memory layouts: the layout is of the fragment, not of memory).
    const WMMA: &str = "seed 003 (WMMA fragments measured on hardware); A: row = groupID (+8 per register pair), \
        col = tig*4 + byte; B: row = tig*4 + byte, col = groupID (+8 per register); C: two values per 8-wide column block";
    for t in ["s8", "u8"] {
        for major in ["row", "col"] {
            v.push(entry(format!("wmma.m16n16k16.{t}.a.{major}"), [16, 16], 8, &[c(1), c(2), r(8)], lanes_rows_by_group(c(4), c(8)), WMMA));
            v.push(entry(format!("wmma.m16n16k16.{t}.b.{major}"), [16, 16], 8, &[r(1), r(2), c(8)], lanes_cols_by_group(r(4), r(8)), WMMA));
            v.push(entry(format!("wmma.m32n8k16.{t}.a.{major}"), [32, 16], 8, &[c(1), c(2), r(8), r(16)], lanes_rows_by_group(c(4), c(8)), WMMA));
            v.push(entry(format!("wmma.m32n8k16.{t}.b.{major}"), [16, 8], 8, &[r(1), r(2)], lanes_cols_by_group(r(4), r(8)), WMMA));
            v.push(entry(format!("wmma.m8n32k16.{t}.a.{major}"), [8, 16], 8, &[c(1), c(2)], lanes_rows_by_group(c(4), c(8)), WMMA));
            v.push(entry(format!("wmma.m8n32k16.{t}.b.{major}"), [16, 32], 8, &[r(1), r(2), c(8), c(16)], lanes_cols_by_group(r(4), r(8)), WMMA));
        }
    }
    v.push(entry("wmma.m16n16k16.s32.c", [16, 16], 32, &[c(1), r(8), c(8)], lanes_rows_by_group(c(2), c(4)), WMMA));
    v.push(entry("wmma.m32n8k16.s32.c", [32, 8], 32, &[c(1), r(8), r(16)], lanes_rows_by_group(c(2), c(4)), WMMA));
    v.push(entry("wmma.m8n32k16.s32.c", [8, 32], 32, &[c(1), c(8), c(16)], lanes_rows_by_group(c(2), c(4)), WMMA));
    // 4-bit m8n8k32: A row-major and B column-major only (PTX ISA: sub-byte WMMA
    // requires .row for A and .col for B).
    for t in ["s4", "u4"] {
        v.push(entry(format!("wmma.m8n8k32.{t}.a.row"), [8, 32], 4, &[c(1), c(2), c(4)], lanes_rows_by_group(c(8), c(16)), WMMA));
        v.push(entry(format!("wmma.m8n8k32.{t}.b.col"), [32, 8], 4, &[r(1), r(2), r(4)], lanes_cols_by_group(r(8), r(16)), WMMA));
    }
    v.push(entry("wmma.m8n8k32.s32.c", [8, 8], 32, &[c(1)], lanes_rows_by_group(c(2), c(4)), WMMA));
    v.extend(wgmma_accumulators());
    v.extend(wgmma_a_fragments());
    v
}

const WGMMA_D: &str = "PTX ISA wgmma .m64nNk16 register fragment layout for the accumulator D (128 threads of a \
    warpgroup): warp w = thread/32 holds rows 16w..16w+15; row = 16w + groupID + 8*((i >> 1) & 1), \
    col = 8*(i >> 2) + 2*threadID_in_group + (i & 1), for value i in 0..N/2";
const WARPGROUP_NOTE: &str = "a warpgroup layout: `lane` is the thread's index in the warpgroup (0..128), its warp \
    lane / 32; each of the four warps holds 16 rows, as one m16nN mma.sync accumulator";

const WGMMA_A: &str = "PTX ISA wgmma register fragment layout for matrix A (A from registers, 128 threads of a \
    warpgroup): warp w = thread/32 holds rows 16w..16w+15 as the mma.sync m16n8k16 (16-bit) or m16n8k32 (8-bit) \
    A fragment: 16-bit row = 16w + groupID + 8*((i >> 1) & 1), col = 2*threadID_in_group + (i & 1) + 8*(i >> 2), \
    i in 0..8; 8-bit row = 16w + groupID + 8*((i >> 2) & 1), col = 4*threadID_in_group + (i & 3) + 16*(i >> 3), \
    i in 0..16";

const WARPGROUP_A_NOTE: &str = "a warpgroup layout: `lane` is the thread's index in the warpgroup (0..128), its \
    warp lane / 32; each of the four warps holds 16 rows, as one mma.sync A fragment";

/// `wgmma.m64k16.{f16,bf16}.a` and `wgmma.m64k32.{s8,u8}.a`: the A operand of a wgmma that reads A from
/// registers (the same for every N). Value bits: 16-bit, the column pair, the row half (+8), the 8-column half;
/// 8-bit, the four columns of a register, the row half, the 16-column half. Thread bits as the accumulator's.
fn wgmma_a_fragments() -> Vec<Entry> {
    let mut v = Vec::new();
    for t in ["f16", "bf16"] {
        let lane = vec![c(2), c(4), r(1), r(2), r(4), r(16), r(32)];
        let e = entry(format!("wgmma.m64k16.{t}.a"), [64, 16], 16, &[c(1), r(8), c(8)], [Z; 5], WGMMA_A);
        v.push(Entry { lane, note: Some(WARPGROUP_A_NOTE), ..e });
    }
    for t in ["s8", "u8"] {
        let lane = vec![c(4), c(8), r(1), r(2), r(4), r(16), r(32)];
        let e = entry(format!("wgmma.m64k32.{t}.a"), [64, 32], 8, &[c(1), c(2), r(8), c(16)], [Z; 5], WGMMA_A);
        v.push(Entry { lane, note: Some(WARPGROUP_A_NOTE), ..e });
    }
    v
}

/// `wgmma.m64n<N>k16.f32.d` for the power-of-two N (8..256): the accumulator of a warpgroup MMA. Per thread
/// N/2 f32 values: value bit 0 is the column pair, bit 1 the row half (+8), the rest walk the 8-column blocks;
/// thread bits 0-1 are threadID_in_group (columns 2, 4), 2-4 groupID (rows 1, 2, 4), 5-6 the warp (rows 16,
/// 32). Other N (multiples of 8 that are not powers of two) are not linear layouts and are left out.
fn wgmma_accumulators() -> Vec<Entry> {
    [8u32, 16, 32, 64, 128, 256]
        .into_iter()
        .map(|n| {
            let mut register = vec![c(1), r(8)];
            let mut block = 8;
            while block < n {
                register.push(c(block));
                block *= 2;
            }
            let lane = vec![c(2), c(4), r(1), r(2), r(4), r(16), r(32)];
            let e = entry(format!("wgmma.m64n{n}k16.f32.d"), [64, n], 32, &register, [Z; 5], WGMMA_D);
            Entry { lane, note: Some(WARPGROUP_NOTE), ..e }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_layouts_well_formed() {
        let names = hardware_layout_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "duplicate {n}");
            let h = hardware_layout(n).unwrap();
            // 32 lanes, or the 128 threads of a warpgroup (`wgmma.*`).
            let lanes = if n.starts_with("wgmma.") { 128 } else { 32 };
            assert_eq!(h.layout.in_dim_size("lane"), Some(lanes), "{n}");
            assert_eq!(h.layout.total_in_size(), u64::from(lanes) * u64::from(h.values_per_lane()));
            if h.note != Some(QUAD_PAIR_NOTE) {
                assert!(h.layout.is_bijective(), "{n} should be a bijection");
            } else {
                assert!(h.layout.is_surjective() && !h.layout.is_injective(), "{n}");
            }
        }
        assert!(names.len() > 60);
    }

    #[test]
    fn ldmatrix_x4_is_the_m16n8k16_a_fragment() {
        let ld = hardware_layout("ldmatrix.x4").unwrap();
        let a = hardware_layout("mma.m16n8k16.f16.a").unwrap();
        assert_eq!(ld.layout, a.layout);
        assert_eq!(ld.coord(7, 5), Some((9, 11)));
        assert_eq!(a.owner(9, 11), Some((5, 7)));
    }

    #[test]
    fn registers_per_lane() {
        assert_eq!(hardware_layout("mma.m16n8k16.f16.a").unwrap().registers_per_lane(), 4);
        assert_eq!(hardware_layout("mma.m16n8k64.s4.a").unwrap().registers_per_lane(), 4);
        assert_eq!(hardware_layout("mma.m8n8k4.f32.c").unwrap().registers_per_lane(), 8);
        assert_eq!(hardware_layout("ldmatrix.x1").unwrap().registers_per_lane(), 1);
    }
}
