//! The per-lane scalar evaluator behind [`super::analyze_bank_conflicts`]: runs the index arithmetic of
//! one warp, lane by lane, and turns each shared-memory access into a [`WarpAccess`].
//!
//! Independent of the warp simulator on purpose: it needs no memory contents, never fails, and treats
//! anything it cannot compute (loaded values, vector elements, floats) as unknown.

use rustc_hash::FxHashMap as HashMap;

use tilec_ir::layout::Layout;
use tilec_ir::ops::{GridAxis, Literal};
use tilec_ir::shared_memory::place_shared_allocations;
use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Func, MemorySpace, OpId, TileType, Type, Value, ValueDef};

use super::{
    AccessCost, AccessKind, AccessReport, BankConflictOptions, BankConflictReport, Unanalyzed, WarpAccess,
    WarpSelection, WARP_LANES,
};

/// One value per lane; `None` where unknown.
type Lanes = [Option<i64>; WARP_LANES];
const UNKNOWN: Lanes = [None; WARP_LANES];

/// The physical element offset of `index` in a tile of type `ty`: row-major (also when no layout is set),
/// column-major, or a `#swizzle<...>` of those, computed directly. `None` for an index of the wrong rank,
/// a negative coordinate, or a layout that needs a lookup table (`#linear`, `#hw`).
///
/// Rank-2 tiles use their layout; other ranks are row-major over all axes (a swizzle of a row-major
/// base still applies to the flattened offset).
pub fn element_offset(ty: &TileType, index: &[i64]) -> Option<u64> {
    Layout::element_offset_of(ty.layout.as_ref(), &ty.static_shape()?, index)
}

/// A shared tile the warp can address.
#[derive(Clone)]
struct SharedTile {
    /// The value that introduced the tile (`tile.alloc_shared` result or argument).
    root: Value,
    base: u64,
    ty: TileType,
    /// Row-major coordinate → physical offset, for layouts [`element_offset`] cannot compute directly.
    table: Option<Vec<u32>>,
}

impl SharedTile {
    fn new(root: Value, base: u64, ty: TileType) -> SharedTile {
        let table = match (&ty.layout, ty.static_shape().as_deref()) {
            (Some(l @ (Layout::Linear(_) | Layout::Hardware(_))), Some(&[r, c])) => build_table(l, r, c),
            _ => None,
        };
        SharedTile { root, base, ty, table }
    }

    /// Byte address of the element at `index`.
    fn address(&self, index: &[i64]) -> Option<u64> {
        let offset = match &self.table {
            Some(t) => {
                let shape = self.ty.static_shape()?;
                if index.len() != 2 || index.iter().zip(&shape).any(|(&i, &n)| i < 0 || i as u64 >= n) {
                    return None;
                }
                u64::from(*t.get((index[0] as u64 * shape[1] + index[1] as u64) as usize)?)
            }
            None => element_offset(&self.ty, index)?,
        };
        Some(self.base + offset * u64::from(self.ty.elem.bit_width()) / 8)
    }
}

fn build_table(layout: &Layout, rows: u64, cols: u64) -> Option<Vec<u32>> {
    let (r, c) = (u32::try_from(rows).ok()?, u32::try_from(cols).ok()?);
    let n = rows.checked_mul(cols).filter(|&n| n <= 1 << 22)?;
    let linear = layout.to_linear(r, c).ok()?;
    let names = linear.out_dim_names();
    let (ri, ci) = (names.iter().position(|&d| d == "row")?, names.iter().position(|&d| d == "col")?);
    let mut table = vec![u32::MAX; n as usize];
    for o in 0..n as u32 {
        let coord = linear.apply(&[o]).ok()?;
        table[(coord[ri] * c + coord[ci]) as usize] = o;
    }
    Some(table)
}

/// Accumulates the per-op results over warps and iterations.
#[derive(Default)]
struct Accumulator {
    rows: HashMap<OpId, AccessReport>,
    unanalyzed: HashMap<OpId, Unanalyzed>,
    truncated: bool,
}

struct Evaluator<'a> {
    func: &'a Func,
    options: &'a BankConflictOptions,
    warp: u32,
    values: Vec<Lanes>,
    tiles: HashMap<Value, SharedTile>,
    executions: u64,
    /// Loops entered and not yet left.
    depth: u32,
    acc: &'a mut Accumulator,
}

/// Loops nested deeper than this are not analysed (the report says it was truncated): the evaluator
/// recurses once per level, and real kernels nest a handful.
const MAX_LOOP_DEPTH: u32 = 32;

pub(super) fn analyze(func: &Func, options: &BankConflictOptions) -> BankConflictReport {
    let num_warps = crate::layout_assignment::num_warps(func);
    let warps: Vec<u32> = match &options.warps {
        WarpSelection::All => (0..num_warps).collect(),
        WarpSelection::Only(ws) => ws.clone(),
    };
    let mut acc = Accumulator::default();
    let tiles = place_shared_tiles(func);
    for &warp in &warps {
        let mut ev = Evaluator {
            func,
            options,
            warp,
            values: vec![UNKNOWN; func.body.values.len()],
            tiles: HashMap::default(),
            executions: 0,
            depth: 0,
            acc: &mut acc,
        };
        for (v, (base, ty)) in &tiles {
            ev.tiles.insert(*v, SharedTile::new(*v, *base, ty.clone()));
        }
        ev.run_block(func.entry, [true; WARP_LANES]);
    }
    // Program order.
    let mut order = HashMap::default();
    let mut n = 0usize;
    func.body.walk(func.entry, &mut |op| {
        order.insert(op, n);
        n += 1;
    });
    let mut accesses: Vec<AccessReport> = acc.rows.into_values().collect();
    accesses.sort_by_key(|a| order.get(&a.op).copied().unwrap_or(usize::MAX));
    let mut unanalyzed: Vec<Unanalyzed> = acc.unanalyzed.into_values().collect();
    unanalyzed.sort_by_key(|u| order.get(&u.op).copied().unwrap_or(usize::MAX));
    BankConflictReport {
        func: func.name.clone(),
        warps,
        loop_iterations: options.loop_iterations,
        accesses,
        unanalyzed,
        truncated: acc.truncated,
    }
}

/// Shared tiles from `tile.alloc_shared`, placed as the backends place them
/// ([`tilec_ir::shared_memory::place_shared_allocations`]); shared tiles passed as arguments start at 0.
fn place_shared_tiles(func: &Func) -> Vec<(Value, (u64, TileType))> {
    let mut out = Vec::new();
    for &arg in func.args() {
        if let Type::Tile(t) = func.body.ty(arg) {
            if t.space == MemorySpace::Shared {
                out.push((arg, (0, t.clone())));
            }
        }
    }
    for placed in place_shared_allocations(func) {
        let (Some(tile), Some(r)) = (placed.tile, func.body.op(placed.op).result()) else { continue };
        out.push((r, (placed.offset, tile.clone())));
    }
    out
}

impl Evaluator<'_> {
    fn get(&self, v: Value) -> &Lanes {
        &self.values[v.index()]
    }

    fn set(&mut self, v: Value, lanes: Lanes) {
        self.values[v.index()] = lanes;
    }

    fn uniform(&mut self, v: Option<Value>, x: Option<i64>) {
        if let Some(v) = v {
            self.set(v, [x; WARP_LANES]);
        }
    }

    fn run_block(&mut self, block: tilec_ir::BlockId, active: [bool; WARP_LANES]) {
        for &op in &self.func.body.block(block).ops {
            self.executions += 1;
            if self.executions > self.options.max_op_executions {
                self.acc.truncated = true;
                return;
            }
            self.exec(op, active);
        }
    }

    fn exec(&mut self, id: OpId, active: [bool; WARP_LANES]) {
        let body = &self.func.body;
        let op = body.op(id);
        let result = op.result();
        match AnyOp::from_op(op) {
            Some(AnyOp::Constant(c)) => {
                let x = match c.value {
                    Literal::Int(n) => Some(n),
                    Literal::Bool(b) => Some(i64::from(b)),
                    Literal::Float(_) => None,
                };
                self.uniform(result, x);
            }
            Some(AnyOp::BlockId(typed::BlockId { dim })) => self.uniform(result, Some(self.options.block_id[dim.index()])),
            Some(AnyOp::GridDim(typed::GridDim { dim })) => self.uniform(result, Some(self.options.grid_dim[dim.index()])),
            Some(AnyOp::Dim(_)) => self.uniform(result, Some(self.options.dim_extent)),
            Some(AnyOp::ThreadId(typed::ThreadId { dim })) => {
                let x = dim == GridAxis::X;
                let w = i64::from(self.warp);
                if let Some(r) = result {
                    self.set(r, std::array::from_fn(|l| Some(if x { 32 * w + l as i64 } else { 0 })));
                }
            }
            Some(AnyOp::LaneId(_)) => {
                if let Some(r) = result {
                    self.set(r, std::array::from_fn(|l| Some(l as i64)));
                }
            }
            Some(AnyOp::WarpId(_)) => self.uniform(result, Some(i64::from(self.warp))),
            Some(AnyOp::Add(typed::Add { lhs, rhs })) => self.arith(lhs, rhs, result, i64::checked_add),
            Some(AnyOp::Sub(typed::Sub { lhs, rhs })) => self.arith(lhs, rhs, result, i64::checked_sub),
            Some(AnyOp::Mul(typed::Mul { lhs, rhs })) => self.arith(lhs, rhs, result, i64::checked_mul),
            Some(AnyOp::Div(typed::Div { lhs, rhs })) => self.arith(lhs, rhs, result, i64::checked_div),
            Some(AnyOp::Rem(typed::Rem { lhs, rhs })) => self.arith(lhs, rhs, result, i64::checked_rem),
            Some(AnyOp::Min(typed::Min { lhs, rhs })) => self.arith(lhs, rhs, result, |x, y| Some(x.min(y))),
            Some(AnyOp::Max(typed::Max { lhs, rhs })) => self.arith(lhs, rhs, result, |x, y| Some(x.max(y))),
            Some(AnyOp::Cmp(typed::Cmp { lhs, rhs, predicate })) => {
                let Some(r) = result else { return };
                let (a, b) = (*self.get(lhs), *self.get(rhs));
                self.set(r, std::array::from_fn(|l| Some(i64::from(predicate.holds(a[l]?.cmp(&b[l]?))))));
            }
            Some(AnyOp::Select(typed::Select { cond, true_value, false_value })) => {
                let Some(r) = result else { return };
                let (c, t, f) = (*self.get(cond), *self.get(true_value), *self.get(false_value));
                self.set(r, std::array::from_fn(|l| if c[l]? != 0 { t[l] } else { f[l] }));
            }
            Some(AnyOp::Cast(typed::Cast { source })) => {
                let Some(r) = result else { return };
                let int = |v: Value| body.ty(v).as_scalar().is_some_and(|s| s.is_integer());
                let lanes = if int(source) && int(r) { *self.get(source) } else { UNKNOWN };
                self.set(r, lanes);
            }
            Some(AnyOp::For(lp)) => self.exec_for(id, lp, active),
            Some(view @ (AnyOp::LdMatrix(_) | AnyOp::StMatrix(_) | AnyOp::DeviceAsyncCopy(_) | AnyOp::Load(_) | AnyOp::Store(_))) => {
                self.record_access(id, view, active);
                for &r in &op.results {
                    self.set(r, UNKNOWN);
                }
            }
            _ => {
                for &r in &op.results {
                    self.set(r, UNKNOWN);
                }
            }
        }
    }

    /// An integer binary op lane by lane (unknown for other element types, and where `f` has no value).
    fn arith(&mut self, lhs: Value, rhs: Value, result: Option<Value>, f: fn(i64, i64) -> Option<i64>) {
        let Some(r) = result else { return };
        if !self.func.body.ty(r).as_scalar().is_some_and(|s| s.is_integer()) {
            return self.set(r, UNKNOWN);
        }
        let (a, b) = (*self.get(lhs), *self.get(rhs));
        self.set(r, std::array::from_fn(|l| f(a[l]?, b[l]?)));
    }

    /// Runs the first `loop_iterations` iterations per lane; lanes whose loop ended go inactive. The
    /// loop's results are known only if every lane left the loop within those iterations.
    fn exec_for(&mut self, id: OpId, lp: typed::For, active: [bool; WARP_LANES]) {
        if self.depth >= MAX_LOOP_DEPTH {
            self.acc.truncated = true;
            return;
        }
        self.depth += 1;
        self.exec_for_body(id, lp, active);
        self.depth -= 1;
    }

    fn exec_for_body(&mut self, id: OpId, lp: typed::For, active: [bool; WARP_LANES]) {
        let body = &self.func.body;
        let op = body.op(id);
        let Some(&region) = op.regions.first() else { return };
        let args = body.block(region).args.clone();
        let results = op.results.clone();
        let (lb, ub, step) = (*self.get(lp.lower), *self.get(lp.upper), *self.get(lp.step));
        let mut carried: Vec<Lanes> = lp.inits.iter().map(|&v| *self.get(v)).collect();
        // Shared tiles carried through the loop keep their placement.
        for (i, &init) in lp.inits.iter().enumerate() {
            if let Some(t) = self.tiles.get(&init).cloned() {
                self.tiles.insert(args[i + 1], t.clone());
                self.tiles.insert(results[i], t);
            }
        }
        let yield_op = body.block(region).ops.last().and_then(|&y| body.op(y).view::<typed::Yield>());
        let mut iv = lb;
        let mut live = active;
        let mut finished = false;
        for t in 0..self.options.loop_iterations.max(1) {
            // Lanes in this iteration: known iv below a known bound; unknown bounds run one iteration.
            let mut now = [false; WARP_LANES];
            for l in 0..WARP_LANES {
                now[l] = live[l]
                    && match (iv[l], ub[l]) {
                        (Some(i), Some(u)) => i < u,
                        _ => t == 0,
                    };
            }
            if !now.iter().any(|&a| a) {
                finished = (0..WARP_LANES).all(|l| !active[l] || (iv[l].is_some() && ub[l].is_some()));
                break;
            }
            self.set(args[0], iv);
            for (i, c) in carried.iter().enumerate() {
                if let Some(&a) = args.get(i + 1) {
                    self.set(a, *c);
                }
            }
            self.run_block(region, now);
            if self.acc.truncated {
                return;
            }
            if let Some(y) = &yield_op {
                for (i, &v) in y.values.iter().enumerate() {
                    let next = *self.get(v);
                    if let Some(c) = carried.get_mut(i) {
                        for l in 0..WARP_LANES {
                            if now[l] {
                                c[l] = next[l];
                            }
                        }
                    }
                }
            }
            for l in 0..WARP_LANES {
                iv[l] = match (iv[l], step[l]) {
                    (Some(i), Some(s)) if s > 0 => i.checked_add(s),
                    _ => None,
                };
                live[l] = now[l] && iv[l].is_some();
            }
        }
        for (i, &r) in results.iter().enumerate() {
            let lanes = if finished { carried.get(i).copied().unwrap_or(UNKNOWN) } else { UNKNOWN };
            self.set(r, lanes);
        }
    }

    /// Records the shared-memory access of `view`, the view of op `id`: an ldmatrix, stmatrix, cp.async,
    /// load or store (anything else is not an access).
    fn record_access(&mut self, id: OpId, view: AnyOp, active: [bool; WARP_LANES]) {
        let body = &self.func.body;
        let op = body.op(id);
        // The access, its memory and indices, the type of the value moved per lane (loads and stores), the
        // elements per lane (cp.async), and the mask.
        let (kind, mem, indices, value_ty, elements, mask) = match view {
            AnyOp::LdMatrix(ld) => {
                let kind = AccessKind::LdMatrix { num_tiles: ld.num_tiles, transpose: ld.transpose };
                (kind, ld.src, ld.indices, None, None, None)
            }
            AnyOp::StMatrix(st) => {
                let kind = AccessKind::StMatrix { num_tiles: st.num_tiles, transpose: st.transpose };
                (kind, st.dst, st.indices, None, None, None)
            }
            AnyOp::DeviceAsyncCopy(cp) => (AccessKind::AsyncCopy, cp.dst, cp.dst_indices, None, Some(cp.dst_elements), None),
            AnyOp::Load(load) => (AccessKind::Load, load.src, load.indices, op.result().map(|r| body.ty(r)), None, load.mask),
            AnyOp::Store(store) => (AccessKind::Store, store.dst, store.indices, Some(body.ty(store.value)), None, store.mask),
            _ => return,
        };
        let Type::Tile(ty) = body.ty(mem) else { return };
        if ty.space != MemorySpace::Shared {
            return;
        }
        let elem_bits = u64::from(ty.elem.bit_width());
        let bytes_per_lane = match kind {
            AccessKind::LdMatrix { .. } | AccessKind::StMatrix { .. } => 16,
            AccessKind::AsyncCopy => (u64::from(elements.unwrap_or(1).max(1)) * elem_bits).div_ceil(8),
            _ => {
                let n = match value_ty {
                    Some(Type::Vector(v)) => v.num_elements(),
                    _ => 1,
                };
                (n * elem_bits).div_ceil(8)
            }
        } as u32;
        // Lanes taking part: active, under a true (or unknown) mask, and for ldmatrix/stmatrix only the
        // lanes that supply row addresses.
        let mut lanes = active;
        if let Some(mask) = mask {
            let m = *self.get(mask);
            for l in 0..WARP_LANES {
                lanes[l] &= m[l] != Some(0);
            }
        }
        if let AccessKind::LdMatrix { num_tiles, .. } | AccessKind::StMatrix { num_tiles, .. } = kind {
            for (l, on) in lanes.iter_mut().enumerate() {
                *on &= l < 8 * num_tiles as usize;
            }
        }
        let index_lanes: Vec<Lanes> = indices.iter().map(|&v| *self.get(v)).collect();
        let tile = self.tiles.get(&mem);
        let mut addresses = [None; WARP_LANES];
        for l in (0..WARP_LANES).filter(|&l| lanes[l]) {
            let index: Option<Vec<i64>> = index_lanes.iter().map(|v| v[l]).collect();
            let address = match (&index, tile) {
                (Some(i), Some(t)) => t.address(i),
                (Some(i), None) => SharedTile::new(mem, 0, ty.clone()).address(i),
                _ => None,
            };
            match address {
                Some(a) => addresses[l] = Some(a),
                None => {
                    let reason = match index {
                        None => format!("the index of lane {l} (warp {}) is not computable from lane and loop indices", self.warp),
                        Some(i) => format!("lane {l} (warp {}) index {i:?} has no address in '{ty}'", self.warp),
                    };
                    self.acc.unanalyzed.entry(id).or_insert(Unanalyzed { op: id, span: op.span, op_name: op.kind.name(), reason });
                    return;
                }
            }
        }
        let access = match kind {
            AccessKind::LdMatrix { num_tiles, .. } | AccessKind::StMatrix { num_tiles, .. } => {
                WarpAccess::matrices(addresses, num_tiles)
            }
            _ => WarpAccess::new(addresses, bytes_per_lane),
        };
        let cost = access.cost();
        let warp = self.warp;
        let tile_value = tile.map_or(mem, |t| t.root);
        let name = match &body.value(mem).name {
            Some(n) => format!("%{n}"),
            None => match body.value(mem).def {
                ValueDef::OpResult { op, .. } => format!("%<op {}>", op.0),
                ValueDef::BlockArg { index, .. } => format!("%<arg {index}>"),
            },
        };
        let row = self.acc.rows.entry(id).or_insert_with(|| AccessReport {
            op: id,
            span: op.span,
            kind,
            tile: name,
            tile_value,
            tile_type: ty.to_string(),
            bytes_per_lane,
            instances: 0,
            total: AccessCost::default(),
            worst: cost,
            worst_warp: warp,
        });
        row.instances += 1;
        row.total.phases += cost.phases;
        row.total.min_wavefronts += cost.min_wavefronts;
        row.total.wavefronts += cost.wavefronts;
        if cost.conflict_factor() > row.worst.conflict_factor() {
            row.worst = cost;
            row.worst_warp = warp;
        }
    }
}
