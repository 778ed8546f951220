//! `lower-tile-to-nvgpu`: rewrites block-level tile ops into per-thread `nvgpu` ops.
//!
//! Runs after `layout-assignment`: every register tile type carries a distributed layout
//! (`register`, `lane`, `warp` → `row`, `col`). A register tile value becomes a list of per-thread
//! *fragment vectors* (a 1:N value map): fragment `f` holds register values `f*V .. (f+1)*V` where `V` is
//! the per-thread size of one mma fragment of the tile's role (A 8, B 4, C 4 values for m16n8k16), in
//! a `vector<V/2 x 2 x T>` (`vector<V/4 x 4 x T>` for 8-bit elements), element `[i][j]` being value
//! `i * inner + j`: the shapes MLIR's `nvgpu.mma.sync` takes.
//!
//! One function per op kind, in its own file: [`copy_g2s`] (`tile.copy_g2s` → `device_async_copy`, or
//! synchronous masked loads and stores under `global_alignment` < 4; row- or column-major;
//! [`copy_g2s_transpose`] between tiles stored in different orders),
//! [`copy_s2r`] (`tile.copy_s2r` → a [`CopyPlan`] executed as `ldmatrix` or loads), [`mma`]
//! (`tile.mma` → `mma.sync`), [`copy_r2g`] (`tile.copy_r2g` → predicated stores), [`elementwise`]
//! (`fill`, `splat`, binary ops, `select`, `cast` on fragments), [`convert_layout`] (register-only
//! `tile.convert_layout`: regrouped fragments), [`control`] (`tile.for` with expanded
//! loop-carried values, `tile.yield`), [`reduce`] (`tile.reduce` through registers, shuffles and shared
//! memory; `tile.broadcast`; `tile.iota`; all derived from the layouts). Thin register tiles (`Mx1`, `1xN`)
//! have slice layouts ([`crate::slice_layout`]); their fragments hold at most 2 values. Scalar `tile.*` ops stay: they are per-thread now.
//!
//! [`copy_r2s`] (`tile.copy_r2s` → `stmatrix` on sm_90, `st.shared` otherwise), windows of shared tiles
//! at constant or run-time offsets ([`window`]); barriers between `copy_r2s` and other warps' accesses of
//! the same shared tile follow from what each copy reads and writes since the last barrier.
//!
//! Not supported (a diagnostic at the op): register tiles whose layouts differ across an elementwise op, casts that change the fragment
//! shape (8-bit ↔ wider), a transposing `tile.copy_g2s` of elements wider than 16 bits.

pub mod copy_plan;
mod control;
mod convert_layout;
mod copy_g2s;
mod copy_g2s_tma;
mod copy_g2s_transpose;
mod copy_r2g;
mod copy_r2s;
mod copy_s2r;
mod elementwise;
mod emit;
mod mma;
mod reduce;
mod window;

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tilec_ir::layout::{Layout, LinearLayout};
use tilec_ir::{typed, Attribute, BlockId, Diagnostic, Func, KernelAttrs, MemorySpace, Module, OpId, OpKind, ScalarType, Span, Target, Type, TypedOp, Value, VectorType};

pub use copy_g2s::GLOBAL_ALIGNMENT_ATTR;
pub use copy_s2r::shared_source;
pub use copy_plan::{b16_pair_view, CopyInstance, CopyInstr, CopyPlan, DistributedBases, SharedSource};

use crate::layout_assignment::{num_warps, solve_layouts, LayoutSolution};

/// The function attribute where the lowering states what its `cp.async` copies require of the global tiles.
pub const ASYNC_COPY_REQUIREMENT_ATTR: &str = "async_copy_requirements";
/// [`ASYNC_COPY_REQUIREMENT_ATTR`] for tools: `[[argument, axis, multiple], ...]`, each saying that extent
/// `axis` of the function's argument number `argument` must be a multiple of `multiple` elements (the row
/// length that keeps every 16-, 8- or 4-byte cp.async source aligned). A launch that breaks one would fault
/// with a misaligned address; `tilec bundle`, `bench` and `tune` compile a narrower variant for such shapes.
pub use tilec_ir::ASYNC_COPY_ALIGNMENT_ATTR;

impl Lowering<'_> {
    /// Records that extent `axis` of the global tile `src` (a function argument) must be a multiple of
    /// `multiple` elements.
    pub(super) fn require_multiple(&mut self, src: Value, axis: i64, multiple: u64) {
        if let Some(arg) = self.func.args().iter().position(|&a| a == src) {
            self.alignment.insert((arg as i64, axis, multiple as i64));
        }
    }
}

/// Lowers every function of a module (after layout assignment).
pub fn lower_tile_to_nvgpu(module: &mut Module) -> Result<(), Diagnostic> {
    for func in &mut module.funcs {
        lower_func(func)?;
    }
    Ok(())
}

/// Whether a rank-2 tile is stored column by column (`#col_major`, or a swizzle of it): its multi-element
/// accesses run down a column.
pub(crate) fn is_col_major(t: &tilec_ir::TileType) -> bool {
    fn base(l: &Layout) -> bool {
        match l {
            Layout::ColMajor => true,
            Layout::Swizzled { base: b, .. } => base(b),
            // wgmma's panels along the rows (a column-major K-major B).
            Layout::Linear(_) => l.contiguous_axis(2) == Some(0),
            _ => false,
        }
    }
    t.rank() == 2 && t.layout.as_ref().is_some_and(base)
}

/// How one register tile is represented after lowering.
#[derive(Clone, Debug)]
pub(crate) struct Fragments {
    pub layout: LinearLayout,
    pub bases: DistributedBases,
    pub elem: ScalarType,
    /// Values per fragment.
    pub values: u32,
    /// Total per-thread values.
    pub register_values: u32,
}

impl Fragments {
    pub fn count(&self) -> u32 {
        self.register_values / self.values
    }

    pub fn inner(&self) -> u64 {
        let inner = if self.elem.bit_width() == 8 { 4 } else { 2 };
        inner.min(self.values as u64)
    }

    pub fn vector_type(&self) -> VectorType {
        let inner = self.inner();
        VectorType::new(&[self.values as u64 / inner, inner], self.elem)
    }

    /// Position of value `j` (0..values) in a fragment vector.
    pub fn position(&self, j: u32) -> Vec<u32> {
        let inner = self.inner() as u32;
        vec![j / inner, j % inner]
    }
}

/// The state of lowering one function.
pub(crate) struct Lowering<'f> {
    pub func: &'f mut Func,
    pub solution: LayoutSolution,
    pub num_warps: u32,
    /// Register tile value → its fragment vectors.
    pub frags: HashMap<Value, Vec<Value>>,
    /// Where new ops go: before this op.
    pub at: OpId,
    pub span: Span,
    /// Hoisted ops (ids, constants, lane/warp terms) go at this index of the entry block.
    pub hoist_pos: usize,
    pub constants: HashMap<(i64, bool), Value>,
    pub special: HashMap<OpKind, Value>,
    pub bit_terms: HashMap<BitTermKey, (Value, Value)>,
    /// Shared tiles a `tile.copy_s2r` has read so far (for the WAR barrier before refilling them).
    pub read_shared: BTreeSet<Value>,
    /// What enclosing loops' bodies leave pending across their back edges
    /// ([`crate::analysis::barriers::carried_into_next_iteration`]), for the ops of the body being lowered.
    pub carried: crate::analysis::barriers::Pending,
    /// Global tiles a `tile.copy_r2g` has written since the last barrier: a `tile.copy_g2s` out of one reads
    /// what other warps stored, so it needs a barrier first (read after write through global memory).
    pub written_global: BTreeSet<Value>,
    /// Whether to place that barrier ([`LowerTileToNvgpu::global_barriers`]; off only to test the simulator's
    /// race detector).
    pub global_barriers: bool,
    /// Shared tiles read by a `tile.copy_s2r` / written by a `tile.copy_r2s` since the last barrier: a later
    /// write of one (write after read/write), or read of a written one (read after write), needs a barrier.
    pub pending_shared_reads: BTreeSet<Value>,
    pub pending_shared_writes: BTreeSet<Value>,
    /// Whether to place those barriers ([`LowerOptions::shared_barriers`]).
    pub shared_barriers: bool,
    /// The target: `tile.copy_r2s` becomes `stmatrix` only where it has one.
    pub target: Target,
    pub requirements: BTreeSet<String>,
    /// The wgmma `tile.mma` ops and their plans, made before anything is lowered ([`crate::wgmma`]).
    pub wgmma: HashMap<OpId, crate::wgmma::WgmmaPlan>,
    /// The shared A and B values of those mmas (and the copies under their transposes): their `tile.copy_s2r`
    /// and `tile.transpose` emit nothing (the mma reads shared memory).
    pub wgmma_operands: HashSet<Value>,
    /// The same requirements, machine-checkable: `(argument, axis, multiple)`: the extent `axis` of the
    /// function's argument must be a multiple of `multiple` ([`ASYNC_COPY_ALIGNMENT_ATTR`]).
    pub alignment: BTreeSet<(i64, i64, i64)>,
    /// The `tile.copy_g2s` ops that become TMA loads ([`copy_g2s_tma`]).
    pub tma_copies: HashSet<OpId>,
    /// The mbarrier of the run of copies being lowered, when it has TMA loads.
    pub tma_run: Option<copy_g2s_tma::TmaRun>,
    /// `tid == 0`, hoisted once.
    pub elected: Option<Value>,
    /// What the lowering chose and why, for `--remarks`.
    pub remarks: Vec<(Span, String)>,
}

/// Lowers one function (placing every barrier, for the default target, [`lower_func_with`]).
pub fn lower_func(func: &mut Func) -> Result<(), Diagnostic> {
    lower_func_with(func, &LowerOptions::default())
}

/// What a lowering may leave out or use.
#[derive(Clone, Copy, Debug)]
pub struct LowerOptions {
    /// Place the barriers that order a block's global stores before its copies out of the same tile.
    pub global_barriers: bool,
    /// Place the barriers between `tile.copy_r2s` stores and other warps' accesses of the same shared tile.
    pub shared_barriers: bool,
    pub target: Target,
}

impl Default for LowerOptions {
    fn default() -> LowerOptions {
        LowerOptions { global_barriers: true, shared_barriers: true, target: Target::default() }
    }
}

/// Lowers one function; `global_barriers = false` / `shared_barriers = false` leave out barriers (for tests
/// of the race detector only: the code is racy then).
pub fn lower_func_with(func: &mut Func, options: &LowerOptions) -> Result<(), Diagnostic> {
    lower_func_with_remarks(func, options).map(|_| ())
}

/// [`lower_func_with`], returning the lowering's remarks (what it chose where it had a choice, and why).
pub fn lower_func_with_remarks(func: &mut Func, options: &LowerOptions) -> Result<Vec<(Span, String)>, Diagnostic> {
    let LowerOptions { global_barriers, shared_barriers, target } = *options;
    // Layout assignment is idempotent; running it here (for the lowering's own target: wgmma or mma.sync
    // depends on it) makes the lowering usable on its own (it also writes `num_warps` into the function).
    crate::layout_assignment::assign_layouts_for(func, target)?;
    let solution = solve_layouts(func)?;
    let warps = num_warps(func);
    let (wgmma, wgmma_operands) = wgmma_plans(func, warps)?;
    let entry = func.entry;
    let first = match func.body.block(entry).ops.first() {
        Some(&op) => op,
        None => return Ok(Vec::new()),
    };
    let mut cx = Lowering {
        func,
        solution,
        num_warps: warps,
        frags: HashMap::default(),
        at: first,
        span: Span::UNKNOWN,
        hoist_pos: 0,
        constants: HashMap::default(),
        special: HashMap::default(),
        bit_terms: HashMap::default(),
        read_shared: BTreeSet::new(),
        carried: Default::default(),
        written_global: BTreeSet::new(),
        global_barriers,
        pending_shared_reads: BTreeSet::new(),
        pending_shared_writes: BTreeSet::new(),
        shared_barriers,
        target,
        requirements: BTreeSet::new(),
        wgmma,
        wgmma_operands,
        alignment: BTreeSet::new(),
        tma_copies: Default::default(),
        tma_run: None,
        elected: None,
        remarks: Vec::new(),
    };
    cx.lower_block(entry)?;
    if !cx.requirements.is_empty() {
        let text = cx.requirements.iter().cloned().collect::<Vec<_>>().join("; ");
        cx.func.attrs.insert(ASYNC_COPY_REQUIREMENT_ATTR.into(), Attribute::Str(text));
    }
    if !cx.alignment.is_empty() {
        let items = cx.alignment.iter().map(|&(a, x, m)| Attribute::Array(vec![Attribute::Int(a), Attribute::Int(x), Attribute::Int(m)])).collect();
        cx.func.attrs.insert(ASYNC_COPY_ALIGNMENT_ATTR.into(), Attribute::Array(items));
    }
    Ok(cx.remarks)
}

/// The plans of the function's wgmma `tile.mma` ops (layout assignment chose them) and the register values
/// whose `tile.copy_s2r` (and `tile.transpose`) emit nothing: the shared A and B operands whose every use is
/// a wgmma's (Q of the attention kernel feeds two mmas; were one an mma.sync, Q would be loaded).
type WgmmaPlans = (HashMap<OpId, crate::wgmma::WgmmaPlan>, HashSet<Value>);

fn wgmma_plans(func: &Func, warps: u32) -> Result<WgmmaPlans, Diagnostic> {
    let mut ops = Vec::new();
    func.body.walk(func.entry, &mut |o| ops.push(o));
    let mut plans = HashMap::default();
    let mut candidates = Vec::new();
    for &id in &ops {
        let op = func.body.op(id);
        let Some(mma) = op.view::<typed::Mma>().filter(crate::wgmma::is_wgmma) else { continue };
        let plan = crate::wgmma::wgmma_plan(func, id, warps)
            .map_err(|m| Diagnostic::error(op.span, format!("this 'tile.mma' has a wgmma shape but cannot use wgmma: {m}")))?;
        for (operand, value) in [(plan.a.as_ref(), mma.a), (Some(&plan.b), mma.b)] {
            if let Some(operand) = operand {
                candidates.push((value, operand.loaded));
            }
        }
        plans.insert(id, plan);
    }
    let mut operands = HashSet::default();
    for (value, loaded) in candidates {
        let only_wgmma = ops.iter().all(|&o| !func.body.op(o).operands.contains(&value) || plans.contains_key(&o));
        if only_wgmma {
            operands.insert(value);
            operands.insert(loaded);
        }
    }
    Ok((plans, operands))
}

impl<'f> Lowering<'f> {
    pub fn ty(&self, v: Value) -> &Type {
        self.func.body.ty(v)
    }

    pub fn is_reg_tile(&self, v: Value) -> bool {
        matches!(self.ty(v), Type::Tile(t) if t.space == MemorySpace::Register)
    }

    /// The fragment representation of a register tile value.
    pub fn fragments_of(&mut self, v: Value) -> Result<Fragments, Diagnostic> {
        let span = self.span;
        let Type::Tile(t) = self.func.body.ty(v).clone() else {
            return Err(Diagnostic::error(span, "expected a register tile"));
        };
        let Some(shape) = t.static_shape() else { return Err(Diagnostic::error(span, "register tiles need static shapes")) };
        let layout = match &t.layout {
            Some(Layout::Linear(l)) => l.clone(),
            Some(other) => other
                .to_linear(shape[0] as u32, shape[1] as u32)
                .map_err(|e| Diagnostic::error(span, format!("register tile layout {other}: {e}")))?,
            None => return Err(Diagnostic::error(span, format!("register tile '{t}' has no layout; run layout-assignment first"))),
        };
        let values = match self.solution.of(v) {
            Some((_, n, _)) => *n,
            None => return Err(Diagnostic::error(span, format!("no fragment size known for '{t}'"))),
        };
        let bases = DistributedBases::of(&layout);
        if !bases.is_additive() {
            return Err(Diagnostic::error(span, format!("the layout of '{t}' is not additive; its lowering is not supported")));
        }
        let register_values = layout.in_dim_size("register").unwrap_or(1);
        if values > register_values || register_values % values != 0 {
            return Err(Diagnostic::error(span, format!("'{t}': {register_values} register values per thread do not split into fragments of {values}")));
        }
        Ok(Fragments { layout, bases, elem: t.elem, values, register_values })
    }

    /// The fragment vectors a register tile value was lowered to.
    pub fn frags(&self, v: Value) -> Result<Vec<Value>, Diagnostic> {
        self.frags
            .get(&v)
            .cloned()
            .ok_or_else(|| Diagnostic::error(self.span, "internal: a register tile used before it was lowered"))
    }

    fn lower_block(&mut self, block: BlockId) -> Result<(), Diagnostic> {
        let ops: Vec<OpId> = self.func.body.block(block).ops.clone();
        for (i, &id) in ops.iter().enumerate() {
            let kind = self.func.body.op(id).kind;
            self.at = id;
            self.span = self.func.body.op(id).span;
            let prev = if i > 0 { Some(self.func.body.op(ops[i - 1]).kind) } else { None };
            let next = ops.get(i + 1).map(|&o| self.func.body.op(o).kind);
            let replaced = match kind {
                OpKind::CopyG2S => {
                    let (first, last) = (prev != Some(OpKind::CopyG2S), next != Some(OpKind::CopyG2S));
                    self.lower_copy_g2s(id, first, last)?;
                    true
                }
                OpKind::CopyS2R => {
                    self.lower_copy_s2r(id)?;
                    true
                }
                OpKind::Mma => {
                    self.lower_mma(id)?;
                    true
                }
                OpKind::CopyR2G => {
                    self.lower_copy_r2g(id)?;
                    true
                }
                OpKind::CopyR2S => {
                    self.lower_copy_r2s(id)?;
                    true
                }
                OpKind::ConvertLayout => {
                    self.lower_convert_layout(id)?;
                    true
                }
                OpKind::For => {
                    self.lower_for(id)?;
                    true
                }
                OpKind::TileBarrier => {
                    self.block_barrier();
                    true
                }
                OpKind::Yield => self.lower_yield(id)?,
                OpKind::Reduce => {
                    self.lower_reduce(id)?;
                    true
                }
                OpKind::Broadcast => {
                    self.lower_broadcast(id)?;
                    true
                }
                OpKind::Iota => {
                    self.lower_iota(id)?;
                    true
                }
                OpKind::Transpose => {
                    self.lower_transpose(id)?;
                    true
                }
                _ => self.lower_elementwise(id)?,
            };
            if replaced {
                self.func.body.erase(id);
            }
        }
        Ok(())
    }

    /// An `nvgpu.barrier`: every shared access before it is ordered before every one after.
    pub(crate) fn shared_barrier(&mut self) {
        self.emit(typed::Barrier {}.into_spec());
        self.barrier_placed();
    }

    /// An `nvgpu.barrier` that orders every shared and global access of the block before it (a `tile.barrier`,
    /// or one a copy's hazards need): nothing stays pending.
    pub(crate) fn block_barrier(&mut self) {
        self.emit(typed::Barrier {}.into_spec());
        self.written_global.clear();
        self.barrier_placed();
    }

    /// Forgets the accesses a barrier just emitted orders.
    pub(crate) fn barrier_placed(&mut self) {
        self.pending_shared_reads.clear();
        self.pending_shared_writes.clear();
    }

    /// The shared tiles the `tile.copy_s2r` (read) and `tile.copy_r2s` (written) ops in `block` touch,
    /// nested loops included: inside a loop they are pending at the top of the body (the previous
    /// iteration's) and after the loop.
    pub(crate) fn shared_accesses_in(&self, block: BlockId) -> (BTreeSet<Value>, BTreeSet<Value>) {
        let (mut reads, mut writes) = (BTreeSet::new(), BTreeSet::new());
        let body = &self.func.body;
        let mut ops = Vec::new();
        body.walk(block, &mut |op| ops.push(op));
        for op in ops {
            match typed::AnyOp::from_op(body.op(op)) {
                Some(typed::AnyOp::CopyS2R(c)) => {
                    reads.insert(c.src);
                }
                Some(typed::AnyOp::CopyR2S(c)) => {
                    writes.insert(c.dst);
                }
                _ => {}
            }
        }
        (reads, writes)
    }
}

/// The `lower-tile-to-nvgpu` pass (see the [module documentation](self)).
#[derive(Clone, Copy, Debug)]
pub struct LowerTileToNvgpu {
    /// Place the barriers that order a block's `tile.copy_r2g` stores before its `tile.copy_g2s` copies out of
    /// the same global tile (`global-barriers=off` leaves them out: only to show the race detector a race).
    pub global_barriers: bool,
    /// Place the barriers between `tile.copy_r2s` stores and the other warps' `tile.copy_s2r` reads of the
    /// same shared tile, both ways (`shared-barriers=off` leaves them out: only to show the race detector).
    pub shared_barriers: bool,
}

impl Default for LowerTileToNvgpu {
    fn default() -> LowerTileToNvgpu {
        LowerTileToNvgpu { global_barriers: true, shared_barriers: true }
    }
}

impl LowerTileToNvgpu {
    pub const NAME: &'static str = "lower-tile-to-nvgpu";
    pub const DESCRIPTION: &'static str =
        "lower tile ops to per-thread nvgpu ops (cp.async, ldmatrix through a CopyPlan, mma.sync, predicated stores)";

    /// Builds the pass from its pipeline options (`global-barriers=on|off`, `shared-barriers=on|off`).
    pub fn from_options(options: &crate::options::PassOptions) -> Result<LowerTileToNvgpu, Diagnostic> {
        options.expect_only(Self::NAME, &["global-barriers", "shared-barriers"])?;
        let switch = |key: &str| match options.get(key) {
            None | Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(other) => Err(Diagnostic::error(options.span, format!("{}: {key} must be 'on' or 'off', not '{other}'", Self::NAME))),
        };
        Ok(LowerTileToNvgpu { global_barriers: switch("global-barriers")?, shared_barriers: switch("shared-barriers")? })
    }
}

impl crate::Pass for LowerTileToNvgpu {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &'static str {
        Self::DESCRIPTION
    }

    fn run(&self, module: &mut Module, cx: &mut crate::PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            let options = LowerOptions { global_barriers: self.global_barriers, shared_barriers: self.shared_barriers, target: cx.target };
            for (span, remark) in lower_func_with_remarks(func, &options)? {
                cx.remark(span, remark);
            }
        }
        for func in &module.funcs {
            if let Ok(KernelAttrs { async_copy_requirements: Some(text), .. }) = KernelAttrs::of(func) {
                cx.remark(func.span, format!("@{}: {text}", func.name));
            }
        }
        Ok(())
    }
}/// A value and the bit terms (bit position, multiplier) decomposed from it: the key of a cached split.
pub type BitTermKey = (Value, Vec<(u32, u32)>);


