//! The interpreter loop: blocks of the grid, warps of a block (scheduled between barriers), and the lanes
//! of a warp in lockstep under an active mask; the per-thread ops of both dialects.

use std::cell::RefCell;

use crate::body::{BlockId, Func, OpId, Operation, Value};
use crate::data::round_to;
use crate::diag::Span;
use crate::ops::typed::{self, AnyOp};
use crate::ops::{GridAxis, OpKind, Probe as ProbeAttr, UnaryMath};
use crate::types::{MemorySpace, ScalarType, Type};

use super::error::{LaneMask, Place, SimError};
use super::memory::{byte_range, func_span, locate, BlockShared, MemRef, PendingCopy, Run, SharedLayout, storage_layout};
use super::mbarrier::{MBarriers, Waiting};
use super::wgmma::WarpWgmma;
use super::race::{RaceDetector, RaceSpace};
use super::{matrix, mma, Probe, SimArg, SimOptions, SimTrace, MAX_VECTOR_ELEMENTS};

/// A register value of one lane.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Undef,
    Num(f64),
    Vector(Vec<f64>),
    Mem(MemRef),
    /// A wgmma matrix descriptor ([`super::wgmma`]): read by `nvgpu.warpgroup.mma` only.
    Descriptor(u64),
    /// The D of the `nvgpu.warpgroup.mma` with this id, not yet retired by a `nvgpu.wgmma.wait_group`.
    Pending(u32),
}

/// Everything a warp's ops touch besides its registers.
pub(super) struct Ctx<'a> {
    pub func: &'a Func,
    pub args: &'a mut [SimArg],
    pub shared: &'a mut BlockShared,
    pub block: [u32; 3],
    pub grid: [u32; 3],
    /// Every memory access is recorded here (interior mutability: loads see the context read-only).
    pub race: &'a RefCell<RaceDetector>,
    /// The block's mbarrier objects ([`super::mbarrier`]).
    pub mbarriers: &'a mut MBarriers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpState {
    Running,
    AtBarrier,
    /// Stopped at an `nvgpu.mbarrier.try_wait.parity` whose phase has not completed.
    WaitingOnMBarrier(Waiting),
    Done,
}

struct LoopState {
    op: OpId,
    iv: [i64; 32],
    upper: [i64; 32],
    step: [i64; 32],
}

struct Frame {
    block: BlockId,
    pos: usize,
    mask: u32,
    /// The loop whose lane-dependent trip count made this frame's mask smaller than the warp's.
    diverged_by: Option<Span>,
    looping: Option<LoopState>,
}

/// One warp: registers of its 32 lanes and where it is in the program.
pub(super) struct Warp {
    pub id: u32,
    regs: Vec<Vec<Val>>,
    /// For each value, the warp's wgmma fence count when it was last written ([`super::wgmma`]).
    epochs: Vec<u32>,
    frames: Vec<Frame>,
    state: WarpState,
    pub(super) wgmma: WarpWgmma,
}

/// Fuel and probes, shared by every warp of the launch.
struct Budget<'o> {
    options: &'o SimOptions,
    used: u64,
    probes: Vec<Probe>,
}

pub(super) fn run(func: &Func, args: &mut [SimArg], launch: &super::Launch, options: &SimOptions) -> Result<SimTrace, SimError> {
    check_args(func, args)?;
    let layout = SharedLayout::new(func)?;
    let num_warps = super::num_warps(func);
    if num_warps == 0 {
        return Err(SimError::Arguments { span: func.span, message: "'num_warps' must be at least 1".into() });
    }
    let mut budget = Budget { options, used: 0, probes: Vec::new() };
    let race = RefCell::new(RaceDetector::new(options.race_detection, layout.tiles.len(), args.len()));
    // Kernels with TMA stores or wgmma read shared memory through the async proxy: the fence check needs the writes.
    let tracks_generic_writes = super::tma::has_tma_store(func) || super::wgmma::has_wgmma(func);
    let [gx, gy, gz] = launch.grid;
    let mut blocks = 0;
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                let mut shared = BlockShared::new(&layout, num_warps as usize * 32);
                shared.track_generic_writes = tracks_generic_writes;
                race.borrow_mut().start_block(num_warps as usize);
                let mut mbarriers = MBarriers::default();
                let mut ctx =
                    Ctx { func, args, shared: &mut shared, block: [x, y, z], grid: launch.grid, race: &race, mbarriers: &mut mbarriers };
                run_block(&mut ctx, num_warps, &mut budget)?;
                blocks += 1;
                if budget.used >= options.fuel && (x, y, z) != (gx - 1, gy - 1, gz - 1) {
                    return Err(SimError::FuelExhausted { span: func.span, fuel: options.fuel });
                }
            }
        }
    }
    Ok(SimTrace { probes: budget.probes, warp_ops: budget.used, blocks })
}

fn check_args(func: &Func, args: &[SimArg]) -> Result<(), SimError> {
    let params = func.args();
    if params.len() != args.len() {
        return Err(SimError::Arguments {
            span: func_span(func),
            message: format!("@{} takes {} arguments, {} were given", func.name, params.len(), args.len()),
        });
    }
    for (i, (&p, a)) in params.iter().zip(args.iter()).enumerate() {
        let span = func.body.value(p).span.to(func.span);
        match (func.body.ty(p), a) {
            (Type::Tile(t), SimArg::Tile(data)) => {
                let shape_ok = t.shape.len() == data.shape.len()
                    && t.shape.iter().zip(&data.shape).all(|(d, &n)| d.as_static().is_none_or(|s| s as usize == n));
                if t.space != MemorySpace::Global || !shape_ok || t.elem != data.elem || data.values.len() != data.shape.iter().product::<usize>() {
                    return Err(SimError::Arguments {
                        span,
                        message: format!("argument #{i} of type '{t}' was given a {:?} tensor of '{}'", data.shape, data.elem),
                    });
                }
            }
            (Type::Scalar(_), SimArg::Scalar(_)) => {}
            (ty, _) => {
                return Err(SimError::Arguments { span, message: format!("argument #{i} of type '{ty}' was given the wrong kind of value") })
            }
        }
    }
    Ok(())
}

fn run_block(ctx: &mut Ctx<'_>, num_warps: u32, budget: &mut Budget<'_>) -> Result<(), SimError> {
    let func = ctx.func;
    let mut warps: Vec<Warp> = (0..num_warps)
        .map(|id| {
            let mut w = Warp {
                id,
                regs: vec![Vec::new(); func.body.values.len()],
                epochs: vec![0; func.body.values.len()],
                wgmma: WarpWgmma::default(),
                frames: vec![Frame { block: func.entry, pos: 0, mask: u32::MAX, diverged_by: None, looping: None }],
                state: WarpState::Running,
            };
            for (i, &arg) in func.args().iter().enumerate() {
                let val = match &ctx.args[i] {
                    SimArg::Tile(_) => Val::Mem(MemRef::Global(i)),
                    SimArg::Scalar(x) => Val::Num(round_to(func.body.ty(arg).element_type(), *x)),
                };
                w.regs[arg.index()] = vec![val; 32];
            }
            w
        })
        .collect();
    loop {
        let used = budget.used;
        for w in warps.iter_mut() {
            if matches!(w.state, WarpState::Running | WarpState::WaitingOnMBarrier(_)) {
                w.state = WarpState::Running;
                w.run(ctx, budget)?;
            }
        }
        if warps.iter().all(|w| w.state == WarpState::Done) {
            break;
        }
        // A warp waits on an mbarrier phase: the others ran meanwhile; try again while anything moves.
        if let Some((w, waiting)) = warps.iter().find_map(|w| match w.state {
            WarpState::WaitingOnMBarrier(waiting) => Some((w, waiting)),
            _ => None,
        }) {
            if budget.used != used {
                continue;
            }
            return Err(w.mbarrier_deadlock(ctx, waiting));
        }
        // Every warp waits at a barrier or has returned: release the barrier.
        ctx.race.borrow_mut().barrier();
        for w in warps.iter_mut() {
            if w.state == WarpState::AtBarrier {
                w.state = WarpState::Running;
            }
        }
    }
    ctx.shared.drain();
    Ok(())
}

fn lanes(mask: u32) -> impl Iterator<Item = u32> {
    LaneMask(mask).lanes()
}

impl Warp {
    pub fn place(&self, ctx: &Ctx<'_>) -> Place {
        Place { block: ctx.block, warp: self.id }
    }

    /// The active mask and the loop that made it partial, of the innermost frame.
    pub fn mask(&self) -> (u32, Option<Span>) {
        self.frames.last().map_or((0, None), |f| (f.mask, f.diverged_by))
    }

    pub fn val(&self, v: Value, lane: u32) -> &Val {
        self.regs[v.index()].get(lane as usize).unwrap_or(&Val::Undef)
    }

    pub fn set(&mut self, v: Value, lane: u32, val: Val) {
        let slot = &mut self.regs[v.index()];
        if slot.is_empty() {
            *slot = vec![Val::Undef; 32];
        }
        slot[lane as usize] = val;
        self.epochs[v.index()] = self.wgmma.fence_epoch;
    }

    /// A loop's copy of `from` into `to` (an init or a yield: a phi, not a register write, so `to` keeps
    /// `from`'s wgmma fence count).
    fn copy(&mut self, from: Value, to: Value, lane: u32) {
        let v = self.val(from, lane).clone();
        self.set(to, lane, v);
        self.epochs[to.index()] = self.epochs[from.index()];
    }

    /// The warp's wgmma fence count when `v` was last written.
    pub fn epoch(&self, v: Value) -> u32 {
        self.epochs[v.index()]
    }

    /// Replaces every register holding a pending wgmma D that `retired(id, lane)` returns values for.
    pub fn retire(&mut self, retired: impl Fn(u32, u32) -> Option<Vec<f64>>) {
        for slot in &mut self.regs {
            for (lane, val) in slot.iter_mut().enumerate() {
                if let Val::Pending(id) = val {
                    if let Some(values) = retired(*id, lane as u32) {
                        *val = Val::Vector(values);
                    }
                }
            }
        }
    }

    /// The error for reading a pending wgmma D or using a descriptor as a number.
    fn opaque(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, lane: u32) -> Option<SimError> {
        let message = match self.val(v, lane) {
            Val::Pending(_) => {
                "reads the D of a 'nvgpu.warpgroup.mma' before a 'nvgpu.wgmma.commit_group' and 'nvgpu.wgmma.wait_group' retired it"
            }
            Val::Descriptor(_) => "uses a wgmma descriptor as a number: only 'nvgpu.warpgroup.mma' reads descriptors",
            _ => return None,
        };
        Some(SimError::Wgmma { span: op.span, op: op.kind.name(), at: self.place(ctx), message: format!("lane {lane} {message}") })
    }

    fn undefined(&self, ctx: &Ctx<'_>, op: &Operation, lane: u32) -> SimError {
        SimError::Undefined { span: op.span, op: op.kind.name(), at: self.place(ctx), lane }
    }

    pub fn num(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, lane: u32) -> Result<f64, SimError> {
        match self.val(v, lane) {
            Val::Num(x) => Ok(*x),
            _ => Err(self.opaque(ctx, op, v, lane).unwrap_or_else(|| self.undefined(ctx, op, lane))),
        }
    }

    pub fn int(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, lane: u32) -> Result<i64, SimError> {
        self.num(ctx, op, v, lane).map(|x| x as i64)
    }

    pub fn vector(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, lane: u32) -> Result<&[f64], SimError> {
        match self.val(v, lane) {
            Val::Vector(x) => Ok(x),
            _ => Err(self.opaque(ctx, op, v, lane).unwrap_or_else(|| self.undefined(ctx, op, lane))),
        }
    }

    pub fn mem(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, lane: u32) -> Result<MemRef, SimError> {
        match self.val(v, lane) {
            Val::Mem(m) => Ok(*m),
            _ => Err(self.undefined(ctx, op, lane)),
        }
    }

    /// The values of index operands, per lane.
    pub fn indices(&self, ctx: &Ctx<'_>, op: &Operation, indices: &[Value], lane: u32) -> Result<Vec<i64>, SimError> {
        indices.iter().map(|&v| self.int(ctx, op, v, lane)).collect()
    }

    /// Records a read (or a write) of `count` elements at `run` of `mem` for the race detector.
    pub fn record_access(&self, ctx: &Ctx<'_>, op: &Operation, mem: MemRef, run: Run, count: usize, write: bool) -> Result<(), SimError> {
        let (space, len) = match mem {
            MemRef::Global(i) => (RaceSpace::Global(i), ctx.args[i].as_tile().map_or(0, |t| t.values.len())),
            MemRef::Shared(i) => (RaceSpace::Shared(i), ctx.shared.tiles[i].data.values.len()),
        };
        let mut race = ctx.race.borrow_mut();
        let (place, name) = (self.place(ctx), op.kind.name());
        if write {
            race.write(space, len, run.positions(count).map(|p| (p, false)), self.id, op.span, name, place)
        } else {
            race.read(space, len, run.positions(count), self.id, op.span, name, place)
        }
    }

    /// Fails when a `nvgpu.warpgroup.mma` in flight reads a byte of `bytes` (the write would race with it).
    pub fn check_not_in_flight(&self, ctx: &Ctx<'_>, op: &Operation, bytes: (u64, u64)) -> Result<(), SimError> {
        match ctx.shared.async_read_in(bytes) {
            None => Ok(()),
            Some(a) => Err(SimError::Wgmma {
                span: op.span,
                op: op.kind.name(),
                at: self.place(ctx),
                message: format!("writes shared address {a:#x}, which a 'nvgpu.warpgroup.mma' in flight reads: wait for its group first"),
            }),
        }
    }

    /// Fails unless every lane of the warp is active.
    pub fn require_converged(&self, ctx: &Ctx<'_>, op: &Operation) -> Result<(), SimError> {
        let (mask, diverged_by) = self.mask();
        if mask == u32::MAX {
            return Ok(());
        }
        Err(SimError::Divergent { span: op.span, op: op.kind.name(), at: self.place(ctx), active: LaneMask(mask), loop_span: diverged_by })
    }

    /// Runs until the warp returns or reaches a barrier.
    fn run(&mut self, ctx: &mut Ctx<'_>, budget: &mut Budget<'_>) -> Result<(), SimError> {
        let func = ctx.func;
        let body = &func.body;
        loop {
            let Some(frame) = self.frames.last() else {
                self.state = WarpState::Done;
                return Ok(());
            };
            let Some(&id) = body.block(frame.block).ops.get(frame.pos) else {
                // A block without its terminator (unverified IR): leave it.
                self.frames.pop();
                continue;
            };
            let op = body.op(id);
            if budget.used >= budget.options.fuel {
                return Err(SimError::FuelExhausted { span: op.span, fuel: budget.options.fuel });
            }
            budget.used += 1;
            match op.kind {
                OpKind::Return => {
                    self.frames.clear();
                    self.state = WarpState::Done;
                    return Ok(());
                }
                OpKind::Barrier => {
                    self.require_converged(ctx, op)?;
                    self.advance();
                    self.state = WarpState::AtBarrier;
                    return Ok(());
                }
                OpKind::MBarrierTryWaitParity => match self.mbarrier_wait(ctx, id, self.mask().0)? {
                    // Not yet: the op runs again when the warp is scheduled next (no fuel for the attempt).
                    Some(waiting) => {
                        budget.used -= 1;
                        self.state = WarpState::WaitingOnMBarrier(waiting);
                        return Ok(());
                    }
                    None => self.advance(),
                },
                OpKind::For => self.enter_loop(ctx, id)?,
                OpKind::Yield => self.next_iteration(ctx, op)?,
                _ => {
                    self.exec(ctx, id)?;
                    self.record(ctx, id, budget);
                    self.advance();
                }
            }
        }
    }

    fn enter_loop(&mut self, ctx: &Ctx<'_>, id: OpId) -> Result<(), SimError> {
        let body = &ctx.func.body;
        let op = body.op(id);
        let (mask, diverged_by) = self.mask();
        let (Some(typed::For { lower, upper, step, inits, .. }), Some(&region)) = (op.view(), op.regions.first()) else {
            return Err(SimError::Unsupported { span: op.span, op: "tile.for", reason: "malformed loop".into() });
        };
        if inits.len() != op.results.len() || body.block(region).args.len() != inits.len() + 1 {
            return Err(SimError::Unsupported { span: op.span, op: "tile.for", reason: "malformed loop".into() });
        }
        let mut state = LoopState { op: id, iv: [0; 32], upper: [0; 32], step: [1; 32] };
        let mut run = 0u32;
        for lane in lanes(mask) {
            let (lb, ub, st) = (self.int(ctx, op, lower, lane)?, self.int(ctx, op, upper, lane)?, self.int(ctx, op, step, lane)?);
            if st <= 0 {
                return Err(SimError::BadLoopStep { span: op.span, at: self.place(ctx), lane, step: st });
            }
            let l = lane as usize;
            (state.iv[l], state.upper[l], state.step[l]) = (lb, ub, st);
            // The results hold the initial values until the lane's last iteration yields.
            for (&init, &result) in inits.iter().zip(&op.results) {
                self.copy(init, result, lane);
            }
            if lb < ub {
                run |= 1 << lane;
                let args = body.block(region).args.clone();
                self.set(args[0], lane, Val::Num(lb as f64));
                for (&init, &arg) in inits.iter().zip(&args[1..]) {
                    self.copy(init, arg, lane);
                }
            }
        }
        self.advance();
        if run != 0 {
            let diverged_by = if run != mask { Some(op.span) } else { diverged_by };
            self.frames.push(Frame { block: region, pos: 0, mask: run, diverged_by, looping: Some(state) });
        }
        Ok(())
    }

    /// Moves the innermost frame past the op just executed. Invariant: a warp runs ops only while it has a
    /// frame (an empty stack means it returned), so there always is one here.
    fn advance(&mut self) {
        if let Some(frame) = self.frames.last_mut() {
            frame.pos += 1;
        }
    }

    fn next_iteration(&mut self, ctx: &Ctx<'_>, op: &Operation) -> Result<(), SimError> {
        let body = &ctx.func.body;
        let n = self.frames.len();
        let parent_mask = if n >= 2 { self.frames[n - 2].mask } else { u32::MAX };
        let frame = &self.frames[n - 1];
        let Some(state) = &frame.looping else {
            return Err(SimError::Unsupported { span: op.span, op: "tile.yield", reason: "it is not in a loop".into() });
        };
        let loop_op = body.op(state.op);
        let args = body.block(frame.block).args.clone();
        let typed::Yield { values } = op.view().ok_or_else(|| malformed(op))?;
        let (mask, block_diverged) = (frame.mask, frame.diverged_by);
        let mut next = 0u32;
        let mut updates = Vec::new();
        for lane in lanes(mask) {
            let l = lane as usize;
            let iv = state.iv[l].saturating_add(state.step[l]);
            let yielded: Vec<(Val, u32)> = values.iter().map(|&v| (self.val(v, lane).clone(), self.epoch(v))).collect();
            updates.push((lane, iv, iv < state.upper[l], yielded));
        }
        for (lane, iv, continues, yielded) in updates {
            if continues {
                next |= 1 << lane;
                self.set(args[0], lane, Val::Num(iv as f64));
                for ((v, epoch), &arg) in yielded.into_iter().zip(&args[1..]) {
                    self.set(arg, lane, v);
                    self.epochs[arg.index()] = epoch;
                }
            } else {
                for ((v, epoch), &result) in yielded.into_iter().zip(&loop_op.results) {
                    self.set(result, lane, v);
                    self.epochs[result.index()] = epoch;
                }
            }
        }
        let Some(frame) = self.frames.last_mut() else {
            return Err(SimError::Unsupported { span: op.span, op: "tile.yield", reason: "it is not in a loop".into() });
        };
        if let Some(state) = &mut frame.looping {
            for lane in lanes(next) {
                let l = lane as usize;
                state.iv[l] = state.iv[l].saturating_add(state.step[l]);
            }
        }
        if next == 0 {
            self.frames.pop();
        } else {
            frame.mask = next;
            frame.pos = 0;
            if next != parent_mask {
                frame.diverged_by = Some(loop_op.span).or(block_diverged);
            }
        }
        Ok(())
    }

    fn record(&self, ctx: &Ctx<'_>, id: OpId, budget: &mut Budget<'_>) {
        let spec = &budget.options.probes;
        let body = &ctx.func.body;
        let op = body.op(id);
        let probe = op.probe();
        let marked = spec.marked && probe.as_ref().is_some_and(ProbeAttr::is_marked);
        if !marked && !spec.kinds.contains(&op.kind) {
            return;
        }
        let Some(result) = op.result() else { return };
        let name = match probe.as_ref().and_then(ProbeAttr::name) {
            Some(name) => name.to_string(),
            None => body.value(result).name.clone().unwrap_or_else(|| op.kind.name().to_string()),
        };
        let (mask, _) = self.mask();
        let lanes = (0..32u32)
            .map(|lane| {
                if !LaneMask(mask).contains(lane) {
                    return None;
                }
                match self.val(result, lane) {
                    Val::Num(x) => Some(vec![*x]),
                    Val::Vector(v) => Some(v.clone()),
                    _ => None,
                }
            })
            .collect();
        budget.probes.push(Probe {
            op: id,
            name,
            span: op.span,
            block: ctx.block,
            warp: self.id,
            ty: body.ty(result).clone(),
            lanes,
        });
    }

    /// Executes one op (not a loop, yield, return or barrier) for the active lanes.
    fn exec(&mut self, ctx: &mut Ctx<'_>, id: OpId) -> Result<(), SimError> {
        let func = ctx.func;
        let body = &func.body;
        let op = body.op(id);
        for &r in &op.results {
            match body.ty(r) {
                Type::Vector(v) if v.num_elements() > MAX_VECTOR_ELEMENTS => {
                    return Err(SimError::TooLarge { span: op.span, op: op.kind.name(), elements: v.num_elements(), limit: MAX_VECTOR_ELEMENTS });
                }
                Type::Tile(t) if t.space == MemorySpace::Register => {
                    return Err(SimError::Unsupported {
                        span: op.span,
                        op: op.kind.name(),
                        reason: "register tiles are tile-level values; lower the kernel to the nvgpu dialect first".into(),
                    });
                }
                _ => {}
            }
        }
        let (mask, _) = self.mask();
        let result = op.result();
        let rty = result.map(|r| body.ty(r).clone());
        let typed = AnyOp::from_op(op).ok_or_else(|| malformed(op))?;
        match typed {
            AnyOp::Constant(typed::Constant { value }) => {
                let elem = rty.as_ref().map_or(ScalarType::Index, Type::element_type);
                self.broadcast(op, mask, Val::Num(round_to(elem, value.as_f64())));
            }
            AnyOp::BlockId(typed::BlockId { dim }) | AnyOp::GridDim(typed::GridDim { dim }) => {
                let of = if op.kind == OpKind::BlockId { ctx.block } else { ctx.grid };
                self.broadcast(op, mask, Val::Num(f64::from(of[dim.index()])));
            }
            AnyOp::ThreadId(typed::ThreadId { dim }) => {
                let r = op.results[0];
                for lane in lanes(mask) {
                    let t = if dim == GridAxis::X { self.id * 32 + lane } else { 0 };
                    self.set(r, lane, Val::Num(f64::from(t)));
                }
            }
            AnyOp::LaneId(_) => {
                let r = op.results[0];
                for lane in lanes(mask) {
                    self.set(r, lane, Val::Num(f64::from(lane)));
                }
            }
            AnyOp::WarpId(_) => self.broadcast(op, mask, Val::Num(f64::from(self.id))),
            AnyOp::ElectSync(_) => {
                // elect.sync with the full member mask: every lane of the warp takes part.
                if mask != u32::MAX {
                    return Err(SimError::Unsupported {
                        span: op.span,
                        op: op.kind.name(),
                        reason: format!("every lane of the warp must execute it together; active lanes {mask:#010x} (warp {})", self.id),
                    });
                }
                let r = op.results[0];
                for lane in lanes(mask) {
                    self.set(r, lane, Val::Num(f64::from(u8::from(lane == mask.trailing_zeros()))));
                }
            }
            AnyOp::Dim(typed::Dim { source: src, axis }) => {
                let axis = axis as usize;
                for lane in lanes(mask) {
                    let n = match self.mem(ctx, op, src, lane)? {
                        MemRef::Global(i) => ctx.args[i].as_tile().and_then(|t| t.shape.get(axis).copied()),
                        MemRef::Shared(i) => ctx.shared.tiles[i].data.shape.get(axis).copied(),
                    };
                    self.set(op.results[0], lane, Val::Num(n.unwrap_or(0) as f64));
                }
            }
            AnyOp::AllocShared(_) | AnyOp::MBarrierCreate(_) => {
                let index = ctx.shared.tiles.iter().position(|t| t.op == id).ok_or_else(|| malformed(op))?;
                self.broadcast(op, mask, Val::Mem(MemRef::Shared(index)));
            }
            AnyOp::Add(typed::Add { lhs, rhs })
            | AnyOp::Sub(typed::Sub { lhs, rhs })
            | AnyOp::Mul(typed::Mul { lhs, rhs })
            | AnyOp::Div(typed::Div { lhs, rhs })
            | AnyOp::Rem(typed::Rem { lhs, rhs })
            | AnyOp::Min(typed::Min { lhs, rhs })
            | AnyOp::Max(typed::Max { lhs, rhs }) => self.binary(ctx, op, lhs, rhs, mask)?,
            AnyOp::Cmp(cmp) => self.cmp(ctx, op, &cmp, mask)?,
            AnyOp::Fma(typed::Fma { lhs: a, rhs: b, addend: c }) => {
                for lane in lanes(mask) {
                    let v = match (self.val(a, lane), self.val(b, lane), self.val(c, lane)) {
                        (Val::Num(x), Val::Num(y), Val::Num(z)) => Val::Num(crate::interp::arith::fma(*x, *y, *z)),
                        (Val::Vector(xs), Val::Vector(ys), Val::Vector(zs)) if xs.len() == ys.len() && xs.len() == zs.len() => Val::Vector(
                            xs.iter().zip(ys.iter().zip(zs)).map(|(&x, (&y, &z))| crate::interp::arith::fma(x, y, z)).collect(),
                        ),
                        _ => return Err(self.undefined(ctx, op, lane)),
                    };
                    self.set(op.results[0], lane, v);
                }
            }
            AnyOp::Select(typed::Select { cond: c, true_value: a, false_value: b }) => {
                for lane in lanes(mask) {
                    let v = match self.val(c, lane) {
                        // A vector of i1 chooses element by element.
                        Val::Vector(cs) => match (self.val(a, lane), self.val(b, lane)) {
                            (Val::Vector(xs), Val::Vector(ys)) if xs.len() == cs.len() && ys.len() == cs.len() => Val::Vector(
                                cs.iter().zip(xs.iter().zip(ys)).map(|(&c, (&x, &y))| if c != 0.0 { x } else { y }).collect(),
                            ),
                            _ => return Err(self.undefined(ctx, op, lane)),
                        },
                        _ => {
                            let pick = if self.num(ctx, op, c, lane)? != 0.0 { a } else { b };
                            self.val(pick, lane).clone()
                        }
                    };
                    if v == Val::Undef {
                        return Err(self.undefined(ctx, op, lane));
                    }
                    self.set(op.results[0], lane, v);
                }
            }
            view @ (crate::unary_math_view!()) => {
                let Some((unary, src)) = UnaryMath::of_view(&view) else { return Err(malformed(op)) };
                // The interpreter's element function: the simulator checks the lowering, not the GPU's
                // approximations (their tolerances are stated in docs/math.md).
                let elem = rty.as_ref().map_or(ScalarType::F32, Type::element_type);
                let f = |x: f64| crate::interp::arith::unary(unary, elem, x);
                for lane in lanes(mask) {
                    let v = match self.val(src, lane) {
                        Val::Num(x) => Val::Num(f(*x)),
                        Val::Vector(xs) => Val::Vector(xs.iter().map(|&x| f(x)).collect()),
                        _ => return Err(self.undefined(ctx, op, lane)),
                    };
                    self.set(op.results[0], lane, v);
                }
            }
            AnyOp::Cast(typed::Cast { source: src }) => {
                let elem = rty.as_ref().map_or(ScalarType::F32, Type::element_type);
                let from = ctx.func.body.ty(src).element_type();
                for lane in lanes(mask) {
                    let v = match self.val(src, lane) {
                        Val::Num(x) => Val::Num(crate::data::convert(from, elem, *x)),
                        Val::Vector(xs) => Val::Vector(xs.iter().map(|&x| crate::data::convert(from, elem, x)).collect()),
                        _ => return Err(self.undefined(ctx, op, lane)),
                    };
                    self.set(op.results[0], lane, v);
                }
            }
            AnyOp::Splat(_) | AnyOp::Fill(_) => {
                let Some(Type::Vector(vt)) = &rty else {
                    return Err(SimError::Unsupported { span: op.span, op: op.kind.name(), reason: "only vector results are simulated".into() });
                };
                let n = vt.num_elements() as usize;
                for lane in lanes(mask) {
                    let x = match &typed {
                        AnyOp::Splat(splat) => self.num(ctx, op, splat.value, lane)?,
                        AnyOp::Fill(fill) => fill.value.as_f64(),
                        _ => return Err(malformed(op)),
                    };
                    self.set(op.results[0], lane, Val::Vector(vec![round_to(vt.elem, x); n]));
                }
            }
            AnyOp::Extract(typed::Extract { vector, position }) => self.extract_insert(ctx, op, vector, &position, None, mask)?,
            AnyOp::Insert(typed::Insert { value, vector, position }) => {
                self.extract_insert(ctx, op, vector, &position, Some(value), mask)?
            }
            AnyOp::Load(load) => self.load(ctx, op, &load, mask)?,
            AnyOp::Store(store) => self.store(ctx, op, &store, mask)?,
            AnyOp::LdMatrix(ld) => matrix::ldmatrix(self, ctx, op, &ld)?,
            AnyOp::StMatrix(st) => matrix::stmatrix(self, ctx, op, &st)?,
            AnyOp::MmaSync(mma) => mma::mma_sync(self, ctx, op, &mma)?,
            AnyOp::DeviceAsyncCopy(copy) => self.async_copy(ctx, op, &copy, mask)?,
            AnyOp::DeviceAsyncCreateGroup(_) => {
                for lane in lanes(mask) {
                    ctx.shared.commit((self.id * 32 + lane) as usize);
                }
            }
            AnyOp::DeviceAsyncWait(typed::DeviceAsyncWait { num_groups }) => {
                let keep = num_groups as usize;
                for lane in lanes(mask) {
                    for landed in ctx.shared.wait((self.id * 32 + lane) as usize, keep) {
                        let len = ctx.shared.tiles[landed.tile].data.values.len();
                        let place = self.place(ctx);
                        let positions = landed.run.positions(landed.count).zip(landed.same_value);
                        let name = OpKind::DeviceAsyncCopy.name();
                        ctx.race.borrow_mut().write(RaceSpace::Shared(landed.tile), len, positions, self.id, landed.span, name, place)?;
                    }
                }
            }
            AnyOp::Shuffle(shuffle) => self.shuffle(ctx, op, &shuffle)?,
            AnyOp::Func(_)
            | AnyOp::CopyG2S(_)
            | AnyOp::CopyS2R(_)
            | AnyOp::CopyR2S(_)
            | AnyOp::CopyR2G(_)
            | AnyOp::Mma(_)
            | AnyOp::ConvertLayout(_)
            | AnyOp::Reduce(_)
            | AnyOp::Broadcast(_)
            | AnyOp::Iota(_)
            | AnyOp::Transpose(_)
            | AnyOp::TileBarrier(_) => {
                return Err(SimError::Unsupported {
                    span: op.span,
                    op: op.kind.name(),
                    reason: "it is a tile-level op; lower the kernel to the nvgpu dialect first".into(),
                });
            }
            AnyOp::MBarrierInit(init) => self.mbarrier_init(ctx, op, &init, mask)?,
            AnyOp::TmaAsyncLoad(load) => self.tma_load(ctx, op, &load, mask)?,
            AnyOp::TmaAsyncStore(store) => self.tma_store(ctx, op, &store, mask)?,
            AnyOp::TmaCommitGroup(_) => self.tma_group(ctx, None, mask),
            AnyOp::TmaWaitGroup(wait) => self.tma_group(ctx, Some(wait.num_groups), mask),
            AnyOp::FenceProxyAsync(_) => self.fence_proxy_async(ctx),
            // Warpgroup-collective (`.sync.aligned`): the warp must be converged ([`super::wgmma`]).
            AnyOp::WgmmaFence(_) => self.wgmma_fence(ctx, op)?,
            AnyOp::WgmmaCommitGroup(_) => self.wgmma_commit(ctx, op)?,
            AnyOp::WgmmaWaitGroup(w) => self.wgmma_wait(ctx, op, w.num_groups)?,
            AnyOp::WarpgroupGenerateDescriptor(d) => self.generate_descriptor(ctx, op, &d, mask)?,
            AnyOp::WarpgroupMma(mma) => self.warpgroup_mma(ctx, op, &mma)?,
            // Register allocation: nothing a program can observe but convergence.
            AnyOp::SetMaxNRegInc(_) | AnyOp::SetMaxNRegDec(_) => self.require_converged(ctx, op)?,
            AnyOp::MBarrierArrive(a) => self.mbarrier_arrive(ctx, op, (a.barriers, a.mbar_id), None, None, mask)?,
            AnyOp::MBarrierArriveExpectTx(a) => {
                self.mbarrier_arrive(ctx, op, (a.barriers, a.mbar_id), Some(a.txcount), a.predicate, mask)?
            }
            AnyOp::For(_) | AnyOp::Yield(_) | AnyOp::Return(_) | AnyOp::Barrier(_) | AnyOp::MBarrierTryWaitParity(_) => {
                unreachable_control(op)?
            }
        }
        Ok(())
    }

    /// `nvgpu.shuffle xor`: warp-synchronous (`shfl.sync` with the full mask), so every lane must be active;
    /// all lanes read their partner's value before any result is written.
    fn shuffle(&mut self, ctx: &Ctx<'_>, op: &Operation, s: &typed::Shuffle) -> Result<(), SimError> {
        self.require_converged(ctx, op)?;
        let r = op.result().ok_or_else(|| malformed(op))?;
        let mut values = [0.0f64; 32];
        for (lane, slot) in values.iter_mut().enumerate() {
            *slot = self.num(ctx, op, s.value, lane as u32)?;
        }
        for lane in 0..32u32 {
            let src = match s.mode {
                crate::ops::ShuffleMode::Xor => (lane ^ s.offset) & 31,
            };
            self.set(r, lane, Val::Num(values[src as usize]));
        }
        Ok(())
    }

    fn broadcast(&mut self, op: &Operation, mask: u32, v: Val) {
        if let Some(r) = op.result() {
            for lane in lanes(mask) {
                self.set(r, lane, v.clone());
            }
        }
    }

    fn binary(&mut self, ctx: &Ctx<'_>, op: &Operation, a: Value, b: Value, mask: u32) -> Result<(), SimError> {
        let r = op.result().ok_or_else(|| malformed(op))?;
        let elem = ctx.func.body.ty(r).element_type();
        let place = self.place(ctx);
        for lane in lanes(mask) {
            let f = |x: f64, y: f64| -> Result<f64, SimError> {
                arith(op.kind, elem, x, y).ok_or(SimError::DivisionByZero { span: op.span, op: op.kind.name(), at: place, lane })
            };
            let v = match (self.val(a, lane), self.val(b, lane)) {
                (Val::Num(x), Val::Num(y)) => Val::Num(f(*x, *y)?),
                (Val::Vector(x), Val::Vector(y)) if x.len() == y.len() => {
                    Val::Vector(x.iter().zip(y).map(|(&x, &y)| f(x, y)).collect::<Result<_, _>>()?)
                }
                _ => return Err(self.undefined(ctx, op, lane)),
            };
            self.set(r, lane, v);
        }
        Ok(())
    }

    fn cmp(&mut self, ctx: &Ctx<'_>, op: &Operation, cmp: &typed::Cmp, mask: u32) -> Result<(), SimError> {
        let r = op.result().ok_or_else(|| malformed(op))?;
        let holds = |x: f64, y: f64| f64::from(u8::from(cmp.predicate.holds_f64(x, y)));
        for lane in lanes(mask) {
            let v = match (self.val(cmp.lhs, lane), self.val(cmp.rhs, lane)) {
                (Val::Vector(xs), Val::Vector(ys)) if xs.len() == ys.len() => {
                    Val::Vector(xs.iter().zip(ys).map(|(&x, &y)| holds(x, y)).collect())
                }
                _ => Val::Num(holds(self.num(ctx, op, cmp.lhs, lane)?, self.num(ctx, op, cmp.rhs, lane)?)),
            };
            self.set(r, lane, v);
        }
        Ok(())
    }

    /// `nvgpu.extract` (no `inserted` value) or `nvgpu.insert`.
    fn extract_insert(
        &mut self,
        ctx: &Ctx<'_>,
        op: &Operation,
        vector: Value,
        pos: &[u32],
        inserted: Option<Value>,
        mask: u32,
    ) -> Result<(), SimError> {
        let Type::Vector(vt) = ctx.func.body.ty(vector) else { return Err(malformed(op)) };
        let mut flat = 0u64;
        let ok = pos.len() == vt.shape.len() && pos.iter().zip(&vt.shape).all(|(&i, &n)| u64::from(i) < n);
        if !ok {
            return Err(SimError::FragmentType {
                span: op.span,
                op: op.kind.name(),
                message: format!("position {pos:?} is outside '{vt}'"),
            });
        }
        for (&i, &n) in pos.iter().zip(&vt.shape) {
            flat = flat * n + u64::from(i);
        }
        let r = op.results[0];
        for lane in lanes(mask) {
            let mut v = self.vector(ctx, op, vector, lane)?.to_vec();
            if let Some(inserted) = inserted {
                let x = self.num(ctx, op, inserted, lane)?;
                if let Some(slot) = v.get_mut(flat as usize) {
                    *slot = round_to(vt.elem, x);
                }
                self.set(r, lane, Val::Vector(v));
            } else {
                let x = v.get(flat as usize).copied().ok_or_else(|| self.undefined(ctx, op, lane))?;
                self.set(r, lane, Val::Num(x));
            }
        }
        Ok(())
    }

    /// Resolves a per-lane memory access of `count` elements: where they are in the tile's data (consecutive
    /// in its storage order) and their byte range, with bounds, alignment (to the access size, at most 16
    /// bytes) and pending-copy checks.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &self,
        ctx: &Ctx<'_>,
        op: &Operation,
        lane: u32,
        mem: MemRef,
        index: &[i64],
        count: usize,
        align: Option<u64>,
    ) -> Result<(Run, (u64, u64)), SimError> {
        let (data, base, layout, space) = match mem {
            MemRef::Global(i) => {
                let tile = match ctx.func.args().get(i).map(|&a| ctx.func.body.ty(a)) {
                    Some(Type::Tile(t)) => Some(t),
                    _ => None,
                };
                (ctx.args[i].as_tile().ok_or_else(|| self.undefined(ctx, op, lane))?, 0, storage_layout(tile), "global")
            }
            MemRef::Shared(i) => {
                let tile = &ctx.shared.tiles[i];
                (&tile.data, tile.base, &tile.layout, "shared")
            }
        };
        let run = locate(&data.shape, layout, index, count).ok_or_else(|| SimError::OutOfBounds {
            span: op.span,
            op: op.kind.name(),
            at: self.place(ctx),
            lane,
            space,
            index: index.to_vec(),
            count,
            axis: layout.contiguous_axis(data.shape.len()).unwrap_or(data.shape.len().saturating_sub(1)),
            shape: data.shape.clone(),
        })?;
        let range = byte_range(base, data.elem.bit_width(), run.physical, count);
        if let Some(align) = align {
            if !range.0.is_multiple_of(align) {
                return Err(SimError::Misaligned { span: op.span, op: op.kind.name(), at: self.place(ctx), lane, space, address: range.0, align });
            }
        }
        if let MemRef::Shared(_) = mem {
            if let Some(address) = ctx.shared.pending_in(range) {
                return Err(SimError::AsyncHazard { span: op.span, op: op.kind.name(), at: self.place(ctx), lane, address });
            }
        }
        Ok((run, range))
    }

    fn load(&mut self, ctx: &Ctx<'_>, op: &Operation, load: &typed::Load, mask: u32) -> Result<(), SimError> {
        let (src, r) = (load.src, op.result().ok_or_else(|| malformed(op))?);
        let ty = ctx.func.body.ty(r).clone();
        let count = vector_len(&ty);
        for lane in lanes(mask) {
            // A masked load (`if %mask`) reads nothing, and checks nothing, where the mask is false: zeros.
            if let Some(m) = load.mask {
                if self.num(ctx, op, m, lane)? == 0.0 {
                    let zero = match ty {
                        Type::Vector(_) => Val::Vector(vec![0.0; count]),
                        _ => Val::Num(0.0),
                    };
                    self.set(r, lane, zero);
                    continue;
                }
            }
            let mem = self.mem(ctx, op, src, lane)?;
            let index = self.indices(ctx, op, &load.indices, lane)?;
            let align = access_align(&ty, count);
            let (run, _) = self.access(ctx, op, lane, mem, &index, count, align)?;
            self.record_access(ctx, op, mem, run, count, false)?;
            let data = match mem {
                MemRef::Global(i) => ctx.args[i].as_tile().ok_or_else(|| self.undefined(ctx, op, lane))?,
                MemRef::Shared(i) => &ctx.shared.tiles[i].data,
            };
            let values: Vec<f64> = run.positions(count).map(|i| data.values[i]).collect();
            let v = match ty {
                Type::Vector(_) => Val::Vector(values),
                _ => Val::Num(values[0]),
            };
            self.set(r, lane, v);
        }
        Ok(())
    }

    fn store(&mut self, ctx: &mut Ctx<'_>, op: &Operation, store: &typed::Store, mask: u32) -> Result<(), SimError> {
        let (value, dst) = (store.value, store.dst);
        let ty = ctx.func.body.ty(value).clone();
        let count = vector_len(&ty);
        for lane in lanes(mask) {
            // A predicated store (`if %mask`) does nothing, and checks nothing, where the mask is false.
            if let Some(m) = store.mask {
                if self.num(ctx, op, m, lane)? == 0.0 {
                    continue;
                }
            }
            let mem = self.mem(ctx, op, dst, lane)?;
            let index = self.indices(ctx, op, &store.indices, lane)?;
            let (run, bytes) = self.access(ctx, op, lane, mem, &index, count, access_align(&ty, count))?;
            if let MemRef::Shared(_) = mem {
                // A TMA store not yet waited for still reads these bytes, or a wgmma in flight.
                if let Some(address) = ctx.shared.bulk_read_in(bytes) {
                    return Err(SimError::AsyncHazard { span: op.span, op: op.kind.name(), at: self.place(ctx), lane, address });
                }
                self.check_not_in_flight(ctx, op, bytes)?;
                ctx.shared.generic_write(self.id, bytes);
            }
            let values: Vec<f64> = match self.val(value, lane) {
                Val::Num(x) => vec![*x],
                Val::Vector(v) => v.clone(),
                _ => return Err(self.undefined(ctx, op, lane)),
            };
            let (place, id) = (self.place(ctx), self.id);
            let (data, space) = match mem {
                MemRef::Global(i) => match &mut ctx.args[i] {
                    SimArg::Tile(t) => (t, RaceSpace::Global(i)),
                    SimArg::Scalar(_) => return Err(self.undefined(ctx, op, lane)),
                },
                MemRef::Shared(i) => (&mut ctx.shared.tiles[i].data, RaceSpace::Shared(i)),
            };
            let elem = data.elem;
            let writes = run.positions(count).zip(&values).map(|(i, &v)| (i, data.values.get(i) == Some(&round_to(elem, v))));
            ctx.race.borrow_mut().write(space, data.values.len(), writes, id, op.span, op.kind.name(), place)?;
            for (i, v) in run.positions(count).zip(values) {
                data.values[i] = round_to(elem, v);
            }
        }
        Ok(())
    }

    fn async_copy(&mut self, ctx: &mut Ctx<'_>, op: &Operation, copy: &typed::DeviceAsyncCopy, mask: u32) -> Result<(), SimError> {
        let (src, dst) = (copy.src, copy.dst);
        let n = copy.dst_elements as usize;
        let bits = ctx.func.body.ty(dst).element_type().bit_width() as usize;
        let size = (n * bits / 8) as u64;
        if ![4, 8, 16].contains(&size) {
            return Err(SimError::FragmentType {
                span: op.span,
                op: op.kind.name(),
                message: format!("copies 4, 8 or 16 bytes, not {n} elements of {bits} bits"),
            });
        }
        for lane in lanes(mask) {
            let src_elements = match copy.src_elements {
                Some(v) => self.int(ctx, op, v, lane)?,
                None => n as i64,
            };
            if src_elements < 0 || src_elements as usize > n {
                return Err(SimError::FragmentType {
                    span: op.span,
                    op: op.kind.name(),
                    message: format!("lane {lane} asks to read {src_elements} source elements of a {n}-element copy"),
                });
            }
            let src_elements = src_elements as usize;
            let (sm, dm) = (self.mem(ctx, op, src, lane)?, self.mem(ctx, op, dst, lane)?);
            let (si, di) = (self.indices(ctx, op, &copy.src_indices, lane)?, self.indices(ctx, op, &copy.dst_indices, lane)?);
            let mut values = vec![0.0; n];
            if src_elements > 0 {
                let (run, _) = self.access(ctx, op, lane, sm, &si, src_elements, Some(size))?;
                self.record_access(ctx, op, sm, run, src_elements, false)?;
                let MemRef::Global(g) = sm else { return Err(malformed(op)) };
                let data = ctx.args[g].as_tile().ok_or_else(|| self.undefined(ctx, op, lane))?;
                for (slot, i) in values.iter_mut().zip(run.positions(src_elements)) {
                    *slot = data.values[i];
                }
            }
            let (run, bytes) = self.access(ctx, op, lane, dm, &di, n, Some(size))?;
            self.check_not_in_flight(ctx, op, bytes)?;
            let MemRef::Shared(tile) = dm else { return Err(malformed(op)) };
            ctx.shared.issue((self.id * 32 + lane) as usize, PendingCopy { tile, run, values, bytes, span: op.span });
        }
        Ok(())
    }
}

fn unreachable_control(op: &Operation) -> Result<(), SimError> {
    Err(SimError::Unsupported { span: op.span, op: op.kind.name(), reason: "control flow handled elsewhere".into() })
}

fn malformed(op: &Operation) -> SimError {
    SimError::Unsupported { span: op.span, op: op.kind.name(), reason: "its operands are malformed (verify the IR first)".into() }
}

/// Elements moved by a load or store of this type.
fn vector_len(ty: &Type) -> usize {
    match ty {
        Type::Vector(v) => v.num_elements() as usize,
        _ => 1,
    }
}

/// Vector accesses must be aligned to their size (the largest power of two dividing it, at most 16 bytes).
fn access_align(ty: &Type, count: usize) -> Option<u64> {
    let Type::Vector(v) = ty else { return None };
    let bits = count as u64 * u64::from(v.elem.bit_width());
    let bytes = (bits / 8).max(1);
    Some((1u64 << bytes.trailing_zeros()).min(16))
}

/// One elementwise binary op, rounded to the element type. `None`: integer division by zero.
fn arith(kind: OpKind, elem: ScalarType, x: f64, y: f64) -> Option<f64> {
    let int = elem.is_integer();
    let r = match kind {
        OpKind::Add => x + y,
        OpKind::Sub => x - y,
        OpKind::Mul => {
            if int {
                // Exact modulo 2^64 even where the f64 product would round.
                (x as i64).wrapping_mul(y as i64) as f64
            } else {
                x * y
            }
        }
        OpKind::Div => {
            if int {
                if y == 0.0 {
                    return None;
                }
                (x as i64).wrapping_div(y as i64) as f64
            } else {
                x / y
            }
        }
        OpKind::Rem => {
            if y == 0.0 {
                return None;
            }
            (x as i64).wrapping_rem(y as i64) as f64
        }
        OpKind::Min => x.min(y),
        OpKind::Max => x.max(y),
        _ => return Some(x),
    };
    Some(round_to(elem, r))
}
