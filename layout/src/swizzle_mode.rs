//! Hopper's shared-memory swizzle modes: the four patterns TMA writes (the tensor map's
//! `CU_TENSOR_MAP_SWIZZLE_*`) and wgmma's matrix descriptors read (their 2-bit layout type), defined once for
//! both.
//!
//! From the PTX ISA ("Tensor Swizzling Modes", and the matrix-descriptor section of wgmma) and CUTLASS
//! (`cute/atom/copy_traits_sm90_tma_swizzle.hpp`: `SWIZZLE_128B` is `Swizzle<3,4,3>` on byte addresses):
//! a mode of span `S` bytes (32, 64 or 128) XORs the 16-byte-chunk index within an `S`-byte row with the
//! row index within a repeat of `S/16` rows, i.e. byte address bits `[4, 4 + B)` with bits `[7, 7 + B)`,
//! `B = log2(S/16)`: CuTe's `Swizzle<B, 4, 3>` on bytes. The pattern is a function of the shared-memory
//! address, so it equals the tile-relative one when the tile starts at a multiple of its repeat
//! (`S * 8` bytes: 256, 512, 1024; [`SwizzleMode::repeat_bytes`]).
//!
//! On elements of `e` bytes (a power of two up to 16) the same permutation is `Swizzle<B, 4 - log2 e, 3>`
//! on element offsets (`#swizzle<3, 3, 3, #row_major>` for f16 and 128 bytes), which is how a shared tile's
//! layout attribute writes it; [`SwizzleMode::of_element_swizzle`] recognises it.

use crate::swizzle::Swizzle;

/// A Hopper shared-memory swizzle mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SwizzleMode {
    /// No swizzle (`CU_TENSOR_MAP_SWIZZLE_NONE`; wgmma's "interleave" type 0).
    None,
    /// 32-byte span (`CU_TENSOR_MAP_SWIZZLE_32B`).
    B32,
    /// 64-byte span (`CU_TENSOR_MAP_SWIZZLE_64B`).
    B64,
    /// 128-byte span (`CU_TENSOR_MAP_SWIZZLE_128B`).
    B128,
}

impl SwizzleMode {
    /// Every mode, narrowest first.
    pub const ALL: [SwizzleMode; 4] = [SwizzleMode::None, SwizzleMode::B32, SwizzleMode::B64, SwizzleMode::B128];

    /// The name written in bundles and diagnostics: `none`, `32b`, `64b`, `128b`.
    pub fn name(self) -> &'static str {
        match self {
            SwizzleMode::None => "none",
            SwizzleMode::B32 => "32b",
            SwizzleMode::B64 => "64b",
            SwizzleMode::B128 => "128b",
        }
    }

    /// The mode named `name` ([`SwizzleMode::name`]).
    pub fn from_name(name: &str) -> Option<SwizzleMode> {
        SwizzleMode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The number of chunk-index bits XOR-ed (`B`): 0, 1, 2, 3.
    pub fn bits(self) -> u32 {
        match self {
            SwizzleMode::None => 0,
            SwizzleMode::B32 => 1,
            SwizzleMode::B64 => 2,
            SwizzleMode::B128 => 3,
        }
    }

    /// The span in bytes (a swizzled box's inner extent may be at most this): 16 for `None` (its unit),
    /// else 32, 64, 128.
    pub fn span_bytes(self) -> u64 {
        16 << self.bits()
    }

    /// The bytes after which the pattern repeats: `span * 8` for the swizzled modes (256, 512, 1024), 16 for
    /// `None`. A swizzled tile must start at a multiple of it for the tile-relative pattern to be the
    /// hardware's.
    pub fn repeat_bytes(self) -> u64 {
        match self {
            SwizzleMode::None => 16,
            mode => mode.span_bytes() * 8,
        }
    }

    /// The permutation on byte offsets: `Swizzle<B, 4, 3>` (the identity for `None`).
    pub fn byte_swizzle(self) -> Swizzle {
        match self {
            SwizzleMode::None => Swizzle::none(),
            mode => Swizzle { bits: mode.bits(), base: 4, shift: 3 },
        }
    }

    /// The permutation on offsets of `elem_bytes`-byte elements (1, 2, 4, 8 or 16): `Swizzle<B, 4 - log2 e, 3>`;
    /// `None` for other sizes.
    pub fn element_swizzle(self, elem_bytes: u32) -> Option<Swizzle> {
        if !elem_bytes.is_power_of_two() || elem_bytes > 16 {
            return None;
        }
        Some(match self {
            SwizzleMode::None => Swizzle::none(),
            mode => Swizzle { bits: mode.bits(), base: 4 - elem_bytes.trailing_zeros(), shift: 3 },
        })
    }

    /// The mode whose element permutation ([`SwizzleMode::element_swizzle`]) is `swizzle`, if any.
    pub fn of_element_swizzle(swizzle: Swizzle, elem_bytes: u32) -> Option<SwizzleMode> {
        if swizzle.bits == 0 {
            return Some(SwizzleMode::None);
        }
        SwizzleMode::ALL.into_iter().find(|m| m.bits() > 0 && m.element_swizzle(elem_bytes) == Some(swizzle))
    }

    /// The tensor map's `CUtensorMapSwizzle` value (`cuda.h`: NONE 0, 32B 1, 64B 2, 128B 3).
    pub fn cu_tensor_map_swizzle(self) -> u32 {
        self.bits()
    }

    /// The 2-bit layout type of a wgmma matrix descriptor, bits 62-63 (PTX ISA, "Matrix Descriptor Format":
    /// 0 no swizzle, 1 128-byte, 2 64-byte, 3 32-byte).
    pub fn wgmma_layout_type(self) -> u64 {
        match self {
            SwizzleMode::None => 0,
            SwizzleMode::B128 => 1,
            SwizzleMode::B64 => 2,
            SwizzleMode::B32 => 3,
        }
    }
}

impl std::fmt::Display for SwizzleMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 128-byte pattern written out from the PTX ISA's figure: in a 1024-byte repeat of eight 128-byte
    /// rows, 16-byte chunk `c` of row `r` lands at chunk `c ^ r`.
    #[test]
    fn swizzle_128b_moves_chunk_c_of_row_r_to_c_xor_r() {
        let sw = SwizzleMode::B128.byte_swizzle();
        for r in 0..8u32 {
            for c in 0..8u32 {
                for b in [0u32, 5, 15] {
                    let offset = r * 128 + c * 16 + b;
                    assert_eq!(sw.apply(offset), r * 128 + ((c ^ r) * 16) + b);
                }
            }
        }
        // The next repeat starts over.
        assert_eq!(sw.apply(1024 + 16), 1024 + 16);
    }

    #[test]
    fn swizzle_64b_and_32b_use_the_low_row_bits() {
        // 64-byte rows: chunk c (0..4) of row r goes to c ^ (r / 2 % 4); the pattern repeats every 512 bytes.
        let sw = SwizzleMode::B64.byte_swizzle();
        for r in 0..8u32 {
            for c in 0..4u32 {
                assert_eq!(sw.apply(r * 64 + c * 16), r * 64 + (c ^ (r / 2 % 4)) * 16);
            }
        }
        // 32-byte rows: chunk c (0..2) of row r goes to c ^ (r / 4 % 2); repeat 256 bytes.
        let sw = SwizzleMode::B32.byte_swizzle();
        for r in 0..8u32 {
            for c in 0..2u32 {
                assert_eq!(sw.apply(r * 32 + c * 16), r * 32 + (c ^ (r / 4 % 2)) * 16);
            }
        }
        assert_eq!((SwizzleMode::B32.repeat_bytes(), SwizzleMode::B64.repeat_bytes(), SwizzleMode::B128.repeat_bytes()), (256, 512, 1024));
    }

    #[test]
    fn element_swizzles_match_the_byte_swizzle() {
        for mode in SwizzleMode::ALL {
            for e in [1u32, 2, 4, 8] {
                let sw = mode.element_swizzle(e).unwrap();
                for offset in 0..2048u32 {
                    assert_eq!(sw.apply(offset) * e, mode.byte_swizzle().apply(offset * e), "{mode} e={e} offset={offset}");
                }
                assert_eq!(SwizzleMode::of_element_swizzle(sw, e), Some(mode));
            }
        }
        assert_eq!(SwizzleMode::B128.element_swizzle(2), Some(Swizzle { bits: 3, base: 3, shift: 3 }));
        assert_eq!(SwizzleMode::of_element_swizzle(Swizzle { bits: 3, base: 3, shift: 4 }, 2), None);
    }

    #[test]
    fn driver_and_descriptor_encodings() {
        let cu: Vec<u32> = SwizzleMode::ALL.iter().map(|m| m.cu_tensor_map_swizzle()).collect();
        assert_eq!(cu, [0, 1, 2, 3]);
        let wgmma: Vec<u64> = SwizzleMode::ALL.iter().map(|m| m.wgmma_layout_type()).collect();
        assert_eq!(wgmma, [0, 3, 2, 1]);
        assert_eq!(SwizzleMode::from_name("128b"), Some(SwizzleMode::B128));
    }
}
