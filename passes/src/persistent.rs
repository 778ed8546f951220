//! `persistent-grid`: the kernel attribute `persistent = true` makes a lowered kernel persistent, as
//! CUTLASS's persistent tile scheduler and Triton's persistent matmul do: the launch is P blocks (P =
//! min(tiles, SMs x resident blocks per SM), the launcher's choice) and each block loops over output tiles
//! ```text
//! for t = block_id x; t < gx * gy * gz; t += grid_dim x:
//!     (x, y, z) = (t % gx, (t / gx) % gy, t / (gx * gy))       the logical block, x fastest
//!     <the kernel's body, block_id x/y/z := x, y, z and grid_dim x/y/z := gx, gy, gz>
//!     barrier                                                    every warp is done with this tile
//! ```
//! The tile-level program keeps its meaning: the interpreter runs the logical grid as written. The logical
//! grid `(gx, gy, gz)` travels as three hidden `index` arguments appended to the kernel's own
//! ([`HIDDEN_GRID_ARGS`]: the host knows the grid, the kernel does not, since the default grid is derived on the
//! host from the stores of the output); `tilec sim`, `tilec bundle`/`bench` and the GPU runner pass them and
//! launch P blocks. Grouped order needs nothing here: `rasterize` (tile level, `raster_group`) has already
//! rewritten every use of `block_id x/y` into the grouped permutation of `(block_id, grid_dim)`, and those are
//! the logical values now, so tile `t` of a block is the `t`-th tile of the grouped order.
//!
//! # Placement and what stays outside the loop
//! The pass runs after `lower-tile-to-nvgpu` and before `software-pipeline`. Outside the tile loop stay the
//! shared allocations (`tile.alloc_shared`, `nvgpu.mbarrier.create`) and the mbarrier initialisation with the
//! pure values it uses and the barrier after it: the barriers are initialised once per block, not per tile.
//! Everything else of the entry block (but the final `tile.return`) moves into the loop.
//!
//! # Across tiles
//! - Shared memory: the barrier at the end of each tile orders every read of this tile (the last k-steps'
//!   wgmmas, retired by the `wait_group 0` behind the k-loop, and any shared epilogue) before the next tile's
//!   first write (its prologue's TMA loads or cp.async copies). For a TMA ring `software-pipeline` moves the next
//!   tile's prologue before this tile's epilogue, behind a barrier of its own after the `wait_group 0`, and drops
//!   the end-of-tile barrier when the ring's stages are the kernel's only shared tiles.
//! - Registers: the tile loop is `hoist = false` (no LICM out of it): hoisted, the epilogue's per-thread address
//!   arithmetic stayed live across the k-loop (255 registers and spills for the Hopper GEMM).
//! - The mbarrier ring's phases: `software-pipeline` sees that the k-loop sits in a loop and carries each stage's
//!   fill parity through it ([`crate::pipelining`], "Nested rings"), so the wait parity continues across tiles.
//!   A TMA wait that would not continue (outside a loop, a single-stage loop) is an error, never a hang.
//!
//! # Legality
//! Errors at the attribute: `warp_specialize = true` (its producer would have to keep the ring across tiles:
//! not built), `pipeline_stages = 1` with a TMA k-loop (a single-stage loop's parity restarts every tile), a
//! `tile.return` before the end of the kernel, a TMA copy outside a loop, a kernel that reads its block id where
//! the mbarriers are initialised. A loop's own `pipeline_stages = 1` is refused by `software-pipeline`, at the loop.

use rustc_hash::FxHashSet as HashSet;

use tilec_ir::ops::kernel::GlobalAlignment;
use tilec_ir::ops::{BinaryArith, GridAxis};
use tilec_ir::AttrValue;
use tilec_ir::typed;
use tilec_ir::{Diagnostic, Func, Module, OpId, OpKind, OpSpec, Type, TypedOp, Value};

use crate::analysis::effects::is_pure;
use crate::kernel_attrs::kernel_attrs;

/// The kernel attribute (read as [`tilec_ir::KernelAttrs::persistent`]).
pub const PERSISTENT_ATTR: &str = "persistent";

/// The names of the hidden arguments the pass appends: the logical grid along x, y, z.
pub use tilec_ir::ops::kernel::PERSISTENT_GRID_ARGS as HIDDEN_GRID_ARGS;

/// The `persistent-grid` pass (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentGrid;

impl PersistentGrid {
    pub const NAME: &'static str = "persistent-grid";
    pub const DESCRIPTION: &'static str =
        "persistent = true: P blocks loop over the logical grid's tiles (t += grid_dim), the logical grid as hidden arguments";
}

impl crate::Pass for PersistentGrid {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &'static str {
        Self::DESCRIPTION
    }

    fn run(&self, module: &mut Module, _cx: &mut crate::PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let attrs = kernel_attrs(func)?;
            if attrs.persistent != Some(true) {
                continue;
            }
            let span = func.attr_span(PERSISTENT_ATTR);
            let error = |why: String| Diagnostic::error(span, format!("{PERSISTENT_ATTR} = true: this kernel cannot be made persistent: {why}"));
            if attrs.warp_specialize == Some(true) {
                return Err(error(
                    "with warp_specialize = true the producer warpgroup would have to keep filling the ring across tiles, which is not built"
                        .into(),
                )
                .with_note("set warp_specialize = false (or leave it out) for a persistent grid"));
            }
            let tma_in_loop = func
                .body
                .any_op(func.entry, &mut |op| op.kind == OpKind::MBarrierTryWaitParity && op.parent != Some(func.entry));
            if tma_in_loop && attrs.pipeline_stages == Some(1) {
                return Err(error(
                    "pipeline_stages = 1 leaves its TMA k-loop single-stage, whose mbarrier parity restarts with every tile; the ring (2 or more stages) carries it across tiles"
                        .into(),
                ));
            }
            if is_persistent(func) {
                return Err(error("it already has the hidden grid arguments (the pass ran twice)".into()));
            }
            make_persistent(func).map_err(error)?;
        }
        Ok(())
    }
}

/// Whether `func` went through the pass: its last three arguments are the hidden grid ones.
pub fn is_persistent(func: &Func) -> bool {
    tilec_ir::ops::kernel::has_persistent_grid_args(func)
}

/// The physical linear tile number `t` as the logical block `(x, y, z)` of a `gx x gy x gz` grid, x fastest:
/// the map the tile loop emits (kept here in plain integers for tests and launchers).
pub fn logical_block(t: u64, grid: [u64; 3]) -> [u64; 3] {
    let [gx, gy, _] = grid;
    [t % gx, (t / gx) % gy, t / (gx * gy)]
}

/// The tiles block `b` of `p` runs, in order.
pub fn tiles_of_block(b: u64, p: u64, tiles: u64) -> impl Iterator<Item = u64> {
    (b..tiles).step_by(p.max(1) as usize)
}

fn make_persistent(func: &mut Func) -> Result<(), String> {
    let entry = func.entry;
    let ops = func.body.block(entry).ops.clone();
    let Some((&ret, body_ops)) = ops.split_last() else { return Err("it has no body".into()) };
    if func.body.op(ret).kind != OpKind::Return {
        return Err("it does not end in tile.return".into());
    }
    let mut early_return = false;
    let mut top_level_wait = false;
    func.body.walk(entry, &mut |o| {
        let op = func.body.op(o);
        early_return |= op.kind == OpKind::Return && o != ret;
        top_level_wait |= op.kind == OpKind::MBarrierTryWaitParity && op.parent == Some(entry);
    });
    if early_return {
        return Err("a tile.return before the end of the kernel would leave the tile loop".into());
    }
    if top_level_wait {
        return Err("a TMA copy outside a loop waits on its mbarrier at a fixed parity, which would not hold for the second tile".into());
    }

    // What stays outside: allocations, mbarrier creation and initialisation (with the values they use), and
    // the barrier after the last init.
    let mut stay: HashSet<OpId> = HashSet::default();
    let mut last_init = None;
    for (i, &o) in body_ops.iter().enumerate() {
        match func.body.op(o).kind {
            OpKind::AllocShared | OpKind::MBarrierCreate => {
                stay.insert(o);
            }
            OpKind::MBarrierInit => {
                last_init = Some(i);
                // The init and the values it uses (pure ops of the entry block) stay.
                let mut stack = vec![o];
                while let Some(x) = stack.pop() {
                    if !stay.insert(x) {
                        continue;
                    }
                    for &v in &func.body.op(x).operands {
                        let Some(d) = func.body.defining_op(v).filter(|d| func.body.op(*d).parent == Some(entry)) else { continue };
                        let k = func.body.op(d).kind;
                        if !is_pure(k) && !matches!(k, OpKind::MBarrierCreate | OpKind::AllocShared | OpKind::ElectSync) {
                            return Err(format!("the mbarrier initialisation uses the result of '{}'", k.name()));
                        }
                        stack.push(d);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(i) = last_init {
        match body_ops[i + 1..].iter().find(|&&o| func.body.op(o).kind == OpKind::Barrier) {
            Some(&b) => {
                stay.insert(b);
            }
            None => return Err("its mbarrier initialisation is not followed by a barrier".into()),
        }
    }
    for &o in &stay {
        if matches!(func.body.op(o).kind, OpKind::BlockId | OpKind::GridDim) {
            return Err("its mbarrier initialisation depends on the block id".into());
        }
    }

    let span = func.span;
    // A per-argument `global_alignment` (the launch-time variant for narrow rows) names the hidden ones too.
    if let Ok(tilec_ir::KernelAttrs { global_alignment: Some(GlobalAlignment::PerArgument(mut per_arg)), .. }) = tilec_ir::KernelAttrs::of(func) {
        per_arg.extend([16; 3]);
        if let Some(attr) = GlobalAlignment::PerArgument(per_arg).encode() {
            func.attrs.insert(crate::lower::GLOBAL_ALIGNMENT_ATTR.into(), attr);
        }
    }
    let grid: Vec<Value> = HIDDEN_GRID_ARGS.iter().map(|n| func.body.add_block_arg(entry, Type::INDEX, Some((*n).to_string()), span)).collect();
    let moved: Vec<OpId> = body_ops.iter().copied().filter(|o| !stay.contains(o)).collect();

    // The loop body: the logical block from the tile number, then the moved ops, then a barrier.
    let block = func.body.new_block();
    let t = func.body.add_block_arg(block, Type::INDEX, Some("tile".into()), span);
    let append = |func: &mut Func, b, spec: OpSpec| -> Value {
        let id = func.body.create_op(spec.span(span));
        func.body.append(b, id);
        func.body.op(id).results[0]
    };
    let index = |spec: OpSpec| spec.result(Type::INDEX);
    let bin = |op: BinaryArith, a: Value, b: Value| index(op.spec(a, b));
    let x = append(func, block, bin(BinaryArith::Rem, t, grid[0]));
    let q = append(func, block, bin(BinaryArith::Div, t, grid[0]));
    let y = append(func, block, bin(BinaryArith::Rem, q, grid[1]));
    let gxy = append(func, block, bin(BinaryArith::Mul, grid[0], grid[1]));
    let z = append(func, block, bin(BinaryArith::Div, t, gxy));
    let logical_id = [x, y, z];

    // Every block_id / grid_dim of the moved ops reads the logical grid.
    let mut replace = Vec::new();
    for &o in &moved {
        replace.push(o);
        for &region in &func.body.op(o).regions {
            func.body.walk(region, &mut |id| replace.push(id));
        }
    }
    for id in replace {
        let op = func.body.op(id);
        let new = if let Some(b) = op.view::<typed::BlockId>() {
            logical_id[axis(b.dim)]
        } else if let Some(g) = op.view::<typed::GridDim>() {
            grid[axis(g.dim)]
        } else {
            continue;
        };
        let result = op.results[0];
        func.body.replace_all_uses(result, new);
        func.body.erase(id);
    }
    for &o in &moved {
        if func.body.op(o).parent.is_some() {
            func.body.erase(o);
            func.body.append(block, o);
        }
    }
    let barrier = func.body.create_op(OpSpec::new(OpKind::Barrier).span(span));
    func.body.append(block, barrier);
    let yield_op = func.body.create_op(typed::Yield { values: Vec::new() }.into_spec().span(span));
    func.body.append(block, yield_op);

    // Before the loop: the physical block and grid, the number of tiles.
    let before = |func: &mut Func, spec: OpSpec| -> Value {
        let id = func.body.create_op(spec.span(span));
        func.body.insert_before(ret, id);
        func.body.op(id).results[0]
    };
    let first = before(func, index(typed::BlockId { dim: GridAxis::X }.into_spec()));
    let blocks = before(func, index(typed::GridDim { dim: GridAxis::X }.into_spec()));
    let gxy_out = before(func, bin(BinaryArith::Mul, grid[0], grid[1]));
    let tiles = before(func, bin(BinaryArith::Mul, gxy_out, grid[2]));
    let spec = typed::For { lower: first, upper: tiles, step: blocks, inits: Vec::new(), pipeline_stages: None, hoist: Some(false) }
        .into_spec()
        .region(block)
        .span(span);
    let l = func.body.create_op(spec);
    func.body.insert_before(ret, l);
    Ok(())
}

fn axis(a: GridAxis) -> usize {
    match a {
        GridAxis::X => 0,
        GridAxis::Y => 1,
        GridAxis::Z => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent formula: enumerate the logical grid z-major, y, then x fastest (launch order), numbering
    /// tiles 0, 1, 2, ...; the map must give back each tile's coordinates.
    #[test]
    fn logical_block_is_launch_order() {
        let grid = [3u64, 5, 2];
        let mut n = 0;
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    assert_eq!(logical_block(n, grid), [x, y, z], "tile {n}");
                    n += 1;
                }
            }
        }
    }

    /// P blocks not dividing the tiles: every tile is run by exactly one block, the blocks run unequal counts.
    #[test]
    fn blocks_cover_every_tile_once() {
        let (tiles, p) = (14u64, 4u64);
        let mut seen = vec![0u32; tiles as usize];
        let mut counts = Vec::new();
        for b in 0..p {
            let mine: Vec<u64> = tiles_of_block(b, p, tiles).collect();
            counts.push(mine.len());
            for t in mine {
                seen[t as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(counts, vec![4, 4, 3, 3]);
    }
}
