//! Gaussian elimination over F2 on bit vectors packed into `u64`.
//!
//! A linear layout is a matrix over F2; everything that asks "is it injective",
//! "which input produces this output" or "what is the inverse" reduces to
//! row-reducing its basis vectors. This module does that once, remembering for
//! every pivot row which input basis vectors it combines, so a preimage can be
//! read off directly.

/// Row-echelon form of a list of F2 vectors.
///
/// Each pivot row is `(vector, combination)` where `combination` has bit `i` set
/// when input vector `i` takes part; rows are kept sorted by their leading
/// (highest) bit, descending, and no two rows share a leading bit.
#[derive(Debug, Clone, Default)]
pub(crate) struct Echelon {
    rows: Vec<(u64, u64)>,
}

fn leading_bit(v: u64) -> u64 {
    debug_assert_ne!(v, 0);
    1 << (63 - v.leading_zeros())
}

impl Echelon {
    /// Row-reduces `vectors` (input `i` is `vectors[i]`, at most 64 of them).
    pub(crate) fn new(vectors: &[u64]) -> Self {
        debug_assert!(vectors.len() <= 64);
        let mut echelon = Echelon::default();
        for (i, &v) in vectors.iter().enumerate() {
            let (rest, combination) = echelon.reduce(v, 1 << i);
            if rest != 0 {
                let lead = leading_bit(rest);
                let at = echelon.rows.partition_point(|&(row, _)| leading_bit(row) > lead);
                echelon.rows.insert(at, (rest, combination));
            }
        }
        echelon
    }

    /// Reduces `v` by the pivot rows, XOR-ing into `combination` the inputs used.
    fn reduce(&self, mut v: u64, mut combination: u64) -> (u64, u64) {
        for &(row, row_combination) in &self.rows {
            if v & leading_bit(row) != 0 {
                v ^= row;
                combination ^= row_combination;
            }
        }
        (v, combination)
    }

    /// The rank of the input vectors.
    pub(crate) fn rank(&self) -> usize {
        self.rows.len()
    }

    /// A set of inputs (bit `i` = input `i`) whose XOR is `target`, if one exists.
    ///
    /// The map `target -> preimage` is itself F2-linear, which is what lets
    /// `invert` and `invert_and_compose` build a layout from per-bit preimages.
    pub(crate) fn preimage(&self, target: u64) -> Option<u64> {
        match self.reduce(target, 0) {
            (0, combination) => Some(combination),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_preimage() {
        let e = Echelon::new(&[0b011, 0b110, 0b101]);
        assert_eq!(e.rank(), 2);
        let c = e.preimage(0b101).unwrap();
        let xor = [0b011u64, 0b110, 0b101]
            .iter()
            .enumerate()
            .filter(|(i, _)| c >> i & 1 == 1)
            .fold(0, |acc, (_, v)| acc ^ v);
        assert_eq!(xor, 0b101);
        assert_eq!(e.preimage(0b111), None);
    }
}
