//! The wgmma matrix descriptor that `nvgpu.warpgroup.generate.descriptor` builds (PTX ISA, "Matrix Descriptor
//! Format"), once for the verifier, the simulator and both backends: bits 0-13 the start address `>> 4`
//! (the address is the backend's, so only its mask and shift live here), 16-29 the leading byte offset `>> 4`,
//! 32-45 the stride byte offset `>> 4`, 49-51 the base offset (0: tiles are aligned to the swizzle's repeat),
//! 62-63 the swizzle mode's layout type ([`SwizzleMode::wgmma_layout_type`]).

use tilec_layout::SwizzleMode;

use super::typed;

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
