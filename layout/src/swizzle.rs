//! XOR swizzles (CuTe's `Swizzle<B, M, S>`) as linear layouts on `offset`.
//!
//! CuTe (`cute/swizzle.hpp`) defines, for `bits = B`, `base = M`, `shift = S`:
//!
//! ```text
//! yyy_mask = ((1 << B) - 1) << (M + S)
//! swizzle(o) = o ^ ((o & yyy_mask) >> S)
//! ```
//!
//! i.e. the `B` bits starting at `M + S` are XOR-ed into the `B` bits starting
//! at `M`. That is linear over F2: offset bit `i` maps to `1 << i`, plus
//! `1 << (i - S)` when `M + S <= i < M + S + B`. When `S >= B` the source and
//! target bit ranges are disjoint and the swizzle is an involution.

use std::fmt;

use crate::error::LayoutError;
use crate::linear::LinearLayout;

/// `Swizzle<bits, base, shift>`: XOR `bits` bits at `base + shift` into the
/// `bits` bits at `base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// Number of bits XOR-ed (`B`).
    pub bits: u32,
    /// Least significant bit that is changed (`M`).
    pub base: u32,
    /// Distance from the changed bits to the bits they are XOR-ed with (`S`).
    pub shift: u32,
}

impl Swizzle {
    /// A swizzle; `shift` must be at least 1 unless `bits` is 0 and the whole
    /// pattern must fit 31 offset bits.
    pub fn new(bits: u32, base: u32, shift: u32) -> Result<Self, LayoutError> {
        if bits > 0 && shift == 0 {
            return Err(LayoutError::BadInput("swizzle shift must be at least 1".into()));
        }
        if u64::from(bits) + u64::from(base) + u64::from(shift) > 31 {
            return Err(LayoutError::TooLarge(format!("Swizzle<{bits}, {base}, {shift}> needs more than 31 offset bits")));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// The identity swizzle `Swizzle<0, 0, 0>`.
    pub fn none() -> Self {
        Swizzle { bits: 0, base: 0, shift: 0 }
    }

    /// Number of offset bits the swizzle reads (`B + M + S`).
    pub fn offset_bits(&self) -> u32 {
        self.bits + self.base + self.shift
    }

    /// The swizzled offset, computed directly (CuTe's `operator()`).
    pub fn apply(&self, offset: u32) -> u32 {
        let mask = ((1u32 << self.bits) - 1) << (self.base + self.shift);
        offset ^ ((offset & mask) >> self.shift)
    }

    /// Whether applying it twice is the identity (`shift >= bits`).
    pub fn is_involution(&self) -> bool {
        self.shift >= self.bits
    }

    /// The swizzle as an `offset -> offset` linear layout on `2^offset_bits`
    /// offsets (at least [`Swizzle::offset_bits`]).
    pub fn to_linear(&self, offset_bits: u32) -> Result<LinearLayout, LayoutError> {
        if offset_bits < self.offset_bits() {
            return Err(LayoutError::BadInput(format!(
                "{self} needs {} offset bits, the tile has {offset_bits}",
                self.offset_bits()
            )));
        }
        if offset_bits > 31 {
            return Err(LayoutError::TooLarge(format!("{offset_bits} offset bits")));
        }
        let bases = (0..offset_bits).map(|i| vec![self.apply(1 << i)]).collect();
        LinearLayout::new([("offset", bases)], [("offset", 1u32 << offset_bits)])
    }

    /// A swizzled memory layout: physical offset `p` holds the coordinate that
    /// `base` places at the unswizzled offset `swizzle⁻¹(p)`, so a coordinate's
    /// physical offset is `swizzle(base⁻¹(coord))`. `base` must have the single
    /// input dimension `offset` (e.g. [`crate::row_major`]).
    pub fn apply_to(&self, base: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        let bits = match base.in_dims().collect::<Vec<_>>().as_slice() {
            [("offset", size)] => size.trailing_zeros(),
            _ => return Err(LayoutError::Incompatible("a swizzle applies to a layout with one input `offset`".into())),
        };
        self.to_linear(bits)?.invert()?.compose(base)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Swizzle<{}, {}, {}>", self.bits, self.base, self.shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::row_major;

    #[test]
    fn matches_cute_formula() {
        let s = Swizzle::new(3, 3, 3).unwrap();
        let l = s.to_linear(9).unwrap();
        for o in 0..512 {
            assert_eq!(l.apply(&[o]).unwrap(), vec![s.apply(o)]);
            assert_eq!(s.apply(s.apply(o)), o);
        }
        // 8-element chunk 2 of row 1 (offset 64 + 16) moves to chunk 2 ^ 1 = 3.
        assert_eq!(s.apply(64 + 16), 64 + 24);
    }

    #[test]
    fn swizzled_row_major_is_a_bijection() {
        let l = Swizzle::new(3, 3, 3).unwrap().apply_to(&row_major(8, 64).unwrap()).unwrap();
        assert!(l.is_bijective());
        // physical offset of (row 1, col 0) is swizzle(64) = 64 ^ 8.
        assert_eq!(l.find_input(&[1, 0]), Some(vec![64 ^ 8]));
    }
}
