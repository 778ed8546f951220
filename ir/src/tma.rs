//! The tensor maps of a kernel's TMA ops (`nvgpu.tma.async.load`/`store`, issue 18), defined once for the
//! verifier, the simulator, the backends and the launch description.
//!
//! MLIR passes a `!nvgpu.tensormap.descriptor<tensor = memref<box>, swizzle = ..>` built on the host; tilec
//! keeps the host out of the IR: a TMA op names the *global tile argument* it copies from or to and the shared
//! tile it fills or reads, and the tensor map follows from them: the argument's tensor, a box of the shared
//! tile's shape (or, for a tile in wgmma's column panels, of one panel's: a load per panel, `{panel = p}`,
//! [`tensor_map_and_panels`]), the swizzle mode of the shared tile's layout ([`SwizzleMode`]), zero fill out of bounds, no
//! interleave, no L2 promotion. A column-major global tile (rank 2, `#col_major`: its first axis contiguous,
//! the K-major B operand of an 8-bit wgmma) gets a map over its *transpose*, the row-major view of its memory
//! (`TensorMap::transposed`): box, coordinates and the launcher's extents are in that view's axis order
//! (memory order, outermost first), and the shared tile must be the transpose of one TMA writes. Each
//! distinct map ([`TensorMap`]) is one extra kernel parameter (a 128-byte, 64-byte aligned `.param`, CUDA's
//! `const __grid_constant__ CUtensorMap`), after the arguments' own, in order of first use
//! ([`kernel_tensor_maps`]); the launcher encodes it with `cuTensorMapEncodeTiled`.
//!
//! Limits (the PTX ISA's and `cuTensorMapEncodeTiled`'s): rank 1..=5, box extents 1..=256, the box's inner
//! extent a multiple of 16 bytes (and, swizzled, exactly the mode's span), a global tile whose contiguous
//! extent (the last axis; the first of a column-major tile) makes the pitch a multiple of 16 bytes (checked
//! at launch), element types the driver knows.

use tilec_layout::{column_panels, LinearLayout, Swizzle, SwizzleMode};

use crate::body::{Func, OpId, Value};
use crate::layout::Layout;
use crate::ops::typed::{self, AnyOp};
use crate::ops::OpKind;
use crate::types::{MemorySpace, ScalarType, TileType, Type};

/// The most elements a box may have along one axis.
pub const MAX_BOX_EXTENT: u64 = 256;

/// One tensor map: which argument, the box, the swizzle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorMap {
    /// The global tile argument's position.
    pub arg: usize,
    pub elem: ScalarType,
    /// The global tile's rank.
    pub rank: usize,
    /// The box, in the map's axis order (memory order, outermost first): the tile's, or reversed when
    /// `transposed`.
    pub box_shape: Vec<u64>,
    pub swizzle: SwizzleMode,
    /// The tensor is a column-major rank-2 tile and the map is over its transpose (the row-major view of its
    /// memory: the tile's axis 0 is the map's innermost). A TMA op's coordinates are in the map's order.
    pub transposed: bool,
}

impl TensorMap {
    /// Bytes of one box (what a load completes on its mbarrier, out-of-bounds elements included).
    pub fn box_bytes(&self) -> u64 {
        self.box_shape.iter().product::<u64>() * u64::from(self.elem.bit_width() / 8)
    }

    /// Bytes of one element.
    pub fn elem_bytes(&self) -> u32 {
        self.elem.bit_width() / 8
    }

    /// The tile axis of each of the map's axes (outermost first): `0, 1, ..` or, transposed, `1, 0`.
    pub fn tile_axes(&self) -> Vec<usize> {
        if self.transposed { (0..self.rank).rev().collect() } else { (0..self.rank).collect() }
    }

    /// The tile axis that is contiguous in memory (the map's innermost): its extent times the element size
    /// is the pitch of the next axis, which TMA needs to be a multiple of 16 bytes.
    pub fn contiguous_axis(&self) -> usize {
        if self.transposed { 0 } else { self.rank.saturating_sub(1) }
    }
}

/// The driver's `CUtensorMapDataType` for a tile element (`cuda.h`), `None` for types TMA cannot copy here.
pub fn cu_tensor_map_data_type(elem: ScalarType) -> Option<u32> {
    Some(match elem {
        // Bytes are bytes: i8 and fp8 move as UINT8 (zero fill is 0 either way).
        ScalarType::U8 | ScalarType::I8 => 0,
        ScalarType::I32 => 3,
        ScalarType::F16 => 6,
        // tf32 is stored as f32.
        ScalarType::F32 | ScalarType::TF32 => 7,
        ScalarType::F64 => 8,
        ScalarType::BF16 => 9,
        _ => return None,
    })
}

/// How TMA writes a shared tile: `panels` boxes of `rows x panel_cols` elements, box `p` holding columns
/// `[p * panel_cols, (p + 1) * panel_cols)`, row-major inside with rows of `panel_cols * e` bytes, the boxes
/// consecutive in memory, each in the swizzle mode `swizzle` (whose span, when it is not `None`, is exactly
/// the box's row bytes). One panel is a plain row-major tile (possibly swizzled); several are the *column
/// panels* of the wgmma canonical layouts (a `K x N` tile with 256-byte rows as two `K x 64` f16 panels in the
/// 128-byte mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaBoxes {
    pub swizzle: SwizzleMode,
    pub rows: u64,
    pub panel_cols: u64,
    pub panels: u64,
}

impl TmaBoxes {
    /// The box of one panel, (rows, cols).
    pub fn box_shape(&self) -> [u64; 2] {
        [self.rows, self.panel_cols]
    }
}

/// Recognises, from the bases of a shared tile's memory layout `layout` (`offset -> (row, col)`, element
/// offsets, a `rows x cols` tile of `elem_bytes`-byte elements), how TMA boxes write it ([`TmaBoxes`]), or
/// `None` when no decomposition exists: each swizzle mode is tried with panels one span wide (and the
/// unswizzled mode with one panel of whole rows, a multiple of 16 bytes), and the layout must be exactly
/// that mode's permutation of the column-panel layout ([`tilec_layout::column_panels`]). A swizzled panel needs at least 8 rows (a panel is
/// then a whole number of the mode's repeats, so the pattern of the whole tile is each panel's own). Rows
/// are at most [`MAX_BOX_EXTENT`]. (With one panel fewer rows are fine: the tile starts at a multiple of
/// the repeat.)
pub fn tma_boxes(layout: &LinearLayout, rows: u32, cols: u32, elem_bytes: u32) -> Option<TmaBoxes> {
    if u64::from(rows) > MAX_BOX_EXTENT || !elem_bytes.is_power_of_two() || elem_bytes > 16 {
        return None;
    }
    for mode in [SwizzleMode::B128, SwizzleMode::B64, SwizzleMode::B32, SwizzleMode::None] {
        let panel_cols = match mode {
            SwizzleMode::None => cols,
            mode => u32::try_from(mode.span_bytes()).ok()? / elem_bytes,
        };
        if panel_cols == 0 || u64::from(panel_cols) > MAX_BOX_EXTENT || !(u64::from(panel_cols) * u64::from(elem_bytes)).is_multiple_of(16) {
            continue;
        }
        if mode != SwizzleMode::None && rows < 8 && panel_cols < cols {
            continue;
        }
        if panel_cols > cols || !cols.is_power_of_two() || !rows.is_power_of_two() {
            continue;
        }
        let Ok(panels) = column_panels(rows, cols, panel_cols) else { continue };
        let swizzle = mode.element_swizzle(elem_bytes)?;
        let expected = if swizzle == Swizzle::none() { Some(panels) } else { swizzle.apply_to(&panels).ok() };
        if expected.as_ref() == Some(layout) {
            return Some(TmaBoxes { swizzle: mode, rows: u64::from(rows), panel_cols: u64::from(panel_cols), panels: u64::from(cols / panel_cols) });
        }
    }
    None
}

/// The tensor map that a TMA op between the global tile `tensor` and the shared tile `shared` uses (its box
/// one panel of `shared`, [`tensor_map_and_panels`]), or why there is none (the verifier's message).
pub fn tensor_map_of(func: &Func, tensor: Value, shared: Value) -> Result<TensorMap, String> {
    tensor_map_and_panels(func, tensor, shared).map(|(map, _)| map)
}

/// The tensor map of a TMA op between `tensor` and `shared`, and how many boxes (column panels, consecutive
/// in memory, [`TmaBoxes`]) `shared` holds: 1 for a tile that is one box; a load fills one panel
/// (`nvgpu.tma.async.load {panel = p}`), a store reads a tile of one box only.
pub fn tensor_map_and_panels(func: &Func, tensor: Value, shared: Value) -> Result<(TensorMap, u64), String> {
    let body = &func.body;
    let arg = func
        .args()
        .iter()
        .position(|&a| a == tensor)
        .ok_or_else(|| format!("the tensor must be a kernel argument (a global tile), found '{}'", body.ty(tensor)))?;
    let Type::Tile(global) = body.ty(tensor) else {
        return Err(format!("the tensor must be a global tile, found '{}'", body.ty(tensor)));
    };
    if global.space != MemorySpace::Global {
        return Err(format!("the tensor must be a global tile, found '{global}'"));
    }
    // A column-major tensor: the map is over its transpose (the row-major view of its memory).
    let transposed = match global.layout {
        None | Some(Layout::RowMajor) => false,
        Some(Layout::ColMajor) if global.rank() == 2 => true,
        _ => {
            return Err(format!(
                "the tensor must be row-major or a rank-2 column-major tile (a tensor map's innermost axis is contiguous), found '{global}'"
            ))
        }
    };
    let made_by_alloc = body.defining_op(shared).is_some_and(|d| body.op(d).kind == OpKind::AllocShared);
    let Type::Tile(tile) = body.ty(shared) else {
        return Err(format!("the shared operand must be a shared tile, found '{}'", body.ty(shared)));
    };
    if tile.space != MemorySpace::Shared || !made_by_alloc {
        return Err(format!("the shared operand must be a 'tile.alloc_shared' tile, found '{tile}'"));
    }
    let (box_shape, swizzle, panels) = if transposed { transposed_box_of(global, tile)? } else { box_of(global, tile)? };
    Ok((TensorMap { arg, elem: global.elem, rank: global.rank(), box_shape, swizzle, transposed }, panels))
}

/// The box (in the transposed view's order), swizzle and number of boxes of a shared tile `tile` against the
/// column-major global tile `global`: the shared tile, transposed, must be one TMA writes ([`tma_boxes`] on
/// its layout with rows and columns exchanged: `#col_major` is the transpose of row-major, a swizzle over
/// `#col_major` of the same swizzle over row-major, wgmma's K-major layouts of its column panels along K).
fn transposed_box_of(global: &TileType, tile: &TileType) -> Result<(Vec<u64>, SwizzleMode, u64), String> {
    if tile.elem != global.elem {
        return Err(format!("the shared tile's elements '{}' must be the tensor's '{}'", tile.elem, global.elem));
    }
    if cu_tensor_map_data_type(tile.elem).is_none() {
        return Err(format!("TMA does not copy '{}' elements here (f16, bf16, f32, tf32, f64, i32, i8, u8)", tile.elem));
    }
    let shape = tile.static_shape().filter(|s| s.len() == 2).ok_or_else(|| format!("the shared tile '{tile}' needs a static rank-2 shape"))?;
    let (rows, cols) = (shape[0], shape[1]);
    let elem_bytes = tile.elem.bit_width() / 8;
    let not_transposed = || {
        format!("the shared tile '{tile}' is not one TMA writes from a column-major tensor (the transpose of a row-major tile, swizzled or in column panels: '#col_major' or a swizzle over it)")
    };
    if let Some(&n) = shape.iter().find(|&&n| n == 0 || n > MAX_BOX_EXTENT) {
        return Err(format!("a box extent must be in 1..={MAX_BOX_EXTENT}, found {n}"));
    }
    // Plain '#col_major' (any extents): one unswizzled box of whole columns.
    if tile.layout == Some(Layout::ColMajor) {
        let inner_bytes = rows * u64::from(elem_bytes);
        if !inner_bytes.is_multiple_of(16) {
            return Err(format!("the box's inner extent (a column of the shared tile) is {inner_bytes} bytes; TMA needs a multiple of 16"));
        }
        return Ok((vec![cols, rows], SwizzleMode::None, 1));
    }
    let (Ok(r), Ok(c)) = (u32::try_from(rows), u32::try_from(cols)) else { return Err(not_transposed()) };
    let layout = tile.layout.as_ref().unwrap_or(&Layout::RowMajor);
    let view = layout.to_linear(r, c).and_then(|l| l.exchange_outs("row", "col")).map_err(|_| not_transposed())?;
    // The view is `cols x rows` (the transpose): boxes of its rows.
    let boxes = tma_boxes(&view, c, r, elem_bytes).ok_or_else(not_transposed)?;
    Ok((boxes.box_shape().to_vec(), boxes.swizzle, boxes.panels))
}

/// The box, swizzle and number of boxes (column panels) of a shared tile `tile` against the global tile
/// `global`.
fn box_of(global: &TileType, tile: &TileType) -> Result<(Vec<u64>, SwizzleMode, u64), String> {
    if tile.elem != global.elem {
        return Err(format!("the shared tile's elements '{}' must be the tensor's '{}'", tile.elem, global.elem));
    }
    if cu_tensor_map_data_type(tile.elem).is_none() {
        return Err(format!("TMA does not copy '{}' elements here (f16, bf16, f32, tf32, f64, i32, i8, u8)", tile.elem));
    }
    let rank = global.rank();
    if !(1..=5).contains(&rank) || tile.rank() != rank {
        return Err(format!("the shared tile '{tile}' must have the tensor's rank {rank} (1 to 5)"));
    }
    let box_shape = tile.static_shape().ok_or_else(|| format!("the shared tile '{tile}' needs a static shape"))?;
    if let Some(&n) = box_shape.iter().find(|&&n| n == 0 || n > MAX_BOX_EXTENT) {
        return Err(format!("a box extent must be in 1..={MAX_BOX_EXTENT}, found {n}"));
    }
    let elem_bytes = tile.elem.bit_width() / 8;
    // Rank 2 with power-of-two extents: recognised from the layout's bases ([`tma_boxes`]).
    if let (2, Some(layout)) = (rank, tile.layout.as_ref().unwrap_or(&Layout::RowMajor).to_linear(box_shape[0] as u32, box_shape[1] as u32).ok()) {
        if let Some(boxes) = tma_boxes(&layout, box_shape[0] as u32, box_shape[1] as u32, elem_bytes) {
            return Ok((boxes.box_shape().to_vec(), boxes.swizzle, boxes.panels));
        }
    }
    let swizzle = match &tile.layout {
        None | Some(Layout::RowMajor) => SwizzleMode::None,
        Some(Layout::Swizzled { swizzle, base }) if matches!(**base, Layout::RowMajor) => SwizzleMode::of_element_swizzle(*swizzle, elem_bytes)
            .ok_or_else(|| {
                format!(
                    "the shared tile's swizzle #swizzle<{}, {}, {}> is none of TMA's 32-, 64- or 128-byte modes for {}-byte elements ({})",
                    swizzle.bits,
                    swizzle.base,
                    swizzle.shift,
                    elem_bytes,
                    [SwizzleMode::B32, SwizzleMode::B64, SwizzleMode::B128]
                        .iter()
                        .filter_map(|m| m.element_swizzle(elem_bytes).map(|s| format!("#swizzle<{}, {}, {}, #row_major>", s.bits, s.base, s.shift)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?,
        Some(other) => return Err(format!("the shared tile's layout {other} is not one TMA writes (row-major, or a swizzle mode over it)")),
    };
    let inner_bytes = box_shape[rank - 1] * u64::from(elem_bytes);
    if !inner_bytes.is_multiple_of(16) {
        return Err(format!("the box's inner extent is {inner_bytes} bytes; TMA needs a multiple of 16"));
    }
    if swizzle != SwizzleMode::None && inner_bytes != swizzle.span_bytes() {
        return Err(format!(
            "with the {} swizzle the box's inner extent must be {} bytes, found {inner_bytes}",
            swizzle,
            swizzle.span_bytes()
        ));
    }
    Ok((box_shape, swizzle, 1))
}

/// The tensor map of a TMA op (`None` for other ops and malformed ones).
pub fn op_tensor_map(func: &Func, id: OpId) -> Option<TensorMap> {
    let op = func.body.op(id);
    match AnyOp::from_op(op)? {
        AnyOp::TmaAsyncLoad(typed::TmaAsyncLoad { tensor, dst, .. }) => tensor_map_of(func, tensor, dst).ok(),
        AnyOp::TmaAsyncStore(typed::TmaAsyncStore { src, tensor, .. }) => {
            tensor_map_and_panels(func, tensor, src).ok().filter(|&(_, panels)| panels == 1).map(|(map, _)| map)
        }
        _ => None,
    }
}

/// The shared tiles of swizzled TMA ops and the alignment their swizzle mode needs (its repeat, more than
/// [`crate::shared_memory::SHARED_ALIGN`]): the swizzle is a function of the shared address, so the tile must
/// start at a multiple of the repeat for the pattern to be the tile's own. The placement
/// ([`crate::shared_memory::place_shared_allocations`]) and the backends' arrays honour it.
pub fn tile_alignments(func: &Func) -> std::collections::HashMap<Value, u64> {
    let body = &func.body;
    let mut align = std::collections::HashMap::new();
    body.walk(func.entry, &mut |id| {
        let shared = match body.op(id).view::<typed::TmaAsyncLoad>() {
            Some(load) => Some(load.dst),
            None => body.op(id).view::<typed::TmaAsyncStore>().map(|s| s.src),
        };
        if let (Some(shared), Some(map)) = (shared, op_tensor_map(func, id)) {
            let need = map.swizzle.repeat_bytes();
            if need > crate::shared_memory::SHARED_ALIGN {
                let entry = align.entry(shared).or_insert(need);
                *entry = (*entry).max(need);
            }
        }
    });
    align
}

/// Every distinct tensor map of the kernel's TMA ops, in order of first use: the kernel's tensor-map
/// parameters, in order.
pub fn kernel_tensor_maps(func: &Func) -> Vec<TensorMap> {
    let mut maps: Vec<TensorMap> = Vec::new();
    func.body.walk(func.entry, &mut |id| {
        if let Some(map) = op_tensor_map(func, id) {
            if !maps.contains(&map) {
                maps.push(map);
            }
        }
    });
    maps
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_layout::Swizzle;

    fn tile(shape: &[u64], elem: ScalarType, layout: Option<Layout>) -> TileType {
        TileType { layout, ..TileType::new(shape, elem, MemorySpace::Shared) }
    }

    #[test]
    fn boxes_and_swizzles() {
        let global = TileType::new(&[100, 72], ScalarType::F16, MemorySpace::Global);
        let sw128 = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::RowMajor) };
        assert_eq!(box_of(&global, &tile(&[64, 64], ScalarType::F16, Some(sw128.clone()))), Ok((vec![64, 64], SwizzleMode::B128, 1)));
        assert_eq!(box_of(&global, &tile(&[16, 8], ScalarType::F16, None)), Ok((vec![16, 8], SwizzleMode::None, 1)));
        // 128-byte swizzle needs 128-byte rows; 4 f16 (8 bytes) is not a multiple of 16.
        assert!(box_of(&global, &tile(&[64, 32], ScalarType::F16, Some(sw128))).unwrap_err().contains("must be 128 bytes"));
        assert!(box_of(&global, &tile(&[8, 4], ScalarType::F16, None)).unwrap_err().contains("multiple of 16"));
        assert!(box_of(&global, &tile(&[512, 8], ScalarType::F16, None)).unwrap_err().contains("1..=256"));
        let odd = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 4 }, base: Box::new(Layout::RowMajor) };
        assert!(box_of(&global, &tile(&[64, 64], ScalarType::F16, Some(odd))).unwrap_err().contains("#swizzle<3, 3, 3, #row_major>"));
    }

    /// The element offsets of `(row, col)` in a 32x128 f16 tile of two 32x64 column panels in the 128-byte
    /// mode, from the PTX ISA's definition (16-byte chunk `c` of row `r` of a panel is stored at chunk
    /// `c ^ (r % 8)`), written independently of the code under test.
    fn panel_offset(row: u32, col: u32) -> u32 {
        let (panel, c) = (col / 64, col % 64);
        panel * 32 * 64 + row * 64 + (((c / 8) ^ (row % 8)) * 8) + c % 8
    }

    #[test]
    fn recognises_column_panels_from_bases() {
        // offset bits 0..6: column 1..32 in the panel; 6..11: row 1..16; bit 11: the second panel (column 64).
        let mut bases: Vec<Vec<u32>> = (0..6).map(|i| vec![0, 1 << i]).collect();
        bases.extend((0..5).map(|i| vec![1 << i, 0]));
        bases.push(vec![0, 64]);
        let panels = LinearLayout::new([("offset", bases)], [("row", 32), ("col", 128)]).unwrap();
        let layout = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::Linear(panels)) };
        let linear = layout.to_linear(32, 128).unwrap();
        for (row, col) in [(0, 0), (1, 8), (5, 70), (31, 127), (7, 63)] {
            assert_eq!(linear.apply(&[panel_offset(row, col)]).unwrap(), vec![row, col], "({row}, {col})");
        }
        assert_eq!(tma_boxes(&linear, 32, 128, 2), Some(TmaBoxes { swizzle: SwizzleMode::B128, rows: 32, panel_cols: 64, panels: 2 }));
        // The same tile as one row-major tile swizzled on 256-byte rows (today's mma.sync choice): not TMA's.
        let sw = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 4 }, base: Box::new(Layout::RowMajor) };
        assert_eq!(tma_boxes(&sw.to_linear(32, 128).unwrap(), 32, 128, 2), None);
        // Plain row-major: one unswizzled box of whole rows.
        let rm = Layout::RowMajor.to_linear(32, 128).unwrap();
        assert_eq!(tma_boxes(&rm, 32, 128, 2), Some(TmaBoxes { swizzle: SwizzleMode::None, rows: 32, panel_cols: 128, panels: 1 }));
        // 64-byte rows in the 64-byte mode (#swizzle<2, 3, 3> on f16), and in the 128-byte one (not TMA's).
        let sw64 = Layout::Swizzled { swizzle: Swizzle { bits: 2, base: 3, shift: 3 }, base: Box::new(Layout::RowMajor) };
        assert_eq!(tma_boxes(&sw64.to_linear(128, 32).unwrap(), 128, 32, 2), Some(TmaBoxes { swizzle: SwizzleMode::B64, rows: 128, panel_cols: 32, panels: 1 }));
        let sw128 = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::RowMajor) };
        assert_eq!(tma_boxes(&sw128.to_linear(128, 32).unwrap(), 128, 32, 2), None);
        // Column-major is no TMA box (its inner axis is the rows).
        assert_eq!(tma_boxes(&Layout::ColMajor.to_linear(32, 64).unwrap(), 32, 64, 2), None);
        // More rows than a box has.
        assert_eq!(tma_boxes(&Layout::RowMajor.to_linear(512, 8).unwrap(), 512, 8, 2), None);
        // box_of: one panel's box, two of them (one load per panel).
        let global = TileType::new(&[100, 200], ScalarType::F16, MemorySpace::Global);
        assert_eq!(box_of(&global, &tile(&[32, 128], ScalarType::F16, Some(layout))), Ok((vec![32, 64], SwizzleMode::B128, 2)));
    }

    /// A column-major global tile: the map is over the transpose. wgmma's K-major int8 B (a 128x256 tile,
    /// K = 128 contiguous, `#swizzle<3, 4, 3, #col_major>`) is one 256 (n) x 128 (k) box in the 128-byte mode;
    /// plain `#col_major` one unswizzled box of whole columns; a row-major shared tile (the copy would
    /// transpose) or a swizzle whose span is not the column is none.
    #[test]
    fn column_major_tensors_map_their_transpose() {
        let global = TileType { layout: Some(Layout::ColMajor), ..TileType::new(&[300, 200], ScalarType::I8, MemorySpace::Global) };
        let kmajor = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 4, shift: 3 }, base: Box::new(Layout::ColMajor) };
        assert_eq!(transposed_box_of(&global, &tile(&[128, 256], ScalarType::I8, Some(kmajor.clone()))), Ok((vec![256, 128], SwizzleMode::B128, 1)));
        // 64 k of f16 = 128 bytes: the 128-byte mode is #swizzle<3, 3, 3> on 2-byte elements.
        let f16 = TileType { layout: Some(Layout::ColMajor), ..TileType::new(&[300, 200], ScalarType::F16, MemorySpace::Global) };
        let kmajor16 = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 3 }, base: Box::new(Layout::ColMajor) };
        assert_eq!(transposed_box_of(&f16, &tile(&[64, 128], ScalarType::F16, Some(kmajor16))), Ok((vec![128, 64], SwizzleMode::B128, 1)));
        assert_eq!(transposed_box_of(&global, &tile(&[48, 24], ScalarType::I8, Some(Layout::ColMajor))), Ok((vec![24, 48], SwizzleMode::None, 1)));
        assert!(transposed_box_of(&global, &tile(&[40, 24], ScalarType::I8, Some(Layout::ColMajor))).unwrap_err().contains("40 bytes"));
        assert!(transposed_box_of(&global, &tile(&[128, 256], ScalarType::I8, None)).unwrap_err().contains("not one TMA writes"));
        // A 64-byte column (64 k of int8) under the 128-byte swizzle: not a TMA box.
        assert!(transposed_box_of(&global, &tile(&[64, 256], ScalarType::I8, Some(kmajor))).unwrap_err().contains("not one TMA writes"));
    }

    #[test]
    fn box_bytes_and_data_types() {
        let map = TensorMap { arg: 0, elem: ScalarType::F16, rank: 2, box_shape: vec![64, 64], swizzle: SwizzleMode::B128, transposed: false };
        assert_eq!(map.box_bytes(), 8192);
        // cuda.h's CUtensorMapDataType: UINT8 0, INT32 3, FLOAT16 6, FLOAT32 7, FLOAT64 8, BFLOAT16 9.
        assert_eq!(cu_tensor_map_data_type(ScalarType::F16), Some(6));
        assert_eq!(cu_tensor_map_data_type(ScalarType::BF16), Some(9));
        assert_eq!(cu_tensor_map_data_type(ScalarType::F32), Some(7));
        assert_eq!(cu_tensor_map_data_type(ScalarType::I4), None);
    }
}
