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

/// Column panels: a `rows x cols` tile stored as `cols / panel_cols` panels of `panel_cols` columns, panel
/// `p` holding columns `[p * panel_cols, (p + 1) * panel_cols)` row-major (`rows x panel_cols`), the panels
/// one after another: `offset = (col / pc) * rows * pc + row * pc + col % pc`. This is the canonical
/// shared-memory layout of a wgmma operand (PTX ISA, "Shared Memory Matrix Layout"; CuTe's
/// `tile_to_shape(GMMA::Layout_*_Atom, ...)`): each panel is as wide as its swizzle's span in bytes, and the
/// swizzle of that span ([`crate::SwizzleMode::element_swizzle`]) is applied on top. With one panel it is
/// [`row_major`]. For a K-major operand the columns are K; for an MN-major one (a row-major `K x N` B) they
/// are N.
pub fn column_panels(rows: u32, cols: u32, panel_cols: u32) -> Result<LinearLayout, LayoutError> {
    let (r, c, pc) = (log2("row", rows)?, log2("col", cols)?, log2("panel col", panel_cols)?);
    if pc > c {
        return Err(LayoutError::BadInput(format!("panels of {panel_cols} columns do not fit {cols} columns")));
    }
    let bases = (0..pc)
        .map(|i| vec![0, 1 << i])
        .chain((0..r).map(|i| vec![1 << i, 0]))
        .chain((pc..c).map(|i| vec![0, 1 << i]))
        .collect();
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

    /// Every coordinate of a few panel layouts against the formula written out.
    #[test]
    fn column_panels_place_panel_after_panel() {
        for (rows, cols, pc) in [(4u32, 16u32, 4u32), (32, 128, 64), (128, 64, 64), (8, 8, 2)] {
            let l = column_panels(rows, cols, pc).unwrap();
            assert!(l.is_bijective());
            for row in 0..rows {
                for col in 0..cols {
                    let offset = (col / pc) * rows * pc + row * pc + col % pc;
                    assert_eq!(l.apply(&[offset]).unwrap(), vec![row, col], "{rows}x{cols} pc={pc}");
                }
            }
        }
        // One panel is row-major; panels wider than the tile, or not a power of two, are errors.
        assert_eq!(column_panels(16, 64, 64).unwrap(), row_major(16, 64).unwrap());
        assert!(column_panels(16, 32, 64).is_err());
        assert!(column_panels(16, 32, 24).is_err());
        // A 32x128 f16 tile in two 128-byte panels: (row 1, col 64) is the first row of the second panel's
        // second row: 32 * 64 + 64.
        assert_eq!(column_panels(32, 128, 64).unwrap().find_input(&[1, 64]), Some(vec![32 * 64 + 64]));
    }

    /// The shared tile's attribute `#swizzle<3, 3, 3, #linear<...>>` prints and parses back to itself.
    #[test]
    fn swizzled_panels_round_trip_as_text() {
        use crate::attr::Layout;
        use crate::swizzle_mode::SwizzleMode;
        let swizzle = SwizzleMode::B128.element_swizzle(2).unwrap();
        let layout = Layout::Swizzled { swizzle, base: Box::new(Layout::Linear(column_panels(32, 128, 64).unwrap())) };
        let text = layout.to_string();
        assert!(text.starts_with("#swizzle<3, 3, 3, #linear<{offset = [[0, 1], "), "{text}");
        assert_eq!(Layout::parse(&text).unwrap(), layout);
    }
}
