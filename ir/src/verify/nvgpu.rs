//! Rules of the `nvgpu` dialect's ops (shapes follow the PTX ISA and MLIR's `nvgpu` dialect).

use crate::body::{Operation, Value};
use crate::ops::typed::{self, AnyOp};
use crate::ops::{MatrixOrder, MmaShape};
use crate::types::{MemorySpace, ScalarType, Type};
use crate::verify::{mma_types_supported, Verifier};

/// The rules of one op, whose attributes the catalogue already checked (so its typed view exists).
pub(super) fn verify(v: &mut Verifier<'_>, op: &Operation, typed: AnyOp) {
    if super::hopper::verify(v, op, &typed) {
        return;
    }
    match typed {
        AnyOp::ThreadId(_) | AnyOp::LaneId(_) | AnyOp::WarpId(_) => v.index_result(op),
        AnyOp::LdMatrix(ld) => ldmatrix(v, op, &ld),
        AnyOp::StMatrix(st) => stmatrix(v, op, &st),
        AnyOp::MmaSync(mma) => mma_sync(v, op, &mma),
        AnyOp::DeviceAsyncCopy(copy) => async_copy(v, op, &copy),
        AnyOp::DeviceAsyncWait(wait) if wait.num_groups > 7 => {
            v.error(op.span, "'nvgpu.device_async_wait' numGroups must be an integer in 0..=7");
        }
        AnyOp::Load(load) => self::load(v, op, &load),
        AnyOp::Store(store) => self::store(v, op, &store),
        AnyOp::Extract(extract) => self::extract(v, op, &extract),
        AnyOp::Insert(insert) => self::insert(v, op, &insert),
        AnyOp::Shuffle(shuffle) => self::shuffle(v, op, &shuffle),
        _ => {}
    }
}

/// `numTiles` ∈ {1, 2, 4}.
fn matrix_count(v: &mut Verifier<'_>, op: &Operation, num_tiles: u32) -> Option<u64> {
    if ![1, 2, 4].contains(&num_tiles) {
        v.error(op.span, format!("'{}' numTiles must be 1, 2 or 4, found {num_tiles}", op.kind));
        return None;
    }
    Some(u64::from(num_tiles))
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
fn ldmatrix(v: &mut Verifier<'_>, op: &Operation, ld: &typed::LdMatrix) {
    let Some(result) = v.result_type(op) else { return };
    let Some(tile) = v.tile_in(op, ld.src, "its source", MemorySpace::Shared) else { return };
    v.indices(op, &ld.indices, tile.rank(), false);
    let trans = ld.transpose;
    let bits = tile.elem.bit_width();
    let bytes = bits == 8 && !trans;
    if bits != 16 && !bytes {
        let what = if bits == 8 { "; 8-bit ones only without transpose" } else { "" };
        v.error(op.span, format!("'nvgpu.ldmatrix' loads 16-bit elements{what}, found '{}'", tile.elem));
    }
    if let Some(n) = matrix_count(v, op, ld.num_tiles) {
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

fn stmatrix(v: &mut Verifier<'_>, op: &Operation, st: &typed::StMatrix) {
    let Some(tile) = v.tile_in(op, st.dst, "its destination", MemorySpace::Shared) else { return };
    v.indices(op, &st.indices, tile.rank(), false);
    if let Some(n) = matrix_count(v, op, st.num_tiles) {
        let ty = v.ty(st.value);
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

fn mma_sync(v: &mut Verifier<'_>, op: &Operation, mma: &typed::MmaSync) {
    let MmaShape { m, n, k } = mma.mma_shape;
    let Some(result) = v.result_type(op) else { return };
    let (Some(ta), Some(tb), Some(tc)) = (v.vector(op, mma.a, "A"), v.vector(op, mma.b, "B"), v.vector(op, mma.c, "C")) else {
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
    if (m, n, k) != (8, 8, 4) && (mma.layout_a, mma.layout_b) != (MatrixOrder::Row, MatrixOrder::Col) {
        v.error(op.span, format!("'nvgpu.mma.sync' m{m}n{n}k{k} exists only as layoutA = row, layoutB = col"));
    }
    let (fa, fb, fc) = fragment_sizes(u64::from(m), u64::from(n), u64::from(k));
    for (what, ty, expected) in [("A", ta, fa), ("B", tb, fb), ("C", tc, fc)] {
        if ty.num_elements() != expected {
            v.error(op.span, format!("'nvgpu.mma.sync' m{m}n{n}k{k} needs {expected} elements of {what} per thread, found '{ty}'"));
        }
    }
    if result != &Type::Vector(tc.clone()) {
        v.error(op.span, format!("'nvgpu.mma.sync' result '{result}' must have C's type '{tc}'"));
    }
}

fn async_copy(v: &mut Verifier<'_>, op: &Operation, copy: &typed::DeviceAsyncCopy) {
    let src = v.tile_in(op, copy.src, "its source", MemorySpace::Global);
    let dst = v.tile_in(op, copy.dst, "its destination", MemorySpace::Shared);
    let (Some(src), Some(dst)) = (src, dst) else { return };
    v.indices(op, &copy.src_indices, src.rank(), false);
    v.indices(op, &copy.dst_indices, dst.rank(), false);
    if src.elem != dst.elem {
        v.error(op.span, format!("'nvgpu.device_async_copy' copies '{}' into '{}'", src.elem, dst.elem));
    }
    let n = copy.dst_elements;
    let bits = u64::from(n) * u64::from(dst.elem.bit_width());
    if ![32, 64, 128].contains(&bits) {
        v.error(op.span, format!("'nvgpu.device_async_copy' moves 4, 8 or 16 bytes, not {n} x {}", dst.elem));
    }
    if let Some(s) = copy.src_elements {
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

fn load(v: &mut Verifier<'_>, op: &Operation, load: &typed::Load) {
    let Some(result) = v.result_type(op) else { return };
    let Some(tile) = memory_tile(v, op, load.src) else { return };
    v.indices(op, &load.indices, tile.rank(), false);
    check_access(v, op, result, tile.elem);
    check_mask(v, op, load.mask);
}

fn store(v: &mut Verifier<'_>, op: &Operation, store: &typed::Store) {
    let Some(tile) = memory_tile(v, op, store.dst) else { return };
    v.indices(op, &store.indices, tile.rank(), false);
    let ty = v.ty(store.value);
    check_access(v, op, ty, tile.elem);
    check_mask(v, op, store.mask);
}

/// The optional `if %mask` of a load or store is an `i1`.
fn check_mask(v: &mut Verifier<'_>, op: &Operation, mask: Option<Value>) {
    if let Some(mask) = mask {
        if v.ty(mask) != &Type::Scalar(ScalarType::I1) {
            v.error(op.span, format!("'{}' mask must be 'i1', found '{}'", op.kind, v.ty(mask)));
        }
    }
}

fn position(v: &mut Verifier<'_>, op: &Operation, position: &[u32], shape: &[u64]) {
    let ok = position.len() == shape.len() && position.iter().zip(shape).all(|(&i, &n)| u64::from(i) < n);
    if !ok {
        v.error(op.span, format!("'{}' needs a position like [i, j] inside the vector's shape", op.kind));
    }
}

fn extract(v: &mut Verifier<'_>, op: &Operation, extract: &typed::Extract) {
    let Some(result) = v.result_type(op) else { return };
    let Some(t) = v.vector(op, extract.vector, "its operand") else { return };
    position(v, op, &extract.position, &t.shape.clone());
    if result != &Type::Scalar(t.elem) {
        v.error(op.span, format!("'nvgpu.extract' from '{t}' produces '{}', not '{result}'", t.elem));
    }
}

fn insert(v: &mut Verifier<'_>, op: &Operation, insert: &typed::Insert) {
    let Some(result) = v.result_type(op) else { return };
    let Some(t) = v.vector(op, insert.vector, "its destination") else { return };
    position(v, op, &insert.position, &t.shape.clone());
    if v.ty(insert.value) != &Type::Scalar(t.elem) {
        v.error(op.span, format!("'nvgpu.insert' puts '{}' into '{t}'", v.ty(insert.value)));
    }
    if result != &Type::Vector(t.clone()) {
        v.error(op.span, format!("'nvgpu.insert' result must be '{t}', found '{result}'"));
    }
}

/// `nvgpu.shuffle`: a 32-bit scalar in and out, an offset inside the warp.
fn shuffle(v: &mut Verifier<'_>, op: &Operation, s: &typed::Shuffle) {
    let Some(result) = v.result_type(op) else { return };
    let ty = v.ty(s.value);
    let ok = matches!(ty, Type::Scalar(t) if t.bit_width() == 32 && *t != ScalarType::TF32);
    if !ok || ty != result {
        v.error(op.span, format!("'nvgpu.shuffle' exchanges a 32-bit scalar (f32 or i32) of the result's type, found '{ty}' -> '{result}'"));
    }
    if s.offset == 0 || s.offset > 31 {
        v.error(op.span, format!("'nvgpu.shuffle' offset must be in 1..=31, found {}", s.offset));
    }
}
