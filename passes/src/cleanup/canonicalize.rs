//! `canonicalize`: folds constants and simplifies ops to a canonical form, to a fixed point.
//!
//! Rewrites, each replacing an op by a constant or by one of its operands:
//! - scalar arithmetic, `tile.cmp`, `tile.cast` on `tile.constant` operands, and the same elementwise ops on
//!   `tile.fill` operands, are folded with the interpreter's semantics (see [`super::fold`] for what is
//!   refused: division by zero, inexact floats, `index` overflow);
//! - `tile.splat` of a constant becomes a `tile.fill`;
//! - integer identities: `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1` → `x`; `x * 0`, `0 * x`,
//!   `x - x`, `x % 1` → `0`; for any type `min(x, x)`, `max(x, x)`, `select(c, x, x)` and a cast to the
//!   type `x` already has → `x`; `select` on a constant condition picks its operand;
//! - `tile.dim` of a static extent → that extent as a constant;
//! - a `tile.for` with constant bounds and a positive constant step that runs zero times → its inits.
//!
//! A folded constant is inserted just before the op it replaces and keeps that op's value name. Operands
//! left unused are not deleted here: `dce` does that, and `cse` merges duplicate constants.
//!
//! ```text
//! %a = tile.constant 6 : index          %a = tile.constant 6 : index
//! %b = tile.constant 7 : index    ==>   %b = tile.constant 7 : index
//! %c = tile.mul %a, %b : index          %c = tile.constant 42 : index
//! ```

use tilec_ir::ops::Literal;
use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Body, Diagnostic, Func, Module, OpId, OpKind, Type, TypedOp, Value};

use super::fold::{self, Const};
use crate::context::PassContext;
use crate::pass::Pass;

/// The `canonicalize` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct Canonicalize;

impl Pass for Canonicalize {
    fn name(&self) -> &'static str {
        "canonicalize"
    }

    fn description(&self) -> &'static str {
        "Fold constants, simplify algebraic identities, replace zero-trip loops by their inits"
    }

    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            canonicalize_func(func);
        }
        Ok(())
    }
}

/// At most this many sweeps over a function (each sweep folds whole chains in program order, so a fixed
/// point is normally reached in two).
const MAX_SWEEPS: usize = 16;

/// Canonicalizes one function; returns how many ops were rewritten.
pub fn canonicalize_func(func: &mut Func) -> usize {
    let mut total = 0;
    for _ in 0..MAX_SWEEPS {
        let mut ops = Vec::new();
        func.body.walk(func.entry, &mut |op| ops.push(op));
        let mut changed = 0;
        for op in ops {
            if !is_placed(&func.body, op) {
                continue;
            }
            if let Some(rewrite) = simplify(&func.body, op) {
                apply(&mut func.body, op, rewrite);
                changed += 1;
            }
        }
        total += changed;
        if changed == 0 {
            break;
        }
    }
    total
}

/// What an op is replaced by.
enum Rewrite {
    /// Its single result becomes an existing value.
    Value(Value),
    /// Its single result becomes a new constant (`tile.constant`, or `tile.fill` for tiles and vectors).
    Const(Literal),
    /// Its results become these values (a zero-trip loop's inits).
    Values(Vec<Value>),
}

/// Whether an op is still in the function: in a block, and every enclosing loop is too.
fn is_placed(body: &Body, op: OpId) -> bool {
    let mut op = op;
    loop {
        let Some(block) = body.op(op).parent else { return false };
        match body.block(block).parent_op {
            None => return true,
            Some(parent) => op = parent,
        }
    }
}

/// The known value of a `tile.constant` or of the elements of a `tile.fill`.
fn const_of(body: &Body, v: Value) -> Option<Const> {
    let value = match AnyOp::from_op(body.op(body.defining_op(v)?))? {
        AnyOp::Constant(constant) => constant.value,
        AnyOp::Fill(fill) => fill.value,
        _ => return None,
    };
    Const::from_literal(value, body.ty(v).element_type())
}

/// Whether a value of this type can be written as a constant (`tile.fill` needs a static shape).
fn can_materialize(ty: &Type) -> bool {
    match ty {
        Type::Scalar(_) | Type::Vector(_) => true,
        Type::Tile(t) => t.space == tilec_ir::MemorySpace::Register && t.static_shape().is_some(),
    }
}

fn simplify(body: &Body, id: OpId) -> Option<Rewrite> {
    let op = body.op(id);
    let view = AnyOp::from_op(op)?;
    if let AnyOp::For(lp) = view {
        return zero_trip_loop(body, id, lp);
    }
    let result = op.result()?;
    let rty = body.ty(result);
    let elem = rty.element_type();
    // Replace by an operand only when the types agree exactly (layouts included).
    let same = |v: Value| (body.ty(v) == rty).then_some(Rewrite::Value(v));
    let constant = |c: Const| can_materialize(rty).then(|| Rewrite::Const(c.to_literal(elem)));
    let k = op.kind;
    match view {
        AnyOp::Add(typed::Add { lhs, rhs })
        | AnyOp::Sub(typed::Sub { lhs, rhs })
        | AnyOp::Mul(typed::Mul { lhs, rhs })
        | AnyOp::Div(typed::Div { lhs, rhs })
        | AnyOp::Rem(typed::Rem { lhs, rhs })
        | AnyOp::Min(typed::Min { lhs, rhs })
        | AnyOp::Max(typed::Max { lhs, rhs }) => {
            let (a, b) = (const_of(body, lhs), const_of(body, rhs));
            if let (Some(a), Some(b)) = (a, b) {
                if let Some(c) = fold::binary(k, elem, a, b) {
                    return constant(c);
                }
            }
            if matches!(k, OpKind::Min | OpKind::Max) && lhs == rhs {
                return same(lhs);
            }
            if !elem.is_integer() || elem == tilec_ir::ScalarType::I1 {
                return None;
            }
            let is = |c: Option<Const>, n: i128| c.is_some_and(|c| c.is_int(n));
            match k {
                OpKind::Add if is(b, 0) => same(lhs),
                OpKind::Add if is(a, 0) => same(rhs),
                OpKind::Sub if is(b, 0) => same(lhs),
                OpKind::Sub if lhs == rhs => constant(Const::Int(0)),
                OpKind::Mul if is(b, 1) => same(lhs),
                OpKind::Mul if is(a, 1) => same(rhs),
                OpKind::Mul if is(b, 0) => constant(Const::Int(0)),
                OpKind::Mul if is(a, 0) => constant(Const::Int(0)),
                OpKind::Div if is(b, 1) => same(lhs),
                OpKind::Rem if is(b, 1) => constant(Const::Int(0)),
                _ => None,
            }
        }
        AnyOp::Cmp(typed::Cmp { lhs, rhs, predicate }) => {
            let (a, b) = (const_of(body, lhs)?, const_of(body, rhs)?);
            constant(fold::compare(predicate, a, b)?)
        }
        AnyOp::Select(typed::Select { cond, true_value, false_value }) => {
            if true_value == false_value {
                return same(true_value);
            }
            match const_of(body, cond)? {
                Const::Int(0) => same(false_value),
                Const::Int(_) => same(true_value),
                Const::Float(_) => None,
            }
        }
        AnyOp::Cast(typed::Cast { source }) => {
            if body.ty(source) == rty {
                return same(source);
            }
            let from = body.ty(source).element_type();
            constant(fold::cast(from, elem, const_of(body, source)?)?)
        }
        AnyOp::Splat(typed::Splat { value }) => constant(const_of(body, value)?),
        AnyOp::Dim(typed::Dim { source, axis }) => {
            let source = body.ty(source).as_tile()?;
            let extent = source.shape.get(usize::try_from(axis).ok()?)?.as_static()?;
            let extent = i64::try_from(extent).ok()?;
            rty.is_index().then_some(Rewrite::Const(Literal::Int(extent)))
        }
        _ => None,
    }
}

/// A loop with constant bounds and a positive constant step that never runs.
fn zero_trip_loop(body: &Body, id: OpId, lp: typed::For) -> Option<Rewrite> {
    let op = body.op(id);
    let lower = body.constant_int(lp.lower)?;
    let upper = body.constant_int(lp.upper)?;
    let step = body.constant_int(lp.step)?;
    let types_agree = lp.inits.iter().zip(&op.results).all(|(&i, &r)| body.ty(i) == body.ty(r));
    (step > 0 && lower >= upper && types_agree).then_some(Rewrite::Values(lp.inits))
}

fn apply(body: &mut Body, id: OpId, rewrite: Rewrite) {
    let results = body.op(id).results.clone();
    match rewrite {
        Rewrite::Value(v) => body.replace_all_uses(results[0], v),
        Rewrite::Values(values) => {
            for (&r, v) in results.iter().zip(values) {
                body.replace_all_uses(r, v);
            }
        }
        Rewrite::Const(value) => {
            let old = results[0];
            let ty = body.ty(old).clone();
            let spec = match ty {
                Type::Scalar(_) => typed::Constant { value }.into_spec(),
                _ => typed::Fill { value }.into_spec(),
            };
            let span = body.op(id).span;
            let new_op = body.create_op(spec.result(ty).span(span));
            body.insert_before(id, new_op);
            let new = body.op(new_op).results[0];
            body.values[new.index()].name = body.value(old).name.clone();
            body.replace_all_uses(old, new);
        }
    }
    body.erase(id);
}

#[cfg(test)]
mod tests {
    use crate::testing::check_pass;

    use super::Canonicalize;

    #[test]
    fn folds_index_arithmetic_chains() {
        check_pass(
            Canonicalize,
            "
tile.func @f() {
  %a = tile.constant 6 : index
  %b = tile.constant 7 : index
  %c = tile.mul %a, %b : index
  %d = tile.sub %c, %a : index
  %e = tile.min %d, %b : index
  %f = tile.cmp lt %e, %d : i1
  tile.return
}",
            "
tile.func @f() {
  %a = tile.constant 6 : index
  %b = tile.constant 7 : index
  %c = tile.constant 42 : index
  %d = tile.constant 36 : index
  %e = tile.constant 7 : index
  %f = tile.constant true : i1
  tile.return
}",
        );
    }

    #[test]
    fn leaves_division_by_zero_and_inexact_floats() {
        let text = "
tile.func @f() {
  %a = tile.constant 6 : i32
  %z = tile.constant 0 : i32
  %q = tile.div %a, %z : i32
  %r = tile.rem %a, %z : i32
  %x = tile.constant 0.1 : f32
  %y = tile.add %x, %x : f32
  %h = tile.constant 1.0 : f32
  %t = tile.constant 2.0 : f32
  %u = tile.div %h, %t : f32
  tile.return
}";
        check_pass(Canonicalize, text, text);
    }

    #[test]
    fn folds_exact_floats_casts_and_wraps_integers() {
        check_pass(
            Canonicalize,
            "
tile.func @f() {
  %a = tile.constant 1.5 : f32
  %b = tile.add %a, %a : f32
  %c = tile.cast %b : i32
  %d = tile.constant 127 : i8
  %e = tile.constant 1 : i8
  %g = tile.add %d, %e : i8
  %h = tile.cast %g : f16
  tile.return
}",
            "
tile.func @f() {
  %a = tile.constant 1.5 : f32
  %b = tile.constant 3.0 : f32
  %c = tile.constant 3 : i32
  %d = tile.constant 127 : i8
  %e = tile.constant 1 : i8
  %g = tile.constant -128 : i8
  %h = tile.constant -128.0 : f16
  tile.return
}",
        );
    }

    #[test]
    fn integer_identities() {
        check_pass(
            Canonicalize,
            "
tile.func @f(%x: index, %y: i32, %v: f32) {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %a = tile.add %x, %c0 : index
  %b = tile.mul %c1, %a : index
  %c = tile.mul %b, %c0 : index
  %d = tile.sub %y, %y : i32
  %e = tile.div %b, %c1 : index
  %z = tile.constant 0.0 : f32
  %f = tile.add %v, %z : f32
  %g = tile.max %v, %v : f32
  %t = tile.cmp lt %c0, %c1 : i1
  %s = tile.select %t, %e, %c : index
  %u = tile.add %s, %c : index
  %w = tile.mul %u, %u : index
  tile.return
}",
            "
tile.func @f(%x: index, %y: i32, %v: f32) {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c = tile.constant 0 : index
  %d = tile.constant 0 : i32
  %z = tile.constant 0.0 : f32
  %f = tile.add %v, %z : f32
  %t = tile.constant true : i1
  %w = tile.mul %x, %x : index
  tile.return
}",
        );
    }

    #[test]
    fn static_dims_splats_and_fills() {
        check_pass(
            Canonicalize,
            "
tile.func @f(%A: tile<64x?xf16, global>) {
  %m = tile.dim %A, 0 : index
  %k = tile.dim %A, 1 : index
  %two = tile.constant 2 : i32
  %s = tile.splat %two : tile<16x8xi32, reg>
  %o = tile.fill 1 : tile<16x8xi32, reg>
  %p = tile.mul %s, %o : tile<16x8xi32, reg>
  %q = tile.add %p, %s : tile<16x8xi32, reg>
  tile.return
}",
            "
tile.func @f(%A: tile<64x?xf16, global>) {
  %m = tile.constant 64 : index
  %k = tile.dim %A, 1 : index
  %two = tile.constant 2 : i32
  %s = tile.fill 2 : tile<16x8xi32, reg>
  %o = tile.fill 1 : tile<16x8xi32, reg>
  %p = tile.fill 2 : tile<16x8xi32, reg>
  %q = tile.fill 4 : tile<16x8xi32, reg>
  tile.return
}",
        );
    }

    #[test]
    fn zero_trip_loops_become_their_inits() {
        check_pass(
            Canonicalize,
            "
tile.func @f(%out: tile<16x8xf32, global>) {
  %c0 = tile.constant 0 : index
  %c8 = tile.constant 8 : index
  %zero = tile.fill 0.0 : tile<16x8xf32, reg>
  %acc = tile.for %k = %c8 to %c0 step %c8 iter_args(%c = %zero) -> (tile<16x8xf32, reg>) {
    %d = tile.add %c, %c : tile<16x8xf32, reg>
    tile.yield %d
  }
  %live = tile.for %k = %c0 to %c8 step %c8 iter_args(%c = %acc) -> (tile<16x8xf32, reg>) {
    tile.yield %c
  }
  tile.copy_r2g %live, %out[%c0, %c0]
  tile.return
}",
            "
tile.func @f(%out: tile<16x8xf32, global>) {
  %c0 = tile.constant 0 : index
  %c8 = tile.constant 8 : index
  %zero = tile.fill 0.0 : tile<16x8xf32, reg>
  %live = tile.for %k = %c0 to %c8 step %c8 iter_args(%c = %zero) -> (tile<16x8xf32, reg>) {
    tile.yield %c
  }
  tile.copy_r2g %live, %out[%c0, %c0]
  tile.return
}",
        );
    }
}
