//! Memory layouts of a tile: `offset -> (row, col)`.
//!
//! A memory layout maps a linear offset into the tile's storage to the
//! coordinate stored there, the same direction as a fragment layout (hardware
//! location -> coordinate), so that `fragment.invert_and_compose(&memory)` gives
//! the offset each lane's value lives at.

use crate::error::LayoutError;
use crate::linear::LinearLayout;

fn log2(dim: &str, n: u32) -> Result<u32, LayoutError> {
    if n == 0 || !n.is_power_of_two() {
        return Err(LayoutError::NotPowerOfTwo { dim: dim.to_string(), size: u64::from(n) });
    }
    Ok(n.trailing_zeros())
}

/// Row-major `rows x cols` tile in element offsets: `offset = row * cols + col`.
pub fn row_major(rows: u32, cols: u32) -> Result<LinearLayout, LayoutError> {
    let (r, c) = (log2("row", rows)?, log2("col", cols)?);
    let bases = (0..c).map(|i| vec![0, 1 << i]).chain((0..r).map(|i| vec![1 << i, 0])).collect();
    LinearLayout::new([("offset", bases)], [("row", rows), ("col", cols)])
}

/// Column-major `rows x cols` tile in element offsets: `offset = col * rows + row`.
pub fn col_major(rows: u32, cols: u32) -> Result<LinearLayout, LayoutError> {
    let (r, c) = (log2("row", rows)?, log2("col", cols)?);
    let bases = (0..r).map(|i| vec![1 << i, 0]).chain((0..c).map(|i| vec![0, 1 << i])).collect();
    LinearLayout::new([("offset", bases)], [("row", rows), ("col", cols)])
}

/// A memory layout in *byte* offsets for elements of `element_bits` (8, 16, 32,
/// 64, 128): `base` (an element-offset layout such as [`row_major`]) with the
/// low `log2(element_bytes)` offset bits mapped to an extra output dimension
/// `byte` (the byte within the element), so the result stays a bijection and
/// XOR swizzles on byte addresses (CuTe's `Swizzle<3, 4, 3>` on 16-byte chunks)
/// compose with it directly. For 8-bit elements there is no `byte` dimension.
pub fn in_bytes(base: &LinearLayout, element_bits: u32) -> Result<LinearLayout, LayoutError> {
    if element_bits < 8 || !element_bits.is_power_of_two() {
        return Err(LayoutError::BadInput(format!("byte offsets need 8, 16, 32, ... bit elements, got {element_bits} bits")));
    }
    let bytes = element_bits / 8;
    if bytes == 1 {
        return Ok(base.clone());
    }
    let within = LinearLayout::identity_1d(bytes, "offset", "byte")?;
    within.product(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_and_col_major() {
        let rm = row_major(4, 8).unwrap();
        assert_eq!(rm.apply(&[8 * 2 + 5]).unwrap(), vec![2, 5]);
        let cm = col_major(4, 8).unwrap();
        assert_eq!(cm.apply(&[4 * 5 + 2]).unwrap(), vec![2, 5]);
        let b = in_bytes(&rm, 16).unwrap();
        assert_eq!(b.out_dim_names(), vec!["byte", "row", "col"]);
        assert_eq!(b.apply(&[2 * (8 * 2 + 5) + 1]).unwrap(), vec![1, 2, 5]);
        assert!(b.is_bijective());
    }
}
