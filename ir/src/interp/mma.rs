//! The arithmetic of `tile.mma`: D = A (MxK) · B (KxN) + C (MxN) as the tensor cores compute it.
//!
//! For every element of D the accumulation starts from C and adds the products in ascending `k`. The loop
//! nest is i-k-j (a row of B at a time) so the inner loop runs over contiguous rows; the order of the
//! additions into any one element is still `k = 0, 1, ..., K-1`.

use crate::data::round_to;
use crate::types::ScalarType;

/// How the products are accumulated, chosen from the accumulator and input types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Accumulation {
    /// Exact products, every partial sum rounded to f32 (f16/bf16/tf32/fp8 inputs).
    F32,
    /// Exact products, every partial sum rounded to f16 (f16 inputs, f16 accumulator).
    F16,
    /// Exact integer dot products, wrapped to i32 (8- and 4-bit integer inputs).
    I32,
    /// f64 products and sums (unfused).
    F64,
}

impl Accumulation {
    /// The accumulation for inputs `ab` and accumulator `acc`, `None` for a pair the hardware lacks.
    pub(super) fn of(ab: ScalarType, acc: ScalarType) -> Option<Accumulation> {
        use ScalarType::*;
        match (ab, acc) {
            (F16 | BF16 | TF32 | F8E4M3 | F8E5M2, F32) => Some(Accumulation::F32),
            (F16, F16) => Some(Accumulation::F16),
            (I8 | U8 | I4 | U4, I32) => Some(Accumulation::I32),
            (F64, F64) => Some(Accumulation::F64),
            _ => None,
        }
    }
}

/// Computes D. `a` is MxK, `b` KxN, `c` MxN, row-major; `a_elem`/`b_elem` are the input types (A's and
/// B's values are first rounded to them, which is the identity for values that came through the IR).
#[allow(clippy::too_many_arguments)]
pub(super) fn mma(
    acc: Accumulation,
    a: &[f64],
    a_elem: ScalarType,
    b: &[f64],
    b_elem: ScalarType,
    c: &[f64],
    (m, n, k): (usize, usize, usize),
) -> Vec<f64> {
    let a: Vec<f64> = a.iter().map(|&x| round_to(a_elem, x)).collect();
    let b: Vec<f64> = b.iter().map(|&x| round_to(b_elem, x)).collect();
    let mut d: Vec<f64> = c.to_vec();
    if n == 0 {
        return d;
    }
    match acc {
        Accumulation::F32 => {
            // Hold the accumulator in f32: `f32(acc + a*b)` with the product and the sum formed in f64 is the
            // correctly rounded f32 of the exact sum (the product of two values of at most 11 significant
            // bits is exact in f64, and f64 is wide enough for the double rounding to be innocuous).
            let mut d32: Vec<f32> = d.iter().map(|&x| x as f32).collect();
            for (i, drow) in d32.chunks_exact_mut(n).enumerate().take(m) {
                for kk in 0..k {
                    accumulate_row_f32(drow, a[i * k + kk], &b[kk * n..(kk + 1) * n]);
                }
            }
            d = d32.into_iter().map(f64::from).collect();
        }
        Accumulation::F16 => {
            for (i, drow) in d.chunks_exact_mut(n).enumerate().take(m) {
                for kk in 0..k {
                    let av = a[i * k + kk];
                    for (dv, &bv) in drow.iter_mut().zip(&b[kk * n..(kk + 1) * n]) {
                        *dv = round_to(ScalarType::F16, *dv + av * bv);
                    }
                }
            }
        }
        Accumulation::I32 => {
            // |a*b| <= 2^14 and K is bounded by memory, so i64 sums are exact; wrapping once at the end is
            // the same as wrapping every partial sum.
            let a: Vec<i64> = a.iter().map(|&x| x as i64).collect();
            let b: Vec<i64> = b.iter().map(|&x| x as i64).collect();
            let mut d64: Vec<i64> = d.iter().map(|&x| x as i64).collect();
            for (i, drow) in d64.chunks_exact_mut(n).enumerate().take(m) {
                for kk in 0..k {
                    let av = a[i * k + kk];
                    for (dv, &bv) in drow.iter_mut().zip(&b[kk * n..(kk + 1) * n]) {
                        *dv = dv.wrapping_add(av.wrapping_mul(bv));
                    }
                }
            }
            d = d64.into_iter().map(|x| f64::from(x as i32)).collect();
        }
        Accumulation::F64 => {
            for (i, drow) in d.chunks_exact_mut(n).enumerate().take(m) {
                for kk in 0..k {
                    let av = a[i * k + kk];
                    for (dv, &bv) in drow.iter_mut().zip(&b[kk * n..(kk + 1) * n]) {
                        *dv += av * bv;
                    }
                }
            }
        }
    }
    d
}

/// `d[j] = f32(d[j] + a * b[j])` for every `j`, eight at a time: the interpreter's hot loop, written so
/// that it stays fast in unoptimised (debug) builds too, where iterator adaptors are not inlined.
fn accumulate_row_f32(d: &mut [f32], a: f64, b: &[f64]) {
    let n = d.len().min(b.len());
    let split = n - n % 8;
    let (d8, d_rest) = d[..n].split_at_mut(split);
    let (b8, b_rest) = b[..n].split_at(split);
    let mut j = 0;
    while j < split {
        let (d, b): (&mut [f32], &[f64]) = (&mut d8[j..j + 8], &b8[j..j + 8]);
        d[0] = (f64::from(d[0]) + a * b[0]) as f32;
        d[1] = (f64::from(d[1]) + a * b[1]) as f32;
        d[2] = (f64::from(d[2]) + a * b[2]) as f32;
        d[3] = (f64::from(d[3]) + a * b[3]) as f32;
        d[4] = (f64::from(d[4]) + a * b[4]) as f32;
        d[5] = (f64::from(d[5]) + a * b[5]) as f32;
        d[6] = (f64::from(d[6]) + a * b[6]) as f32;
        d[7] = (f64::from(d[7]) + a * b[7]) as f32;
        j += 8;
    }
    for (dv, &bv) in d_rest.iter_mut().zip(b_rest) {
        *dv = (f64::from(*dv) + a * bv) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_accumulation_rounds_every_partial_sum() {
        // 1 + 16 * 2^-24: each step's sum rounds back to 1 (ties to even) in f32.
        let a = vec![2f64.powi(-12); 16];
        let b = vec![2f64.powi(-12); 16];
        let d = mma(Accumulation::F32, &a, ScalarType::F16, &b, ScalarType::F16, &[1.0], (1, 1, 16));
        assert_eq!(d, vec![1.0]);
        // The same products with C = 0 sum exactly.
        let d = mma(Accumulation::F32, &a, ScalarType::F16, &b, ScalarType::F16, &[0.0], (1, 1, 16));
        assert_eq!(d, vec![16.0 * 2f64.powi(-24)]);
    }

    #[test]
    fn the_unrolled_row_update_matches_the_plain_loop() {
        for n in [0, 1, 7, 8, 9, 16, 23] {
            let b: Vec<f64> = (0..n).map(|j| f64::from(j as u32) * 0.37 - 1.0).collect();
            let mut d: Vec<f32> = (0..n).map(|j| 1.0 / (j as f32 + 1.0)).collect();
            let want: Vec<f32> = d.iter().zip(&b).map(|(&x, &y)| (f64::from(x) + 0.1 * y) as f32).collect();
            accumulate_row_f32(&mut d, 0.1, &b);
            assert_eq!(d, want, "n = {n}");
        }
    }

    #[test]
    fn integer_accumulation_wraps_to_i32() {
        let d = mma(Accumulation::I32, &[127.0], ScalarType::I8, &[127.0], ScalarType::I8, &[2147483647.0], (1, 1, 1));
        assert_eq!(d, vec![f64::from(2147483647i32.wrapping_add(127 * 127))]);
    }
}
