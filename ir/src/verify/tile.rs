//! Rules of the `tile` dialect's ops.

use crate::body::{OpId, Operation, Value};
use crate::diag::Diagnostic;
use crate::ops::typed::{self, AnyOp};
use crate::ops::{Literal, OpKind, UnaryMath};
use crate::layout::Layout;
use crate::types::{Dim, MemorySpace, ScalarType, Type};
use crate::verify::{mma_types_supported, Verifier};

/// The rules of one op, whose attributes the catalogue already checked (so its typed view exists).
pub(super) fn verify(v: &mut Verifier<'_>, op: &Operation, typed: AnyOp, parent: Option<OpId>) {
    match typed {
        AnyOp::Func(_) => v.error(op.span, "'tile.func' may only appear at the top level"),
        AnyOp::For(f) => for_op(v, op, &f),
        AnyOp::Yield(y) => yield_op(v, op, &y.values, parent),
        AnyOp::Return(_) if parent.is_some() => v.error(op.span, "'tile.return' must be in the function body, not in a loop"),
        AnyOp::Return(_) => {}
        AnyOp::Constant(c) => constant(v, op, c.value),
        AnyOp::BlockId(_) | AnyOp::GridDim(_) => v.index_result(op),
        AnyOp::Dim(d) => dim(v, op, &d),
        AnyOp::Add(typed::Add { lhs, rhs })
        | AnyOp::Sub(typed::Sub { lhs, rhs })
        | AnyOp::Mul(typed::Mul { lhs, rhs })
        | AnyOp::Div(typed::Div { lhs, rhs })
        | AnyOp::Rem(typed::Rem { lhs, rhs })
        | AnyOp::Min(typed::Min { lhs, rhs })
        | AnyOp::Max(typed::Max { lhs, rhs }) => binary(v, op, lhs, rhs),
        view @ (crate::unary_math_view!()) => {
            if let Some((f, source)) = UnaryMath::of_view(&view) {
                unary(v, op, f, source)
            }
        }
        AnyOp::Cmp(c) => cmp(v, op, &c),
        AnyOp::Select(s) => select(v, op, &s),
        AnyOp::Fma(f) => fma(v, op, &f),
        AnyOp::Cast(c) => cast(v, op, c.source),
        AnyOp::ConvertLayout(c) => convert_layout(v, op, c.source),
        AnyOp::Splat(s) => splat(v, op, s.value),
        AnyOp::Fill(f) => fill(v, op, f.value),
        AnyOp::AllocShared(_) => alloc_shared(v, op),
        AnyOp::CopyG2S(c) => copy_g2s(v, op, &c),
        AnyOp::CopyS2R(c) => copy_s2r(v, op, &c),
        AnyOp::CopyR2S(c) => copy_from_reg(v, op, c.value, c.dst, &c.dst_indices, MemorySpace::Shared),
        AnyOp::CopyR2G(c) => copy_from_reg(v, op, c.value, c.dst, &c.dst_indices, MemorySpace::Global),
        AnyOp::Mma(m) => mma(v, op, &m),
        AnyOp::Reduce(r) => reduce(v, op, &r),
        AnyOp::Broadcast(b) => broadcast(v, op, b.source),
        AnyOp::Iota(i) => iota(v, op, i.axis),
        AnyOp::Transpose(t) => transpose(v, op, t.source),
        _ => {}
    }
}

/// Scalars, per-thread vectors and register tiles are values; global and shared tiles are memory.
fn is_value_type(t: &Type) -> bool {
    match t {
        Type::Scalar(_) | Type::Vector(_) => true,
        Type::Tile(t) => t.space == MemorySpace::Register,
    }
}

/// Two value types agree: equal, or register tiles of one shape and element type where a layout is missing.
fn same_value_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Tile(x), Type::Tile(y)) => {
            x.same_shape_and_elem(y)
                && x.space == y.space
                && (x.layout.is_none() || y.layout.is_none() || x.layout == y.layout)
        }
        _ => a == b,
    }
}

fn for_op(v: &mut Verifier<'_>, op: &Operation, f: &typed::For) {
    if let Some(n) = f.pipeline_stages.filter(|n| !(1..=8).contains(n)) {
        v.error(op.span, format!("'tile.for' pipeline_stages = {n}: expected 1..=8"));
    }
    for (name, x) in [("lower", f.lower), ("upper", f.upper), ("step", f.step)] {
        if !v.ty(x).is_index() {
            v.error(op.span, format!("'tile.for' bound '{name}' must be 'index', found '{}'", v.ty(x)));
        }
    }
    // A constant step that is not positive: the loop would never end (or, negative, run backwards, which
    // 'tile.for' does not do). The interpreter and the simulator refuse it when they run it; the GPU would hang.
    let constant_step = v.func.body.defining_op(f.step).and_then(|d| v.func.body.op(d).view::<typed::Constant>());
    if let Some(step) = constant_step.and_then(|c| c.value.as_int()).filter(|&n| n <= 0) {
        let mut d = Diagnostic::error(
            op.attr_span(crate::syntax::parser::FOR_STEP_SPAN),
            format!("'tile.for' needs a positive step, found the constant {step}: the loop would not end"),
        );
        if let Some(def) = v.func.body.defining_op(f.step) {
            d = d.with_note_at(v.func.body.op(def).span, format!("the step is defined here as {step}"));
        }
        v.diags.push(d);
    }
    let Some(&region) = op.regions.first() else {
        v.error(op.span, "'tile.for' needs a body");
        return;
    };
    let body = &v.func.body;
    let args = &body.block(region).args;
    let inits = &f.inits;
    if args.len() != inits.len() + 1 || op.results.len() != inits.len() {
        v.error(op.span, "'tile.for' needs one body argument per iter_arg plus the induction variable, and one result per iter_arg");
        return;
    }
    if !body.ty(args[0]).is_index() {
        v.error(op.span, "the induction variable of 'tile.for' must be 'index'");
    }
    for (i, ((&init, &arg), &result)) in inits.iter().zip(&args[1..]).zip(&op.results).enumerate() {
        let (ti, ta, tr) = (body.ty(init), body.ty(arg), body.ty(result));
        if !same_value_type(ti, tr) || !same_value_type(ta, tr) {
            v.error(op.span, format!("iter_arg #{i} of 'tile.for' has initial type '{ti}' but the loop carries '{tr}'"));
        }
        if !is_value_type(tr) {
            v.error(op.span, format!("'tile.for' cannot carry '{tr}': only scalars, vectors and register tiles"));
        }
    }
}

fn yield_op(v: &mut Verifier<'_>, op: &Operation, values: &[Value], parent: Option<OpId>) {
    let Some(parent) = parent.map(|p| v.func.body.op(p)) else {
        v.error(op.span, "'tile.yield' must end a loop body; a function ends with 'tile.return'");
        return;
    };
    if values.len() != parent.results.len() {
        v.error(op.span, format!("'tile.yield' passes {} value(s), but the loop carries {}", values.len(), parent.results.len()));
        return;
    }
    for (i, (&value, &result)) in values.iter().zip(&parent.results).enumerate() {
        let (ty, expected) = (v.ty(value), v.ty(result));
        if !same_value_type(ty, expected) {
            v.error(op.span, format!("'tile.yield' operand #{i} has type '{ty}', but the loop carries '{expected}'"));
        }
    }
}

fn constant(v: &mut Verifier<'_>, op: &Operation, value: Literal) {
    let Some(ty) = v.result_type(op) else { return };
    let Some(scalar) = ty.as_scalar() else {
        v.error(op.span, format!("'tile.constant' produces a scalar, not '{ty}'; use 'tile.fill' for tiles"));
        return;
    };
    check_scalar_value(v, op, value, scalar);
}

/// A constant fits its type: integers in range, floats only for float types, booleans for `i1`.
fn check_scalar_value(v: &mut Verifier<'_>, op: &Operation, value: Literal, ty: ScalarType) {
    let ok = match (value, ty) {
        (Literal::Bool(_), ScalarType::I1) => true,
        (Literal::Int(n), t) if t.is_integer() => {
            let (lo, hi): (i64, i64) = match t {
                ScalarType::I1 => (0, 1),
                ScalarType::I4 => (-8, 7),
                ScalarType::U4 => (0, 15),
                ScalarType::I8 => (-128, 127),
                ScalarType::U8 => (0, 255),
                ScalarType::I32 => (i32::MIN as i64, i32::MAX as i64),
                _ => (i64::MIN, i64::MAX),
            };
            if n < lo || n > hi {
                v.error(op.span, format!("value {n} does not fit in '{t}' ({lo}..={hi})"));
                return;
            }
            true
        }
        (Literal::Int(_) | Literal::Float(_), t) if t.is_float() => true,
        _ => false,
    };
    if !ok {
        v.error(op.span, format!("'{}' value {value} is not a valid '{ty}'", op.kind));
    }
}

fn dim(v: &mut Verifier<'_>, op: &Operation, d: &typed::Dim) {
    v.index_result(op);
    let Some(tile) = v.tile_in(op, d.source, "its source", MemorySpace::Global) else { return };
    let rank = tile.rank();
    if d.axis as usize >= rank {
        v.error(op.span, format!("axis {} is out of range for a rank-{rank} tile", d.axis));
    }
}

fn binary(v: &mut Verifier<'_>, op: &Operation, lhs: Value, rhs: Value) {
    let Some(result) = v.result_type(op) else { return };
    let (tl, tr) = (v.ty(lhs), v.ty(rhs));
    if !same_value_type(tl, result) || !same_value_type(tr, result) {
        v.error(op.span, format!("'{}' operands and result must have one type, found '{tl}', '{tr}' and '{result}'", op.kind));
        return;
    }
    if !is_value_type(result) {
        v.error(op.span, format!("'{}' works on scalars, vectors and register tiles, not '{result}'", op.kind));
        return;
    }
    let elem = result.element_type();
    if op.kind == OpKind::Rem && !elem.is_integer() {
        v.error(op.span, format!("'tile.rem' needs integers, found '{elem}'"));
    }
    if elem == ScalarType::I1 && op.kind != OpKind::Min && op.kind != OpKind::Max {
        v.error(op.span, format!("'{}' does not work on 'i1'", op.kind));
    }
}

/// `tile.neg` (floats and signed integers) and the float math functions (`f32`, `f16`, `bf16`: the GPU
/// computes in f32).
fn unary(v: &mut Verifier<'_>, op: &Operation, f: UnaryMath, source: Value) {
    let Some(result) = v.result_type(op) else { return };
    let from = v.ty(source);
    if !same_value_type(from, result) {
        v.error(op.span, format!("'{}' operand and result must have one type, found '{from}' and '{result}'", op.kind));
        return;
    }
    if !is_value_type(result) {
        v.error(op.span, format!("'{}' works on scalars, vectors and register tiles, not '{result}'", op.kind));
        return;
    }
    let elem = result.element_type();
    if f.takes_signed_integers() {
        let ok = matches!(elem, ScalarType::F64 | ScalarType::F32 | ScalarType::F16 | ScalarType::BF16)
            || matches!(elem, ScalarType::I8 | ScalarType::I32 | ScalarType::Index);
        if !ok {
            v.error(op.span, format!("'{}' needs floats (f64, f32, f16, bf16) or signed integers (i8, i32, index), found '{elem}'", op.kind));
        }
    } else if !matches!(elem, ScalarType::F32 | ScalarType::F16 | ScalarType::BF16) {
        v.error(op.span, format!("'{}' needs f32, f16 or bf16 elements, found '{elem}'", op.kind));
    }
}

/// The `i1` type of `t`'s shape: `i1`, `vector<..xi1>` or a register tile of `i1` (layout left to agree).
fn is_i1_of_shape(cond: &Type, t: &Type) -> bool {
    match (cond, t) {
        (Type::Scalar(c), _) => *c == ScalarType::I1 && t.as_scalar().is_some(),
        (Type::Vector(c), Type::Vector(x)) => c.elem == ScalarType::I1 && c.shape == x.shape,
        (Type::Tile(c), Type::Tile(x)) => {
            c.elem == ScalarType::I1
                && c.space == MemorySpace::Register
                && x.space == MemorySpace::Register
                && c.shape == x.shape
                && (c.layout.is_none() || x.layout.is_none() || c.layout == x.layout)
        }
        _ => false,
    }
}

fn cmp(v: &mut Verifier<'_>, op: &Operation, c: &typed::Cmp) {
    let Some(result) = v.result_type(op) else { return };
    let (tl, tr) = (v.ty(c.lhs), v.ty(c.rhs));
    if !same_value_type(tl, tr) {
        v.error(op.span, format!("'tile.cmp' compares values of one type, found '{tl}' and '{tr}'"));
    }
    if !is_value_type(tl) || !is_i1_of_shape(result, tl) {
        v.error(op.span, format!("'tile.cmp' compares scalars, vectors or register tiles, giving 'i1' of their shape, found '{tl}' -> '{result}'"));
    }
}

fn select(v: &mut Verifier<'_>, op: &Operation, s: &typed::Select) {
    let Some(result) = v.result_type(op) else { return };
    let (cond, a, b) = (s.cond, s.true_value, s.false_value);
    let ct = v.ty(cond);
    if ct != &Type::Scalar(ScalarType::I1) && !is_i1_of_shape(ct, result) {
        v.error(op.span, format!("'tile.select' condition must be 'i1' or of 'i1' elements in the result's shape, found '{ct}'"));
    }
    if !same_value_type(v.ty(a), result) || !same_value_type(v.ty(b), result) {
        v.error(op.span, format!("'tile.select' choices and result must have one type, found '{}', '{}' and '{result}'", v.ty(a), v.ty(b)));
    }
}

fn fma(v: &mut Verifier<'_>, op: &Operation, f: &typed::Fma) {
    let Some(result) = v.result_type(op) else { return };
    let (a, b, c) = (v.ty(f.lhs), v.ty(f.rhs), v.ty(f.addend));
    if !is_value_type(result) || !same_value_type(a, result) || !same_value_type(b, result) || !same_value_type(c, result) {
        v.error(op.span, format!("'tile.fma' operands and result must have one type (scalars, vectors or register tiles), found '{a}', '{b}', '{c}' and '{result}'"));
    } else if result.element_type() != ScalarType::F32 {
        v.error(op.span, format!("'tile.fma' is defined on f32, found '{result}'"));
    }
}

fn cast(v: &mut Verifier<'_>, op: &Operation, source: Value) {
    let Some(result) = v.result_type(op) else { return };
    let from = v.ty(source);
    let same_shape = match (from, result) {
        (Type::Scalar(_), Type::Scalar(_)) => true,
        (Type::Vector(a), Type::Vector(b)) => a.shape == b.shape,
        (Type::Tile(a), Type::Tile(b)) => a.shape == b.shape && a.space == MemorySpace::Register && b.space == MemorySpace::Register,
        _ => false,
    };
    if !same_shape {
        v.error(op.span, format!("'tile.cast' changes only the element type of a value, not '{from}' to '{result}'"));
    }
}

fn convert_layout(v: &mut Verifier<'_>, op: &Operation, source: Value) {
    let Some(result) = v.result_type(op) else { return };
    let from = v.ty(source);
    let ok = match (from, result) {
        (Type::Tile(a), Type::Tile(b)) => a.same_shape_and_elem(b) && a.space == MemorySpace::Register && b.space == MemorySpace::Register,
        _ => false,
    };
    if !ok {
        v.error(op.span, format!("'tile.convert_layout' changes only the layout of a register tile, not '{from}' to '{result}'"));
    }
}

fn splat(v: &mut Verifier<'_>, op: &Operation, value: Value) {
    let Some(result) = v.result_type(op) else { return };
    let ok = matches!(result, Type::Vector(_)) || matches!(result, Type::Tile(t) if t.space == MemorySpace::Register);
    if !ok {
        v.error(op.span, format!("'tile.splat' produces a register tile or a vector, not '{result}'"));
    } else if v.ty(value) != &Type::Scalar(result.element_type()) {
        v.error(op.span, format!("'tile.splat' of '{}' cannot produce elements of '{}'", v.ty(value), result.element_type()));
    }
}

fn fill(v: &mut Verifier<'_>, op: &Operation, value: Literal) {
    let Some(result) = v.result_type(op) else { return };
    let ok = matches!(result, Type::Vector(_)) || matches!(result, Type::Tile(t) if t.space == MemorySpace::Register);
    if !ok {
        v.error(op.span, format!("'tile.fill' produces a register tile or a vector, not '{result}'"));
        return;
    }
    if let Type::Tile(t) = result {
        if t.static_shape().is_none() {
            v.error(op.span, "'tile.fill' needs a static shape");
        }
    }
    check_scalar_value(v, op, value, result.element_type());
}

fn alloc_shared(v: &mut Verifier<'_>, op: &Operation) {
    let Some(result) = v.result_type(op) else { return };
    match result {
        Type::Tile(t) if t.space == MemorySpace::Shared => {
            if t.static_shape().is_none() {
                v.error(op.span, "'tile.alloc_shared' needs a static shape");
            }
        }
        other => v.error(op.span, format!("'tile.alloc_shared' produces a shared tile, not '{other}'")),
    }
}

fn copy_g2s(v: &mut Verifier<'_>, op: &Operation, copy: &typed::CopyG2S) {
    let src = v.tile_in(op, copy.src, "its source", MemorySpace::Global);
    let dst = v.tile_in(op, copy.dst, "its destination", MemorySpace::Shared);
    let (Some(src), Some(dst)) = (src, dst) else { return };
    v.indices(op, &copy.src_indices, src.rank(), false);
    global_window_rank(v, op, src.elem, src.rank(), dst.elem, &dst.shape, "destination");
}

fn copy_s2r(v: &mut Verifier<'_>, op: &Operation, copy: &typed::CopyS2R) {
    let Some(result) = v.result_type(op) else { return };
    let Some(src) = v.tile_in(op, copy.src, "its source", MemorySpace::Shared) else { return };
    v.indices(op, &copy.src_indices, src.rank(), true);
    let Type::Tile(dst) = result else {
        v.error(op.span, format!("'tile.copy_s2r' produces a register tile, not '{result}'"));
        return;
    };
    if dst.space != MemorySpace::Register {
        v.error(op.span, format!("'tile.copy_s2r' produces a register tile, not '{result}'"));
        return;
    }
    same_elem_and_rank(v, op, src.elem, src.rank(), dst.elem, dst.rank());
    window_fits(v, op, &src.shape, &dst.shape, copy.src_indices.is_empty());
}

fn copy_from_reg(v: &mut Verifier<'_>, op: &Operation, value: Value, dst: Value, dst_indices: &[Value], space: MemorySpace) {
    let value = v.tile_in(op, value, "the stored value", MemorySpace::Register);
    let dst = v.tile_in(op, dst, "its destination", space);
    let (Some(value), Some(dst)) = (value, dst) else { return };
    v.indices(op, dst_indices, dst.rank(), space == MemorySpace::Shared);
    if space == MemorySpace::Global && value.elem == dst.elem {
        global_window_rank(v, op, dst.elem, dst.rank(), value.elem, &value.shape, "stored value");
    } else {
        same_elem_and_rank(v, op, value.elem, value.rank(), dst.elem, dst.rank());
    }
    if space == MemorySpace::Shared {
        window_fits(v, op, &dst.shape, &value.shape, dst_indices.is_empty());
    }
}

/// The source (`a`, rank `ra`) and destination (`b`, rank `rb`) of a copy agree in element type and rank. Copies do
/// not convert: the message says where the `tile.cast` goes (only register tiles are cast).
fn same_elem_and_rank(v: &mut Verifier<'_>, op: &Operation, a: ScalarType, ra: usize, b: ScalarType, rb: usize) {
    if a != b {
        let fix = match op.kind {
            OpKind::CopyR2G | OpKind::CopyR2S => format!("cast the register tile to '{b}' with 'tile.cast' before the copy"),
            OpKind::CopyS2R => format!("copy at '{a}' and cast the register tile with 'tile.cast'"),
            _ => format!("give the shared tile the element type '{a}', and cast after 'tile.copy_s2r' with 'tile.cast'"),
        };
        v.error(op.span, format!("'{}' copies between element types '{a}' and '{b}' (copies do not convert): {fix}", op.kind));
    } else if ra != rb {
        v.error(op.span, format!("'{}' copies between tiles of rank {ra} and {rb}", op.kind));
    }
}

/// A copy between a global tile of rank `rg` and a shared or register window of shape `window` (rank `rw`):
/// the same element type, and `rg >= rw`, or a vector. A *rank-reducing* copy (`rg > rw`, e.g.
/// `%A[%b, %m0, %k0]` of a rank-3 `%A` into a 2-D shared tile) moves the window at the last `rw` indices of the
/// slice the leading `rg - rw` indices pick: the window has extent 1 along the leading axes. A *vector* copy
/// (`rg = 1`, `rw = 2`: a 1-D bias `%bias[%n0]` into a `1xN` tile, or a per-row vector into an `Mx1` one) views
/// the 1-D global tile as the window's row or column: the window's first axis of extent 1 is the one the global
/// tile lacks.
fn global_window_rank(v: &mut Verifier<'_>, op: &Operation, g: ScalarType, rg: usize, w: ScalarType, window: &[Dim], what: &str) {
    let rw = window.len();
    let vector = rg == 1 && rw == 2 && window.contains(&Dim::Static(1));
    if g != w {
        same_elem_and_rank(v, op, g, rg, w, rw);
    } else if rw == 0 || (rg < rw && !vector) {
        let hint = if rg == 1 { format!("; a 1-D global tile copies to or from a 1xN or Mx1 {what}") } else { String::new() };
        v.error(op.span, format!("'{}' copies between a rank-{rg} global tile and a rank-{rw} {what}; the global tile's rank must be at least the {what}'s (its leading indices pick a slice){hint}", op.kind));
    }
}

/// A window of `window` shape fits in a tile of `whole` shape (and equals it when there are no indices).
fn window_fits(v: &mut Verifier<'_>, op: &Operation, whole: &[Dim], window: &[Dim], exact: bool) {
    let fits = whole.iter().zip(window).all(|(w, x)| match (w, x) {
        (Dim::Static(w), Dim::Static(x)) => if exact { x == w } else { x <= w },
        _ => true,
    });
    if !fits {
        let show = |d: &[Dim]| d.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        let relation = if exact { "must equal" } else { "must fit in" };
        v.error(op.span, format!("'{}' window {} {relation} the shared tile {}", op.kind, show(window), show(whole)));
    }
}

fn mma(v: &mut Verifier<'_>, op: &Operation, mma: &typed::Mma) {
    let Some(result) = v.result_type(op) else { return };
    let (a, b, c) = (mma.a, mma.b, mma.c);
    let ta = v.tile_in(op, a, "A", MemorySpace::Register);
    let tb = v.tile_in(op, b, "B", MemorySpace::Register);
    let tc = v.tile_in(op, c, "C", MemorySpace::Register);
    let (Some(ta), Some(tb), Some(tc)) = (ta, tb, tc) else { return };
    let dims = |t: &crate::types::TileType| match t.static_shape().as_deref() {
        Some(&[r, c]) => Some((r, c)),
        _ => None,
    };
    let (Some((m, k)), Some((k2, n)), Some((m2, n2))) = (dims(ta), dims(tb), dims(tc)) else {
        v.error(op.span, "'tile.mma' operands must be rank-2 tiles of static shape");
        return;
    };
    if k != k2 || m != m2 || n != n2 {
        v.error(op.span, format!("'tile.mma' shapes do not chain: A is {m}x{k}, B is {k2}x{n}, C is {m2}x{n2} (need MxK, KxN, MxN)"));
    }
    if ta.elem != tb.elem && !(ta.elem.is_integer() && tb.elem.is_integer() && ta.elem.bit_width() == tb.elem.bit_width()) {
        v.error(op.span, format!("'tile.mma' needs A and B of one element type, found '{}' and '{}'", ta.elem, tb.elem));
    } else if !mma_types_supported(ta.elem, tc.elem) {
        v.error(op.span, format!("'tile.mma' does not support '{}' inputs with a '{}' accumulator", ta.elem, tc.elem));
    }
    if !same_value_type(result, &Type::Tile(tc.clone())) {
        v.error(op.span, format!("'tile.mma' result '{result}' must have the accumulator's type '{tc}'"));
    }
}

// ---- reductions, broadcasts, masks (issue 16) ---------------------------------------------------------------

/// A static register tile, or an error at `op` naming `what`.
fn static_reg_tile<'a>(v: &mut Verifier<'a>, op: &Operation, ty: &'a Type, what: &str) -> Option<(&'a crate::types::TileType, Vec<u64>)> {
    match ty {
        Type::Tile(t) if t.space == MemorySpace::Register => match t.static_shape() {
            Some(shape) => Some((t, shape)),
            None => {
                v.error(op.span, format!("'{}' needs {what} of static shape, found '{ty}'", op.kind));
                None
            }
        },
        other => {
            v.error(op.span, format!("'{}' expects {what} to be a register tile, found '{other}'", op.kind));
            None
        }
    }
}

fn show_dims(shape: &[u64]) -> String {
    shape.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("x")
}

/// `tile.reduce`: f32 or i32 elements, an axis of the source, the result the source's shape with extent 1 there.
fn reduce(v: &mut Verifier<'_>, op: &Operation, r: &typed::Reduce) {
    let Some(result) = v.result_type(op) else { return };
    let Some((src, shape)) = static_reg_tile(v, op, v.ty(r.source), "its source") else { return };
    let Some((dst, out)) = static_reg_tile(v, op, result, "its result") else { return };
    if !matches!(src.elem, ScalarType::F32 | ScalarType::I32) {
        v.error(op.span, format!("'tile.reduce' reduces f32 or i32 elements, found '{}'; cast first", src.elem));
    }
    if dst.elem != src.elem {
        v.error(op.span, format!("'tile.reduce' result elements '{}' differ from the source's '{}'", dst.elem, src.elem));
    }
    let axis = r.axis as usize;
    if axis >= shape.len() {
        v.error(op.span, format!("'tile.reduce' axis {} is out of range for a rank-{} tile", r.axis, shape.len()));
        return;
    }
    let mut want = shape.clone();
    want[axis] = 1;
    if out != want {
        v.error(op.span, format!("'tile.reduce' along axis {axis} of a {} tile gives a {} tile, found {}", show_dims(&shape), show_dims(&want), show_dims(&out)));
    }
}

/// `tile.broadcast`: every source extent equals the result's or is 1.
fn broadcast(v: &mut Verifier<'_>, op: &Operation, source: Value) {
    let Some(result) = v.result_type(op) else { return };
    let Some((src, shape)) = static_reg_tile(v, op, v.ty(source), "its source") else { return };
    let Some((dst, out)) = static_reg_tile(v, op, result, "its result") else { return };
    if dst.elem != src.elem {
        v.error(op.span, format!("'tile.broadcast' result elements '{}' differ from the source's '{}'", dst.elem, src.elem));
    }
    let ok = shape.len() == out.len() && shape.iter().zip(&out).all(|(&a, &b)| a == b || a == 1);
    if !ok {
        v.error(op.span, format!("'tile.broadcast' repeats axes of extent 1: a {} tile cannot become {}", show_dims(&shape), show_dims(&out)));
    }
}

/// `tile.transpose`: a rank-2 register tile to one of the exchanged shape and the same elements; where both
/// carry linear layouts (after layout assignment), the result's is the source's with `row` and `col` exchanged.
fn transpose(v: &mut Verifier<'_>, op: &Operation, source: Value) {
    let Some(result) = v.result_type(op) else { return };
    let Some((src, shape)) = static_reg_tile(v, op, v.ty(source), "its source") else { return };
    let Some((dst, out)) = static_reg_tile(v, op, result, "its result") else { return };
    if dst.elem != src.elem {
        v.error(op.span, format!("'tile.transpose' result elements '{}' differ from the source's '{}'", dst.elem, src.elem));
    }
    if shape.len() != 2 || out.len() != 2 || shape[0] != out[1] || shape[1] != out[0] {
        v.error(op.span, format!("'tile.transpose' exchanges the two axes of a rank-2 tile: a {} tile cannot become {}", show_dims(&shape), show_dims(&out)));
        return;
    }
    if let (Some(Layout::Linear(a)), Some(Layout::Linear(b))) = (&src.layout, &dst.layout) {
        if a.exchange_outs("row", "col").ok().as_ref() != Some(b) {
            v.error(op.span, "the result layout of 'tile.transpose' must be the source's with 'row' and 'col' exchanged (the registers are only renamed)");
        }
    }
}

/// `tile.iota`: an i32 register tile, an axis of it.
fn iota(v: &mut Verifier<'_>, op: &Operation, axis: u32) {
    let Some(result) = v.result_type(op) else { return };
    let Some((t, shape)) = static_reg_tile(v, op, result, "its result") else { return };
    if t.elem != ScalarType::I32 {
        v.error(op.span, format!("'tile.iota' produces i32 elements, found '{}'", t.elem));
    }
    if axis as usize >= shape.len() {
        v.error(op.span, format!("'tile.iota' axis {axis} is out of range for a rank-{} tile", shape.len()));
    }
}
