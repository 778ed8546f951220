//! Checking tilec's C against cuBLAS's C, computed from the same A, B and initial C.
//!
//! Integer GEMMs (int8 in, int32 out) must agree exactly: both sums are exact in int32 (|a|, |b| <= 8, so
//! |C| <= 64 K, far below 2^31 for any K the bench runs).
//!
//! Floating-point results differ by rounding: both add K products in f32 but in different orders, and the
//! tensor cores align and add with truncation rather than rounding (so a step's error is below 2u, u = 2^-24,
//! not u). For data without a systematic sign (ours: uniform in [-1, 1)) the error of a K-term dot product grows
//! like sqrt(K) times the step error times `sum |a_ik b_kj|` (Higham and Mary's probabilistic bound,
//! `lambda * sqrt(K) * u * sum|x|`, fails with probability at most `2 exp(-lambda^2 / 2)`); `sum |a_ik b_kj|`
//! is bounded by `|a_i| |b_j|` (row i of A, column j of B, Euclidean norms: Cauchy-Schwarz), which costs
//! O(MK + KN) to compute where the sum itself would cost a GEMM. The rule, per element:
//!
//! ```text
//! |ours - cublas| <= 16 sqrt(K) 2^-23 (|alpha| |a_i| |b_j| + |beta| |c0_ij|) + 2 ulp_C(|cublas|)
//! ```
//!
//! that is lambda = 8 for each side (failure probability below 1e-13 per element and side for a correct
//! kernel), plus two units in the last place of C's type for the final rounding of each side to C (one ulp per
//! side; for f16/bf16 output this term dominates). It still catches real bugs: at K = 4096 the tolerance of
//! an f32 element is about 0.17 (|a_i| |b_j| is about K / 3), while one k-step of 32 products left out moves
//! it by about 1.9 (eleven times the tolerance) and a single product by 0.25 on average.

use crate::bench::data::{ulp, value};
use crate::bench::spec::{GemmSpec, MatrixLayout, Role};

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// Elements compared (all of C).
    pub compared: usize,
    /// Elements outside the tolerance.
    pub failures: usize,
    /// The largest `|ours - cublas|`.
    pub max_abs_err: f64,
    /// The largest `|ours - cublas| / tolerance` (0 for an exact match; above 1 fails).
    pub worst_fraction: f64,
    /// The first element outside the tolerance.
    pub first_failure: Option<Mismatch>,
}

/// One element outside the tolerance.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub row: usize,
    pub col: usize,
    pub ours: f64,
    pub cublas: f64,
    pub tolerance: f64,
}

impl CheckReport {
    pub fn ok(&self) -> bool {
        self.failures == 0
    }

    /// `ok (max abs err 1.2e-4, 0.03 of the tolerance)` or `FAILED: ...`.
    pub fn summary(&self, integer: bool) -> String {
        if self.ok() {
            if integer {
                format!("ok (exact, {} elements)", self.compared)
            } else {
                format!("ok (max abs err {:.1e}, {:.2} of the tolerance)", self.max_abs_err, self.worst_fraction)
            }
        } else {
            let mut text = format!("FAILED ({} of {} elements outside the tolerance", self.failures, self.compared);
            if let Some(m) = &self.first_failure {
                text.push_str(&format!(
                    "; first at ({}, {}): tilec {} vs cuBLAS {}, tolerance {:.1e}",
                    m.row, m.col, m.ours, m.cublas, m.tolerance
                ));
            }
            text.push(')');
            text
        }
    }
}

/// Row and column of flat position `p` of a `rows x cols` matrix stored in `layout`.
fn coords(layout: MatrixLayout, rows: usize, cols: usize, p: usize) -> (usize, usize) {
    match layout {
        MatrixLayout::RowMajor => (p / cols.max(1), p % cols.max(1)),
        MatrixLayout::ColMajor => (p % rows.max(1), p / rows.max(1)),
    }
}

/// Euclidean norms of A's rows (`by_row`) or of B's columns.
fn norms(gemm: &GemmSpec, role: Role, bytes: &[u8], by_row: bool) -> Vec<f64> {
    let op = gemm.operand(role);
    let (rows, cols) = gemm.shape(role);
    let (rows, cols) = (rows as usize, cols as usize);
    let mut sums = vec![0.0f64; if by_row { rows } else { cols }];
    for p in 0..rows * cols {
        let (r, c) = coords(op.layout, rows, cols, p);
        let x = value(op.elem, bytes, p);
        if let Some(s) = sums.get_mut(if by_row { r } else { c }) {
            *s += x * x;
        }
    }
    sums.into_iter().map(f64::sqrt).collect()
}

/// Compares `ours` with `cublas` (both C after one run from `c0`), by the rule of this module.
pub fn compare(gemm: &GemmSpec, a: &[u8], b: &[u8], c0: &[u8], ours: &[u8], cublas: &[u8]) -> CheckReport {
    let c = gemm.c;
    let (rows, cols) = (gemm.m as usize, gemm.n as usize);
    let n = rows * cols;
    let mut report = CheckReport { compared: n, failures: 0, max_abs_err: 0.0, worst_fraction: 0.0, first_failure: None };
    let exact = c.elem.is_integer();
    let (row_norms, col_norms) = if exact {
        (Vec::new(), Vec::new())
    } else {
        (norms(gemm, Role::A, a, true), norms(gemm, Role::B, b, false))
    };
    let alpha = f64::from(gemm.alpha.unwrap_or(1.0)).abs();
    let beta = f64::from(gemm.beta.unwrap_or(0.0)).abs();
    let step = 16.0 * (gemm.k as f64).sqrt() * 2f64.powi(-23);
    for p in 0..n {
        let (i, j) = coords(c.layout, rows, cols, p);
        let (x, y) = (value(c.elem, ours, p), value(c.elem, cublas, p));
        let err = (x - y).abs();
        let tolerance = if exact {
            0.0
        } else {
            let scale = alpha * row_norms.get(i).copied().unwrap_or(0.0) * col_norms.get(j).copied().unwrap_or(0.0)
                + if gemm.beta.is_some() { beta * value(c.elem, c0, p).abs() } else { 0.0 };
            step * scale + 2.0 * ulp(c.elem, y)
        };
        // NaN in either result is a failure (err is NaN); equal infinities are not.
        let same = x == y;
        if !same {
            report.max_abs_err = if err.is_nan() { f64::NAN } else { report.max_abs_err.max(err) };
        }
        let fraction = if same { 0.0 } else if tolerance > 0.0 { err / tolerance } else { f64::INFINITY };
        if !same && (err.is_nan() || err > tolerance) {
            report.failures += 1;
            if report.first_failure.is_none() {
                report.first_failure = Some(Mismatch { row: i, col: j, ours: x, cublas: y, tolerance });
            }
        }
        if !fraction.is_nan() {
            report.worst_fraction = report.worst_fraction.max(fraction);
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::data::random_bytes;
    use crate::bench::spec::{Elem, Operand};

    fn spec(m: u64, n: u64, k: u64, ab: Elem, c: Elem) -> GemmSpec {
        let op = |elem| Operand { elem, layout: MatrixLayout::RowMajor };
        GemmSpec { m, n, k, a: op(ab), b: op(ab), c: op(c), alpha: None, beta: None }
    }

    /// Reference C = A * B in f64, rounded to f32, row-major.
    fn gemm_f32(g: &GemmSpec, a: &[u8], b: &[u8], perturb_order: bool) -> Vec<u8> {
        let (m, n, k) = (g.m as usize, g.n as usize, g.k as usize);
        let mut out = Vec::new();
        for i in 0..m {
            for j in 0..n {
                // Two different f32 summation orders stand in for tilec and cuBLAS.
                let mut acc = 0.0f32;
                let order: Vec<usize> = if perturb_order { (0..k).rev().collect() } else { (0..k).collect() };
                for kk in order {
                    acc += (value(g.a.elem, a, i * k + kk) * value(g.b.elem, b, kk * n + j)) as f32;
                }
                out.extend(acc.to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn two_summation_orders_pass_and_a_missing_product_fails() {
        let g = spec(16, 24, 512, Elem::F16, Elem::F32);
        let a = random_bytes(Elem::F16, 16 * 512, 11);
        let b = random_bytes(Elem::F16, 512 * 24, 12);
        let c0 = random_bytes(Elem::F32, 16 * 24, 13);
        let x = gemm_f32(&g, &a, &b, false);
        let y = gemm_f32(&g, &a, &b, true);
        let r = compare(&g, &a, &b, &c0, &x, &y);
        assert!(r.ok(), "{r:?}");
        assert!(r.worst_fraction < 0.5, "{r:?}");
        // Drop one product from element (3, 5): outside the tolerance, reported there.
        let mut bad = x.clone();
        let p = 3 * 24 + 5;
        let v = f32::from_le_bytes([bad[4 * p], bad[4 * p + 1], bad[4 * p + 2], bad[4 * p + 3]]);
        let dropped = (value(Elem::F16, &a, 3 * 512 + 100) * value(Elem::F16, &b, 100 * 24 + 5)) as f32;
        assert!(dropped.abs() > 0.05, "pick a larger product for the test: {dropped}");
        bad[4 * p..4 * p + 4].copy_from_slice(&(v - dropped).to_le_bytes());
        let r = compare(&g, &a, &b, &c0, &bad, &y);
        assert_eq!(r.failures, 1, "{r:?}");
        let m = r.first_failure.as_ref().map(|m| (m.row, m.col));
        assert_eq!(m, Some((3, 5)));
        assert!(r.summary(false).starts_with("FAILED (1 of 384"), "{}", r.summary(false));
    }

    #[test]
    fn integers_must_be_exact_and_nan_fails() {
        let g = spec(2, 2, 4, Elem::I8, Elem::I32);
        let x: Vec<u8> = [1i32, 2, 3, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut y = x.clone();
        assert!(compare(&g, &[0; 8], &[0; 8], &x, &x, &y).ok());
        y[12] = 5;
        let r = compare(&g, &[0; 8], &[0; 8], &x, &x, &y);
        assert_eq!((r.failures, r.first_failure.map(|m| (m.row, m.col))), (1, Some((1, 1))));

        let g = spec(1, 2, 1, Elem::F16, Elem::F32);
        let x: Vec<u8> = [1.0f32, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let y: Vec<u8> = [1.0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let one = 0x3c00u16.to_le_bytes();
        let r = compare(&g, &one, &[one, one].concat(), &y, &x, &y);
        assert_eq!(r.failures, 1);
        assert!(r.max_abs_err.is_nan());
    }

    #[test]
    fn column_major_c_is_indexed_by_column() {
        let mut g = spec(2, 3, 1, Elem::I8, Elem::I32);
        g.c.layout = MatrixLayout::ColMajor;
        let x: Vec<u8> = [0i32; 6].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut y = x.clone();
        y[4] = 1; // flat position 1 of a column-major 2x3: row 1, column 0
        let r = compare(&g, &[0; 2], &[0; 3], &x, &x, &y);
        assert_eq!(r.first_failure.map(|m| (m.row, m.col)), Some((1, 0)));
    }
}
