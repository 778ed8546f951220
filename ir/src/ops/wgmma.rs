//! The wgmma matrix descriptor that `nvgpu.warpgroup.generate.descriptor` builds (PTX ISA, "Matrix Descriptor
//! Format"), once for the verifier, the simulator and both backends: bits 0-13 the start address `>> 4`
//! (the address is the backend's, so only its mask and shift live here), 16-29 the leading byte offset `>> 4`,
//! 32-45 the stride byte offset `>> 4`, 49-51 the base offset (0: tiles are aligned to the swizzle's repeat),
//! 62-63 the swizzle mode's layout type ([`SwizzleMode::wgmma_layout_type`]).
//!
//! And A from registers (the RS form, `wgmma.mma_async ... {a0..a3}, b-desc`): the thread's A fragment is
//! four 32-bit registers, `vector<4x2xf16|bf16>` (k16) or `vector<4x4xi8|u8>` (k32) ([`register_a_type`]).

use tilec_layout::SwizzleMode;

use super::typed;
use crate::types::{ScalarType, Type, VectorType};

/// The type of a thread's register A fragment of `elem` (f16, bf16, s8, u8): four 32-bit registers.
pub fn register_a_type(elem: ScalarType) -> Option<VectorType> {
    match elem {
        ScalarType::F16 | ScalarType::BF16 => Some(VectorType::new(&[4, 2], elem)),
        ScalarType::I8 | ScalarType::U8 => Some(VectorType::new(&[4, 4], elem)),
        _ => None,
    }
}

/// The element type of a register A fragment: `ty` is a vector of [`register_a_type`]'s shape for its
/// element type.
pub fn register_a_elem(ty: &Type) -> Option<ScalarType> {
    let Type::Vector(v) = ty else { return None };
    (register_a_type(v.elem).as_ref() == Some(v)).then_some(v.elem)
}

/// The swizzle mode named by the op's `swizzle` attribute (bytes: 0, 32, 64, 128).
pub fn swizzle_mode(bytes: u32) -> Option<SwizzleMode> {
    match bytes {
        0 => Some(SwizzleMode::None),
        32 => Some(SwizzleMode::B32),
        64 => Some(SwizzleMode::B64),
        128 => Some(SwizzleMode::B128),
        _ => None,
    }
}

/// The start-address field of a shared address: `(address & 0x3ffff) >> 4`.
pub const START_ADDRESS_MASK: u64 = 0x3ffff;

/// The descriptor's fields other than the start address, in place (the verifier has checked the attributes;
/// `None` for a swizzle that is not a mode).
pub fn constant_bits(d: &typed::WarpgroupGenerateDescriptor) -> Option<u64> {
    let mode = swizzle_mode(d.swizzle)?;
    Some(fields(u64::from(d.leading_byte_offset), u64::from(d.stride_byte_offset), 0, mode))
}

/// The descriptor of the given fields (byte offsets in bytes; the start address already `>> 4`).
pub fn fields(leading: u64, stride: u64, base_offset: u64, mode: SwizzleMode) -> u64 {
    (((leading >> 4) & 0x3fff) << 16) | (((stride >> 4) & 0x3fff) << 32) | ((base_offset & 7) << 49) | (mode.wgmma_layout_type() << 62)
}
