//! Slice layouts: the distributed layout of a thin register tile (`Mx1`, `1xN`) derived from the 2-D parent
//! it is reduced from or broadcast to (Triton's `SliceLayout`).
//!
//! The parent is a [`LinearLayout`] `(register, lane, warp) -> (row, col)`. Its slice along a set of axes is
//! the same map with those output components dropped (their extent becomes 1): a `lane` or `warp` base that
//! only moved along a sliced axis becomes zero (those threads hold the same element: a broadcast), and a
//! `register` base that becomes zero is dropped, so a thread holds each element of the slice once. The slice
//! register of parent register `r` is then [`Slice::slice_register`]: the bits of `r` that survive, packed.
//!
//! Only additive parents are sliced (every base moves along one axis, as in every layout layout assignment
//! builds): a base that moved along a sliced axis *and* another would make the slice's register order
//! disagree with the parent's.
//!
//! [`crop`] generalizes the slice to any smaller power-of-two extent: the parent's coordinates are taken
//! modulo the new extents (a linear map over F2: the high bits of each coordinate masked off), so a base
//! that only moved past the new extent becomes zero. That is how a register tile smaller than a hardware
//! fragment (`1x4xf32` against the 16x8 accumulator, `4x64xf32`) gets a layout: the fragment's layout with
//! the threads that would hold elements outside the tile replicated (Triton's blocked layouts with
//! broadcast bits when a tile has fewer elements than the threads), and a slice is the crop to extent 1.

use tilec_ir::layout::LinearLayout;

/// The slice of a parent layout and how parent registers map to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub layout: LinearLayout,
    /// For each parent `register` bit, the slice `register` bit it becomes (`None`: it moved only along the
    /// sliced axes, or not at all, and is dropped).
    pub register_map: Vec<Option<u32>>,
}

const OUTS: [&str; 2] = ["row", "col"];

/// Whether one base of a `row, col` layout moves along `axes` only, along none of them, or along both kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseMotion {
    /// Zero: the dimension is replicated along this bit.
    None,
    /// Only along the sliced (reduced) axes.
    Sliced,
    /// Only along the kept axes.
    Kept,
}

/// How a base `b` (one component per output of `layout`) moves relative to `axes`.
pub fn motion(layout: &LinearLayout, base: &[u32], axes: &[usize]) -> Result<BaseMotion, String> {
    let (mut sliced, mut kept) = (false, false);
    for (i, (name, _)) in layout.out_dims().enumerate() {
        let axis = OUTS.iter().position(|o| *o == name).ok_or_else(|| format!("output '{name}' is not row or col"))?;
        if base.get(i).copied().unwrap_or(0) != 0 {
            if axes.contains(&axis) {
                sliced = true;
            } else {
                kept = true;
            }
        }
    }
    match (sliced, kept) {
        (false, false) => Ok(BaseMotion::None),
        (true, false) => Ok(BaseMotion::Sliced),
        (false, true) => Ok(BaseMotion::Kept),
        (true, true) => Err(format!("a base {base:?} moves along a sliced axis and a kept one; such layouts are not sliced yet")),
    }
}

/// The motion of every base of `dim` (`register`, `lane` or `warp`).
pub fn motions(layout: &LinearLayout, dim: &str, axes: &[usize]) -> Result<Vec<BaseMotion>, String> {
    layout.bases(dim).unwrap_or_default().iter().map(|b| motion(layout, b, axes)).collect()
}

/// Slices `parent` along `axes` (0: rows, 1: cols).
pub fn slice(parent: &LinearLayout, axes: &[usize]) -> Result<Slice, String> {
    let out_index: Vec<usize> = parent
        .out_dims()
        .map(|(name, _)| OUTS.iter().position(|o| *o == name).ok_or_else(|| format!("output '{name}' is not row or col")))
        .collect::<Result<_, _>>()?;
    let drop = |b: &[u32]| -> Vec<u32> { b.iter().zip(&out_index).map(|(&x, a)| if axes.contains(a) { 0 } else { x }).collect() };
    let mut register_map = Vec::new();
    let mut ins: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
    for name in parent.in_dim_names() {
        let bases = parent.bases(name).unwrap_or_default();
        let mut kept = Vec::new();
        for b in bases {
            let m = motion(parent, b, axes)?;
            if name == "register" {
                if m == BaseMotion::Kept {
                    register_map.push(Some(kept.len() as u32));
                    kept.push(drop(b));
                } else {
                    register_map.push(None);
                }
            } else {
                kept.push(drop(b));
            }
        }
        ins.push((name.to_string(), kept));
    }
    let outs: Vec<(String, u32)> =
        parent.out_dims().zip(&out_index).map(|((name, size), a)| (name.to_string(), if axes.contains(a) { 1 } else { size })).collect();
    let layout = LinearLayout::new(ins, outs).map_err(|e| format!("slicing a layout: {e}"))?;
    Ok(Slice { layout, register_map })
}

/// Crops `parent` to `rows x cols` (powers of two, at most the parent's extents): every coordinate is taken
/// modulo its new extent, a `register` base that becomes zero is dropped (as in [`slice`]) and a `lane` or
/// `warp` base that becomes zero makes those threads hold copies.
pub fn crop(parent: &LinearLayout, rows: u32, cols: u32) -> Result<Slice, String> {
    let extents: Vec<u32> = parent
        .out_dims()
        .map(|(name, _)| match name {
            "row" => Ok(rows),
            "col" => Ok(cols),
            other => Err(format!("output '{other}' is not row or col")),
        })
        .collect::<Result<_, _>>()?;
    for ((name, size), &e) in parent.out_dims().zip(&extents) {
        if e == 0 || !e.is_power_of_two() || e > size {
            return Err(format!("cannot crop the {name} extent {size} to {e}"));
        }
    }
    let mask = |b: &[u32]| -> Vec<u32> { b.iter().zip(&extents).map(|(&x, &e)| x & (e - 1)).collect() };
    let mut register_map = Vec::new();
    let mut ins: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
    for name in parent.in_dim_names() {
        let mut kept: Vec<Vec<u32>> = Vec::new();
        for b in parent.bases(name).unwrap_or_default() {
            let m = mask(b);
            if name == "register" {
                if m.iter().all(|&x| x == 0) {
                    register_map.push(None);
                    continue;
                }
                // The kept register bases must stay independent (no two registers holding one element).
                if kept.iter().any(|k| k.iter().zip(&m).any(|(&a, &c)| a & c != 0)) {
                    return Err(format!("cropping to {rows}x{cols} leaves register bases {kept:?} and {m:?} overlapping"));
                }
                register_map.push(Some(kept.len() as u32));
            }
            kept.push(m);
        }
        ins.push((name.to_string(), kept));
    }
    let outs: Vec<(String, u32)> = parent.out_dims().zip(&extents).map(|((name, _), &e)| (name.to_string(), e)).collect();
    let layout = LinearLayout::new(ins, outs).map_err(|e| format!("cropping a layout: {e}"))?;
    Ok(Slice { layout, register_map })
}

impl Slice {
    /// The slice register that holds parent register `r`'s element (its row, if the cols were sliced).
    pub fn slice_register(&self, r: u32) -> u32 {
        self.register_map.iter().enumerate().filter(|(b, _)| r >> b & 1 == 1).fold(0, |s, (_, m)| s | m.map_or(0, |k| 1 << k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_ir::layout::hardware_layout;

    /// The m16n8 f32 accumulator: register bit 0 → col 1, bit 1 → row 8; lanes 0,1 → cols 2,4, lanes 2..5 → rows
    /// 1,2,4. Its row slice (cols dropped) holds rows 8r + lane/4: lanes 0..3 share a row.
    #[test]
    fn accumulator_row_slice() {
        let c = &hardware_layout("mma.m16n8k16.f32.c").unwrap().layout;
        let s = slice(c, &[1]).unwrap();
        assert_eq!(s.layout.out_dim_size("row"), Some(16));
        assert_eq!(s.layout.out_dim_size("col"), Some(1));
        assert_eq!(s.layout.in_dim_size("register"), Some(2));
        assert_eq!(s.register_map, vec![None, Some(0)]);
        // Lane 5 (group 1, thread 1 in the group), register 1: row 8 + 1.
        assert_eq!(s.layout.apply(&[1, 5]).unwrap(), vec![9, 0]);
        assert_eq!(s.layout.apply(&[1, 4]).unwrap(), vec![9, 0]);
        assert_eq!(s.slice_register(3), 1);
        assert_eq!(s.slice_register(1), 0);
    }

    /// The accumulator cropped to 1x4: register bit 0 → col 1, lane bit 0 → col 2; lane bit 1 (col 4) and the
    /// row lanes hold copies, register bit 1 (row 8) is dropped.
    #[test]
    fn accumulator_cropped_to_a_quarter_row() {
        let c = &hardware_layout("mma.m16n8k16.f32.c").unwrap().layout;
        let s = crop(c, 1, 4).unwrap();
        assert_eq!(s.register_map, vec![Some(0), None]);
        assert_eq!(s.layout.in_dim_size("register"), Some(2));
        // Lane l, register r holds col 2 (l % 2) + r: lanes 0, 2, 4, ... hold cols 0, 1; lanes 1, 3, ... 2, 3.
        for lane in 0..32u32 {
            for r in 0..2u32 {
                assert_eq!(s.layout.apply(&[r, lane]).unwrap(), vec![0, 2 * (lane % 2) + r], "lane {lane} register {r}");
            }
        }
        // A crop to the full extents is the layout itself; a slice is a crop to extent 1.
        assert_eq!(crop(c, 16, 8).unwrap().layout, *c);
        assert_eq!(crop(c, 1, 8).unwrap(), slice(c, &[0]).unwrap());
        assert_eq!(crop(c, 16, 1).unwrap(), slice(c, &[1]).unwrap());
        assert!(crop(c, 32, 8).is_err());
        assert!(crop(c, 3, 8).is_err());
    }

    #[test]
    fn column_slice_keeps_the_column_bits() {
        let c = &hardware_layout("mma.m16n8k16.f32.c").unwrap().layout;
        let s = slice(c, &[0]).unwrap();
        assert_eq!(s.layout.out_dim_size("col"), Some(8));
        assert_eq!(s.register_map, vec![Some(0), None]);
        assert_eq!(s.layout.apply(&[1, 3]).unwrap(), vec![0, 7]);
        assert_eq!(s.layout.apply(&[1, 31]).unwrap(), vec![0, 7]);
    }
}
