//! Rules of the `nvgpu` dialect's ops (shapes follow the PTX ISA and MLIR's `nvgpu` dialect).

use crate::body::Operation;
use crate::ops::OpKind;
use crate::types::{MemorySpace, ScalarType, Type};
use crate::verify::{mma_types_supported, Verifier};

pub(super) fn verify(v: &mut Verifier<'_>, op: &Operation) {
    match op.kind {
        OpKind::ThreadId => {
            v.keyword_attr(op, "dim", &["x", "y", "z"]);
            v.index_result(op);
        }
        OpKind::LaneId | OpKind::WarpId => v.index_result(op),
        OpKind::LdMatrix => ldmatrix(v, op),
        OpKind::StMatrix => stmatrix(v, op),
        OpKind::MmaSync => mma_sync(v, op),
        OpKind::DeviceAsyncCopy => async_copy(v, op),
        OpKind::DeviceAsyncWait => {
            if let Some(n) = op.attr("numGroups") {
                if !n.as_int().is_some_and(|n| (0..=7).contains(&n)) {
                    v.error(op.span, "'nvgpu.device_async_wait' numGroups must be an integer in 0..=7");
                }
            }
        }
        OpKind::Load => load(v, op),
        OpKind::Store => store(v, op),
        OpKind::Extract => extract(v, op),
        OpKind::Insert => insert(v, op),
        _ => {}
    }
}

/// `numTiles` ∈ {1, 2, 4} and an optional boolean `transpose`.
fn matrix_attrs(v: &mut Verifier<'_>, op: &Operation) -> Option<u64> {
    if let Some(t) = op.attr("transpose") {
        if t.as_bool().is_none() {
            v.error(op.span, format!("'{}' transpose must be true or false", op.kind));
        }
    }
    let n = v.int_attr(op, "numTiles")?;
    if ![1, 2, 4].contains(&n) {
        v.error(op.span, format!("'{}' numTiles must be 1, 2 or 4, found {n}", op.kind));
        return None;
    }
    Some(n as u64)
}

/// The per-thread fragment of `n` 8x8 b16 matrices: `vector<Nx2xT>` with a 16-bit `T`.
fn check_fragment(v: &mut Verifier<'_>, op: &Operation, ty: &Type, n: u64) {
    let ok = matches!(ty, Type::Vector(t) if t.shape == [n, 2] && t.elem.bit_width() == 16);
    if !ok {
        v.error(op.span, format!("'{}' with numTiles = {n} moves 'vector<{n}x2xf16>' (or another 16-bit type), found '{ty}'", op.kind));
    }
}

/// `nvgpu.ldmatrix` of 16-bit elements, or (not transposed) of 8-bit ones: the instruction moves b16
/// units, i.e. bytes, so a tile of bytes reads as 16-byte rows of 16 elements, 4 per 32-bit register
/// (`vector<Nx4xi8>`), as MLIR's `nvgpu.ldmatrix` allows. `.trans` would swap 16-bit units, which splits no
/// byte pair but is not an element transpose, so it stays 16-bit only (as in MLIR).
fn ldmatrix(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(src), Some(result)) = (op.operand("src"), v.result_type(op)) else { return };
    let Some(tile) = v.tile_in(op, src, "its source", MemorySpace::Shared) else { return };
    v.indices(op, "indices", tile.rank(), false);
    let trans = op.attr("transpose").and_then(|a| a.as_bool()).unwrap_or(false);
    let bits = tile.elem.bit_width();
    let bytes = bits == 8 && !trans;
    if bits != 16 && !bytes {
        let what = if bits == 8 { "; 8-bit ones only without transpose" } else { "" };
        v.error(op.span, format!("'nvgpu.ldmatrix' loads 16-bit elements{what}, found '{}'", tile.elem));
    }
    if let Some(n) = matrix_attrs(v, op) {
        if bytes {
            if !matches!(result, Type::Vector(t) if t.shape == [n, 4]) {
                v.error(op.span, format!("'nvgpu.ldmatrix' of 8-bit elements with numTiles = {n} moves 'vector<{n}x4x{}>', found '{result}'", tile.elem));
            }
        } else {
            check_fragment(v, op, result, n);
        }
        if result.element_type() != tile.elem {
            v.error(op.span, format!("'nvgpu.ldmatrix' result elements '{}' differ from the tile's '{}'", result.element_type(), tile.elem));
        }
    }
}

fn stmatrix(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else { return };
    let Some(tile) = v.tile_in(op, dst, "its destination", MemorySpace::Shared) else { return };
    v.indices(op, "indices", tile.rank(), false);
    if let Some(n) = matrix_attrs(v, op) {
        let ty = v.ty(value);
        check_fragment(v, op, ty, n);
        if ty.element_type() != tile.elem {
            v.error(op.span, format!("'nvgpu.stmatrix' stores '{}' into a tile of '{}'", ty.element_type(), tile.elem));
        }
    }
}

/// Per-thread element counts of A, B and C/D for an mma.sync shape.
fn fragment_sizes(m: u64, n: u64, k: u64) -> (u64, u64, u64) {
    if (m, n, k) == (8, 8, 4) {
        // Each of the four quad-pairs of the warp computes its own 8x8x4 product.
        (4, 4, 8)
    } else {
        (m * k / 32, k * n / 32, m * n / 32)
    }
}

fn mma_sync(v: &mut Verifier<'_>, op: &Operation) {
    let shape = op.attr("mmaShape").and_then(|a| a.as_int_array());
    let Some([m, n, k]) = shape.as_deref().and_then(|s| <[i64; 3]>::try_from(s).ok()) else {
        v.error(op.span, "'nvgpu.mma.sync' needs 'mmaShape = [m, n, k]'");
        return;
    };
    let (Some(a), Some(b), Some(c), Some(result)) = (op.operand("a"), op.operand("b"), op.operand("c"), v.result_type(op)) else {
        return;
    };
    let (Some(ta), Some(tb), Some(tc)) = (v.vector(op, a, "A"), v.vector(op, b, "B"), v.vector(op, c, "C")) else {
        return;
    };
    let ab = ta.elem;
    let known = match (m, n, k) {
        (8, 8, 4) => ab == ScalarType::F16,
        (16, 8, 8) => matches!(ab, ScalarType::F16 | ScalarType::BF16 | ScalarType::TF32),
        (16, 8, 16) => matches!(ab, ScalarType::F16 | ScalarType::BF16 | ScalarType::I8 | ScalarType::U8),
        (16, 8, 4) => ab == ScalarType::TF32,
        (16, 8, 32) => matches!(ab, ScalarType::I8 | ScalarType::U8 | ScalarType::I4 | ScalarType::U4 | ScalarType::F8E4M3 | ScalarType::F8E5M2),
        (16, 8, 64) => matches!(ab, ScalarType::I4 | ScalarType::U4),
        (8, 8, 128) => false,
        _ => false,
    };
    if !known {
        v.error(op.span, format!("'nvgpu.mma.sync' has no m{m}n{n}k{k} shape for '{ab}' inputs"));
        return;
    }
    if tb.elem != ab && !(tb.elem.is_integer() && ab.is_integer()) {
        v.error(op.span, format!("'nvgpu.mma.sync' A and B element types differ: '{ab}' and '{}'", tb.elem));
    }
    if !mma_types_supported(ab, tc.elem) {
        v.error(op.span, format!("'nvgpu.mma.sync' does not accumulate '{ab}' into '{}'", tc.elem));
    }
    // `.row`/`.col` of A and B (`layoutA = col`): only m8n8k4 has other forms than `.row.col`.
    let layout = |name: &str, default: &str| match op.attr(name) {
        None => Some(default.to_string()),
        Some(a) => a.as_keyword().or(a.as_str()).filter(|k| *k == "row" || *k == "col").map(str::to_string),
    };
    match (layout("layoutA", "row"), layout("layoutB", "col")) {
        (Some(la), Some(lb)) => {
            if (m, n, k) != (8, 8, 4) && (la != "row" || lb != "col") {
                v.error(op.span, format!("'nvgpu.mma.sync' m{m}n{n}k{k} exists only as layoutA = row, layoutB = col"));
            }
        }
        _ => v.error(op.span, "'nvgpu.mma.sync' layoutA and layoutB must be 'row' or 'col'"),
    }
    let (fa, fb, fc) = fragment_sizes(m as u64, n as u64, k as u64);
    for (what, ty, expected) in [("A", ta, fa), ("B", tb, fb), ("C", tc, fc)] {
        if ty.num_elements() != expected {
            v.error(op.span, format!("'nvgpu.mma.sync' m{m}n{n}k{k} needs {expected} elements of {what} per thread, found '{ty}'"));
        }
    }
    if result != &Type::Vector(tc.clone()) {
        v.error(op.span, format!("'nvgpu.mma.sync' result '{result}' must have C's type '{tc}'"));
    }
}

fn async_copy(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(src), Some(dst)) = (op.operand("src"), op.operand("dst")) else { return };
    let src = v.tile_in(op, src, "its source", MemorySpace::Global);
    let dst = v.tile_in(op, dst, "its destination", MemorySpace::Shared);
    let (Some(src), Some(dst)) = (src, dst) else { return };
    v.indices(op, "src_indices", src.rank(), false);
    v.indices(op, "dst_indices", dst.rank(), false);
    if src.elem != dst.elem {
        v.error(op.span, format!("'nvgpu.device_async_copy' copies '{}' into '{}'", src.elem, dst.elem));
    }
    if let Some(n) = v.int_attr(op, "dstElements") {
        let bits = n * dst.elem.bit_width() as i64;
        if ![32, 64, 128].contains(&bits) {
            v.error(op.span, format!("'nvgpu.device_async_copy' moves 4, 8 or 16 bytes, not {n} x {}", dst.elem));
        }
    }
    if let Some(s) = op.operand("src_elements") {
        if !v.ty(s).is_index() {
            v.error(op.span, "'nvgpu.device_async_copy' source element count must be 'index'");
        }
    }
}

/// Loads and stores move a scalar of the tile's element type or a 1-D vector of it.
fn check_access(v: &mut Verifier<'_>, op: &Operation, ty: &Type, elem: ScalarType) {
    let ok = match ty {
        Type::Scalar(s) => *s == elem,
        Type::Vector(t) => t.shape.len() == 1 && t.elem == elem,
        Type::Tile(_) => false,
    };
    if !ok {
        v.error(op.span, format!("'{}' moves '{elem}' or a 1-D vector of it, not '{ty}'", op.kind));
    }
}

fn memory_tile<'a>(v: &mut Verifier<'a>, op: &Operation, mem: crate::body::Value) -> Option<&'a crate::types::TileType> {
    match v.ty(mem) {
        Type::Tile(t) if t.space != MemorySpace::Register => Some(t),
        other => {
            v.error(op.span, format!("'{}' accesses a global or shared tile, not '{other}'", op.kind));
            None
        }
    }
}

fn load(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(src), Some(result)) = (op.operand("src"), v.result_type(op)) else { return };
    let Some(tile) = memory_tile(v, op, src) else { return };
    v.indices(op, "indices", tile.rank(), false);
    check_access(v, op, result, tile.elem);
    check_mask(v, op);
}

fn store(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else { return };
    let Some(tile) = memory_tile(v, op, dst) else { return };
    v.indices(op, "indices", tile.rank(), false);
    let ty = v.ty(value);
    check_access(v, op, ty, tile.elem);
    check_mask(v, op);
}

/// The optional `if %mask` of a load or store is an `i1`.
fn check_mask(v: &mut Verifier<'_>, op: &Operation) {
    if let Some(mask) = op.operand("mask") {
        if v.ty(mask) != &Type::Scalar(ScalarType::I1) {
            v.error(op.span, format!("'{}' mask must be 'i1', found '{}'", op.kind, v.ty(mask)));
        }
    }
}

fn position(v: &mut Verifier<'_>, op: &Operation, shape: &[u64]) {
    let pos = op.attr("position").and_then(|a| a.as_int_array());
    let ok = pos.is_some_and(|p| p.len() == shape.len() && p.iter().zip(shape).all(|(&i, &n)| i >= 0 && (i as u64) < n));
    if !ok {
        v.error(op.span, format!("'{}' needs a position like [i, j] inside the vector's shape", op.kind));
    }
}

fn extract(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(vector), Some(result)) = (op.operand("vector"), v.result_type(op)) else { return };
    let Some(t) = v.vector(op, vector, "its operand") else { return };
    position(v, op, &t.shape.clone());
    if result != &Type::Scalar(t.elem) {
        v.error(op.span, format!("'nvgpu.extract' from '{t}' produces '{}', not '{result}'", t.elem));
    }
}

fn insert(v: &mut Verifier<'_>, op: &Operation) {
    let (Some(value), Some(vector), Some(result)) = (op.operand("value"), op.operand("vector"), v.result_type(op)) else {
        return;
    };
    let Some(t) = v.vector(op, vector, "its destination") else { return };
    position(v, op, &t.shape.clone());
    if v.ty(value) != &Type::Scalar(t.elem) {
        v.error(op.span, format!("'nvgpu.insert' puts '{}' into '{t}'", v.ty(value)));
    }
    if result != &Type::Vector(t.clone()) {
        v.error(op.span, format!("'nvgpu.insert' result must be '{t}', found '{result}'"));
    }
}
