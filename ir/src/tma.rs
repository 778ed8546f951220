//! The tensor maps of a kernel's TMA ops (`nvgpu.tma.async.load`/`store`, issue 18), defined once for the
//! verifier, the simulator, the backends and the launch description.
//!
//! MLIR passes a `!nvgpu.tensormap.descriptor<tensor = memref<box>, swizzle = ..>` built on the host; tilec
//! keeps the host out of the IR: a TMA op names the *global tile argument* it copies from or to and the shared
//! tile it fills or reads, and the tensor map follows from them: the argument's tensor, a box of the shared
//! tile's shape, the swizzle mode of the shared tile's layout ([`SwizzleMode`]), zero fill out of bounds, no
//! interleave, no L2 promotion. Each distinct map ([`TensorMap`]) is one extra kernel parameter (a 128-byte,
//! 64-byte aligned `.param`, CUDA's `const __grid_constant__ CUtensorMap`), after the arguments' own, in
//! order of first use ([`kernel_tensor_maps`]); the launcher encodes it with `cuTensorMapEncodeTiled`.
//!
//! Limits (the PTX ISA's and `cuTensorMapEncodeTiled`'s): rank 1..=5, box extents 1..=256, the box's inner
//! extent a multiple of 16 bytes (and, swizzled, exactly the mode's span), a row-major global tile whose
//! extents other than the innermost make the row pitch a multiple of 16 bytes (checked at launch), element
//! types the driver knows.

use tilec_layout::SwizzleMode;

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
    /// The box, in the tile's axis order (outermost first).
    pub box_shape: Vec<u64>,
    pub swizzle: SwizzleMode,
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

/// The tensor map that a TMA op between the global tile `tensor` and the shared tile `shared` uses, or why
/// there is none (the verifier's message).
pub fn tensor_map_of(func: &Func, tensor: Value, shared: Value) -> Result<TensorMap, String> {
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
    if !matches!(global.layout, None | Some(Layout::RowMajor)) {
        return Err(format!("the tensor must be row-major (a tensor map's innermost axis is its last), found '{global}'"));
    }
    let made_by_alloc = body.defining_op(shared).is_some_and(|d| body.op(d).kind == OpKind::AllocShared);
    let Type::Tile(tile) = body.ty(shared) else {
        return Err(format!("the shared operand must be a shared tile, found '{}'", body.ty(shared)));
    };
    if tile.space != MemorySpace::Shared || !made_by_alloc {
        return Err(format!("the shared operand must be a 'tile.alloc_shared' tile, found '{tile}'"));
    }
    box_of(global, tile).map(|(box_shape, swizzle)| TensorMap { arg, elem: global.elem, rank: global.rank(), box_shape, swizzle })
}

/// The box and swizzle of a shared tile `tile` against the global tile `global`.
fn box_of(global: &TileType, tile: &TileType) -> Result<(Vec<u64>, SwizzleMode), String> {
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
    Ok((box_shape, swizzle))
}

/// The tensor map of a TMA op (`None` for other ops and malformed ones).
pub fn op_tensor_map(func: &Func, id: OpId) -> Option<TensorMap> {
    let op = func.body.op(id);
    match AnyOp::from_op(op)? {
        AnyOp::TmaAsyncLoad(typed::TmaAsyncLoad { tensor, dst, .. }) => tensor_map_of(func, tensor, dst).ok(),
        AnyOp::TmaAsyncStore(typed::TmaAsyncStore { src, tensor, .. }) => tensor_map_of(func, tensor, src).ok(),
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
        assert_eq!(box_of(&global, &tile(&[64, 64], ScalarType::F16, Some(sw128.clone()))), Ok((vec![64, 64], SwizzleMode::B128)));
        assert_eq!(box_of(&global, &tile(&[16, 8], ScalarType::F16, None)), Ok((vec![16, 8], SwizzleMode::None)));
        // 128-byte swizzle needs 128-byte rows; 4 f16 (8 bytes) is not a multiple of 16.
        assert!(box_of(&global, &tile(&[64, 32], ScalarType::F16, Some(sw128))).unwrap_err().contains("must be 128 bytes"));
        assert!(box_of(&global, &tile(&[8, 4], ScalarType::F16, None)).unwrap_err().contains("multiple of 16"));
        assert!(box_of(&global, &tile(&[512, 8], ScalarType::F16, None)).unwrap_err().contains("1..=256"));
        let odd = Layout::Swizzled { swizzle: Swizzle { bits: 3, base: 3, shift: 4 }, base: Box::new(Layout::RowMajor) };
        assert!(box_of(&global, &tile(&[64, 64], ScalarType::F16, Some(odd))).unwrap_err().contains("#swizzle<3, 3, 3, #row_major>"));
    }

    #[test]
    fn box_bytes_and_data_types() {
        let map = TensorMap { arg: 0, elem: ScalarType::F16, rank: 2, box_shape: vec![64, 64], swizzle: SwizzleMode::B128 };
        assert_eq!(map.box_bytes(), 8192);
        // cuda.h's CUtensorMapDataType: UINT8 0, INT32 3, FLOAT16 6, FLOAT32 7, FLOAT64 8, BFLOAT16 9.
        assert_eq!(cu_tensor_map_data_type(ScalarType::F16), Some(6));
        assert_eq!(cu_tensor_map_data_type(ScalarType::BF16), Some(9));
        assert_eq!(cu_tensor_map_data_type(ScalarType::F32), Some(7));
        assert_eq!(cu_tensor_map_data_type(ScalarType::I4), None);
    }
}
