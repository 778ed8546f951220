//! `LinearLayout`: a linear map over F2 from named hardware dimensions to named
//! tile dimensions.
//!
//! This is the algebra of Triton's *linear layouts* (Zhou et al., "Linear
//! Layouts: Robust Code Generation of Efficient Tensor Computation Using F2",
//! 2024; `triton/Tools/LinearLayout.h`). An input dimension (`register`,
//! `lane`, `warp`, `block`, or `offset` for memory) of size `2^k` is given by
//! `k` basis vectors, the images of its bits; the image of any input is the XOR
//! of the bases of its set bits:
//!
//! ```text
//! L(register = 0b101, lane = 0b10) = B_reg[0] ^ B_reg[2] ^ B_lane[1]
//! ```
//!
//! Borrowed from Triton: the input/output dimension vocabulary, the meaning of
//! `compose` (`a.compose(b)` is `b ∘ a`), `invert_and_compose`, the product
//! (`operator*`, "inner" dims are the low bits) and `reshape_*`/`flatten_*`
//! (the first dimension is the most minor). Differences: every fallible
//! operation returns a [`LayoutError`] instead of asserting, and equality is
//! taken after dropping size-1 dimensions ([`LinearLayout::normalized`]).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Mul;

use crate::error::LayoutError;
use crate::f2::Echelon;

/// Most bits a layout may have on either side (the flat encoding is a `u64`).
const MAX_TOTAL_BITS: u32 = 63;
/// Most bits of a single dimension (coordinates are `u32`).
const MAX_DIM_BITS: u32 = 31;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct InDim {
    name: String,
    /// `bases[i][j]`: component `j` (in output-dimension order) of the image of bit `i`.
    bases: Vec<Vec<u32>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct OutDim {
    name: String,
    log2: u32,
}

/// A linear map over F2 from named input dimensions to named output dimensions.
///
/// See the [module documentation](self). Sizes are powers of two; the first
/// dimension on each side is the most minor in [`flatten_ins`](Self::flatten_ins)
/// and friends.
#[derive(Debug, Clone)]
pub struct LinearLayout {
    ins: Vec<InDim>,
    outs: Vec<OutDim>,
}

fn log2_exact(dim: &str, size: u64) -> Result<u32, LayoutError> {
    if size == 0 || !size.is_power_of_two() {
        return Err(LayoutError::NotPowerOfTwo { dim: dim.to_string(), size });
    }
    let log2 = size.trailing_zeros();
    if log2 > MAX_DIM_BITS {
        return Err(LayoutError::TooLarge(format!("dimension `{dim}` has {size} elements")));
    }
    Ok(log2)
}

fn check_unique<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), LayoutError> {
    let mut seen: Vec<&str> = Vec::new();
    for n in names {
        if seen.contains(&n) {
            return Err(LayoutError::DuplicateDim(n.to_string()));
        }
        seen.push(n);
    }
    Ok(())
}

impl LinearLayout {
    /// Builds a layout from its bases and output-dimension sizes.
    ///
    /// `ins` lists each input dimension with one basis vector per bit (so an
    /// input dimension with `k` bases has size `2^k`); every basis vector has one
    /// component per output dimension, in the order of `outs`. `outs` gives each
    /// output dimension's size, which must be a power of two and bound every
    /// component. The layout need not be injective or surjective.
    ///
    /// ```
    /// use tilec_layout::LinearLayout;
    /// // ldmatrix.x1: value bit -> col 1, lane bits -> col 2, 4, row 1, 2, 4.
    /// let l = LinearLayout::new(
    ///     [("register", vec![vec![0, 1]]),
    ///      ("lane", vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]])],
    ///     [("row", 8), ("col", 8)],
    /// ).unwrap();
    /// assert_eq!(l.apply(&[1, 5]).unwrap(), vec![1, 3]);
    /// ```
    pub fn new<I, O, S, T>(ins: I, outs: O) -> Result<Self, LayoutError>
    where
        I: IntoIterator<Item = (S, Vec<Vec<u32>>)>,
        O: IntoIterator<Item = (T, u32)>,
        S: Into<String>,
        T: Into<String>,
    {
        let outs = outs
            .into_iter()
            .map(|(name, size)| {
                let name = name.into();
                let log2 = log2_exact(&name, u64::from(size))?;
                Ok(OutDim { name, log2 })
            })
            .collect::<Result<Vec<_>, LayoutError>>()?;
        let ins: Vec<InDim> =
            ins.into_iter().map(|(name, bases)| InDim { name: name.into(), bases }).collect();
        let layout = LinearLayout { ins, outs };
        layout.validate()?;
        Ok(layout)
    }

    fn validate(&self) -> Result<(), LayoutError> {
        check_unique(self.ins.iter().map(|d| d.name.as_str()))?;
        check_unique(self.outs.iter().map(|d| d.name.as_str()))?;
        for d in &self.ins {
            if d.bases.len() > MAX_DIM_BITS as usize {
                return Err(LayoutError::TooLarge(format!("input `{}` has {} bits", d.name, d.bases.len())));
            }
            for (index, basis) in d.bases.iter().enumerate() {
                if basis.len() != self.outs.len() {
                    return Err(LayoutError::BasisArity {
                        in_dim: d.name.clone(),
                        index,
                        expected: self.outs.len(),
                        found: basis.len(),
                    });
                }
                for (value, out) in basis.iter().zip(&self.outs) {
                    if u64::from(*value) >= 1u64 << out.log2 {
                        return Err(LayoutError::BasisOutOfRange {
                            in_dim: d.name.clone(),
                            index,
                            out_dim: out.name.clone(),
                            value: *value,
                            size: 1 << out.log2,
                        });
                    }
                }
            }
        }
        let in_bits: u32 = self.ins.iter().map(|d| d.bases.len() as u32).sum();
        let out_bits: u32 = self.outs.iter().map(|d| d.log2).sum();
        if in_bits > MAX_TOTAL_BITS || out_bits > MAX_TOTAL_BITS {
            return Err(LayoutError::TooLarge(format!("{in_bits} input bits, {out_bits} output bits")));
        }
        Ok(())
    }

    /// The layout with no dimensions: the unit of the product.
    pub fn empty() -> Self {
        LinearLayout { ins: Vec::new(), outs: Vec::new() }
    }

    /// `L(x) = x` from `in_dim` to `out_dim`, both of `size` (Triton's `identity1D`).
    pub fn identity_1d(size: u32, in_dim: &str, out_dim: &str) -> Result<Self, LayoutError> {
        Self::strided_1d(size, 1, in_dim, out_dim)
    }

    /// `L(x) = x * stride` into an output of `size * stride` (Triton's `strided1D`).
    pub fn strided_1d(size: u32, stride: u32, in_dim: &str, out_dim: &str) -> Result<Self, LayoutError> {
        let k = log2_exact(in_dim, u64::from(size))?;
        let s = log2_exact("stride", u64::from(stride))?;
        let out_size = 1u64 << (k + s);
        log2_exact(out_dim, out_size)?;
        let bases = (0..k).map(|i| vec![1u32 << (i + s)]).collect();
        Self::new([(in_dim, bases)], [(out_dim, out_size as u32)])
    }

    /// `L(x) = 0` for `x` in `0..size`, into an output of size 1 (Triton's `zeros1D`):
    /// a broadcast dimension.
    pub fn zeros_1d(size: u32, in_dim: &str, out_dim: &str) -> Result<Self, LayoutError> {
        let k = log2_exact(in_dim, u64::from(size))?;
        Self::new([(in_dim, vec![vec![0]; k as usize])], [(out_dim, 1)])
    }

    // ---- shape -------------------------------------------------------------

    /// Input dimensions with their sizes, in order (first = most minor).
    pub fn in_dims(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.ins.iter().map(|d| (d.name.as_str(), 1u32 << d.bases.len()))
    }

    /// Output dimensions with their sizes, in order (first = most minor).
    pub fn out_dims(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.outs.iter().map(|d| (d.name.as_str(), 1u32 << d.log2))
    }

    /// Names of the input dimensions, in order.
    pub fn in_dim_names(&self) -> Vec<&str> {
        self.ins.iter().map(|d| d.name.as_str()).collect()
    }

    /// Names of the output dimensions, in order.
    pub fn out_dim_names(&self) -> Vec<&str> {
        self.outs.iter().map(|d| d.name.as_str()).collect()
    }

    /// Size of an input dimension, `None` if there is none of that name.
    pub fn in_dim_size(&self, name: &str) -> Option<u32> {
        self.ins.iter().find(|d| d.name == name).map(|d| 1 << d.bases.len())
    }

    /// Size of an output dimension, `None` if there is none of that name.
    pub fn out_dim_size(&self, name: &str) -> Option<u32> {
        self.outs.iter().find(|d| d.name == name).map(|d| 1 << d.log2)
    }

    /// Position of an input dimension.
    pub fn in_dim_index(&self, name: &str) -> Option<usize> {
        self.ins.iter().position(|d| d.name == name)
    }

    /// Position of an output dimension.
    pub fn out_dim_index(&self, name: &str) -> Option<usize> {
        self.outs.iter().position(|d| d.name == name)
    }

    /// The basis vectors of an input dimension: entry `i` is the image of `1 << i`,
    /// one component per output dimension.
    pub fn bases(&self, in_dim: &str) -> Option<&[Vec<u32>]> {
        self.ins.iter().find(|d| d.name == in_dim).map(|d| d.bases.as_slice())
    }

    /// Total number of input bits (log2 of the number of hardware locations).
    pub fn total_in_bits(&self) -> u32 {
        self.ins.iter().map(|d| d.bases.len() as u32).sum()
    }

    /// Total number of output bits (log2 of the number of tile elements).
    pub fn total_out_bits(&self) -> u32 {
        self.outs.iter().map(|d| d.log2).sum()
    }

    /// Number of hardware locations (product of input sizes).
    pub fn total_in_size(&self) -> u64 {
        1 << self.total_in_bits()
    }

    /// Number of tile elements (product of output sizes).
    pub fn total_out_size(&self) -> u64 {
        1 << self.total_out_bits()
    }

    // ---- flat encoding ------------------------------------------------------

    fn out_offsets(&self) -> Vec<u32> {
        self.outs
            .iter()
            .scan(0, |acc, d| {
                let here = *acc;
                *acc += d.log2;
                Some(here)
            })
            .collect()
    }

    fn encode_out(&self, values: &[u32]) -> u64 {
        values
            .iter()
            .zip(self.out_offsets())
            .fold(0, |acc, (v, off)| acc | (u64::from(*v) << off))
    }

    fn decode_out(&self, flat: u64) -> Vec<u32> {
        self.outs
            .iter()
            .zip(self.out_offsets())
            .map(|(d, off)| ((flat >> off) & ((1u64 << d.log2) - 1)) as u32)
            .collect()
    }

    /// The images of all input bits, flattened (first input dimension's bits first).
    fn flat_bases(&self) -> Vec<u64> {
        self.ins.iter().flat_map(|d| d.bases.iter().map(|b| self.encode_out(b))).collect()
    }

    /// Builds a layout from flat bases; `ins`/`outs` give (name, log2).
    fn from_flat(ins: Vec<(String, u32)>, outs: Vec<(String, u32)>, flat: &[u64]) -> Self {
        let outs: Vec<OutDim> = outs.into_iter().map(|(name, log2)| OutDim { name, log2 }).collect();
        let shell = LinearLayout { ins: Vec::new(), outs };
        let mut next = flat.iter();
        let ins = ins
            .into_iter()
            .map(|(name, log2)| InDim {
                name,
                bases: (0..log2).map(|_| shell.decode_out(*next.next().unwrap_or(&0))).collect(),
            })
            .collect();
        LinearLayout { ins, outs: shell.outs }
    }

    fn in_spec(&self) -> Vec<(String, u32)> {
        self.ins.iter().map(|d| (d.name.clone(), d.bases.len() as u32)).collect()
    }

    fn out_spec(&self) -> Vec<(String, u32)> {
        self.outs.iter().map(|d| (d.name.clone(), d.log2)).collect()
    }

    fn split_in(&self, flat: u64) -> Vec<u32> {
        let mut shift = 0;
        self.ins
            .iter()
            .map(|d| {
                let k = d.bases.len() as u32;
                let v = ((flat >> shift) & ((1u64 << k) - 1)) as u32;
                shift += k;
                v
            })
            .collect()
    }

    // ---- evaluation ---------------------------------------------------------

    /// Applies the layout: `input[i]` is the value of input dimension `i` (in
    /// [`in_dims`](Self::in_dims) order); returns one value per output dimension.
    pub fn apply(&self, input: &[u32]) -> Result<Vec<u32>, LayoutError> {
        if input.len() != self.ins.len() {
            return Err(LayoutError::BadInput(format!(
                "{} values for {} input dimensions",
                input.len(),
                self.ins.len()
            )));
        }
        let mut out = vec![0u32; self.outs.len()];
        for (d, &x) in self.ins.iter().zip(input) {
            if u64::from(x) >= 1u64 << d.bases.len() {
                return Err(LayoutError::BadInput(format!("{} = {x} outside its size {}", d.name, 1u64 << d.bases.len())));
            }
            for (bit, basis) in d.bases.iter().enumerate() {
                if x >> bit & 1 == 1 {
                    out.iter_mut().zip(basis).for_each(|(o, b)| *o ^= b);
                }
            }
        }
        Ok(out)
    }

    /// Applies the layout to named inputs; input dimensions not mentioned are 0.
    /// Returns `(output name, value)` pairs in output order.
    pub fn apply_named(&self, input: &[(&str, u32)]) -> Result<Vec<(String, u32)>, LayoutError> {
        let mut positional = vec![0u32; self.ins.len()];
        for (name, v) in input {
            let i = self.in_dim_index(name).ok_or_else(|| LayoutError::UnknownDim(name.to_string()))?;
            positional[i] = *v;
        }
        let out = self.apply(&positional)?;
        Ok(self.outs.iter().map(|d| d.name.clone()).zip(out).collect())
    }

    /// Inverse lookup: an input (one value per input dimension) that maps to
    /// `output`, or `None` if no input does. When the layout is not injective
    /// the input returned has its free bits (see
    /// [`free_variable_masks`](Self::free_variable_masks)) chosen
    /// deterministically; for a bijection it is the unique preimage.
    pub fn find_input(&self, output: &[u32]) -> Option<Vec<u32>> {
        if output.len() != self.outs.len()
            || output.iter().zip(&self.outs).any(|(v, d)| u64::from(*v) >> d.log2 != 0)
        {
            return None;
        }
        let echelon = Echelon::new(&self.flat_bases());
        echelon.preimage(self.encode_out(output)).map(|flat| self.split_in(flat))
    }

    // ---- properties ---------------------------------------------------------

    /// Rank of the layout as a matrix over F2.
    pub fn rank(&self) -> u32 {
        Echelon::new(&self.flat_bases()).rank() as u32
    }

    /// Distinct inputs map to distinct outputs (no broadcast).
    pub fn is_injective(&self) -> bool {
        self.rank() == self.total_in_bits()
    }

    /// Every output is reached.
    pub fn is_surjective(&self) -> bool {
        self.rank() == self.total_out_bits()
    }

    /// Injective and surjective: [`invert`](Self::invert) succeeds.
    pub fn is_bijective(&self) -> bool {
        self.is_injective() && self.is_surjective()
    }

    /// For each input dimension, the mask of its bits whose basis vector is a
    /// combination of earlier bases (they can change without changing the
    /// output; Triton's `getFreeVariableMasks`). All zero iff injective.
    pub fn free_variable_masks(&self) -> Vec<(String, u32)> {
        let flat = self.flat_bases();
        let mut masks = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        let mut rank = 0;
        let mut i = 0;
        for d in &self.ins {
            let mut mask = 0u32;
            for bit in 0..d.bases.len() {
                seen.push(flat[i]);
                i += 1;
                let r = Echelon::new(&seen).rank();
                if r == rank {
                    mask |= 1 << bit;
                }
                rank = r;
            }
            masks.push((d.name.clone(), mask));
        }
        masks
    }

    // ---- algebra ------------------------------------------------------------

    /// `outer ∘ self`: first this layout, then `outer` (Triton's `compose`).
    ///
    /// Requires the output dimensions of `self` to be exactly the input
    /// dimensions of `outer` (any order), each no larger than `outer` accepts.
    pub fn compose(&self, outer: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        if self.outs.len() != outer.ins.len() {
            return Err(LayoutError::Incompatible(format!(
                "compose: outputs {:?} vs inputs {:?}",
                self.out_dim_names(),
                outer.in_dim_names()
            )));
        }
        let mut order = Vec::with_capacity(self.outs.len());
        for d in &self.outs {
            let j = outer.in_dim_index(&d.name).ok_or_else(|| {
                LayoutError::Incompatible(format!("compose: `{}` is not an input of the outer layout", d.name))
            })?;
            if d.log2 > outer.ins[j].bases.len() as u32 {
                return Err(LayoutError::Incompatible(format!(
                    "compose: `{}` has size {} but the outer layout accepts {}",
                    d.name,
                    1u64 << d.log2,
                    1u64 << outer.ins[j].bases.len()
                )));
            }
            order.push(j);
        }
        let ins = self
            .ins
            .iter()
            .map(|d| {
                let bases = d
                    .bases
                    .iter()
                    .map(|b| {
                        let mut x = vec![0u32; outer.ins.len()];
                        for (v, &j) in b.iter().zip(&order) {
                            x[j] = *v;
                        }
                        outer.apply(&x)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(InDim { name: d.name.clone(), bases })
            })
            .collect::<Result<Vec<_>, LayoutError>>()?;
        Ok(LinearLayout { ins, outs: outer.outs.clone() })
    }

    /// The inverse map, from this layout's outputs to its inputs.
    pub fn invert(&self) -> Result<LinearLayout, LayoutError> {
        if !self.is_bijective() {
            return Err(LayoutError::NotInvertible(format!(
                "{} input bits, {} output bits, rank {}",
                self.total_in_bits(),
                self.total_out_bits(),
                self.rank()
            )));
        }
        let echelon = Echelon::new(&self.flat_bases());
        let flat = (0..self.total_out_bits())
            .map(|k| echelon.preimage(1 << k).ok_or_else(|| LayoutError::NotInvertible("rank".into())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_flat(self.out_spec(), self.in_spec(), &flat))
    }

    /// `outer⁻¹ ∘ self` (Triton's `invertAndCompose`): maps this layout's inputs
    /// to inputs of `outer` holding the same output, so `outer(result(x)) ==
    /// self(x)` for every `x`. `outer` may be non-injective (a preimage is chosen
    /// linearly); every output of `self` must be reachable by `outer`.
    ///
    /// The typical use: registers → tile (`self`) against shared memory offset →
    /// tile (`outer`) gives registers → shared memory offset.
    pub fn invert_and_compose(&self, outer: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        let mut order = Vec::with_capacity(self.outs.len());
        for d in &self.outs {
            let j = outer.out_dim_index(&d.name).ok_or_else(|| {
                LayoutError::Incompatible(format!("invert_and_compose: `{}` is not an output of the outer layout", d.name))
            })?;
            order.push(j);
        }
        if outer.outs.len() != self.outs.len() {
            return Err(LayoutError::Incompatible(format!(
                "invert_and_compose: outputs {:?} vs {:?}",
                self.out_dim_names(),
                outer.out_dim_names()
            )));
        }
        let echelon = Echelon::new(&outer.flat_bases());
        let mut flat = Vec::new();
        for d in &self.ins {
            for b in &d.bases {
                let mut y = vec![0u32; outer.outs.len()];
                for (v, &j) in b.iter().zip(&order) {
                    y[j] = *v;
                }
                let reachable = y.iter().zip(&outer.outs).all(|(v, o)| u64::from(*v) >> o.log2 == 0);
                let pre = reachable
                    .then(|| echelon.preimage(outer.encode_out(&y)))
                    .flatten()
                    .ok_or_else(|| LayoutError::NoPreimage(format!("{:?} = {:?}", outer.out_dim_names(), y)))?;
                flat.push(pre);
            }
        }
        Ok(Self::from_flat(self.in_spec(), outer.in_spec(), &flat))
    }

    /// The product of two layouts (Triton's `operator*`): input and output
    /// dimensions are merged by name; where both have an input dimension,
    /// `self`'s bits come first (low), `outer`'s after; where both have an output
    /// dimension, `outer`'s values are shifted above `self`'s (the output sizes
    /// multiply). With disjoint dimensions this is the direct sum. It is the
    /// tiling operation: `register_tile * lane_tile * warp_tile`.
    pub fn product(&self, outer: &LinearLayout) -> Result<LinearLayout, LayoutError> {
        let mut outs: Vec<OutDim> = self.outs.clone();
        for d in &outer.outs {
            match outs.iter_mut().find(|o| o.name == d.name) {
                Some(o) => o.log2 += d.log2,
                None => outs.push(d.clone()),
            }
        }
        let place = |src: &LinearLayout, shift_by_inner: bool, basis: &[u32]| -> Vec<u32> {
            outs.iter()
                .map(|o| match src.out_dim_index(&o.name) {
                    Some(j) => {
                        let shift = if shift_by_inner { self.out_dim_size(&o.name).unwrap_or(1).trailing_zeros() } else { 0 };
                        basis[j] << shift
                    }
                    None => 0,
                })
                .collect()
        };
        let mut ins: Vec<InDim> = self
            .ins
            .iter()
            .map(|d| InDim { name: d.name.clone(), bases: d.bases.iter().map(|b| place(self, false, b)).collect() })
            .collect();
        for d in &outer.ins {
            let extra: Vec<Vec<u32>> = d.bases.iter().map(|b| place(outer, true, b)).collect();
            match ins.iter_mut().find(|i| i.name == d.name) {
                Some(i) => i.bases.extend(extra),
                None => ins.push(InDim { name: d.name.clone(), bases: extra }),
            }
        }
        let result = LinearLayout { ins, outs };
        result.validate()?;
        Ok(result)
    }

    /// Regroups the input bits into new dimensions (first = most minor); the
    /// total size must stay the same (Triton's `reshapeIns`).
    pub fn reshape_ins(&self, new_ins: &[(&str, u32)]) -> Result<LinearLayout, LayoutError> {
        let spec = new_ins
            .iter()
            .map(|(n, s)| Ok((n.to_string(), log2_exact(n, u64::from(*s))?)))
            .collect::<Result<Vec<_>, LayoutError>>()?;
        check_unique(spec.iter().map(|(n, _)| n.as_str()))?;
        let bits: u32 = spec.iter().map(|(_, k)| k).sum();
        if bits != self.total_in_bits() {
            return Err(LayoutError::Incompatible(format!(
                "reshape_ins: {} input elements into {}",
                self.total_in_size(),
                1u64 << bits
            )));
        }
        Ok(Self::from_flat(spec, self.out_spec(), &self.flat_bases()))
    }

    /// Regroups the output bits into new dimensions (first = most minor); the
    /// total size must stay the same (Triton's `reshapeOuts`).
    pub fn reshape_outs(&self, new_outs: &[(&str, u32)]) -> Result<LinearLayout, LayoutError> {
        let spec = new_outs
            .iter()
            .map(|(n, s)| Ok((n.to_string(), log2_exact(n, u64::from(*s))?)))
            .collect::<Result<Vec<_>, LayoutError>>()?;
        check_unique(spec.iter().map(|(n, _)| n.as_str()))?;
        let bits: u32 = spec.iter().map(|(_, k)| k).sum();
        if bits != self.total_out_bits() {
            return Err(LayoutError::Incompatible(format!(
                "reshape_outs: {} output elements into {}",
                self.total_out_size(),
                1u64 << bits
            )));
        }
        Ok(Self::from_flat(self.in_spec(), spec, &self.flat_bases()))
    }

    /// All input dimensions merged into one, named after the first.
    pub fn flatten_ins(&self) -> LinearLayout {
        match self.ins.first() {
            None => self.clone(),
            Some(first) => Self::from_flat(
                vec![(first.name.clone(), self.total_in_bits())],
                self.out_spec(),
                &self.flat_bases(),
            ),
        }
    }

    /// All output dimensions merged into one, named after the first.
    pub fn flatten_outs(&self) -> LinearLayout {
        match self.outs.first() {
            None => self.clone(),
            Some(first) => Self::from_flat(
                self.in_spec(),
                vec![(first.name.clone(), self.total_out_bits())],
                &self.flat_bases(),
            ),
        }
    }

    /// Reorders the input dimensions (changes only what reshape/flatten see).
    pub fn transpose_ins(&self, order: &[&str]) -> Result<LinearLayout, LayoutError> {
        let perm = permutation(order, &self.in_dim_names())?;
        Ok(LinearLayout { ins: perm.iter().map(|&i| self.ins[i].clone()).collect(), outs: self.outs.clone() })
    }

    /// Reorders the output dimensions (and the components of every basis).
    pub fn transpose_outs(&self, order: &[&str]) -> Result<LinearLayout, LayoutError> {
        let perm = permutation(order, &self.out_dim_names())?;
        let ins = self
            .ins
            .iter()
            .map(|d| InDim { name: d.name.clone(), bases: d.bases.iter().map(|b| perm.iter().map(|&j| b[j]).collect()).collect() })
            .collect();
        Ok(LinearLayout { ins, outs: perm.iter().map(|&j| self.outs[j].clone()).collect() })
    }

    /// The layout with the roles of the output dimensions `a` and `b` exchanged, their order kept: what was
    /// `a` is now called `b` and the other way round. For `row` and `col` this is the layout of the transposed
    /// tile: the hardware index that held element `(r, c)` now holds element `(c, r)` of the transpose.
    pub fn exchange_outs(&self, a: &str, b: &str) -> Result<LinearLayout, LayoutError> {
        let order = self.out_dim_names().iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let (ia, ib) = match (self.out_dim_index(a), self.out_dim_index(b)) {
            (Some(ia), Some(ib)) if ia != ib => (ia, ib),
            (None, _) => return Err(LayoutError::UnknownDim(a.to_string())),
            (_, None) => return Err(LayoutError::UnknownDim(b.to_string())),
            _ => return Err(LayoutError::DuplicateDim(a.to_string())),
        };
        let mut renamed = self.clone();
        renamed.outs[ia].name = b.to_string();
        renamed.outs[ib].name = a.to_string();
        let order: Vec<&str> = order.iter().map(String::as_str).collect();
        renamed.transpose_outs(&order)
    }

    /// Restriction to the named dimensions (Triton's `sublayout`): input
    /// dimensions not listed are fixed to 0, output dimensions not listed are
    /// dropped; sizes and order are kept. Unknown names are an error.
    pub fn sublayout(&self, in_dims: &[&str], out_dims: &[&str]) -> Result<LinearLayout, LayoutError> {
        for n in in_dims {
            self.in_dim_index(n).ok_or_else(|| LayoutError::UnknownDim(n.to_string()))?;
        }
        for n in out_dims {
            self.out_dim_index(n).ok_or_else(|| LayoutError::UnknownDim(n.to_string()))?;
        }
        let keep_out: Vec<usize> = (0..self.outs.len()).filter(|&j| out_dims.contains(&self.outs[j].name.as_str())).collect();
        let ins = self
            .ins
            .iter()
            .filter(|d| in_dims.contains(&d.name.as_str()))
            .map(|d| InDim { name: d.name.clone(), bases: d.bases.iter().map(|b| keep_out.iter().map(|&j| b[j]).collect()).collect() })
            .collect();
        Ok(LinearLayout { ins, outs: keep_out.iter().map(|&j| self.outs[j].clone()).collect() })
    }

    /// The same map without size-1 dimensions; equality and hashing compare this.
    pub fn normalized(&self) -> LinearLayout {
        let keep_out: Vec<usize> = (0..self.outs.len()).filter(|&j| self.outs[j].log2 > 0).collect();
        LinearLayout {
            ins: self
                .ins
                .iter()
                .filter(|d| !d.bases.is_empty())
                .map(|d| InDim { name: d.name.clone(), bases: d.bases.iter().map(|b| keep_out.iter().map(|&j| b[j]).collect()).collect() })
                .collect(),
            outs: keep_out.iter().map(|&j| self.outs[j].clone()).collect(),
        }
    }
}

fn permutation(order: &[&str], names: &[&str]) -> Result<Vec<usize>, LayoutError> {
    check_unique(order.iter().copied())?;
    if order.len() != names.len() {
        return Err(LayoutError::Incompatible(format!("{order:?} is not a permutation of {names:?}")));
    }
    order
        .iter()
        .map(|n| names.iter().position(|m| m == n).ok_or_else(|| LayoutError::UnknownDim(n.to_string())))
        .collect()
}

impl PartialEq for LinearLayout {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.normalized(), other.normalized());
        a.ins == b.ins && a.outs == b.outs
    }
}

impl Eq for LinearLayout {}

impl Hash for LinearLayout {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let n = self.normalized();
        n.ins.hash(state);
        n.outs.hash(state);
    }
}

/// `a * b` is [`LinearLayout::product`].
///
/// # Panics
/// When the product has more than 63 input or output bits; use
/// [`LinearLayout::product`] to get that as an error.
impl Mul for &LinearLayout {
    type Output = LinearLayout;
    // An operator cannot return an error; the panic is documented above, and library code uses
    // `LinearLayout::product`.
    #[allow(clippy::panic)]
    fn mul(self, outer: &LinearLayout) -> LinearLayout {
        match self.product(outer) {
            Ok(l) => l,
            Err(e) => panic!("LinearLayout product: {e}"),
        }
    }
}

impl Mul for LinearLayout {
    type Output = LinearLayout;
    fn mul(self, outer: LinearLayout) -> LinearLayout {
        &self * &outer
    }
}

/// Prints the body of the `#linear<...>` attribute:
/// `{register = [[0, 1]], lane = [[0, 2], [1, 0]]} -> {row = 2, col = 4}`.
impl fmt::Display for LinearLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, d) in self.ins.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{} = [", d.name)?;
            for (k, b) in d.bases.iter().enumerate() {
                if k > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "[")?;
                for (j, v) in b.iter().enumerate() {
                    if j > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")?;
            }
            write!(f, "]")?;
        }
        write!(f, "}} -> {{")?;
        for (j, d) in self.outs.iter().enumerate() {
            if j > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{} = {}", d.name, 1u64 << d.log2)?;
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(ins: Vec<(&str, Vec<Vec<u32>>)>, outs: Vec<(&str, u32)>) -> LinearLayout {
        LinearLayout::new(ins, outs).unwrap()
    }

    #[test]
    fn exchange_outs_is_the_transposed_tile() {
        // ldmatrix.x1 (value bit -> col 1, lanes -> col 2, 4, row 1, 2, 4) on an 8x16 tile (row, col sizes differ).
        let a = l(
            vec![("register", vec![vec![0, 1], vec![0, 8]]), ("lane", vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]])],
            vec![("row", 8), ("col", 16)],
        );
        let t = a.exchange_outs("row", "col").unwrap();
        assert_eq!(t.out_dim_names(), vec!["row", "col"]);
        assert_eq!((t.out_dim_size("row"), t.out_dim_size("col")), (Some(16), Some(8)));
        // Every (register, lane) holds element (c, r) of the transpose where it held (r, c).
        for reg in 0..4 {
            for lane in 0..32 {
                let rc = a.apply(&[reg, lane]).unwrap();
                assert_eq!(t.apply(&[reg, lane]).unwrap(), vec![rc[1], rc[0]]);
            }
        }
        assert_eq!(t.exchange_outs("col", "row").unwrap(), a);
        assert!(matches!(a.exchange_outs("row", "row"), Err(LayoutError::DuplicateDim(_))));
        assert!(matches!(a.exchange_outs("row", "k"), Err(LayoutError::UnknownDim(_))));
    }

    #[test]
    fn product_matches_triton_examples() {
        let id4 = LinearLayout::identity_1d(4, "i", "o").unwrap();
        let id2 = LinearLayout::identity_1d(2, "i", "o").unwrap();
        let z2 = LinearLayout::zeros_1d(2, "i", "o").unwrap();
        assert_eq!(&id4 * &id2, LinearLayout::identity_1d(8, "i", "o").unwrap());
        // identity1D(4) * zeros1D(2): x % 4.
        let p = &id4 * &z2;
        assert_eq!(p.apply(&[5]).unwrap(), vec![1]);
        // zeros1D(2) * identity1D(4): x / 2.
        let q = &z2 * &id4;
        assert_eq!(q.apply(&[5]).unwrap(), vec![2]);
        // disjoint outs: (x % 4, x / 4).
        let r = &id4 * &LinearLayout::identity_1d(8, "i", "o2").unwrap();
        assert_eq!(r.apply(&[13]).unwrap(), vec![1, 3]);
    }

    #[test]
    fn invert_and_compose_and_find_input() {
        let a = l(vec![("x", vec![vec![1], vec![3]])], vec![("y", 4)]);
        let inv = a.invert().unwrap();
        assert_eq!(a.compose(&inv).unwrap(), LinearLayout::identity_1d(4, "x", "x").unwrap());
        assert_eq!(a.find_input(&[2]), Some(vec![3]));
        let c = a.invert_and_compose(&a).unwrap();
        assert_eq!(c, LinearLayout::identity_1d(4, "x", "x").unwrap());
    }

    #[test]
    fn rejects_bad_bases() {
        assert!(matches!(
            LinearLayout::new([("x", vec![vec![4]])], [("y", 4)]),
            Err(LayoutError::BasisOutOfRange { .. })
        ));
        assert!(matches!(LinearLayout::new([("x", vec![vec![1, 0]])], [("y", 4)]), Err(LayoutError::BasisArity { .. })));
        assert!(matches!(LinearLayout::new([("x", vec![])], [("y", 3)]), Err(LayoutError::NotPowerOfTwo { .. })));
    }

    #[test]
    fn free_variables() {
        let a = l(vec![("x", vec![vec![1], vec![1], vec![0]])], vec![("y", 2)]);
        assert_eq!(a.free_variable_masks(), vec![("x".to_string(), 0b110)]);
        assert!(!a.is_injective());
        assert!(a.is_surjective());
    }
}
