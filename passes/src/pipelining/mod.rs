//! `software-pipeline`: turns a lowered k-loop that copies one tile into shared memory and waits for it
//! every iteration into an N-stage `cp.async` ring (an mbarrier ring for TMA loads, below).
//!
//! # What it matches
//! A `tile.for` (nvgpu level, after `lower-tile-to-nvgpu`) whose body is
//! ```text
//! <pure address arithmetic>
//! nvgpu.barrier                                  (optional: the write-after-read barrier)
//! <pure address arithmetic> nvgpu.device_async_copy ... nvgpu.device_async_create_group ...
//! nvgpu.device_async_wait {numGroups = 0}
//! nvgpu.fence.proxy.async                        (optional: a wgmma reads the tiles; kept after each wait)
//! nvgpu.barrier
//! <compute: ldmatrix / loads / wgmma descriptors of the copied tiles, mma.sync, wgmma (which waits for its
//!  group before the yield), anything without barriers or copies>
//! tile.yield
//! ```
//! where every copy writes a static rank-2 shared tile allocated outside the loop and used nowhere else
//! than by these copies and by reads in the compute part, and every copy has a `src_elements` operand
//! (the lowering's bounds-checked form: a chunk outside the global tile reads nothing, whatever its address).
//! A *synchronous copy* (`global_alignment` below 4 bytes) counts as a copy too: masked `nvgpu.load`s from
//! global memory and the `nvgpu.store` of what they loaded into the shared tile. A loop with only such copies
//! is pipelined only when the stage count is given (option or attribute; see [`pipeline_func`] for why).
//!
//! # What it makes (S stages)
//! - each copied shared tile gets `S - 1` more allocations, one per stage;
//! - a prologue before the loop issues the copies of iterations `0 .. S-1` into stages `0 .. S-1`, one
//!   commit group per iteration;
//! - the body: `device_async_wait {numGroups = S-2}` (the oldest group, this iteration's tile, has landed),
//!   one barrier (makes it visible to every warp, and every warp is done reading the stage read in the
//!   previous iteration, which is the one refilled now), the copies of iteration `i + S - 1` into stage
//!   `(i + S - 1) % S` and their commit, then the compute part reading stage `i % S`;
//! - copies for iterations past the end read nothing: `src_elements` becomes `select(k < ub, n, 0)`
//!   (cp.async zero-fills and reads nothing, so the address past the end is never dereferenced), and the
//!   mask of a synchronous copy's load becomes `k < ub && mask`. A synchronous copy is done when its store
//!   is; the barrier at the top of the iteration that reads its stage makes it visible, as for cp.async;
//! - `device_async_wait {numGroups = 0}` after the loop, so no copy is in flight when the kernel goes on.
//!
//! Each stage is its own `tile.alloc_shared` (`%sa`, `%sa_stage1`, ...); the loop is unrolled `S` times so that
//! every copy names its stage statically.
//!
//! The tail (`pipeline_tail`, pass option `tail=`): *peeled* (the default), the unrolled loop runs `T - T % S`
//! iterations and `S - 1` more copies of the body after it (each a loop of 0 or 1 trips, stage `j`) run the rest;
//! *guarded*, the unrolled loop runs all `T`, its copies `1 .. S` each a loop of 0 or 1 trips (`k0 + j*step < ub`),
//! so that the last trip runs the `T % S` left and ends it: no copies after the loop (less code, and fewer
//! registers where ptxas allocated some for them), a branch between the copies of every trip. Measured on the H100
//! (docs/bench-tail-2026-11-25): guarded is faster for the attention kernels (up to 1.35x, by occupancy) and up to
//! 10-18% slower for the 255-register mma.sync GEMMs, whose schedule ptxas builds around the branches.
//!
//! # TMA loads: the mbarrier ring (sm_90a)
//! A body whose copies are (partly) `nvgpu.tma.async.load`s, as `lower-tile-to-nvgpu` makes them on sm_90a
//! (thread 0's `arrive.expect_tx` with the run's box bytes and its loads on one mbarrier, then every thread's
//! `try_wait.parity` before the barrier), becomes a ring the same way, with one mbarrier per stage: the
//! group of the loop's mbarrier grows to `S` (each initialised like the first, before the barrier that
//! follows the inits), the fill of stage `s` announces and issues on barrier `s` (predicate: thread 0 and
//! `k < ub`: an iteration past the end is not filled, and nothing waits for it), and the wait before reading
//! stage `s` is `try_wait.parity` on barrier `s` at the parity of the ring round, `((k - lb) / step / S) % 2`
//! (flipped when `k` is past the end, so that the wait of fragments loaded ahead for an iteration that does not
//! exist returns at once: the phase before has completed, or the barrier was never filled). cp.async copies of
//! the same body keep their groups and `device_async_wait {numGroups = S-2}` beside it. Refilling a stage
//! after every warp is done reading it uses the cp.async ring's CTA barrier rather than per-stage "empty"
//! mbarriers: the barrier is there anyway (it orders the cp.async copies' visibility, and the fragments-ahead
//! schedule reads the next stage right after it), all warps both produce and consume here (no warp
//! specialization), and a TMA load issued after a barrier that follows the reads is ordered after them (the
//! race detector checks it: `tests/lit/sim/tma-ring.test`). Empty barriers pay off with a producer warp: the kernel
//! attribute `warp_specialize = true` builds one ([`warp_specialized`]: full and empty rings, no CTA barrier in
//! the k-loop).
//!
//! # wgmma: one group in flight
//! A body whose compute part is a wgmma chain as `lower-tile-to-nvgpu` makes it (flatten the carried fragments,
//! `wgmma.fence`, the wgmmas, `commit_group`, `wait_group 0`, regroup: [`wgmma_in_flight`]) keeps one wgmma
//! group in flight, as CUTLASS's sm90 mainloop does (`warpgroup_wait<1>` before releasing the stage the previous
//! k-step read). The loop carries wgmma's accumulator vectors (flattened once before the loop, regrouped once
//! after `wait_group 0` behind it), and iteration `i`, reading stage `i % S`, is
//! ```text
//! wait for stage i % S (cp.async groups: all but the S-2 newest; mbarrier i % S at the parity of the round)
//! [fence.proxy.async]   [barrier: only with cp.async or synchronous copies, which a barrier makes visible]
//! wgmma.fence; the wgmmas of iteration i, chained on the carried (perhaps pending) D; commit_group
//! wait_group 1          the group of iteration i-1 retires (iteration i's stays in flight)
//! barrier               every warpgroup has retired its group i-1: stage (i-1) % S is read by nobody
//! refill stage (i-1) % S = (i+S-1) % S with iteration i+S-1 (TMA: thread 0, predicated on k < ub)
//! ```
//! The prefetch distance stays `S-1` iterations and the prologue fills stages `0 .. S-2`, as above; only the
//! refill moves behind the wgmmas, `wait_group 1` and its barrier. With `S = 2` the refill of iteration `i+1`
//! is issued while the group of `i` runs. The simulator holds a wgmma's shared reads until a `wait_group`
//! retires its group, so a refill of a stage whose group is still in flight is an error there
//! (`tests/lit/sim/wgmma-ring.test`). A wgmma body of another shape, or with register fragments loaded ahead (an
//! mma.sync schedule), keeps the ring above with `wait_group 0` in the body.
//!
//! # Nested rings (the persistent tile loop)
//! A TMA ring whose k-loop sits in another loop (the `persistent-grid` pass's tile loop, [`crate::persistent`]) runs
//! again for every iteration of that loop, on the same mbarriers, initialised once. Stage `s` is filled
//! `(T + S - 1 - s) / S` times in a run of `T` k-steps, so the parity of its next phase depends on every run before:
//! the enclosing loop carries one more value, `%ring_phases`, bit `s` the parity of stage `s`'s fills so far; each
//! wait adds bit `s` to its round's parity, and after the k-loop the bits advance by this run's fills (a wait that a
//! parity derived from `k` within one run would get wrong as soon as `T` is not a multiple of `2S`: it would return
//! at once on a completed phase, or never). Only one level of nesting, and only rings the pass builds: a TMA loop
//! nested in a loop that stays single-stage or does not match is an error, not a silently wrong kernel.
//! In the persistent tile loop (`hoist = false`), the prologue moves ([`prologue_ahead`]): once every warpgroup has
//! retired this tile's wgmmas (`wait_group 0`, a barrier), the next tile's first `S-1` loads are issued, before this
//! tile's epilogue, and the first tile's before the loop.
//!
//! Stages: the pass option `stages=N` (2..=8), else the function attribute `pipeline_stages`, else
//! [`DEFAULT_STAGES`] or, where that many would not fit the target's shared memory per block, the most
//! that fit ([`stages_that_fit`]; a remark says so). A loop that does not match is left alone (a remark says why when it had copies;
//! a located warning when the stages were asked for, by the option or `pipeline_stages`). Nor is a loop whose
//! copies read a global tile the loop also stores to (a loop-carried dependence through memory: a copy issued
//! ahead would read before the store); the lowering's barrier from the back edge
//! ([`crate::analysis::barriers`]) keeps it correct single-stage. Shared memory needs nothing more across
//! iterations: the barrier at the top of each iteration orders the refill of a stage after its last reads.
//!
//! Register fragments: when the compute part starts with the loads of one k sub-step's fragments
//! (ldmatrix of the copied tiles), those of the next iteration are loaded one iteration ahead, right after
//! its stage has landed, and carried through the loop (double-buffered registers). The pass option
//! `fragments=on|off`, else the function attribute `fragments_ahead` (`true` or `false`), else on, decides
//! whether to do so; the option wins over the attribute as `stages` wins over `pipeline_stages`. Off gives
//! fewer live registers (less pressure at large warp tiles), on hides the first sub-step's shared-memory
//! latency; `tilec tune` tries both.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tilec_ir::ops::{CmpPredicate, Literal, PipelineTail};
use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{BlockId, Diagnostic, Func, Module, OpId, OpKind, OpSpec, ScalarType, Span, Type, TypedOp, Value};

use crate::analysis::effects::is_pure;
use tilec_ir::ops::BinaryArith;
use crate::kernel_attrs::kernel_attrs;
use crate::lower::GLOBAL_ALIGNMENT_ATTR;
use crate::options::PassOptions;

mod warp_specialized;
mod wgmma_in_flight;
use wgmma_in_flight::WgmmaCarry;

/// Stages when neither the pass option nor the function attribute says.
pub const DEFAULT_STAGES: u32 = 4;

/// The function attribute naming the stage count (read as [`tilec_ir::KernelAttrs::pipeline_stages`]).
pub const STAGES_ATTR: &str = "pipeline_stages";

/// The function attribute saying whether register fragments are loaded one iteration ahead (bool, default true;
/// read as [`tilec_ir::KernelAttrs::fragments_ahead`]).
pub const FRAGMENTS_AHEAD_ATTR: &str = "fragments_ahead";

/// The `software-pipeline` pass (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct SoftwarePipeline {
    /// Overrides the function attribute.
    pub stages: Option<u32>,
    /// Whether to load the first k sub-step's fragments one iteration ahead (`fragments=on|off`); overrides
    /// the function attribute `fragments_ahead`.
    pub fragments_ahead: Option<bool>,
    /// How the iterations the unrolled main loop leaves over run (`tail=peeled|guarded`); overrides the
    /// function attribute `pipeline_tail`.
    pub tail: Option<PipelineTail>,
}

impl SoftwarePipeline {
    pub const NAME: &'static str = "software-pipeline";
    pub const DESCRIPTION: &'static str =
        "multi-stage cp.async ring for lowered k-loops: prologue, wait numGroups = stages-2, one barrier per step";

    /// Builds the pass from its pipeline options (`stages=N`, `fragments=on|off`).
    pub fn from_options(options: &PassOptions) -> Result<SoftwarePipeline, Diagnostic> {
        options.expect_only(Self::NAME, &["stages", "fragments", "tail"])?;
        let tail = match options.get("tail") {
            None => None,
            Some("peeled") => Some(PipelineTail::Peeled),
            Some("guarded") => Some(PipelineTail::Guarded),
            Some(other) => {
                return Err(Diagnostic::error(options.span, format!("software-pipeline: tail must be 'peeled' or 'guarded', not '{other}'")))
            }
        };
        let fragments_ahead = match options.get("fragments") {
            None => None,
            Some("on") => Some(true),
            Some("off") => Some(false),
            Some(other) => {
                return Err(Diagnostic::error(options.span, format!("software-pipeline: fragments must be 'on' or 'off', not '{other}'")))
            }
        };
        let stages = match options.get("stages") {
            None => None,
            Some(_) => {
                let n: u32 = options.parse_or(Self::NAME, "stages", DEFAULT_STAGES)?;
                if !(2..=8).contains(&n) {
                    return Err(Diagnostic::error(options.span, format!("software-pipeline: stages must be 2..=8, not {n}")));
                }
                Some(n)
            }
        };
        Ok(SoftwarePipeline { stages, fragments_ahead, tail })
    }
}

impl crate::Pass for SoftwarePipeline {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &'static str {
        Self::DESCRIPTION
    }

    fn run(&self, module: &mut Module, cx: &mut crate::PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            // The pass options win over the attributes, which are read only where no option is given.
            let pipeline_stages = match self.stages {
                Some(_) => None,
                None => kernel_attrs(func)?.pipeline_stages,
            };
            let explicit = self.stages.is_some() || pipeline_stages.is_some();
            let stages = match self.stages {
                Some(n) => n,
                None => match pipeline_stages {
                    Some(n) if (1..=8).contains(&n) => {
                        let (limit, chip) = (cx.target.max_shared_bytes_per_block(), cx.target.chip());
                        if let Some(d) = stages_too_many(func, n, limit, chip, func.attr_span(STAGES_ATTR)) {
                            return Err(d);
                        }
                        n
                    }
                    Some(n) => return Err(Diagnostic::error(func.span, format!("{STAGES_ATTR} = {n}: expected 1..=8"))),
                    None => {
                        let stages = stages_that_fit(func, cx.target.max_shared_bytes_per_block());
                        if stages < DEFAULT_STAGES {
                            cx.remark(
                                func.span,
                                format!(
                                    "software-pipeline: {stages} stages, not {DEFAULT_STAGES}: more would not fit the {} bytes of shared memory per block of {}",
                                    cx.target.max_shared_bytes_per_block(),
                                    cx.target.chip()
                                ),
                            );
                        }
                        stages
                    }
                },
            };
            let fragments_ahead = match self.fragments_ahead {
                Some(on) => on,
                None => kernel_attrs(func)?.fragments_ahead.unwrap_or(true),
            };
            let tail = match self.tail {
                Some(tail) => tail,
                None => kernel_attrs(func)?.pipeline_tail.unwrap_or(PipelineTail::Peeled),
            };
            // Unverified IR with a mistyped attribute: an error unless the options say everything else the pass
            // reads (as for the attributes above); the verifier rejects such IR before any pass runs.
            let specialize = match kernel_attrs(func) {
                Ok(attrs) => attrs.warp_specialize.unwrap_or(false).then_some(attrs.num_warps),
                Err(_) if self.stages.is_some() && self.fragments_ahead.is_some() && self.tail.is_some() => None,
                Err(e) => return Err(e),
            };
            if specialize.is_some() {
                warp_specialize_func(func, stages)?;
                continue;
            }
            for (span, why) in pipeline_func(func, stages, fragments_ahead, tail, explicit)? {
                // Asked for by the kernel (or the pass option) and not done: the user must hear it.
                if explicit {
                    cx.warn(
                        Diagnostic::warning(span, format!("software pipelining with {stages} stages declined this loop: {why}"))
                            .with_note("the loop runs single-stage (copies and compute do not overlap)"),
                    );
                }
                cx.remark(span, format!("software-pipeline: loop left single-stage: {why}"));
            }
        }
        Ok(())
    }
}

/// The default stage count for `func` on a target with `limit` bytes of shared memory per block: the most
/// stages, from [`DEFAULT_STAGES`] down to 2, whose rings (every copied tile of every matching loop times the
/// stages, beside the function's other allocations) fit. When not even 2 fit, [`DEFAULT_STAGES`]:
/// check-resources then says what is too large.
pub fn stages_that_fit(func: &Func, limit: u64) -> u32 {
    let ring = RingBytes::of(func);
    (2..=DEFAULT_STAGES).rev().find(|&s| ring.total(s) <= limit).unwrap_or(DEFAULT_STAGES)
}

/// The shared memory of `func` under software pipelining: its shared tiles once, and the tiles the loops
/// that take the function's stage count copy, once per stage.
#[derive(Clone, Copy, Debug)]
struct RingBytes {
    /// Every shared tile once (aligned as placed).
    all: u64,
    /// The copied tiles of one stage.
    per_stage: u64,
}

impl RingBytes {
    /// Shared memory with `stages` stages: each further stage adds another copy of the copied tiles.
    fn total(self, stages: u32) -> u64 {
        self.all.saturating_add(self.per_stage.saturating_mul(u64::from(stages.saturating_sub(1))))
    }

    fn of(func: &Func) -> RingBytes {
        use tilec_ir::shared_memory::{align_shared, tile_bytes};
        let bytes = |v: Value| match func.body.ty(v) {
            Type::Tile(t) => align_shared(tile_bytes(t)),
            _ => 0,
        };
        let mut all = 0u64;
        let mut loops = Vec::new();
        func.body.walk(func.entry, &mut |op| {
            let o = func.body.op(op);
            match o.kind {
                OpKind::AllocShared => all += o.result().map_or(0, bytes),
                OpKind::For => loops.push(op),
                _ => {}
            }
        });
        let mut copied = HashSet::default();
        for l in loops {
            // A loop with its own stage count has its own ring; only the loops that take the default count.
            if loop_stages(func, l).is_some() {
                continue;
            }
            if let Ok(Some(plan)) = analyze(func, l) {
                copied.extend(plan.tiles.iter().map(|&(v, _)| v));
            }
        }
        let per_stage: u64 = copied.into_iter().map(bytes).sum();
        RingBytes { all, per_stage }
    }
}

/// The kernel's own `pipeline_stages` (at `span`) makes its shared memory exceed the target's `limit`: an
/// error at the attribute that says the bytes per stage and the stage count that fits (the user's choice, not
/// the pass's fault). `None` when it fits, or when the loops copy nothing.
fn stages_too_many(func: &Func, stages: u32, limit: u64, chip: &str, span: Span) -> Option<Diagnostic> {
    let ring = RingBytes::of(func);
    if ring.per_stage == 0 || ring.total(stages) <= limit {
        return None;
    }
    let message = format!(
        "{STAGES_ATTR} = {stages}: the loop copies {} bytes of shared tiles per stage; {stages} stages with the kernel's other shared tiles need {} bytes, more than the {limit} bytes of shared memory per block of {chip}",
        ring.per_stage,
        ring.total(stages)
    );
    let fix = match (2..stages).rev().find(|&s| ring.total(s) <= limit) {
        Some(fits) => format!("{STAGES_ATTR} = {fits} fits ({} bytes); or copy smaller tiles per stage (a smaller BK)", ring.total(fits)),
        None => format!("even 2 stages need {} bytes: copy smaller tiles per stage (a smaller BK or BN/BM)", ring.total(2)),
    };
    Some(Diagnostic::error(span, message).with_note(fix))
}

/// Pipelines every matching loop of a function with `stages` stages; returns why loops with copies did not match.
/// A loop whose copies are *all* synchronous is pipelined only when the stage count is `explicit` (the
/// pass option or the function attribute): by default it stays single-stage, which measured as fast or
/// nearly (4097³ f16 on an H100: 1.26 ms single-stage against 1.43–1.81 ms with 3 or 4 stages for the
/// 128×128 tile; the 256×128 tile gains 4% from 4 stages without fragments ahead and loses 10% with
/// them), since each synchronous copy waits for its loads right where it is issued. With one operand still
/// on cp.async the ring pays (4096×4096×4097, A synchronous: 0.93 ms with 4 stages against 1.20 single-stage;
/// 4096×4097×4096, B synchronous: 0.76 against 0.88).
///
/// A loop waiting on an mbarrier inside another loop (`persistent = true` makes such nests) must become a ring
/// whose phases continue through the enclosing loop: where it cannot, the lowering's per-iteration parity
/// would restart at every run of the loop, so that is an error at the loop, not a remark.
pub fn pipeline_func(func: &mut Func, stages: u32, fragments_ahead: bool, tail: PipelineTail, explicit: bool) -> Result<Vec<(Span, String)>, Diagnostic> {
    let mut loops = Vec::new();
    func.body.walk(func.entry, &mut |op| loops.push(op));
    loops.retain(|&op| func.body.op(op).kind == OpKind::For);
    let mut skipped = Vec::new();
    for l in loops {
        // The loop's own `pipeline_stages` (verified 1..=8) wins over the function's.
        let own = loop_stages(func, l);
        let (stages, explicit) = (own.unwrap_or(stages), explicit || own.is_some());
        let body = func.body.op(l).regions[0];
        let waits_on_mbarrier = func.body.block(body).ops.iter().any(|&o| func.body.op(o).kind == OpKind::MBarrierTryWaitParity);
        if waits_on_mbarrier && enclosing_loop(func, l) != Ok(None) {
            let why = match (enclosing_loop(func, l), analyze(func, l)) {
                (Err(why), _) | (_, Err(why)) => Some(why),
                _ if stages < 2 => Some(format!("{STAGES_ATTR} = {stages} (a single-stage loop)")),
                (_, Ok(None)) => Some("it does not match the ring".into()),
                _ => None,
            };
            if let Some(why) = why {
                return Err(Diagnostic::error(func.body.op(l).span, format!(
                    "this loop's TMA copies wait on an mbarrier inside an enclosing loop, and its phases cannot be carried through that loop: {why}"
                )).with_note("a persistent kernel (persistent = true) needs its TMA k-loop pipelined with at least 2 stages"));
            }
        }
        if stages < 2 {
            continue;
        }
        match analyze(func, l) {
            Ok(Some(plan)) if plan.all_synchronous && !explicit => skipped.push((
                func.body.op(l).span,
                format!("all its copies are synchronous ({GLOBAL_ALIGNMENT_ATTR} below 4 bytes); set {STAGES_ATTR} to pipeline them anyway"),
            )),
            Ok(Some(plan)) => transform(func, l, &plan, stages, fragments_ahead, tail),
            Ok(None) => {}
            Err(why) => skipped.push((func.body.op(l).span, why)),
        }
    }
    Ok(skipped)
}

/// Warp-specializes the k-loop of a kernel with `warp_specialize = true` ([`warp_specialized`]): exactly one
/// loop with copies, which must match the ring and meet [`warp_specialized::legality`]; anything else is an
/// error at the loop (or the kernel), since the kernel asked for it.
///
/// A kernel that is already warp-specialized (its warps were given their roles: `setmaxnreg`, as the
/// transform emits it; the nvgpu-level IR `tilec --emit nvgpu` prints, read back) is left as it is.
fn warp_specialize_func(func: &mut Func, stages: u32) -> Result<(), Diagnostic> {
    if func.body.any_op(func.entry, &mut |op| matches!(op.kind, OpKind::SetMaxNRegDec | OpKind::SetMaxNRegInc)) {
        return Ok(());
    }
    let num_warps = kernel_attrs(func)?.num_warps;
    let mut loops = Vec::new();
    func.body.walk(func.entry, &mut |op| loops.push(op));
    loops.retain(|&op| func.body.op(op).kind == OpKind::For);
    let mut plans = Vec::new();
    for l in loops {
        let span = func.body.op(l).span;
        let stages = loop_stages(func, l).unwrap_or(stages);
        match analyze(func, l) {
            Ok(Some(plan)) => plans.push((l, plan, stages)),
            Ok(None) => {}
            Err(why) => return Err(Diagnostic::error(span, format!("warp_specialize = true: this loop cannot be warp-specialized: {why}"))),
        }
    }
    let [(l, plan, stages)] = &plans[..] else {
        return Err(Diagnostic::error(
            func.span,
            format!("warp_specialize = true: the kernel must have exactly one k-loop with copies, not {}", plans.len()),
        ));
    };
    let span = func.body.op(*l).span;
    if *stages < 2 {
        return Err(Diagnostic::error(span, format!("warp_specialize = true needs {STAGES_ATTR} of at least 2, not {stages}")));
    }
    let carry = warp_specialized::legality(func, *l, plan, num_warps)
        .map_err(|why| Diagnostic::error(span, format!("warp_specialize = true: this loop cannot be warp-specialized: {why}")))?;
    warp_specialized::transform(func, *l, plan, carry, *stages, num_warps);
    Ok(())
}

/// A loop's own stage count (its `pipeline_stages` attribute), if it has one.
fn loop_stages(func: &Func, l: OpId) -> Option<u32> {
    func.body.op(l).view::<typed::For>().and_then(|f| f.pipeline_stages)
}

/// The parts of a matching loop body.
struct LoopPlan {
    body: BlockId,
    /// Ops before the wait (without the leading barrier): pure ops, copies, create_groups.
    pre: Vec<OpId>,
    /// Whether every copy is synchronous (loads and a store rather than cp.async).
    all_synchronous: bool,
    /// The pure ops of `pre` that do not depend on a load (address arithmetic, which the compute part may
    /// use too): cloned wherever the body's values are needed outside the copies.
    address: Vec<OpId>,
    /// Ops after the wait's barrier, before the yield.
    post: Vec<OpId>,
    /// What the body yields.
    yielded: Vec<Value>,
    /// The loop's bounds, step and initial values.
    header: typed::For,
    /// Shared tiles the copies fill, with their rows.
    tiles: Vec<(Value, u64)>,
    /// Whether the body waits for cp.async groups (it has cp.async or synchronous copies).
    has_async_wait: bool,
    /// The mbarrier its TMA loads complete on, when it has some.
    mbarrier: Option<MbarrierUse>,
    /// Whether an `nvgpu.fence.proxy.async` follows the waits (a wgmma reads the tiles through the async
    /// proxy): the pipelined waits keep it.
    proxy_fence: bool,
}

fn analyze(func: &Func, l: OpId) -> Result<Option<LoopPlan>, String> {
    let body = &func.body;
    let lop = body.op(l);
    let block = lop.regions[0];
    let ops = body.block(block).ops.clone();
    let has_copy = ops.iter().any(|&o| matches!(body.op(o).kind, OpKind::DeviceAsyncCopy | OpKind::DeviceAsyncWait | OpKind::TmaAsyncLoad));
    if !has_copy {
        return Ok(None);
    }
    let Some(header) = lop.view::<typed::For>() else { return Err("malformed loop".into()) };
    match body.constant_int(header.step) {
        Some(n) if n > 0 => {}
        _ => return Err("its step is not a positive constant".into()),
    }
    let Some((_, yielded)) = ops.last().and_then(|o| Some((o, body.op(*o).view::<typed::Yield>()?.values))) else {
        return Err("the body does not end in a yield".into());
    };
    // The wait: a `device_async_wait {numGroups = 0}` (cp.async groups), a `try_wait.parity` on the copies'
    // mbarrier (TMA loads), or both, then (after the parity's pure arithmetic) the barrier.
    let is_wait = |o: OpId| matches!(body.op(o).kind, OpKind::DeviceAsyncWait | OpKind::MBarrierTryWaitParity);
    let async_waits = ops.iter().filter(|&&o| body.op(o).kind == OpKind::DeviceAsyncWait).count();
    let mbar_waits = ops.iter().filter(|&&o| body.op(o).kind == OpKind::MBarrierTryWaitParity).count();
    if async_waits > 1 || mbar_waits > 1 || async_waits + mbar_waits == 0 {
        return Err("the body does not have exactly one device_async_wait and/or one mbarrier wait".into());
    }
    let Some(w) = ops.iter().position(|&o| is_wait(o)) else { return Err("the body has no wait".into()) };
    if ops.iter().any(|&o| body.op(o).view::<typed::DeviceAsyncWait>().is_some_and(|wait| wait.num_groups != 0)) {
        return Err("its wait already leaves groups pending".into());
    }
    // A proxy fence after the waits (a wgmma reads the tiles through the async proxy) belongs to them.
    let is_fence = |o: OpId| body.op(o).kind == OpKind::FenceProxyAsync;
    let Some(b) = (w..ops.len()).find(|&i| !is_wait(ops[i]) && !is_fence(ops[i]) && !is_pure(body.op(ops[i]).kind)) else {
        return Err("the wait is not followed by a barrier".into());
    };
    if body.op(ops[b]).kind != OpKind::Barrier || ops[w..b].iter().filter(|&&o| is_wait(o)).count() != async_waits + mbar_waits {
        return Err("the wait is not followed by a barrier".into());
    }
    let has_async_wait = async_waits == 1;
    let proxy_fence = ops[w..b].iter().any(|&o| is_fence(o));
    let mbar_wait = ops[w..b].iter().find_map(|&o| body.op(o).view::<typed::MBarrierTryWaitParity>());
    // The write-after-read barrier the lowering put before the copies, possibly after pure address
    // arithmetic (which touches no memory, so it may as well run after the barrier): it is dropped, the
    // pipelined body has its own.
    let leading_barrier = ops[..w]
        .iter()
        .position(|&o| body.op(o).kind == OpKind::Barrier)
        .filter(|&b| ops[..b].iter().all(|&o| is_pure(body.op(o).kind)));
    // The pure ops between the waits (the mbarrier's parity) count as address arithmetic.
    let pre: Vec<OpId> = ops[..b]
        .iter()
        .enumerate()
        .filter(|&(i, &o)| Some(i) != leading_barrier && !is_wait(o) && !is_fence(o))
        .map(|(_, &o)| o)
        .collect();
    let post: Vec<OpId> = ops[b + 1..ops.len() - 1].to_vec();
    let mut mbarrier: Option<Value> = None;
    let mut tiles: Vec<(Value, u64)> = Vec::new();
    for &o in &pre {
        let op = body.op(o);
        match AnyOp::from_op(op) {
            Some(AnyOp::DeviceAsyncCopy(copy)) => {
                if copy.src_elements.is_none() {
                    return Err("a copy has no src_elements (unchecked source addresses)".into());
                }
                let dst = copied_tile(func, block, copy.dst)?;
                if !tiles.iter().any(|&(v, _)| v == dst.0) {
                    tiles.push(dst);
                }
            }
            // A synchronous copy (`global_alignment` < 4): a masked load from global memory and its store.
            Some(AnyOp::Load(load)) => {
                if load.mask.is_none() {
                    return Err("a load before the wait has no mask (unchecked source addresses)".into());
                }
            }
            Some(AnyOp::Store(store)) => {
                // What it stores was loaded (and gathered into a vector by pure ops) before the wait.
                let value_loaded = body.defining_op(store.value).is_some_and(|d| pre.contains(&d));
                if store.mask.is_some() || !value_loaded {
                    return Err("a store before the wait is not the second half of a synchronous copy".into());
                }
                let dst = copied_tile(func, block, store.dst)?;
                if !tiles.iter().any(|&(v, _)| v == dst.0) {
                    tiles.push(dst);
                }
            }
            Some(AnyOp::DeviceAsyncCreateGroup(_)) => {}
            // A TMA load and the arrive that announces its bytes, on the one mbarrier the wait waits on.
            Some(AnyOp::TmaAsyncLoad(load)) => {
                if Some(load.barriers) != mbar_wait.as_ref().map(|w| w.barriers) {
                    return Err("a TMA load completes on another mbarrier than the one the loop waits on".into());
                }
                mbarrier = Some(load.barriers);
                let dst = copied_tile(func, block, load.dst)?;
                if !tiles.iter().any(|&(v, _)| v == dst.0) {
                    tiles.push(dst);
                }
            }
            Some(AnyOp::MBarrierArriveExpectTx(arrive)) => {
                if Some(arrive.barriers) != mbar_wait.as_ref().map(|w| w.barriers) {
                    return Err("an arrive.expect_tx on another mbarrier than the one the loop waits on".into());
                }
            }
            _ if is_pure(op.kind) => {}
            _ => return Err(format!("'{}' before the wait", op.kind.name())),
        }
    }
    for &o in &post {
        let op = body.op(o);
        match op.kind {
            OpKind::DeviceAsyncCopy
            | OpKind::DeviceAsyncCreateGroup
            | OpKind::DeviceAsyncWait
            | OpKind::For
            | OpKind::TmaAsyncLoad
            | OpKind::MBarrierArrive
            | OpKind::MBarrierArriveExpectTx
            | OpKind::MBarrierTryWaitParity => {
                return Err(format!("'{}' after the wait", op.kind.name()));
            }
            // Not written by the user: the lowering's, for shared memory used inside the body.
            OpKind::Barrier => {
                return Err("the body synchronizes the block again after its copies land (an 'nvgpu.barrier' that the lowering puts around shared memory used inside the loop, such as a tile.reduce across warps)".into());
            }
            _ => {}
        }
    }
    // A loop-carried dependence through global memory: a prefetch of a later iteration would read a global
    // tile before this iteration's store to it.
    let mut sources: Vec<Value> = Vec::new();
    for &o in &pre {
        match AnyOp::from_op(body.op(o)) {
            Some(AnyOp::DeviceAsyncCopy(copy)) => sources.push(copy.src),
            Some(AnyOp::Load(load)) => sources.push(load.src),
            Some(AnyOp::TmaAsyncLoad(load)) => sources.push(load.tensor),
            _ => {}
        }
    }
    let mut stored = None;
    body.walk(block, &mut |o| {
        if let Some(store) = body.op(o).view::<typed::Store>() {
            if sources.contains(&store.dst) && stored.is_none() {
                stored = Some(store.dst);
            }
        }
    });
    if let Some(tile) = stored {
        let name = body.value(tile).name.clone().map_or_else(|| "a global tile".to_string(), |n| format!("%{n}"));
        return Err(format!(
            "it copies from {name}, which the loop also stores to: a copy issued for a later iteration would read it before this iteration's store (a loop-carried dependence through memory)"
        ));
    }
    // The copied tiles: used only by the copies before the wait and by ldmatrix/loads after it.
    let pre_set: HashSet<OpId> = pre.iter().copied().collect();
    let post_set: HashSet<OpId> = post.iter().copied().collect();
    let mut users = Vec::new();
    func.body.walk(func.entry, &mut |o| users.push(o));
    for &(tile, _) in &tiles {
        for &o in &users {
            let op = body.op(o);
            if !op.operands.contains(&tile) {
                continue;
            }
            let ok = match AnyOp::from_op(op) {
                Some(AnyOp::DeviceAsyncCopy(copy)) => pre_set.contains(&o) && copy.dst == tile && copy.src != tile,
                Some(AnyOp::TmaAsyncLoad(load)) => pre_set.contains(&o) && load.dst == tile,
                Some(AnyOp::Store(store)) if pre_set.contains(&o) => store.dst == tile && store.value != tile,
                Some(AnyOp::LdMatrix(_) | AnyOp::Load(_) | AnyOp::WarpgroupGenerateDescriptor(_)) => post_set.contains(&o),
                _ => false,
            };
            if !ok {
                return Err(format!("a copied shared tile is also used by '{}' elsewhere", op.kind.name()));
            }
        }
    }
    // Pure ops fed by a synchronous copy's loads (gathering them into a vector) belong to the copy.
    let mut loaded: HashSet<Value> = HashSet::default();
    let mut address = Vec::new();
    for &o in &pre {
        let op = body.op(o);
        if op.kind == OpKind::Load || op.operands.iter().any(|v| loaded.contains(v)) {
            loaded.extend(op.results.iter().copied());
        } else if is_pure(op.kind) {
            address.push(o);
        }
    }
    let all_synchronous = !pre.iter().any(|&o| matches!(body.op(o).kind, OpKind::DeviceAsyncCopy | OpKind::TmaAsyncLoad));
    let mbarrier = match (mbarrier, mbar_wait) {
        (Some(barriers), Some(_)) => Some(mbarrier_ring(func, block, barriers)?),
        (None, None) => None,
        _ => return Err("the loop waits on an mbarrier that none of its TMA loads completes".into()),
    };
    Ok(Some(LoopPlan { body: block, pre, all_synchronous, address, post, yielded, header, tiles, has_async_wait, mbarrier, proxy_fence }))
}

/// The mbarrier group of a loop's TMA loads: `nvgpu.mbarrier.create` of one barrier, initialised once
/// outside the loop (by `nvgpu.mbarrier.init` of barrier 0), used otherwise only in the loop body.
fn mbarrier_ring(func: &Func, block: BlockId, barriers: Value) -> Result<MbarrierUse, String> {
    let body = &func.body;
    let single = matches!(body.ty(barriers), Type::Tile(t) if t.static_shape().as_deref() == Some(&[1]));
    let created = body.defining_op(barriers).is_some_and(|d| body.op(d).kind == OpKind::MBarrierCreate);
    if !single || !created {
        return Err("the TMA loads' mbarrier is not one 'nvgpu.mbarrier.create' barrier".into());
    }
    let mut inits = Vec::new();
    let mut elsewhere = false;
    body.walk(func.entry, &mut |o| {
        let op = body.op(o);
        if !op.operands.contains(&barriers) {
            return;
        }
        match op.view::<typed::MBarrierInit>() {
            Some(init) if !is_inside(func, o, block) && body.constant_int(init.mbar_id) == Some(0) => inits.push((o, init)),
            _ if is_inside(func, o, block) => {}
            _ => elsewhere = true,
        }
    });
    match (&inits[..], elsewhere) {
        ([(init, view)], false) => Ok(MbarrierUse { barriers, init: *init, count: view.count, predicate: view.predicate }),
        _ => Err("the TMA loads' mbarrier is initialised more than once or used outside the loop".into()),
    }
}

/// The mbarrier of a loop's TMA loads, which the ring turns into one barrier per stage.
struct MbarrierUse {
    barriers: Value,
    /// Its `nvgpu.mbarrier.init` (before the loop): the ring's inits of the other stages follow it.
    init: OpId,
    count: Value,
    predicate: Option<Value>,
}

/// The shared tile `dst` a copy of the loop body `block` writes, with its rows: a static rank-2
/// `tile.alloc_shared` from outside the loop.
fn copied_tile(func: &Func, block: BlockId, dst: Value) -> Result<(Value, u64), String> {
    let body = &func.body;
    let Some(def) = body.defining_op(dst).filter(|&d| body.op(d).kind == OpKind::AllocShared) else {
        return Err("a copy's destination is not a tile.alloc_shared".into());
    };
    if is_inside(func, def, block) {
        return Err("a copy's destination is allocated inside the loop".into());
    }
    let Type::Tile(t) = body.ty(dst) else { return Err("malformed copy".into()) };
    let Some(&[rows, _]) = t.static_shape().as_deref() else {
        return Err("a copy's destination is not a static rank-2 tile".into());
    };
    Ok((dst, rows))
}

/// Whether `op` sits in `block` or in a region nested in it.
fn is_inside(func: &Func, op: OpId, block: BlockId) -> bool {
    let mut cur = func.body.op(op).parent;
    while let Some(b) = cur {
        if b == block {
            return true;
        }
        cur = func.body.block(b).parent_op.and_then(|p| func.body.op(p).parent);
    }
    false
}

/// The compute part split for register double-buffering: the fragments the first k sub-step's
/// `mma.sync`s need are loaded one iteration ahead, right after the barrier that makes the next stage
/// visible, while the last sub-step's `mma.sync`s of this iteration still run.
///
/// Sub-steps (phases) follow the accumulator chains: an `mma.sync` whose accumulator comes from another
/// `mma.sync` of the body is one phase later. A non-mma op belongs to the earliest phase that needs it.
struct FragPlan {
    /// Phase-0 non-mma ops (the loads of the first sub-step and their regrouping), run one iteration ahead.
    ahead: Vec<OpId>,
    /// Their results that the rest of the body uses: carried from the iteration before.
    outputs: Vec<Value>,
    /// Non-mma ops of later phases (loads of the other sub-steps), before any `mma.sync`.
    early: Vec<OpId>,
    /// The `mma.sync`s by phase.
    phases: Vec<Vec<OpId>>,
    /// Ops no `mma.sync` needs, at the end.
    late: Vec<OpId>,
}

fn fragment_plan(func: &Func, plan: &LoopPlan) -> Option<FragPlan> {
    let body = &func.body;
    let post: HashSet<OpId> = plan.post.iter().copied().collect();
    let def_in_post = |v: Value| body.defining_op(v).filter(|d| post.contains(d));
    // Phases of the mma.syncs along their accumulator chains.
    let mut mma_phase: HashMap<OpId, usize> = HashMap::default();
    for &o in &plan.post {
        let op = body.op(o);
        if op.kind == OpKind::MmaSync {
            let c = op.view::<typed::MmaSync>()?.c;
            let p = def_in_post(c).and_then(|d| mma_phase.get(&d).map(|p| p + 1)).unwrap_or(0);
            if def_in_post(c).is_some_and(|d| body.op(d).kind != OpKind::MmaSync) {
                return None;
            }
            mma_phase.insert(o, p);
        }
    }
    let phases_n = mma_phase.values().max()? + 1;
    // Non-mma ops: the earliest phase of an mma.sync that needs them (through other non-mma ops).
    let mut phase: HashMap<OpId, usize> = HashMap::default();
    for &o in plan.post.iter().rev() {
        if body.op(o).kind == OpKind::MmaSync {
            continue;
        }
        let results = &body.op(o).results;
        let mut best: Option<usize> = None;
        for &u in &plan.post {
            if !body.op(u).operands.iter().any(|v| results.contains(v)) {
                continue;
            }
            let p = mma_phase.get(&u).or_else(|| phase.get(&u)).copied();
            if let Some(p) = p {
                best = Some(best.map_or(p, |b: usize| b.min(p)));
            }
        }
        if let Some(p) = best {
            phase.insert(o, p);
        }
    }
    let mut fp = FragPlan { ahead: Vec::new(), outputs: Vec::new(), early: Vec::new(), phases: vec![Vec::new(); phases_n], late: Vec::new() };
    for &o in &plan.post {
        if let Some(&p) = mma_phase.get(&o) {
            fp.phases[p].push(o);
        } else {
            match phase.get(&o) {
                Some(0) => fp.ahead.push(o),
                Some(_) => fp.early.push(o),
                None => fp.late.push(o),
            }
        }
    }
    let ahead: HashSet<OpId> = fp.ahead.iter().copied().collect();
    let early: HashSet<OpId> = fp.early.iter().copied().collect();
    let carried: HashSet<Value> = body.block(plan.body).args[1..].iter().copied().collect();
    // Ops run ahead depend only on values from outside the body, the induction variable, the copy
    // part's arithmetic, and each other; early ops also on the ops run ahead.
    for &o in fp.ahead.iter().chain(&fp.early) {
        for &v in &body.op(o).operands {
            if carried.contains(&v) {
                return None;
            }
            if let Some(d) = def_in_post(v) {
                let ok = ahead.contains(&d) || (early.contains(&o) && early.contains(&d));
                if !ok {
                    return None;
                }
            }
        }
    }
    for &o in &fp.ahead {
        if !body.op(o).kind.is_nvgpu() && !is_pure(body.op(o).kind) {
            return None;
        }
        for &r in &body.op(o).results {
            let used_later = plan.post.iter().any(|&u| !ahead.contains(&u) && body.op(u).operands.contains(&r)) || plan.yielded.contains(&r);
            if used_later {
                fp.outputs.push(r);
            }
        }
    }
    Some(fp)
}

/// Where an [`Emitter`] puts new ops.
#[derive(Clone, Copy)]
enum Place {
    Before(OpId),
    End(BlockId),
}

/// Every use of the old loop's `old` results takes the pipelined loop's `new` ones, which keep the old names.
pub(super) fn replace_loop_results(func: &mut Func, old: &[Value], new: &[Value]) {
    for (&old, &new) in old.iter().zip(new) {
        if let Some(name) = func.body.value(old).name.clone() {
            func.body.values[new.index()].name = Some(name);
        }
    }
    let pairs: Vec<(Value, Value)> = old.iter().copied().zip(new.iter().copied()).collect();
    func.body.replace_all_uses_of(&pairs);
}

/// Emits ops at a fixed place, with a span.
struct Emitter {
    place: Place,
    span: Span,
}

impl Emitter {
    fn before(op: OpId, span: Span) -> Emitter {
        Emitter { place: Place::Before(op), span }
    }

    fn at_end(block: BlockId, span: Span) -> Emitter {
        Emitter { place: Place::End(block), span }
    }

    fn emit(&self, func: &mut Func, spec: OpSpec) -> OpId {
        let spec = if spec.span.is_unknown() { spec.span(self.span) } else { spec };
        let id = func.body.create_op(spec);
        match self.place {
            Place::Before(op) => func.body.insert_before(op, id),
            Place::End(block) => func.body.append(block, id),
        }
        id
    }

    fn value(&self, func: &mut Func, spec: OpSpec) -> Value {
        let id = self.emit(func, spec);
        func.body.op(id).results[0]
    }

    fn constant(&self, func: &mut Func, n: i64) -> Value {
        self.value(func, typed::Constant { value: Literal::Int(n) }.into_spec().result(Type::INDEX))
    }

    fn binary(&self, func: &mut Func, op: BinaryArith, a: Value, b: Value) -> Value {
        let ty = func.body.ty(a).clone();
        self.value(func, op.spec(a, b).result(ty))
    }

    /// `nvgpu.device_async_wait` until at most `pending` copy groups are in flight.
    fn wait(&self, func: &mut Func, pending: i64) {
        let num_groups = u32::try_from(pending).unwrap_or(0);
        self.emit(func, typed::DeviceAsyncWait { num_groups }.into_spec());
    }

    /// `a + n * step` (`a` itself when `n` is 0).
    fn add_steps(&self, func: &mut Func, a: Value, n: i64, step: Value) -> Value {
        if n == 0 {
            return a;
        }
        let c = self.constant(func, n);
        let d = self.binary(func, BinaryArith::Mul, step, c);
        self.binary(func, BinaryArith::Add, a, d)
    }

    fn cmp(&self, func: &mut Func, predicate: CmpPredicate, lhs: Value, rhs: Value) -> Value {
        self.value(func, typed::Cmp { lhs, rhs, predicate }.into_spec().result(ScalarType::I1))
    }

    /// `a && b` of two `i1` values (their minimum).
    fn and(&self, func: &mut Func, a: Value, b: Value) -> Value {
        self.binary(func, BinaryArith::Min, a, b)
    }

    fn select(&self, func: &mut Func, cond: Value, true_value: Value, false_value: Value) -> Value {
        let ty = func.body.ty(true_value).clone();
        self.value(func, typed::Select { cond, true_value, false_value }.into_spec().result(ty))
    }

    /// A copy of op `o` with its operands mapped; its results are added to the map.
    fn clone_op(&self, func: &mut Func, o: OpId, map: &mut HashMap<Value, Value>) -> OpId {
        let op = func.body.op(o);
        let spec = OpSpec {
            kind: op.kind,
            operands: op.operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect(),
            segments: op.segments.clone(),
            result_types: op.results.iter().map(|&r| func.body.ty(r).clone()).collect(),
            attrs: op.attrs.clone(),
            regions: Vec::new(),
            span: op.span,
        };
        let old = op.results.clone();
        let id = self.emit(func, spec);
        for (a, b) in old.into_iter().zip(func.body.op(id).results.clone()) {
            map.insert(a, b);
        }
        id
    }
}

/// What every copy of the loop body needs.
struct Ring<'p> {
    plan: &'p LoopPlan,
    stages: i64,
    iv: Value,
    ub: Value,
    step: Value,
    zero: Value,
    /// Per copied tile: its allocation for each stage.
    allocs: HashMap<Value, Vec<Value>>,
    frag: Option<FragPlan>,
    /// The loop's lower bound (for the mbarrier parities).
    lb: Value,
    /// With TMA loads: the group of `S` mbarriers (barrier `s` for stage `s`) and the stage numbers as
    /// `index` constants.
    mbarriers: Option<(Value, Vec<Value>)>,
    /// With wgmma accumulators carried in the wgmma layout: one group stays in flight ([`wgmma_in_flight`]).
    carry: Option<WgmmaCarry>,
    /// A ring nested in a loop (module docs, "Nested rings"): the enclosing loop's carried fill parities, bit
    /// `s` for stage `s`, which every wait adds to the parity of its round.
    phase_bits: Option<Value>,
}

impl Ring<'_> {
    /// The pure ops and copies of the body's copy part for iteration `k`, into stage `stage`, reading
    /// only where `k < ub` (zero-filling otherwise); then one commit. `map` holds the values the body's
    /// values stand for (the induction variable is mapped to `k` here).
    fn copies(&self, func: &mut Func, at: &Emitter, k: Value, stage: usize, map: &mut HashMap<Value, Value>) {
        self.copies_part(func, at, k, stage, map, true, true);
    }

    /// [`Ring::copies`], leaving out the TMA loads and their arrive unless `tma`, and the commit unless `commit`
    /// (warp specialization runs the cp.async part once per block of 128 producer threads). A
    /// `nvgpu.thread_id` or `nvgpu.warp_id` whose result `map` already gives is not cloned.
    #[allow(clippy::too_many_arguments)]
    fn copies_part(&self, func: &mut Func, at: &Emitter, k: Value, stage: usize, map: &mut HashMap<Value, Value>, tma: bool, commit: bool) {
        map.insert(self.iv, k);
        let valid = at.cmp(func, CmpPredicate::Lt, k, self.ub);
        for &o in &self.plan.pre {
            let kind = func.body.op(o).kind;
            let renumbered = matches!(kind, OpKind::ThreadId | OpKind::WarpId) && func.body.op(o).results.iter().all(|r| map.contains_key(r));
            if renumbered || (!tma && matches!(kind, OpKind::TmaAsyncLoad | OpKind::MBarrierArriveExpectTx)) {
                continue;
            }
            let view = AnyOp::from_op(func.body.op(o));
            let mapped = |map: &HashMap<Value, Value>, v: Value| *map.get(&v).unwrap_or(&v);
            // What makes a copy of an iteration past the end read nothing: a cp.async's element count, or a
            // synchronous copy's load mask, also says `k < ub`. A copy or a synchronous copy's store writes
            // this iteration's stage of its tile.
            let (guard, dst) = match &view {
                Some(AnyOp::DeviceAsyncCreateGroup(_)) => continue,
                Some(AnyOp::DeviceAsyncCopy(copy)) => {
                    let se = copy.src_elements.map_or(self.zero, |v| mapped(map, v));
                    (Some(at.select(func, valid, se, self.zero)), Some(copy.dst))
                }
                Some(AnyOp::Load(load)) => match load.mask {
                    Some(mask) => (Some(at.and(func, valid, mapped(map, mask))), None),
                    None => (Some(valid), None),
                },
                Some(AnyOp::Store(store)) => (None, Some(store.dst)),
                // A TMA load, and the arrive announcing its bytes, complete on the stage's own mbarrier and
                // are issued only for iterations before the end (nothing waits for the others).
                Some(AnyOp::TmaAsyncLoad(load)) => (load.predicate.map(|p| mapped(map, p)).or(Some(valid)), Some(load.dst)),
                Some(AnyOp::MBarrierArriveExpectTx(arrive)) => (arrive.predicate.map(|p| mapped(map, p)).or(Some(valid)), None),
                _ => (None, None),
            };
            if let Some(dst) = dst {
                map.insert(dst, self.allocs[&dst][stage]);
            }
            // `predicate && k < ub` for a TMA op: the issuing thread, for an iteration before the end.
            let is_tma = matches!(view, Some(AnyOp::TmaAsyncLoad(_) | AnyOp::MBarrierArriveExpectTx(_)));
            let issue = match guard {
                Some(g) if is_tma && g != valid => Some(at.and(func, g, valid)),
                _ => guard,
            };
            let id = at.clone_op(func, o, map);
            if let Some(dst) = dst {
                map.remove(&dst);
            }
            if let Some(guard) = guard {
                let clone = func.body.op_mut(id);
                match AnyOp::from_op(clone) {
                    Some(AnyOp::DeviceAsyncCopy(copy)) => clone.set_from(typed::DeviceAsyncCopy { src_elements: Some(guard), ..copy }),
                    Some(AnyOp::Load(load)) => clone.set_from(typed::Load { mask: Some(guard), ..load }),
                    _ => false,
                };
            }
            if let (Some((barriers, ids)), Some(issue)) = (&self.mbarriers, issue) {
                if is_tma {
                    let clone = func.body.op_mut(id);
                    match AnyOp::from_op(clone) {
                        Some(AnyOp::TmaAsyncLoad(load)) => {
                            clone.set_from(typed::TmaAsyncLoad { barriers: *barriers, mbar_id: ids[stage], predicate: Some(issue), ..load })
                        }
                        Some(AnyOp::MBarrierArriveExpectTx(arrive)) => clone.set_from(typed::MBarrierArriveExpectTx {
                            barriers: *barriers,
                            mbar_id: ids[stage],
                            predicate: Some(issue),
                            ..arrive
                        }),
                        _ => false,
                    };
                }
            }
        }
        if self.plan.has_async_wait && commit {
            at.emit(func, OpSpec::new(OpKind::DeviceAsyncCreateGroup));
        }
    }

    /// The wait before reading stage `stage`, filled for the iteration at `k`: the cp.async groups (all but
    /// the `S-2` newest), and the stage's mbarrier at the parity of the ring round of `k` (the
    /// `((k - lb) / step) / S`-th fill of the stage: parity flips every `S` iterations), flipped once more
    /// when `k` is past the end.
    fn wait(&self, func: &mut Func, at: &Emitter, k: Value, stage: usize) {
        if self.plan.has_async_wait {
            at.wait(func, self.stages - 2);
        }
        if let Some((barriers, ids)) = &self.mbarriers {
            let from = at.binary(func, BinaryArith::Sub, k, self.lb);
            let n = at.binary(func, BinaryArith::Div, from, self.step);
            let s_v = at.constant(func, self.stages);
            let round = at.binary(func, BinaryArith::Div, n, s_v);
            let two = at.constant(func, 2);
            let r = at.binary(func, BinaryArith::Rem, round, two);
            // Nested in a loop: the stage's fills before this run of the loop count too.
            let r = match self.phase_bits {
                Some(bits) => {
                    let bit = stage_bit(func, at, bits, stage);
                    let sum = at.binary(func, BinaryArith::Add, r, bit);
                    at.binary(func, BinaryArith::Rem, sum, two)
                }
                None => r,
            };
            // An iteration past the end filled nothing (its loads were not issued): the wait for the phase
            // before, which has completed (or, on a barrier never filled, counts as completed), returns at
            // once: the parity flipped. (The fragments loaded ahead then read the stage's old contents,
            // which nothing uses.)
            let one = at.constant(func, 1);
            let live = at.cmp(func, CmpPredicate::Lt, k, self.ub);
            let past = at.select(func, live, self.zero, one);
            let parity = at.cmp(func, CmpPredicate::Ne, r, past);
            let ticks = at.constant(func, WAIT_TICKS);
            at.emit(func, typed::MBarrierTryWaitParity { barriers: *barriers, mbar_id: ids[stage], phase_parity: parity, ticks }.into_spec());
        }
        if self.plan.proxy_fence {
            at.emit(func, OpSpec::new(OpKind::FenceProxyAsync));
        }
    }

    /// One iteration of the pipelined body for induction value `k` whose tiles sit in stage `stage`:
    /// wait for them, barrier, prefetch iteration `k + (S-1)*step` into the stage freed last iteration,
    /// compute. `carried` are the values of the loop-carried variables; returns their next values.
    fn iteration(&self, func: &mut Func, at: &Emitter, k: Value, stage: usize, carried: &[Value]) -> Vec<Value> {
        if let Some(carry) = &self.carry {
            return self.iteration_in_flight(func, at, carry, k, stage, carried);
        }
        let s = self.stages as usize;
        let block_args = func.body.block(self.plan.body).args.clone();
        let mut map: HashMap<Value, Value> = HashMap::default();
        for (&a, &c) in block_args[1..].iter().zip(carried) {
            map.insert(a, c);
        }
        self.wait(func, at, k, stage);
        at.emit(func, OpSpec::new(OpKind::Barrier));
        // The body's own address arithmetic for this iteration (the compute part may use some of it).
        map.insert(self.iv, k);
        for &o in &self.plan.address {
            at.clone_op(func, o, &mut map);
        }
        let ahead = at.add_steps(func, k, self.stages - 1, self.step);
        let mut pf_map = map.clone();
        self.copies(func, at, ahead, (stage + s - 1) % s, &mut pf_map);
        map.insert(self.iv, k);
        for (&tile, allocs) in &self.allocs {
            map.insert(tile, allocs[stage]);
        }
        for &o in &self.plan.post {
            at.clone_op(func, o, &mut map);
        }
        self.plan.yielded.iter().map(|v| *map.get(v).unwrap_or(v)).collect()
    }

    /// One iteration keeping one wgmma group in flight (module docs, "wgmma"): wait for stage `stage`, a
    /// barrier only where cp.async (or synchronous) copies need one to be visible to every warp, the compute part
    /// with the accumulators carried in the wgmma layout (`carried` holds those D vectors, perhaps pending)
    /// and `wait_group 1` (the previous iteration's group retires), a barrier (every warpgroup has retired
    /// it), then the refill of the stage that group read, `(stage - 1) % S`, with iteration `k + (S-1)*step`.
    fn iteration_in_flight(&self, func: &mut Func, at: &Emitter, carry: &WgmmaCarry, k: Value, stage: usize, carried: &[Value]) -> Vec<Value> {
        let s = self.stages as usize;
        let block_args = func.body.block(self.plan.body).args.clone();
        let mut map: HashMap<Value, Value> = HashMap::default();
        for (&a, &c) in block_args[1..].iter().zip(carried) {
            map.insert(a, c);
        }
        for acc in &carry.accs {
            map.insert(acc.flat, carried[acc.index]);
        }
        self.wait(func, at, k, stage);
        if self.plan.has_async_wait {
            at.emit(func, OpSpec::new(OpKind::Barrier));
        }
        map.insert(self.iv, k);
        for &o in &self.plan.address {
            at.clone_op(func, o, &mut map);
        }
        let pf_map = map.clone();
        for (&tile, allocs) in &self.allocs {
            map.insert(tile, allocs[stage]);
        }
        for &o in &self.plan.post {
            if carry.dropped.contains(&o) {
                continue;
            }
            if o == carry.wait {
                at.emit(func, typed::WgmmaWaitGroup { num_groups: 1 }.into_spec());
                continue;
            }
            at.clone_op(func, o, &mut map);
        }
        at.emit(func, OpSpec::new(OpKind::Barrier));
        let ahead = at.add_steps(func, k, self.stages - 1, self.step);
        let mut pf_map = pf_map;
        self.copies(func, at, ahead, (stage + s - 1) % s, &mut pf_map);
        let mut out: Vec<Value> = self.plan.yielded.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
        for acc in &carry.accs {
            out[acc.index] = *map.get(&acc.d).unwrap_or(&acc.d);
        }
        out
    }

    /// The phase-0 fragment loads of the iteration at `k` (tiles in `stage`); returns the carried outputs.
    fn load_ahead(&self, func: &mut Func, at: &Emitter, fp: &FragPlan, k: Value, stage: usize) -> Vec<Value> {
        let mut map: HashMap<Value, Value> = HashMap::default();
        map.insert(self.iv, k);
        for &o in &self.plan.address {
            at.clone_op(func, o, &mut map);
        }
        for (&tile, allocs) in &self.allocs {
            map.insert(tile, allocs[stage]);
        }
        for &o in &fp.ahead {
            at.clone_op(func, o, &mut map);
        }
        fp.outputs.iter().map(|v| *map.get(v).unwrap_or(v)).collect()
    }

    /// One iteration with fragments loaded ahead: prefetch copies, the later sub-steps' loads, the
    /// mma.syncs of all but the last sub-step, wait + barrier (the next stage has landed), the next
    /// iteration's first sub-step loads, the last sub-step's mma.syncs. `frags` are this iteration's
    /// first sub-step fragments; returns the next carried values and the next iteration's fragments.
    // The iteration's pieces travel together; a struct for them would only rename these arguments.
    #[allow(clippy::too_many_arguments)]
    fn iteration_ahead(
        &self,
        func: &mut Func,
        at: &Emitter,
        fp: &FragPlan,
        k: Value,
        stage: usize,
        carried: &[Value],
        frags: &[Value],
    ) -> (Vec<Value>, Vec<Value>) {
        let s = self.stages as usize;
        let block_args = func.body.block(self.plan.body).args.clone();
        let mut map: HashMap<Value, Value> = HashMap::default();
        for (&a, &c) in block_args[1..].iter().zip(carried) {
            map.insert(a, c);
        }
        map.insert(self.iv, k);
        for &o in &self.plan.address {
            at.clone_op(func, o, &mut map);
        }
        let ahead = at.add_steps(func, k, self.stages - 1, self.step);
        let mut pf_map = map.clone();
        self.copies(func, at, ahead, (stage + s - 1) % s, &mut pf_map);
        map.insert(self.iv, k);
        for (&tile, allocs) in &self.allocs {
            map.insert(tile, allocs[stage]);
        }
        for (&o, &f) in fp.outputs.iter().zip(frags) {
            map.insert(o, f);
        }
        for &o in &fp.early {
            at.clone_op(func, o, &mut map);
        }
        let last = fp.phases.len() - 1;
        for phase in &fp.phases[..last] {
            for &o in phase {
                at.clone_op(func, o, &mut map);
            }
        }
        // The stage of the next iteration: with TMA loads, its mbarrier's parity needs its `k` before the wait.
        let early_k = self.mbarriers.is_some().then(|| at.add_steps(func, k, 1, self.step));
        self.wait(func, at, early_k.unwrap_or(k), (stage + 1) % s);
        at.emit(func, OpSpec::new(OpKind::Barrier));
        let next_k = match early_k {
            Some(next_k) => next_k,
            None => at.add_steps(func, k, 1, self.step),
        };
        let next = self.load_ahead(func, at, fp, next_k, (stage + 1) % s);
        for &o in fp.phases[last].iter().chain(&fp.late) {
            at.clone_op(func, o, &mut map);
        }
        let values = self.plan.yielded.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
        (values, next)
    }

    /// [`Ring::step`] for the iteration at `k` where it exists (`k < ub`): a loop of 0 or 1 trips carrying
    /// `carried` and `frags` through (their types `tys`). Returns its results, split as `step`'s.
    #[allow(clippy::too_many_arguments)]
    fn step_if_live(
        &self,
        func: &mut Func,
        at: &Emitter,
        k: Value,
        stage: usize,
        (one, zero): (Value, Value),
        tys: &[Type],
        carried: &[Value],
        frags: &[Value],
    ) -> (Vec<Value>, Vec<Value>) {
        let live = at.cmp(func, CmpPredicate::Lt, k, self.ub);
        let trips = at.select(func, live, one, zero);
        let block = func.body.new_block();
        func.body.add_block_arg(block, Type::INDEX, None, Span::UNKNOWN);
        let args: Vec<Value> = tys.iter().map(|t| func.body.add_block_arg(block, t.clone(), None, Span::UNKNOWN)).collect();
        let e = Emitter::at_end(block, at.span);
        let n = carried.len();
        let (next, next_frags) = self.step(func, &e, k, stage, &args[..n], &args[n..]);
        e.emit(func, typed::Yield { values: next.iter().chain(&next_frags).copied().collect() }.into_spec());
        let inits: Vec<Value> = carried.iter().chain(frags).copied().collect();
        let mut spec = typed::For { lower: zero, upper: trips, step: one, inits, pipeline_stages: None, hoist: None }.into_spec().region(block).span(at.span);
        spec.result_types = tys.to_vec();
        let id = at.emit(func, spec);
        let results = func.body.op(id).results.clone();
        (results[..n].to_vec(), results[n..].to_vec())
    }

    /// One iteration in whichever form the ring uses; `frags` are carried fragments (empty without).
    fn step(&self, func: &mut Func, at: &Emitter, k: Value, stage: usize, carried: &[Value], frags: &[Value]) -> (Vec<Value>, Vec<Value>) {
        match &self.frag {
            Some(fp) => self.iteration_ahead(func, at, fp, k, stage, carried, frags),
            None => (self.iteration(func, at, k, stage, carried), Vec::new()),
        }
    }
}

/// A TMA ring nested in the persistent tile loop (`hoist = false`, made by the persistent-grid pass): its
/// prologue (the TMA loads of the tile's first `S-1` k-steps, `prologue`) moves to where the previous tile's
/// wgmmas have retired, so that the next tile's first loads fly during this tile's epilogue (module docs,
/// "Nested rings"). At `at` (after `wait_group 0` behind the k-loops): a barrier (every warpgroup has retired
/// its groups: no wgmma reads the ring), then the prologue of tile `t + step`, its issue predicates also
/// `t + step < ub`; before the tile loop, the prologue of its first tile `lb` (predicate `lb < ub`); the
/// prologue in the body goes. The values the prologue reads from the tile body (the block's tile coordinates,
/// the k-loop's bounds: pure ops only, else nothing moves) are recomputed for that tile. Not for a ring with
/// cp.async copies (their commit groups would move across the epilogue) nor outside the persistent loop. When the
/// ring's stages are the kernel's only shared tiles, the barrier that ends each tile goes: the one before the next
/// tile's prologue orders every read of the ring before it.
fn prologue_ahead(func: &mut Func, outer: OpId, prologue: &[OpId], ring_tiles: &HashSet<Value>, at: &Emitter, span: Span) {
    let Some(header) = func.body.op(outer).view::<typed::For>() else { return };
    if header.hoist != Some(false) || prologue.is_empty() {
        return;
    }
    let body = func.body.op(outer).regions[0];
    let tile_iv = func.body.block(body).args[0];
    let in_prologue: HashSet<OpId> = prologue.iter().copied().collect();
    // Only TMA loads, their arrives and pure arithmetic, whose results nothing else uses.
    for &o in prologue {
        let op = func.body.op(o);
        let ok = matches!(op.kind, OpKind::TmaAsyncLoad | OpKind::MBarrierArriveExpectTx) || (is_pure(op.kind) && op.regions.is_empty());
        if !ok {
            return;
        }
    }
    let mut used_elsewhere = false;
    func.body.walk(func.entry, &mut |u| {
        if !in_prologue.contains(&u) {
            let op = func.body.op(u);
            used_elsewhere |= prologue.iter().any(|&p| func.body.op(p).results.iter().any(|r| op.operands.contains(r)));
        }
    });
    if used_elsewhere {
        return;
    }
    // The pure ops of the tile body the prologue depends on, in program order.
    let mut slice: HashSet<OpId> = HashSet::default();
    let mut stack: Vec<Value> = prologue.iter().flat_map(|&o| func.body.op(o).operands.clone()).collect();
    while let Some(v) = stack.pop() {
        match func.body.defining_op(v) {
            Some(d) if func.body.op(d).parent == Some(body) && !in_prologue.contains(&d) => {
                if !is_pure(func.body.op(d).kind) || !func.body.op(d).regions.is_empty() {
                    return;
                }
                if slice.insert(d) {
                    stack.extend(func.body.op(d).operands.iter().copied());
                }
            }
            Some(_) => {}
            // Block arguments of the tile body: only its induction variable (not the carried values).
            None => {
                if func.body.block(body).args.contains(&v) && v != tile_iv {
                    return;
                }
            }
        }
    }
    let order: Vec<OpId> = func.body.block(body).ops.iter().copied().filter(|o| slice.contains(o)).collect();
    let emit_for = |func: &mut Func, e: &Emitter, tile: Value| {
        let valid = e.cmp(func, CmpPredicate::Lt, tile, header.upper);
        let mut map = HashMap::from_iter([(tile_iv, tile)]);
        for &o in &order {
            e.clone_op(func, o, &mut map);
        }
        for &o in prologue {
            let issue = match AnyOp::from_op(func.body.op(o)) {
                Some(AnyOp::TmaAsyncLoad(load)) => load.predicate,
                Some(AnyOp::MBarrierArriveExpectTx(arrive)) => arrive.predicate,
                _ => None,
            };
            let guarded = match issue {
                Some(p) => {
                    let p = *map.get(&p).unwrap_or(&p);
                    Some(e.and(func, p, valid))
                }
                None if matches!(func.body.op(o).kind, OpKind::TmaAsyncLoad | OpKind::MBarrierArriveExpectTx) => Some(valid),
                None => None,
            };
            let id = e.clone_op(func, o, &mut map);
            if let Some(g) = guarded {
                let clone = func.body.op_mut(id);
                match AnyOp::from_op(clone) {
                    Some(AnyOp::TmaAsyncLoad(load)) => clone.set_from(typed::TmaAsyncLoad { predicate: Some(g), ..load }),
                    Some(AnyOp::MBarrierArriveExpectTx(arrive)) => clone.set_from(typed::MBarrierArriveExpectTx { predicate: Some(g), ..arrive }),
                    _ => false,
                };
            }
        }
    };
    // The first tile's, before the loop.
    let before = Emitter::before(outer, span);
    emit_for(func, &before, header.lower);
    // The next tile's, once every warpgroup has retired this tile's wgmmas.
    at.emit(func, OpSpec::new(OpKind::Barrier));
    let next = at.binary(func, BinaryArith::Add, tile_iv, header.step);
    emit_for(func, at, next);
    for &o in prologue.iter().rev() {
        func.body.erase(o);
    }
    // The barrier that ends each tile (the persistent-grid pass's) orders this tile's reads of shared memory before
    // the next tile's writes; with the ring's the only shared tiles, the barrier above does that already.
    let mut other_shared = false;
    func.body.walk(func.entry, &mut |o| {
        let op = func.body.op(o);
        other_shared |= op.kind == OpKind::AllocShared && !op.results.iter().all(|r| ring_tiles.contains(r));
    });
    let ops = &func.body.block(body).ops;
    if let (false, [.., barrier, _yield]) = (other_shared, ops.as_slice()) {
        if func.body.op(*barrier).kind == OpKind::Barrier {
            func.body.erase(*barrier);
        }
    }
}

/// Bit `stage` of the fill parities `bits`: `(bits / 2^stage) % 2`.
fn stage_bit(func: &mut Func, at: &Emitter, bits: Value, stage: usize) -> Value {
    let weight = at.constant(func, 1 << stage);
    let two = at.constant(func, 2);
    let shifted = at.binary(func, BinaryArith::Div, bits, weight);
    at.binary(func, BinaryArith::Rem, shifted, two)
}

/// The loop directly around the k-loop `l` when it is nested in one: `Ok(None)` at the top level, an error when
/// the k-loop sits in another op, or in more than one loop (the ring's phases are carried one level).
fn enclosing_loop(func: &Func, l: OpId) -> Result<Option<OpId>, String> {
    let mut parents = Vec::new();
    let mut block = func.body.op(l).parent;
    while let Some(b) = block {
        let Some(p) = func.body.block(b).parent_op else { break };
        parents.push(p);
        block = func.body.op(p).parent;
    }
    match parents[..] {
        [] => Ok(None),
        [p] if func.body.op(p).kind == OpKind::For => Ok(Some(p)),
        [p] => Err(format!("the loop is inside '{}'", func.body.op(p).kind.name())),
        _ => Err("the loop is nested more than one level deep (the ring's mbarrier phases are carried through one enclosing loop)".into()),
    }
}

/// Rebuilds loop `l` with one more loop-carried value, `init` on entry and unchanged by the body (the caller
/// rewrites the yield's last operand); returns the body's argument for it and the new loop.
// Invariant: `l` is a placed `tile.for` whose body ends in its yield.
#[allow(clippy::expect_used)]
fn add_loop_carried(func: &mut Func, l: OpId, init: Value, name: &str) -> (Value, OpId) {
    let op = func.body.op(l).clone();
    let header = op.view::<typed::For>().expect("a loop");
    let block = op.regions[0];
    let ty = func.body.ty(init).clone();
    let arg = func.body.add_block_arg(block, ty.clone(), Some(name.to_string()), op.span);
    let y = *func.body.block(block).ops.last().expect("a yield");
    let mut values = func.body.op(y).view::<typed::Yield>().expect("a yield").values;
    values.push(arg);
    func.body.op_mut(y).set_from(typed::Yield { values });
    let mut inits = header.inits.clone();
    inits.push(init);
    let mut spec = typed::For { inits, ..header }.into_spec().region(block).span(op.span);
    spec.result_types = op.results.iter().map(|&r| func.body.ty(r).clone()).chain([ty]).collect();
    spec.attrs = op.attrs.clone();
    let new = func.body.create_op(spec);
    func.body.insert_before(l, new);
    let results = func.body.op(new).results.clone();
    replace_loop_results(func, &op.results, &results[..op.results.len()]);
    func.body.op_mut(l).regions.clear();
    func.body.erase(l);
    (arg, new)
}

/// The suspend-time hint of the ring's mbarrier waits, in ns (the lowering's).
const WAIT_TICKS: i64 = 1_000_000;

/// Turns the loop's one mbarrier into a group of `stages` (barrier `s` for stage `s`), each initialised
/// like the original right after its init (so the barrier after that init covers them too); returns the
/// group and the stage numbers.
fn mbarrier_group(func: &mut Func, m: &MbarrierUse, stages: i64) -> (Value, Vec<Value>) {
    if let Type::Tile(t) = func.body.ty(m.barriers).clone() {
        let mut ring = t.clone();
        ring.shape = vec![tilec_ir::Dim::Static(stages as u64)];
        func.body.values[m.barriers.index()].ty = Type::Tile(ring);
    }
    let next = func.body.op(m.init).parent.and_then(|b| {
        let ops = &func.body.block(b).ops;
        ops.iter().position(|&o| o == m.init).and_then(|i| ops.get(i + 1).copied())
    });
    let span = func.body.op(m.init).span;
    let at = match next {
        Some(op) => Emitter::before(op, span),
        None => Emitter::at_end(func.body.op(m.init).parent.unwrap_or(func.entry), span),
    };
    let ids: Vec<Value> = (0..stages).map(|st| at.constant(func, st)).collect();
    for &id in &ids[1..] {
        at.emit(func, typed::MBarrierInit { barriers: m.barriers, mbar_id: id, count: m.count, predicate: m.predicate }.into_spec());
    }
    (m.barriers, ids)
}

/// One allocation per stage and copied tile, stage 0 the original, each placed after the one before and named
/// after the tile (`%sa`, `%sa_stage1`, ...).
// Invariant: `plan.tiles` are results of placed `tile.alloc_shared` ops (`LoopPlan` only accepts those).
#[allow(clippy::expect_used)]
fn stage_allocs(func: &mut Func, plan: &LoopPlan, s: i64) -> HashMap<Value, Vec<Value>> {
    let mut allocs: HashMap<Value, Vec<Value>> = HashMap::default();
    for &(tile, _) in &plan.tiles {
        let def = func.body.defining_op(tile).expect("an alloc");
        let spec_ty = func.body.ty(tile).clone();
        let mut list = vec![tile];
        let mut after = def;
        // Stage buffers are named after the tile (`%sa`, `%sa_stage1`, ...) in dumps and reports.
        let base_name = func.body.value(tile).name.clone();
        for stage in 1..s {
            let id = func.body.create_op(OpSpec::new(OpKind::AllocShared).result(spec_ty.clone()).span(func.body.op(def).span));
            let parent = func.body.op(after).parent.expect("placed alloc");
            let pos = func.body.block(parent).ops.iter().position(|&o| o == after).expect("alloc in its block");
            func.body.block_mut(parent).ops.insert(pos + 1, id);
            func.body.op_mut(id).parent = Some(parent);
            let buffer = func.body.op(id).results[0];
            if let Some(base) = &base_name {
                func.body.values[buffer.index()].name = Some(format!("{base}_stage{stage}"));
            }
            list.push(buffer);
            after = id;
        }
        allocs.insert(tile, list);
    }
    allocs
}

// Invariant: `plan.tiles` are results of placed `tile.alloc_shared` ops (`LoopPlan` only accepts those).
#[allow(clippy::expect_used)]
fn transform(func: &mut Func, l: OpId, plan: &LoopPlan, stages: u32, fragments_ahead: bool, tail: PipelineTail) {
    let s = stages as i64;
    let lop = func.body.op(l).clone();
    let span = lop.span;
    let typed::For { lower: lb, upper: ub, step, .. } = plan.header;
    let iv = func.body.block(plan.body).args[0];
    let pro = Emitter::before(l, span);

    // 1. One allocation per stage and copied tile (stage 0 is the original).
    let allocs = stage_allocs(func, plan, s);
    let zero = pro.constant(func, 0);
    let one = pro.constant(func, 1);
    let frag = if fragments_ahead { fragment_plan(func, plan) } else { None };
    let mbarriers = plan.mbarrier.as_ref().map(|m| mbarrier_group(func, m, s));
    // Register fragments loaded ahead are an mma.sync schedule; a wgmma body keeps a group in flight instead.
    let carry = if frag.is_none() { wgmma_in_flight::plan(func, plan) } else { None };
    // A ring nested in a loop continues its mbarrier phases through it (`pipeline_func` checked the nesting).
    let outer = match (&mbarriers, enclosing_loop(func, l)) {
        (Some(_), Ok(Some(outer))) => {
            let none = Emitter::before(outer, span).constant(func, 0);
            Some(add_loop_carried(func, outer, none, "ring_phases"))
        }
        _ => None,
    };
    let phase_bits = outer.map(|(bits, _)| bits);
    let ring = Ring { plan, stages: s, iv, ub, step, zero, allocs, frag, lb, mbarriers, carry, phase_bits };

    // 2. Trip counts: T iterations, the unrolled loop runs T - T % S of them.
    let span_v = pro.binary(func, BinaryArith::Sub, ub, lb);
    let span_v = pro.binary(func, BinaryArith::Max, span_v, zero);
    let step_m1 = pro.binary(func, BinaryArith::Sub, step, one);
    let span_r = pro.binary(func, BinaryArith::Add, span_v, step_m1);
    let trips = pro.binary(func, BinaryArith::Div, span_r, step);
    let s_v = pro.constant(func, s);
    let groups = pro.binary(func, BinaryArith::Div, trips, s_v);
    let main_trips = pro.binary(func, BinaryArith::Mul, groups, s_v);
    let main_len = pro.binary(func, BinaryArith::Mul, main_trips, step);
    let main_end = pro.binary(func, BinaryArith::Add, lb, main_len);
    let big_step = pro.binary(func, BinaryArith::Mul, step, s_v);

    // 3. Prologue: iterations 0 .. S-1 into stages 0 .. S-1.
    let tile_body = func.body.op(l).parent;
    let before_prologue: HashSet<OpId> = tile_body.map(|b| func.body.block(b).ops.iter().copied().collect()).unwrap_or_default();
    for st in 0..s - 1 {
        let k = pro.add_steps(func, lb, st, step);
        let mut map = HashMap::default();
        ring.copies(func, &pro, k, st as usize, &mut map);
    }
    let prologue: Vec<OpId> = tile_body
        .map(|b| func.body.block(b).ops.iter().copied().filter(|o| !before_prologue.contains(o) && *o != l).collect())
        .unwrap_or_default();
    // With fragments loaded ahead: the first iteration's, once its stage has landed.
    let mut frags: Vec<Value> = Vec::new();
    if let Some(fp) = &ring.frag {
        ring.wait(func, &pro, lb, 0);
        pro.emit(func, OpSpec::new(OpKind::Barrier));
        frags = ring.load_ahead(func, &pro, fp, lb, 0);
    }
    let frag_tys: Vec<Type> = frags.iter().map(|&v| func.body.ty(v).clone()).collect();
    let n_carried = lop.results.len();

    // With a wgmma group in flight, the loop carries the accumulators in the wgmma layout: flattened once here.
    let mut inits: Vec<Value> = plan.header.inits.clone();
    let mut carried_tys: Vec<Type> = lop.results.iter().map(|&r| func.body.ty(r).clone()).collect();
    if let Some(carry) = &ring.carry {
        let args = func.body.block(plan.body).args.clone();
        for acc in &carry.accs {
            let mut map = HashMap::from_iter([(args[acc.index + 1], inits[acc.index])]);
            for &o in &acc.flatten {
                pro.clone_op(func, o, &mut map);
            }
            inits[acc.index] = *map.get(&acc.flat).unwrap_or(&inits[acc.index]);
            carried_tys[acc.index] = WgmmaCarry::flat_type(func, acc);
        }
    }

    // 4. The main loop, unrolled S times: stage j in copy j. Peeled: it runs T - T % S iterations, all of its
    // copies in every trip. Guarded: it runs all T; copy 0 runs in every trip (`k0 < ub`), copies 1 .. S-1 where
    // their iteration exists (`k0 + j*step < ub`, each a loop of 0 or 1 trips): all of them but in the last trip,
    // which runs the T % S iterations left and ends the loop.
    let main_block = func.body.new_block();
    let iv_name = func.body.value(iv).name.clone();
    let k0 = func.body.add_block_arg(main_block, Type::INDEX, iv_name, Span::UNKNOWN);
    let all_tys: Vec<Type> = carried_tys.iter().chain(&frag_tys).cloned().collect();
    let args: Vec<Value> = all_tys.iter().map(|t| func.body.add_block_arg(main_block, t.clone(), None, Span::UNKNOWN)).collect();
    let (mut carried, mut fr) = (args[..n_carried].to_vec(), args[n_carried..].to_vec());
    let inner = Emitter::at_end(main_block, span);
    for j in 0..s {
        let k = inner.add_steps(func, k0, j, step);
        (carried, fr) = match tail {
            PipelineTail::Guarded if j > 0 => ring.step_if_live(func, &inner, k, j as usize, (one, zero), &all_tys, &carried, &fr),
            _ => ring.step(func, &inner, k, j as usize, &carried, &fr),
        };
    }
    let yielded: Vec<Value> = carried.iter().chain(&fr).copied().collect();
    inner.emit(func, typed::Yield { values: yielded }.into_spec());
    let inits: Vec<Value> = inits.iter().chain(&frags).copied().collect();
    let upper = match tail {
        PipelineTail::Peeled => main_end,
        PipelineTail::Guarded => ub,
    };
    let mut spec = typed::For { lower: lb, upper, step: big_step, inits, pipeline_stages: None, hoist: None }.into_spec().region(main_block).span(span);
    spec.result_types = all_tys.clone();
    spec.attrs = lop.attrs.clone();
    let main_loop = pro.emit(func, spec);
    let mut results = func.body.op(main_loop).results.clone();

    // 5. Peeled: the remaining T % S < S iterations, each a loop of 0 or 1 trips, stage j.
    if tail == PipelineTail::Peeled {
        for j in 0..s - 1 {
            let k = pro.add_steps(func, main_end, j, step);
            let (next, next_fr) = ring.step_if_live(func, &pro, k, j as usize, (one, zero), &all_tys, &results[..n_carried], &results[n_carried..]);
            results = next.into_iter().chain(next_fr).collect();
        }
    }
    // Nothing in flight after the loop (TMA loads are issued only for iterations that wait for them).
    if plan.has_async_wait {
        pro.wait(func, 0);
    }
    // The last wgmma group retires; the accumulators are regrouped into the loop's fragments.
    if let Some(carry) = &ring.carry {
        carry.retire_after_loop(func, &pro, plan, &mut results);
    }
    // Nested: stage `s` was filled `(T + S - 1 - s) / S` times in this run of the loop (iteration `j` fills
    // stage `j % S`, for every `j < T`); the enclosing loop carries the parities on.
    if let (Some((bits, outer)), Some(_)) = (outer, &ring.mbarriers) {
        let two = pro.constant(func, 2);
        let mut next = zero;
        for st in 0..s {
            let bit = stage_bit(func, &pro, bits, st as usize);
            let extra = pro.constant(func, s - 1 - st);
            let padded = pro.binary(func, BinaryArith::Add, trips, extra);
            let fills = pro.binary(func, BinaryArith::Div, padded, s_v);
            let sum = pro.binary(func, BinaryArith::Add, bit, fills);
            let parity = pro.binary(func, BinaryArith::Rem, sum, two);
            let weight = pro.constant(func, 1 << st);
            let weighted = pro.binary(func, BinaryArith::Mul, parity, weight);
            next = pro.binary(func, BinaryArith::Add, next, weighted);
        }
        let outer_body = func.body.op(outer).regions[0];
        if let Some(&y) = func.body.block(outer_body).ops.last() {
            if let Some(mut view) = func.body.op(y).view::<typed::Yield>() {
                if let Some(last) = view.values.last_mut() {
                    *last = next;
                }
                func.body.op_mut(y).set_from(view);
            }
        }
        // The persistent tile loop: the next tile's prologue right here, before this tile's epilogue.
        if !plan.has_async_wait {
            let ring_tiles: HashSet<Value> = ring.allocs.values().flatten().copied().collect();
            prologue_ahead(func, outer, &prologue, &ring_tiles, &pro, span);
        }
    }

    replace_loop_results(func, &lop.results, &results);
    // The old loop and its body go.
    let old_ops = std::mem::take(&mut func.body.block_mut(plan.body).ops);
    for o in old_ops {
        func.body.op_mut(o).parent = None;
    }
    func.body.erase(l);
}
