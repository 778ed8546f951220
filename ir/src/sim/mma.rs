//! `mma.sync`: which matrix element each lane's fragment register holds, transcribed from the PTX ISA's
//! "Matrix Fragments for mma.mXnYkZ" sections, and the multiply-accumulate itself.
//!
//! Notation of the ISA: `groupID = lane >> 2`, `threadID_in_group = lane % 4`; element `i` of a fragment is
//! element `i` of the flattened vector (register order, low half first).

use crate::body::Operation;
use crate::ops::typed;
use crate::ops::{MatrixOrder, MmaShape};
use crate::data::round_to;
use crate::types::{ScalarType, Type};

use super::error::SimError;
use super::exec::{Ctx, Val, Warp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operand {
    A,
    B,
    C,
}

/// One `mma.sync` variant.
#[derive(Clone, Copy, Debug)]
struct Form {
    m: usize,
    n: usize,
    k: usize,
    ab: ScalarType,
    acc: ScalarType,
    /// `.col` for A (only m8n8k4 allows it).
    a_col: bool,
    /// `.row` for B (only m8n8k4 allows it).
    b_row: bool,
}

impl Form {
    fn is_m8n8k4(&self) -> bool {
        (self.m, self.n, self.k) == (8, 8, 4)
    }

    /// Elements of each operand per lane.
    fn count(&self, operand: Operand) -> usize {
        let per_group = if self.is_m8n8k4() { 8 } else { 32 };
        match operand {
            Operand::A => self.m * self.k / per_group,
            Operand::B => self.k * self.n / per_group,
            Operand::C => self.m * self.n / per_group,
        }
    }

    /// The (row, column) of element `i` of `lane`'s fragment of an operand, in the product this lane takes
    /// part in (for m8n8k4: the quad-pair's own 8x4, 4x8 and 8x8 matrices).
    fn coord(&self, operand: Operand, lane: usize, i: usize) -> (usize, usize) {
        if self.is_m8n8k4() {
            let high = usize::from(lane >= 16);
            let l4 = lane % 4;
            return match operand {
                Operand::A if self.a_col => (i + 4 * high, l4),
                Operand::A => (l4 + 4 * high, i),
                Operand::B if self.b_row => (l4, i + 4 * high),
                Operand::B => (i, l4 + 4 * high),
                Operand::C if self.acc == ScalarType::F32 => {
                    ((lane & 1) + (i & 2) + 4 * high, (i & 4) + (lane & 2) + (i & 1))
                }
                Operand::C => (l4 + 4 * high, i),
            };
        }
        let (g, t) = (lane >> 2, lane % 4);
        if operand == Operand::C {
            return (g + 8 * (i >> 1), 2 * t + (i & 1));
        }
        let a = operand == Operand::A;
        match (self.ab.bit_width(), self.k) {
            (16, 8) if a => (g + 8 * (i >> 1), 2 * t + (i & 1)),
            (16, 8) => (2 * t + i, g),
            (16, _) if a => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
            (16, _) => (2 * t + (i & 1) + 8 * (i >> 1), g),
            (32, 4) if a => (g + 8 * i, t),
            (32, 4) => (t, g),
            (32, _) if a => (g + 8 * (i & 1), t + 4 * (i >> 1)),
            (32, _) => (t + 4 * i, g),
            (8, 16) if a => (g + 8 * (i >> 2), 4 * t + (i & 3)),
            (8, 16) => (4 * t + i, g),
            (8, _) if a => (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
            (8, _) => (4 * t + (i & 3) + 16 * (i >> 2), g),
            (4, 32) if a => (g + 8 * (i >> 3), 8 * t + (i & 7)),
            (4, 32) => (8 * t + i, g),
            (_, _) if a => (g + 8 * ((i >> 3) & 1), 8 * t + (i & 7) + 32 * (i >> 4)),
            (_, _) => (8 * t + (i & 7) + 32 * (i >> 3), g),
        }
    }

    /// The lanes computing one product: four quad-pairs for m8n8k4, else the whole warp.
    fn groups(&self) -> Vec<Vec<usize>> {
        if self.is_m8n8k4() {
            (0..4).map(|q| (4 * q..4 * q + 4).chain(16 + 4 * q..16 + 4 * q + 4).collect()).collect()
        } else {
            vec![(0..32).collect()]
        }
    }
}

/// The variants the simulator (and the PTX ISA) has, for A/B element type `ab`.
fn shape_supported(m: u32, n: u32, k: u32, ab: ScalarType) -> bool {
    use ScalarType::*;
    match (m, n, k) {
        (8, 8, 4) => ab == F16,
        (16, 8, 4) => ab == TF32,
        (16, 8, 8) => matches!(ab, F16 | BF16 | TF32),
        (16, 8, 16) => matches!(ab, F16 | BF16 | I8 | U8 | F8E4M3 | F8E5M2),
        (16, 8, 32) => matches!(ab, I8 | U8 | I4 | U4 | F8E4M3 | F8E5M2),
        (16, 8, 64) => matches!(ab, I4 | U4),
        _ => false,
    }
}

fn form_of(ctx: &Ctx<'_>, op: &Operation, mma: &typed::MmaSync) -> Result<Form, SimError> {
    let error = |message: String| SimError::FragmentType { span: op.span, op: "nvgpu.mma.sync", message };
    let MmaShape { m, n, k } = mma.mma_shape;
    let body = &ctx.func.body;
    let (Type::Vector(a), Type::Vector(b), Type::Vector(c)) = (body.ty(mma.a), body.ty(mma.b), body.ty(mma.c)) else {
        return Err(error("A, B and C must be per-lane vectors".into()));
    };
    if !shape_supported(m, n, k, a.elem) || !(b.elem == a.elem || a.elem.is_integer() && b.elem.is_integer()) {
        return Err(error(format!("there is no m{m}n{n}k{k} variant for '{}' x '{}' inputs", a.elem, b.elem)));
    }
    if !crate::verify::mma_types_supported(a.elem, c.elem) {
        return Err(error(format!("'{}' inputs do not accumulate into '{}'", a.elem, c.elem)));
    }
    let (a_row, b_row) = (mma.layout_a == MatrixOrder::Row, mma.layout_b == MatrixOrder::Row);
    let form = Form { m: m as usize, n: n as usize, k: k as usize, ab: a.elem, acc: c.elem, a_col: !a_row, b_row };
    if !form.is_m8n8k4() && (!a_row || b_row) {
        return Err(error(format!("m{m}n{n}k{k} exists only as '.row.col' (layoutA = row, layoutB = col)")));
    }
    for (what, operand, v) in [("A", Operand::A, a), ("B", Operand::B, b), ("C", Operand::C, c)] {
        let expected = form.count(operand);
        if v.num_elements() as usize != expected {
            return Err(error(format!("m{m}n{n}k{k} holds {expected} elements of {what} per lane, not '{v}'")));
        }
    }
    if let Some(r) = op.result() {
        if body.ty(r) != &Type::Vector(c.clone()) {
            return Err(error(format!("the result must have C's type '{c}', not '{}'", body.ty(r))));
        }
    }
    Ok(form)
}

/// What the tensor core reads of an input element: tf32 keeps the top 10 mantissa bits of the f32.
fn input(elem: ScalarType, x: f64) -> f64 {
    if elem == ScalarType::TF32 {
        f64::from(f32::from_bits((x as f32).to_bits() & !0x1fff))
    } else {
        x
    }
}

pub(super) fn mma_sync(w: &mut Warp, ctx: &mut Ctx<'_>, op: &Operation, mma: &typed::MmaSync) -> Result<(), SimError> {
    w.require_converged(ctx, op)?;
    let form = form_of(ctx, op, mma)?;
    let (a, b, c) = (mma.a, mma.b, mma.c);
    let Some(d) = op.result() else {
        return Err(SimError::FragmentType { span: op.span, op: "nvgpu.mma.sync", message: "needs a result".into() });
    };
    let frag = |v, lane: usize| -> Result<Vec<f64>, SimError> { Ok(w.vector(ctx, op, v, lane as u32)?.to_vec()) };
    let mut fa = Vec::with_capacity(32);
    let mut fb = Vec::with_capacity(32);
    let mut fc = Vec::with_capacity(32);
    for lane in 0..32 {
        fa.push(frag(a, lane)?);
        fb.push(frag(b, lane)?);
        fc.push(frag(c, lane)?);
    }
    let (m, n, k) = (form.m, form.n, form.k);
    let mut out = fc.clone();
    for group in form.groups() {
        let mut ma = vec![0.0; m * k];
        let mut mb = vec![0.0; k * n];
        let mut mc = vec![0.0; m * n];
        for &lane in &group {
            for (i, &x) in fa[lane].iter().enumerate() {
                let (r, col) = form.coord(Operand::A, lane, i);
                ma[r * k + col] = input(form.ab, x);
            }
            for (i, &x) in fb[lane].iter().enumerate() {
                let (r, col) = form.coord(Operand::B, lane, i);
                mb[r * n + col] = input(form.ab, x);
            }
            for (i, &x) in fc[lane].iter().enumerate() {
                let (r, col) = form.coord(Operand::C, lane, i);
                mc[r * n + col] = x;
            }
        }
        for &lane in &group {
            for i in 0..out[lane].len() {
                let (r, col) = form.coord(Operand::C, lane, i);
                // Exact products, summed in increasing k in f64, then C, then one rounding.
                let mut sum = 0.0f64;
                for kk in 0..k {
                    sum += ma[r * k + kk] * mb[kk * n + col];
                }
                out[lane][i] = round_to(form.acc, sum + mc[r * n + col]);
            }
        }
    }
    for (lane, v) in out.into_iter().enumerate() {
        w.set(d, lane as u32, Val::Vector(v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each fragment map covers every element of its matrix exactly once per product.
    #[test]
    fn fragment_maps_are_bijections() {
        use ScalarType::*;
        let forms = [
            (8, 8, 4, F16, F32, false, false),
            (8, 8, 4, F16, F32, true, true),
            (8, 8, 4, F16, F16, true, false),
            (16, 8, 4, TF32, F32, false, false),
            (16, 8, 8, F16, F32, false, false),
            (16, 8, 8, TF32, F32, false, false),
            (16, 8, 16, BF16, F32, false, false),
            (16, 8, 16, I8, I32, false, false),
            (16, 8, 32, I8, I32, false, false),
            (16, 8, 32, I4, I32, false, false),
            (16, 8, 64, U4, I32, false, false),
        ];
        for (m, n, k, ab, acc, a_col, b_row) in forms {
            let form = Form { m, n, k, ab, acc, a_col, b_row };
            for (operand, rows, cols) in [(Operand::A, m, k), (Operand::B, k, n), (Operand::C, m, n)] {
                for group in form.groups() {
                    let mut seen = vec![0; rows * cols];
                    for &lane in &group {
                        for i in 0..form.count(operand) {
                            let (r, c) = form.coord(operand, lane, i);
                            assert!(r < rows && c < cols, "{form:?} {operand:?} lane {lane} element {i} -> ({r}, {c})");
                            seen[r * cols + c] += 1;
                        }
                    }
                    assert!(seen.iter().all(|&s| s == 1), "{form:?} {operand:?} does not cover each element once");
                }
            }
        }
    }
}
