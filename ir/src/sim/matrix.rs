//! `ldmatrix` and `stmatrix` (m8n8, b16), from the PTX ISA's description of the instructions.
//!
//! With `.x1`, `.x2` or `.x4` (`numTiles` = n), lanes `8i .. 8i+7` give the shared addresses of rows
//! `0 .. 7` of matrix `i`; each row is 8 contiguous 16-bit elements (16 bytes) at a 16-byte aligned address.
//! The addresses of lanes `8n ..` are ignored. A row is consecutive in memory: in a `#col_major` tile it
//! runs down a column (see `memory`). Register `i` of lane `t` holds matrix `i`'s row `t / 4`,
//! columns `2 (t % 4)` and `2 (t % 4) + 1` (low half first); with `.trans` it holds column `t / 4`, rows
//! `2 (t % 4)` and `2 (t % 4) + 1`, i.e. each 8x8 matrix arrives transposed. `stmatrix` moves the same
//! elements the other way.
//!
//! `ldmatrix` (not `.trans`) also reads a tile of 8-bit elements: the instruction moves bytes, 16 per row,
//! so a row is 16 8-bit elements and register `i` of lane `t` holds elements `4 (t % 4) .. 4 (t % 4) + 3`
//! of row `t / 4` (the two b16 units `2 (t % 4)`, `2 (t % 4) + 1`, each low byte first), as a
//! `vector<n x 4 x i8>`; MLIR's `nvgpu.ldmatrix` has the same form.

use crate::body::{Operation, Value};
use crate::ops::typed;
use crate::types::Type;

use super::error::SimError;
use super::exec::{Ctx, Val, Warp};
use super::memory::{MemRef, Run};
use super::race::RaceSpace;

/// `numTiles`, `transpose` and the elements per 32-bit register (2, or 4 for the 8-bit `ldmatrix`), and
/// a check that `ty` is the per-lane fragment `vector<n x 2 x b16>` (`vector<n x 4 x b8>`).
fn matrix_form(
    ctx: &Ctx<'_>,
    op: &Operation,
    ty: &Type,
    mem: Value,
    num_tiles: u32,
    trans: bool,
) -> Result<(usize, bool, usize), SimError> {
    let fragment_error = |message: String| SimError::FragmentType { span: op.span, op: op.kind.name(), message };
    let n = match num_tiles {
        n @ (1 | 2 | 4) => n as usize,
        other => return Err(fragment_error(format!("numTiles must be 1, 2 or 4, found {other}"))),
    };
    let tile = ctx.func.body.ty(mem);
    let bits = match tile {
        Type::Tile(t) if t.space == crate::types::MemorySpace::Shared => t.elem.bit_width(),
        _ => 0,
    };
    let bytes_allowed = op.kind == crate::ops::OpKind::LdMatrix && !trans;
    if bits != 16 && !(bits == 8 && bytes_allowed) {
        return Err(fragment_error(format!(
            "the matrices must be in a shared tile of 16-bit elements (8-bit ones only for a plain ldmatrix), not '{tile}'"
        )));
    }
    let per = (32 / bits) as usize;
    let ok = matches!(ty, Type::Vector(v) if v.shape == [n as u64, per as u64] && v.elem.bit_width() == bits);
    if !ok {
        return Err(fragment_error(format!("numTiles = {n} moves 'vector<{n}x{per}x...>' ({bits}-bit elements) per lane, not '{ty}'")));
    }
    Ok((n, trans, per))
}

/// Which element of the matrix element `j` of a lane's register holds (`per` elements per register; a
/// matrix is 8 rows of `4 * per` elements).
fn element_of(lane: usize, j: usize, trans: bool, per: usize) -> (usize, usize) {
    let (r, c) = (lane / 4, per * (lane % 4) + j);
    if trans {
        (c, r)
    } else {
        (r, c)
    }
}

/// Where the row addressed by each of the lanes `0 .. 8n` (the address: the shared tile and its indices) is in the tile's data (`len` elements each),
/// recorded for the race detector as read when `record_read` (`ldmatrix`; `stmatrix` records its writes with
/// the values written, [`stmatrix`]).
fn row_offsets(
    w: &Warp,
    ctx: &Ctx<'_>,
    op: &Operation,
    (mem_value, indices): (Value, &[Value]),
    n: usize,
    len: usize,
    record_read: bool,
) -> Result<(usize, Vec<Run>), SimError> {
    let mut tile = None;
    let mut offsets = Vec::with_capacity(8 * n);
    for lane in 0..(8 * n) as u32 {
        let mem = w.mem(ctx, op, mem_value, lane)?;
        let MemRef::Shared(t) = mem else {
            return Err(SimError::FragmentType { span: op.span, op: op.kind.name(), message: "the matrices must be in shared memory".into() });
        };
        tile = Some(t);
        let index = w.indices(ctx, op, indices, lane)?;
        let (run, _) = w.access(ctx, op, lane, mem, &index, len, Some(16))?;
        if record_read {
            w.record_access(ctx, op, mem, run, len, false)?;
        }
        offsets.push(run);
    }
    Ok((tile.unwrap_or(0), offsets))
}

pub(super) fn ldmatrix(w: &mut Warp, ctx: &mut Ctx<'_>, op: &Operation, ld: &typed::LdMatrix) -> Result<(), SimError> {
    w.require_converged(ctx, op)?;
    let Some(result) = op.result() else {
        return Err(SimError::FragmentType { span: op.span, op: op.kind.name(), message: "needs a result".into() });
    };
    let (n, trans, per) = matrix_form(ctx, op, ctx.func.body.ty(result), ld.src, ld.num_tiles, ld.transpose)?;
    // Phase 1: lanes 0 .. 8n read their row (16 bytes).
    let (tile, offsets) = row_offsets(w, ctx, op, (ld.src, &ld.indices), n, 4 * per, true)?;
    let data = &ctx.shared.tiles[tile].data.values;
    let rows: Vec<Vec<f64>> = offsets.iter().map(|&run| run.positions(4 * per).map(|i| data[i]).collect()).collect();
    // Phase 2: the rows are distributed over the warp.
    for lane in 0..32usize {
        let mut v = Vec::with_capacity(per * n);
        for i in 0..n {
            for j in 0..per {
                let (r, c) = element_of(lane, j, trans, per);
                v.push(rows[8 * i + r][c]);
            }
        }
        w.set(result, lane as u32, Val::Vector(v));
    }
    Ok(())
}

pub(super) fn stmatrix(w: &mut Warp, ctx: &mut Ctx<'_>, op: &Operation, st: &typed::StMatrix) -> Result<(), SimError> {
    w.require_converged(ctx, op)?;
    let (value, dst) = (st.value, st.dst);
    let (n, trans, _) = matrix_form(ctx, op, ctx.func.body.ty(value), dst, st.num_tiles, st.transpose)?;
    let mut fragments = Vec::with_capacity(32);
    for lane in 0..32u32 {
        fragments.push(w.vector(ctx, op, value, lane)?.to_vec());
    }
    let (tile, offsets) = row_offsets(w, ctx, op, (dst, &st.indices), n, 8, false)?;
    // Gather each row of each matrix from the lanes holding its elements, then write it where its lane says.
    let mut rows = vec![[0.0f64; 8]; 8 * n];
    for (lane, fragment) in fragments.iter().enumerate() {
        for i in 0..n {
            for j in 0..2 {
                let (r, c) = element_of(lane, j, trans, 2);
                rows[8 * i + r][c] = fragment[2 * i + j];
            }
        }
    }
    // A generic-proxy write (for the async-proxy fence check): the whole tile, conservatively.
    let t = &ctx.shared.tiles[tile];
    let end = t.base + (t.data.values.len() as u64 * u64::from(t.data.elem.bit_width())).div_ceil(8);
    w.check_not_in_flight(ctx, op, (t.base, end))?;
    ctx.shared.generic_write(w.id, (t.base, end));
    // The writes, for the race detector: two warps storing the same value to an element (the copies of a
    // register tile replicated over the warps) do not race, as for `nvgpu.store`.
    let data = &ctx.shared.tiles[tile].data;
    let len = data.values.len();
    let writes: Vec<(usize, bool)> =
        rows.iter().zip(&offsets).flat_map(|(row, &run)| run.positions(8).zip(row).map(|(i, &v)| (i, data.values.get(i) == Some(&v)))).collect();
    ctx.race.borrow_mut().write(RaceSpace::Shared(tile), len, writes, w.id, op.span, op.kind.name(), w.place(ctx))?;
    let data = &mut ctx.shared.tiles[tile].data.values;
    for (row, &run) in rows.iter().zip(&offsets) {
        for (i, &v) in run.positions(8).zip(row) {
            data[i] = v;
        }
    }
    Ok(())
}
