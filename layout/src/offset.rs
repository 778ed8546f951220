//! The one definition of a memory layout's address map: logical coordinate -> element offset.
//!
//! [`Layout::offset_with`] computes the offset of an index through an [`OffsetArith`]: on numbers
//! ([`Checked`], which is what [`Layout::element_offset`] is, and what the warp simulator and the
//! bank-conflict analysis use), or as IR (each backend implements [`OffsetArith`] on its builder, so the
//! arithmetic it emits is this function's, operation for operation and in this order).
//!
//! - `#row_major`: Horner, `((i0 * d1 + i1) * d2 + i2) …` (no leading `0 + i0`; rank 0 is the constant 0).
//! - `#col_major` of rank 2: `i1 * d0 + i0` (other ranks are row-major).
//! - `#swizzle<B, M, S, base>`: CuTe's XOR swizzle of the base offset `o`,
//!   `o ^ ((o & (((1 << B) - 1) << (M + S))) >> S)`; the identity when `B = 0` (nothing emitted).
//! - `#linear` of a rank-2 tile of static shape whose one input is `offset` and outputs `row`, `col` (a
//!   bijection, such as [`crate::column_panels`]): the inverse map, coordinate bits to offset bits. Each run
//!   of coordinate bits that lands on a run of offset bits is one `(i & mask) * 2^k` or `(i & mask) >> k`;
//!   the runs' contributions are XOR-ed, row's then col's, lowest bits first (disjoint bits: XOR is the sum).
//!   Other `#linear` layouts (hardware ones), `#hw` and dynamic extents: `None`.

use crate::attr::Layout;

/// One extent of a tile axis: known when compiling, or a value of the arithmetic (a run-time extent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent<V> {
    /// Known when compiling.
    Static(u64),
    /// A run-time value (a kernel parameter, in a backend).
    Dynamic(V),
}

/// The integer operations an element offset is made of. Additions and multiplications never wrap (the
/// backends emit them `nsw`); `shr` is a logical shift.
pub trait OffsetArith {
    /// A number, or an IR value.
    type Value: Clone;
    /// What an operation can fail with (a builder error, an overflow).
    type Error;
    /// The constant `n`.
    fn constant(&mut self, n: u64) -> Self::Value;
    /// `a + b`.
    fn add(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    /// `a * b`.
    fn mul(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    /// `a & b`.
    fn and(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    /// `a >> b` (logical).
    fn shr(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    /// `a ^ b`.
    fn xor(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
}

/// Numbers, with additions and multiplications checked for `u64` overflow.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checked;

/// A [`Checked`] operation overflowed `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

impl OffsetArith for Checked {
    type Value = u64;
    type Error = Overflow;
    fn constant(&mut self, n: u64) -> u64 {
        n
    }
    fn add(&mut self, a: u64, b: u64) -> Result<u64, Overflow> {
        a.checked_add(b).ok_or(Overflow)
    }
    fn mul(&mut self, a: u64, b: u64) -> Result<u64, Overflow> {
        a.checked_mul(b).ok_or(Overflow)
    }
    fn and(&mut self, a: u64, b: u64) -> Result<u64, Overflow> {
        Ok(a & b)
    }
    fn shr(&mut self, a: u64, b: u64) -> Result<u64, Overflow> {
        u32::try_from(b).ok().and_then(|b| a.checked_shr(b)).ok_or(Overflow)
    }
    fn xor(&mut self, a: u64, b: u64) -> Result<u64, Overflow> {
        Ok(a ^ b)
    }
}

impl Layout {
    /// The element offset of `index` in a tile of `extents` stored with this layout, computed through
    /// `arith` (the [module documentation](self) gives the formulas and their operation order). `Ok(None)`
    /// for an index of the wrong rank or a layout that is not a memory layout.
    pub fn offset_with<A: OffsetArith>(
        &self,
        arith: &mut A,
        extents: &[Extent<A::Value>],
        index: &[A::Value],
    ) -> Result<Option<A::Value>, A::Error> {
        if index.len() != extents.len() {
            return Ok(None);
        }
        let extent = |arith: &mut A, e: &Extent<A::Value>| match e {
            Extent::Static(n) => arith.constant(*n),
            Extent::Dynamic(v) => v.clone(),
        };
        match self {
            Layout::ColMajor if index.len() == 2 => {
                let rows = extent(arith, &extents[0]);
                let scaled = arith.mul(index[1].clone(), rows)?;
                arith.add(scaled, index[0].clone()).map(Some)
            }
            Layout::RowMajor | Layout::ColMajor => {
                let Some((first, rest)) = index.split_first() else {
                    return Ok(Some(arith.constant(0)));
                };
                let mut offset = first.clone();
                for (i, e) in rest.iter().zip(&extents[1..]) {
                    let d = extent(arith, e);
                    let scaled = arith.mul(offset, d)?;
                    offset = arith.add(scaled, i.clone())?;
                }
                Ok(Some(offset))
            }
            Layout::Swizzled { swizzle, base } => {
                let Some(o) = base.offset_with(arith, extents, index)? else {
                    return Ok(None);
                };
                if swizzle.bits == 0 {
                    return Ok(Some(o));
                }
                let mask = arith.constant(((1u64 << swizzle.bits) - 1) << (swizzle.base + swizzle.shift));
                let high = arith.and(o.clone(), mask)?;
                let shift = arith.constant(u64::from(swizzle.shift));
                let moved = arith.shr(high, shift)?;
                arith.xor(o, moved).map(Some)
            }
            Layout::Linear(l) => {
                let Some(runs) = linear_offset_runs(l, extents) else { return Ok(None) };
                let mut offset: Option<A::Value> = None;
                for run in runs {
                    let mask = arith.constant(run.mask);
                    let mut part = arith.and(index[run.axis].clone(), mask)?;
                    if run.to > run.from {
                        let scale = arith.constant(1u64 << (run.to - run.from));
                        part = arith.mul(part, scale)?;
                    } else if run.from > run.to {
                        let shift = arith.constant(u64::from(run.from - run.to));
                        part = arith.shr(part, shift)?;
                    }
                    offset = Some(match offset {
                        None => part,
                        Some(o) => arith.xor(o, part)?,
                    });
                }
                Ok(Some(offset.unwrap_or_else(|| arith.constant(0))))
            }
            Layout::Hardware(_) => Ok(None),
        }
    }

    /// For a `#linear` memory layout (see [`Layout::offset_with`]), how many elements consecutive along its
    /// contiguous axis ([`Layout::contiguous_axis`]) are consecutive in memory: `2^n` for the `n` lowest
    /// offset bits that are that axis's lowest bits in order. `None` for other layouts.
    pub fn linear_contiguous_run(&self) -> Option<u64> {
        let Layout::Linear(l) = self else { return None };
        let (axis, _) = linear_memory_dims(l)?;
        let bases = l.bases("offset")?;
        let n = bases
            .iter()
            .enumerate()
            .take_while(|(i, b)| b.iter().enumerate().all(|(d, &v)| v == if d == axis { 1 << i } else { 0 }))
            .count();
        Some(1 << n)
    }

    /// Whether the layout is a memory layout [`Layout::offset_with`] computes offsets of: `#row_major`,
    /// `#col_major` and swizzles of them.
    pub fn is_memory_layout(&self) -> bool {
        match self {
            Layout::RowMajor | Layout::ColMajor => true,
            Layout::Swizzled { base, .. } => base.is_memory_layout(),
            Layout::Linear(l) => linear_memory_dims(l).is_some(),
            Layout::Hardware(_) => false,
        }
    }

    /// The axis along which consecutive offsets run in a tile of rank `rank` (where an access of several
    /// consecutive elements goes): the last axis, the first of a rank-2 `#col_major` tile, a swizzle's
    /// base's (a swizzle keeps runs within one `2^M`-element chunk contiguous). `None` for rank 0 or a
    /// layout that is not a memory layout.
    pub fn contiguous_axis(&self, rank: usize) -> Option<usize> {
        match self {
            _ if rank == 0 => None,
            Layout::ColMajor if rank == 2 => Some(0),
            Layout::RowMajor | Layout::ColMajor => Some(rank - 1),
            Layout::Swizzled { base, .. } => base.contiguous_axis(rank),
            Layout::Linear(l) if rank == 2 => linear_memory_dims(l).map(|(axis, _)| axis),
            Layout::Linear(_) | Layout::Hardware(_) => None,
        }
    }

    fn has_swizzle(&self) -> bool {
        matches!(self, Layout::Swizzled { .. })
    }
}

/// A run of coordinate bits of `axis` (`mask`, starting at bit `from`) that the inverse of a `#linear` memory
/// layout places at offset bits starting at `to`.
struct OffsetRun {
    axis: usize,
    mask: u64,
    from: u32,
    to: u32,
}

/// For a `#linear` memory layout (input `offset` only, outputs `row` and `col`, a bijection): the axis of
/// offset bit 0 (the contiguous axis) and the inverse layout.
fn linear_memory_dims(l: &crate::LinearLayout) -> Option<(usize, crate::LinearLayout)> {
    let ins: Vec<_> = l.in_dims().collect();
    let outs = l.out_dim_names();
    if ins.len() != 1 || ins[0].0 != "offset" || outs != ["row", "col"] || !l.is_bijective() {
        return None;
    }
    let first = l.bases("offset")?.first()?;
    let axis = if first[1] == 1 && first[0] == 0 { 1 } else { 0 };
    Some((axis, l.invert().ok()?))
}

/// The runs of [`OffsetRun`] of a `#linear` memory layout of a tile of static `extents` equal to its output
/// sizes, lowest coordinate bit first, row's then col's; `None` when it is not such a layout.
fn linear_offset_runs<V>(l: &crate::LinearLayout, extents: &[Extent<V>]) -> Option<Vec<OffsetRun>> {
    let (_, inverse) = linear_memory_dims(l)?;
    if extents.len() != 2 {
        return None;
    }
    let mut runs = Vec::new();
    for (axis, name) in ["row", "col"].into_iter().enumerate() {
        let size = l.out_dim_size(name)?;
        match extents[axis] {
            Extent::Static(n) if n == u64::from(size) => {}
            _ => return None,
        }
        for (bit, basis) in inverse.bases(name)?.iter().enumerate() {
            let &[to_value] = basis.as_slice() else { return None };
            if !to_value.is_power_of_two() {
                // Not a permutation of bits: one run per bit would need an XOR per set bit; not needed yet.
                return None;
            }
            let (from, to) = (bit as u32, to_value.trailing_zeros());
            match runs.last_mut() {
                Some(OffsetRun { axis: a, mask, from: f, to: t })
                    if *a == axis && i64::from(from) - i64::from(*f) == i64::from(to) - i64::from(*t) && from > 0 && *mask & (1 << (from - 1)) != 0 =>
                {
                    *mask |= 1 << from;
                }
                _ => runs.push(OffsetRun { axis, mask: 1 << from, from, to }),
            }
        }
    }
    Some(runs)
}

/// [`Layout::element_offset`]: [`Layout::offset_with`] on [`Checked`] numbers. A swizzle works on 32-bit
/// offsets: it changes only bits below 31 and keeps the others, so a base offset past `u32` (rejected) is
/// exactly a final offset past `u32`.
pub(crate) fn element_offset(layout: &Layout, shape: &[u64], index: &[i64]) -> Option<u64> {
    let index = index.iter().map(|&i| u64::try_from(i).ok()).collect::<Option<Vec<u64>>>()?;
    let extents: Vec<Extent<u64>> = shape.iter().map(|&n| Extent::Static(n)).collect();
    let o = layout.offset_with(&mut Checked, &extents, &index).ok()??;
    (!layout.has_swizzle() || o <= u64::from(u32::MAX)).then_some(o)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::swizzle::Swizzle;

    /// The definition before [`Layout::offset_with`] (wrapping `u64` arithmetic; the sizes below never wrap).
    fn reference(layout: &Layout, shape: &[u64], index: &[i64]) -> Option<u64> {
        if index.len() != shape.len() || index.iter().any(|&i| i < 0) {
            return None;
        }
        let row_major = || index.iter().zip(shape).fold(0u64, |acc, (&i, &n)| acc * n + i as u64);
        match layout {
            Layout::RowMajor => Some(row_major()),
            Layout::ColMajor if shape.len() == 2 => Some(index[1] as u64 * shape[0] + index[0] as u64),
            Layout::ColMajor => Some(row_major()),
            Layout::Swizzled { swizzle, base } => {
                let o = u32::try_from(reference(base, shape, index)?).ok()?;
                Some(u64::from(swizzle.apply(o)))
            }
            Layout::Linear(_) | Layout::Hardware(_) => None,
        }
    }

    fn layouts() -> impl Strategy<Value = Layout> {
        let leaf = prop_oneof![Just(Layout::RowMajor), Just(Layout::ColMajor), Just(Layout::Hardware("x".into()))];
        leaf.prop_recursive(3, 4, 1, |inner| {
            (0u32..5, 0u32..8, 1u32..8, inner).prop_filter_map("swizzle fits 31 bits", |(b, m, s, base)| {
                Some(Layout::Swizzled { swizzle: Swizzle::new(b, m, s).ok()?, base: Box::new(base) })
            })
        })
    }

    fn shape_and_index() -> impl Strategy<Value = (Vec<u64>, Vec<i64>)> {
        prop::collection::vec(1u64..5000, 0..4).prop_flat_map(|shape| {
            // Coordinates mostly inside; sometimes negative, past the extent, or past u32 (scaled).
            let index = shape.iter().map(|&n| -1i64..=n as i64).collect::<Vec<_>>();
            (Just(shape), index, prop_oneof![3 => Just(1i64), 1 => Just(1_000_000i64)])
                .prop_map(|(shape, index, scale)| (shape, index.into_iter().map(|i| i * scale).collect()))
        })
    }

    proptest! {
        #[test]
        fn numbers_match_the_reference(layout in layouts(), (shape, index) in shape_and_index()) {
            prop_assert_eq!(layout.element_offset(&shape, &index), reference(&layout, &shape, &index));
        }
    }

    /// Column panels (`offset = (col / pc) * rows * pc + row * pc + col % pc`, written out here) and their
    /// swizzle, through the runs of the `#linear` case.
    #[test]
    fn column_panel_offsets() {
        for (rows, cols, pc) in [(32u32, 128u32, 64u32), (64, 64, 32), (16, 256, 16), (8, 64, 64)] {
            let linear = Layout::Linear(crate::memory::column_panels(rows, cols, pc).unwrap());
            let swizzled = Layout::Swizzled { swizzle: Swizzle::new(3, 3, 3).unwrap(), base: Box::new(linear.clone()) };
            for row in 0..rows {
                for col in 0..cols {
                    let want = u64::from((col / pc) * rows * pc + row * pc + col % pc);
                    let shape = [u64::from(rows), u64::from(cols)];
                    let index = [i64::from(row), i64::from(col)];
                    assert_eq!(linear.element_offset(&shape, &index), Some(want));
                    assert_eq!(swizzled.element_offset(&shape, &index), Some(u64::from(Swizzle::new(3, 3, 3).unwrap().apply(want as u32))));
                }
            }
            assert_eq!(linear.contiguous_axis(2), Some(1));
            assert_eq!(linear.linear_contiguous_run(), Some(u64::from(pc)));
            assert!(linear.is_memory_layout() && swizzled.is_memory_layout());
            // A shape other than the layout's is not this layout's.
            assert_eq!(linear.element_offset(&[u64::from(rows) * 2, u64::from(cols)], &[0, 0]), None);
        }
        // A hardware fragment layout is not a memory layout.
        let hw = Layout::Linear(crate::hardware_layout("mma.m16n8k16.f16.a").unwrap().layout.clone());
        assert!(!hw.is_memory_layout());
    }

    #[test]
    fn rank_zero_and_examples() {
        let sw = Layout::parse("#swizzle<3, 3, 3, #row_major>").unwrap();
        assert_eq!(sw.element_offset(&[8, 64], &[1, 16]), Some(u64::from(Swizzle::new(3, 3, 3).unwrap().apply(64 + 16))));
        assert_eq!(Layout::RowMajor.element_offset(&[], &[]), Some(0));
        assert_eq!(Layout::ColMajor.element_offset(&[4, 8], &[2, 5]), Some(5 * 4 + 2));
        assert_eq!(Layout::RowMajor.element_offset(&[4, 8], &[2]), None);
        assert_eq!(Layout::RowMajor.element_offset(&[u64::MAX, u64::MAX], &[1, 1]), None, "overflow is None, not a wrap");
        assert_eq!(sw.contiguous_axis(2), Some(1));
        assert_eq!(Layout::parse("#swizzle<3, 3, 3, #col_major>").unwrap().contiguous_axis(2), Some(0));
    }
}
