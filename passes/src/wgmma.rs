//! Which tensor-core instruction a `tile.mma` becomes, and the plan of a wgmma one: the one definition of
//! wgmma legality (issue 18), used by `layout-assignment` (which decides), the lowering and the diagnostics.
//!
//! # The choice
//! The kernel attribute `mma` (`"wgmma"` or `"mma_sync"`) chooses; without it, wgmma on `sm_90a` where it is
//! legal, else mma.sync with a remark saying why. `mma = "wgmma"` where it is not legal (on any target) is
//! an error at the `tile.mma`. The decision is recorded in the op: layout assignment writes
//! `mmaShape = [64, N, K]` (a wgmma shape; mma.sync shapes have m 16) and `warpGrid = [WGM, WGN]`
//! (warpgroups), so re-running it, or the lowering, finds the same plan.
//!
//! # Legal ([`wgmma_plan`])
//! - the kernel's warps form whole warpgroups (`num_warps` a multiple of 4);
//! - element types wgmma has: f16 x f16 or bf16 x bf16 into f32, 8-bit integers into i32;
//! - A and B are each a `tile.copy_s2r` of a whole shared tile made by `tile.alloc_shared` (or a
//!   `tile.transpose` of one: `tile.mma %q, tile.transpose(%k)` reads a row-major `[N, K]` K as a K-major B),
//!   used only as this operand of `tile.mma` ops, and the shared tile is only written by `tile.copy_g2s` (not
//!   between the copy and the mmas: the wgmma reads the tile where the mma is) and read by that copy;
//! - or A is computed in registers (not loaded: FlashAttention's P = f16(exp(S - m)) for O += P·V), f16, bf16
//!   or 8-bit, and the mma reads it from registers (the RS form, always K-major; the A register tile gets the
//!   layout `wgmma.m64k16.f16.a` per m64 x k16, which is the f32 accumulator's of an earlier wgmma whose
//!   warpgroups split the same rows: its conversion is a renaming of registers, `layout_conversion`);
//! - each shared tile is row- or column-major (or already the panel layout below): its contiguous axis is K
//!   (K-major) or M / N (MN-major, f16/bf16 only) and at least 32 bytes long;
//! - the warpgroups split M first (`WGM` the largest that leaves whole m64 tiles), then N: each warpgroup's
//!   `N / WGN` is at most 256, a multiple of 8 (of 16 for 8-bit, or 8, 16, 24), and for an MN-major B a
//!   whole number of swizzle panels; K is a multiple of the instruction's (16, or 32 for 8-bit).
//!
//! # Shared layouts
//! The operand tiles get wgmma's canonical layout: column panels one swizzle span wide along the contiguous
//! axis ([`tilec_ir::layout::column_panels`]), the widest span (128, 64, 32 bytes) that divides that axis's
//! length in bytes, under the span's permutation ([`SwizzleMode::element_swizzle`]): `#swizzle<B, M, 3,
//! #row_major>` (or `#col_major`) for one panel, `#swizzle<B, M, 3, #linear<...>>` for several.

use tilec_ir::layout::{column_panels, Layout, LinearLayout, SwizzleMode};
use tilec_ir::ops::{MmaInstruction, MmaShape};
use tilec_ir::{typed, Diagnostic, Func, KernelAttrs, OpId, OpKind, ScalarType, Span, Target, Type, Value};

/// One operand of a wgmma: the shared tile it reads and how.
#[derive(Clone, Debug, PartialEq)]
pub struct WgmmaOperand {
    /// The shared tile (a `tile.alloc_shared` result).
    pub shared: Value,
    /// The `tile.copy_s2r` result the mma reads (through a `tile.transpose` when `transposed`): its copy, and
    /// the transpose, emit nothing where every use is a wgmma's.
    pub loaded: Value,
    /// The mma reads `tile.transpose` of the loaded tile: the shared tile's axes are (N, K) for B, (K, M) for
    /// A, so a descriptor's indices are exchanged (`tile.mma %q, tile.transpose(%k)` with `%k` a row-major
    /// `[N, K]` tile: a K-major B).
    pub transposed: bool,
    /// MN-major (`transposeA` / `transposeB`): the tile's contiguous axis is M (A) or N (B).
    pub mn_major: bool,
    /// The swizzle mode of its panels.
    pub mode: SwizzleMode,
    /// The tile's layout: panels along its contiguous axis under the mode's permutation.
    pub layout: Layout,
    /// Bytes between panels (the descriptor's leading byte offset for MN-major; 16 for K-major).
    pub leading_byte_offset: u32,
    /// Bytes between groups of 8 storage rows (the stride byte offset): 8 spans.
    pub stride_byte_offset: u32,
}

/// What a wgmma `tile.mma` becomes.
#[derive(Clone, Debug, PartialEq)]
pub struct WgmmaPlan {
    /// The instruction `m64nNkK`.
    pub n: u32,
    pub k: u32,
    /// Warpgroups along M and N.
    pub groups: (u32, u32),
    /// m64 tiles per warpgroup.
    pub m_tiles: u32,
    /// A in shared memory, or `None`: A from registers (the RS form; the register tile gets the layout
    /// `wgmma.m64k16.f16.a` tiled over k steps, m64 tiles and warpgroups, `layout_assignment::wgmma_a_layout`).
    pub a: Option<WgmmaOperand>,
    pub b: WgmmaOperand,
}

impl WgmmaPlan {
    /// The shape layout assignment writes into the `tile.mma`.
    pub fn shape(&self) -> MmaShape {
        MmaShape { m: 64, n: self.n, k: self.k }
    }
}

/// Whether a `tile.mma` was decided to be a wgmma (its `mmaShape` has m 64).
pub fn is_wgmma(mma: &typed::Mma) -> bool {
    mma.mma_shape.is_some_and(|s| s.m == 64)
}

/// The accumulator of a wgmma of `a` x `b` inputs, if there is one.
fn accumulator(a: ScalarType, b: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    match (a, b) {
        (F16, F16) | (BF16, BF16) => Some(F32),
        (I8 | U8, I8 | U8) => Some(I32),
        _ => None,
    }
}

/// The layout of a `rows x cols` tile of `elem_bytes`-byte elements stored in panels along `axis` (1: the
/// columns, 0: the rows) under `mode`.
pub fn panel_layout(rows: u32, cols: u32, axis: usize, mode: SwizzleMode, elem_bytes: u32) -> Result<Layout, String> {
    let swizzle = mode.element_swizzle(elem_bytes).ok_or_else(|| format!("no swizzle for {elem_bytes}-byte elements"))?;
    let pc = (mode.span_bytes() / u64::from(elem_bytes)) as u32;
    let (contiguous, other) = if axis == 1 { (cols, rows) } else { (rows, cols) };
    let base = if pc == contiguous {
        if axis == 1 {
            Layout::RowMajor
        } else {
            Layout::ColMajor
        }
    } else {
        let panels: LinearLayout = column_panels(other, contiguous, pc).map_err(|e| e.to_string())?;
        let panels = if axis == 1 { panels } else { panels.exchange_outs("row", "col").map_err(|e| e.to_string())? };
        Layout::Linear(panels)
    };
    Ok(Layout::Swizzled { swizzle, base: Box::new(base) })
}

/// The operand plan of shared tile `shared` (loaded into `loaded`) read as A (K is its `k_axis` 1, or 0 when
/// `transposed`) or B (`k_axis` 0, or 1 when `transposed`).
fn operand(func: &Func, source: SharedSource, what: &str) -> Result<WgmmaOperand, String> {
    let SharedSource { shared, loaded, transposed } = source;
    let k_axis = usize::from((what == "A") != transposed);
    let mn_name = if what == "A" { "M" } else { "N" };
    let Some(t) = func.body.ty(shared).as_tile() else { return Err(format!("{what}'s source is not a tile")) };
    let Some(&[rows, cols]) = t.static_shape().as_deref() else {
        return Err(format!("{what}'s shared tile is not a static rank-2 tile"));
    };
    let (Ok(r), Ok(c)) = (u32::try_from(rows), u32::try_from(cols)) else { return Err(format!("{what}'s shared tile is too large")) };
    if !r.is_power_of_two() || !c.is_power_of_two() {
        return Err(format!("{what}'s shared tile {rows}x{cols} is not a power of two along both axes"));
    }
    let elem_bytes = t.elem.bit_width() / 8;
    let mode_for = |axis: usize| {
        let bytes = u64::from(if axis == 1 { c } else { r }) * u64::from(elem_bytes);
        [SwizzleMode::B128, SwizzleMode::B64, SwizzleMode::B32].into_iter().find(|m| bytes.is_multiple_of(m.span_bytes()))
    };
    // The contiguous axis: from the storage order, or from a panel layout given before.
    let axis = match &t.layout {
        None | Some(Layout::RowMajor) => 1,
        Some(Layout::ColMajor) => 0,
        Some(other) => {
            let matches = |axis: usize| mode_for(axis).is_some_and(|m| panel_layout(r, c, axis, m, elem_bytes).as_ref() == Ok(other));
            match (matches(1), matches(0)) {
                (true, _) => 1,
                (_, true) => 0,
                _ => return Err(format!("{what}'s shared tile already has the layout {other}, not a wgmma panel layout")),
            }
        }
    };
    let contiguous_bytes = u64::from(if axis == 1 { c } else { r }) * u64::from(elem_bytes);
    let Some(mode) = mode_for(axis) else {
        return Err(format!("{what}'s shared tile has {contiguous_bytes}-byte storage rows, narrower than a 32-byte swizzle span"));
    };
    let mn_major = axis != k_axis;
    if mn_major && elem_bytes != 2 {
        return Err(format!("{what} of '{}' elements must be K-major (contiguous along K) for wgmma; its shared tile is contiguous along {mn_name}", t.elem));
    }
    let storage_rows = u64::from(if axis == 1 { r } else { c });
    if !storage_rows.is_multiple_of(8) {
        return Err(format!("{what}'s shared tile has {storage_rows} storage rows, not a multiple of 8"));
    }
    let span = mode.span_bytes();
    let layout = panel_layout(r, c, axis, mode, elem_bytes)?;
    let leading = if mn_major { storage_rows * span } else { 16 };
    if leading >= 1 << 18 {
        return Err(format!("{what}'s panels are {leading} bytes apart, more than a descriptor encodes"));
    }
    Ok(WgmmaOperand {
        shared,
        loaded,
        transposed,
        mn_major,
        mode,
        layout,
        leading_byte_offset: leading as u32,
        stride_byte_offset: (8 * span) as u32,
    })
}

/// Where a wgmma operand comes from: the shared tile, the `tile.copy_s2r` result, and whether the mma reads
/// its `tile.transpose`.
#[derive(Clone, Copy, Debug)]
struct SharedSource {
    shared: Value,
    loaded: Value,
    transposed: bool,
}

/// The shared tile a wgmma operand `v` (the `role` operand of the mma `mma_op`) reads: `v` is a whole-tile
/// `tile.copy_s2r` of a `tile.alloc_shared` tile, or a `tile.transpose` of one; `v` is only used as this
/// operand of `tile.mma` ops (the attention kernel's Q feeds the mmas of both its loops), the copy's result
/// only by the transpose, only `tile.copy_g2s` (writing) and that copy use the tile, and no write of it falls
/// between the copy and the mmas ([`written_between`]).
fn shared_source(func: &Func, v: Value, mma_op: OpId, role: Role) -> Result<SharedSource, String> {
    let body = &func.body;
    let what = role.name();
    let mut def = body.defining_op(v).map(|d| (d, body.op(d)));
    let mut transposed = None;
    if let Some((t_id, t)) = def.filter(|(_, d)| d.kind == OpKind::Transpose) {
        let Some(tv) = t.view::<typed::Transpose>() else { return Err(format!("{what}'s 'tile.transpose' is malformed")) };
        transposed = Some((t_id, tv.source));
        def = body.defining_op(tv.source).map(|d| (d, body.op(d)));
    }
    let Some((copy_id, copy)) = def.filter(|(_, d)| d.kind == OpKind::CopyS2R) else {
        return Err(format!("{what} is not loaded by a 'tile.copy_s2r' (wgmma reads its operands from shared memory)"));
    };
    let Some(c) = copy.view::<typed::CopyS2R>() else { return Err(format!("{what}'s 'tile.copy_s2r' is malformed")) };
    let src = c.src;
    let loaded = transposed.map_or(v, |(_, source)| source);
    let alloc = body.defining_op(src).is_some_and(|d| body.op(d).kind == OpKind::AllocShared);
    if !alloc {
        return Err(format!("{what}'s shared tile is not made by 'tile.alloc_shared'"));
    }
    let whole = c.src_indices.is_empty() && body.ty(src).as_tile().and_then(|t| t.static_shape()) == body.ty(loaded).as_tile().and_then(|t| t.static_shape());
    if !whole {
        return Err(format!("{what}'s 'tile.copy_s2r' reads a window of its shared tile, not the whole tile"));
    }
    let mut problem = None;
    body.walk(func.entry, &mut |o| {
        let op = body.op(o);
        if problem.is_some() {
            return;
        }
        if op.operands.contains(&v) {
            let same_role = op.view::<typed::Mma>().is_some_and(|m| role.of(&m) == v && m.a != m.b && m.c != v);
            if !same_role {
                problem = Some(format!("{what} is also used by '{}'", op.kind.name()));
            }
        } else if transposed.is_some() && op.operands.contains(&loaded) && Some(o) != transposed.map(|(t, _)| t) {
            problem = Some(format!("{what}'s loaded tile is also used by '{}'", op.kind.name()));
        } else if op.operands.contains(&src) && o != copy_id {
            let writes = op.view::<typed::CopyG2S>().is_some_and(|g| g.dst == src && g.src != src);
            if !writes {
                problem = Some(format!("{what}'s shared tile is also used by '{}'", op.kind.name()));
            }
        }
    });
    if let Some(p) = problem {
        return Err(p);
    }
    if let Some(p) = written_between(func, copy_id, src, v) {
        return Err(format!("{what}'s shared tile is written by '{}' after its 'tile.copy_s2r' and before a 'tile.mma' reads the copy (wgmma would read the new contents)", p));
    }
    let mma = body.op(mma_op).view::<typed::Mma>();
    if mma.is_some_and(|m| m.a == m.b) {
        return Err("A and B are the same value".into());
    }
    Ok(SharedSource { shared: src, loaded, transposed: transposed.is_some() })
}

/// The op that may write the shared tile `src` between the `tile.copy_s2r` `copy` and an op using `v` (its
/// copy, or the transpose of it): a wgmma reads the tile where the mma is, not where the copy is. Each user's
/// op in the copy's block (itself, or the loop holding it) is found; a writer placed after the copy up to that
/// op (or inside it) is one. Writers outside the copy's block run before the copy or after the users.
fn written_between(func: &Func, copy: OpId, src: Value, v: Value) -> Option<&'static str> {
    let body = &func.body;
    let block = body.op(copy).parent?;
    let ops = &body.block(block).ops;
    let position = |op: OpId| -> Option<usize> {
        let mut o = op;
        loop {
            let parent = body.op(o).parent?;
            if parent == block {
                return ops.iter().position(|&x| x == o);
            }
            o = body.block(parent).parent_op?;
        }
    };
    let at = position(copy)?;
    let mut last_use = None;
    let mut writers = Vec::new();
    body.walk(func.entry, &mut |o| {
        let op = body.op(o);
        if op.operands.contains(&v) {
            last_use = last_use.max(position(o));
        }
        if o != copy && op.view::<typed::CopyG2S>().is_some_and(|g| g.dst == src) {
            writers.push(o);
        }
    });
    let last_use = last_use?;
    writers.into_iter().find(|&w| position(w).is_some_and(|p| p > at && p <= last_use)).map(|w| body.op(w).kind.name())
}

/// An mma operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    A,
    B,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::A => "A",
            Role::B => "B",
        }
    }

    fn of(self, mma: &typed::Mma) -> Value {
        match self {
            Role::A => mma.a,
            Role::B => mma.b,
        }
    }
}

/// Whether A may come from registers: the ISA's RS form takes a K-major A of f16, bf16, s8 or u8 (the
/// element types checked with the accumulator) in the `wgmma.m64k16.*.a` layout; here only an A computed in
/// registers (not loaded by a `tile.copy_s2r`: one that is reads shared memory, or is not a wgmma if its
/// copy breaks the rules of [`shared_source`]).
fn register_a(func: &Func, a: Value, shared_why: String) -> Result<(), String> {
    let body = &func.body;
    let loaded = body.defining_op(a).is_some_and(|d| matches!(body.op(d).kind, OpKind::CopyS2R | OpKind::Transpose));
    if loaded {
        return Err(shared_why);
    }
    match body.ty(a).as_tile() {
        Some(t) if t.space == tilec_ir::MemorySpace::Register => Ok(()),
        _ => Err(shared_why),
    }
}

/// The wgmma plan of the `tile.mma` `mma_op`, or why it cannot be a wgmma (whatever the target).
pub fn wgmma_plan(func: &Func, mma_op: OpId, num_warps: u32) -> Result<WgmmaPlan, String> {
    let body = &func.body;
    let Some(mma) = body.op(mma_op).view::<typed::Mma>() else { return Err("malformed 'tile.mma'".into()) };
    if num_warps == 0 || !num_warps.is_multiple_of(4) {
        return Err(format!("num_warps = {num_warps} is not a whole number of warpgroups (a multiple of 4)"));
    }
    let tile = |v: Value| body.ty(v).as_tile().cloned();
    let (Some(ta), Some(tb), Some(tc)) = (tile(mma.a), tile(mma.b), tile(mma.c)) else { return Err("operands are not tiles".into()) };
    let Some(acc) = accumulator(ta.elem, tb.elem) else {
        return Err(format!("wgmma has no '{}' x '{}' variant (f16, bf16 or 8-bit integers)", ta.elem, tb.elem));
    };
    if tc.elem != acc {
        // The hardware also accumulates f16 inputs in f16 (`wgmma.mma_async...f16.f16.f16`); tilec does not
        // lower that yet. Other inputs have one accumulator type in hardware.
        if ta.elem == ScalarType::F16 && tc.elem == ScalarType::F16 {
            return Err(format!("tilec does not support wgmma's f16 accumulator yet (the hardware has it): accumulate in '{acc}' and cast the result to 'f16'"));
        }
        return Err(format!("wgmma accumulates '{}' inputs in '{acc}', not '{}'", ta.elem, tc.elem));
    }
    let (Some(&[m, k]), Some(&[_, n])) = (ta.static_shape().as_deref(), tb.static_shape().as_deref()) else {
        return Err("operands are not static rank-2 tiles".into());
    };
    let eight_bit = ta.elem.bit_width() == 8;
    let ki: u64 = if eight_bit { 32 } else { 16 };
    if !k.is_multiple_of(ki) {
        return Err(format!("K = {k} is not a multiple of the instruction's k = {ki}"));
    }
    let groups = num_warps / 4;
    // Split M first: the most warpgroups along M that leave whole m64 tiles.
    let wgm = (0..=groups.trailing_zeros()).rev().map(|i| 1u32 << i).find(|&d| groups.is_multiple_of(d) && m.is_multiple_of(64 * u64::from(d)));
    let Some(wgm) = wgm else { return Err(format!("M = {m} is not a multiple of 64 (wgmma's m)")) };
    let wgn = groups / wgm;
    if !n.is_multiple_of(u64::from(wgn)) {
        return Err(format!("N = {n} does not split over {wgn} warpgroups"));
    }
    let ni = n / u64::from(wgn);
    let n_ok = if eight_bit { matches!(ni, 8 | 16 | 24) || (ni.is_multiple_of(16) && ni <= 256) } else { ni.is_multiple_of(8) && (8..=256).contains(&ni) };
    if !n_ok {
        return Err(format!(
            "each of the {wgn} warpgroups along N gets N = {ni}, and wgmma's N is {}",
            if eight_bit { "8, 16, 24 or a multiple of 16 up to 256" } else { "a multiple of 8 up to 256" }
        ));
    }
    let a = match shared_source(func, mma.a, mma_op, Role::A) {
        Ok(sa) => Some(operand(func, sa, "A")?),
        Err(why) => {
            register_a(func, mma.a, why)?;
            None
        }
    };
    let sb = shared_source(func, mma.b, mma_op, Role::B)?;
    let b = operand(func, sb, "B")?;
    if b.mn_major && wgn > 1 {
        let pc = b.mode.span_bytes() / u64::from(tb.elem.bit_width() / 8);
        if !ni.is_multiple_of(pc) {
            return Err(format!("each warpgroup's N = {ni} is not a whole number of B's {pc}-column swizzle panels"));
        }
    }
    Ok(WgmmaPlan { n: ni as u32, k: ki as u32, groups: (wgm, wgn), m_tiles: (m / (64 * u64::from(wgm))) as u32, a, b })
}

/// A remark of the choice: where, and what.
#[derive(Clone, Debug)]
pub struct ChoiceRemark {
    pub span: Span,
    pub message: String,
}

/// Decides each undecided `tile.mma` of `func` for `target` (module docs) and records a wgmma choice in the
/// IR: the mma's `mmaShape`/`warpGrid` and the operand tiles' layouts. Returns the remarks; `mma = "wgmma"`
/// where it is not legal is an error at the mma.
pub fn choose_instructions(func: &mut Func, target: Target) -> Result<Vec<ChoiceRemark>, Diagnostic> {
    let attrs = crate::kernel_attrs::kernel_attrs(func)?;
    let want = attrs.mma;
    let warps = KernelAttrs::of(func).map_or(tilec_ir::ops::kernel::DEFAULT_NUM_WARPS, |a| a.num_warps);
    let mut mmas = Vec::new();
    func.body.walk(func.entry, &mut |o| {
        if func.body.op(o).kind == OpKind::Mma {
            mmas.push(o);
        }
    });
    let mut remarks = Vec::new();
    for id in mmas {
        let Some(mma) = func.body.op(id).view::<typed::Mma>() else { continue };
        if mma.mma_shape.is_some() || want == Some(MmaInstruction::MmaSync) {
            continue;
        }
        let span = func.body.op(id).span;
        let plan = if target.is_arch_specific() {
            wgmma_plan(func, id, warps)
        } else {
            Err(format!("wgmma needs --target sm_90a, and the target is {target}"))
        };
        match (plan, want) {
            (Ok(plan), _) => {
                apply(func, id, &mma, &plan);
                remarks.push(ChoiceRemark {
                    span,
                    message: format!(
                        "tile.mma uses wgmma m64n{}k{} ({}x{} warpgroups, {} m64 tile(s) each; A {}, B {})",
                        plan.n,
                        plan.k,
                        plan.groups.0,
                        plan.groups.1,
                        plan.m_tiles,
                        match &plan.a {
                            None => "from registers",
                            Some(a) if a.mn_major => "MN-major",
                            Some(_) => "K-major",
                        },
                        if plan.b.mn_major { "MN-major" } else { "K-major" }
                    ),
                });
            }
            (Err(why), Some(MmaInstruction::Wgmma)) => {
                return Err(Diagnostic::error(span, format!("mma = \"wgmma\", but this 'tile.mma' cannot use wgmma: {why}")));
            }
            (Err(why), _) if target.is_arch_specific() => {
                remarks.push(ChoiceRemark { span, message: format!("tile.mma uses mma.sync, not wgmma: {why}") });
            }
            (Err(_), _) => {}
        }
    }
    Ok(remarks)
}

/// Records a wgmma choice: the mma's shape and warpgroup grid, the operand tiles' panel layouts.
fn apply(func: &mut Func, id: OpId, mma: &typed::Mma, plan: &WgmmaPlan) {
    for operand in plan.a.iter().chain([&plan.b]) {
        if let Some(Type::Tile(t)) = Some(func.body.ty(operand.shared).clone()) {
            let mut t = t;
            t.layout = Some(operand.layout.clone());
            crate::swizzle::set_tile_type(func, operand.shared, t);
        }
    }
    let op = func.body.op_mut(id);
    op.set_from(typed::Mma { mma_shape: Some(plan.shape()), warp_grid: Some(vec![plan.groups.0, plan.groups.1]), ..mma.clone() });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// D = f16(A·B)·C over 8 warps: the first mma reads A and B from shared memory, the second reads its A,
    /// computed in registers, from registers (the RS form); a K-major B may come through a transpose. The
    /// second mma's register A layout is the first's accumulator layout up to a regrouping of registers
    /// (every register, lane and warp basis the same: no data moves).
    #[test]
    fn register_a_and_transposed_b() {
        let text = "tile.func @f(%A: tile<128x64xf16, global>, %B: tile<64x64xf16, global>, %C: tile<64x128xf16, global>) attributes {num_warps = 8} {
  %c0 = tile.constant 0 : index
  %sa = tile.alloc_shared : tile<128x64xf16, shared>
  %sb = tile.alloc_shared : tile<64x64xf16, shared>
  %sc = tile.alloc_shared : tile<64x128xf16, shared>
  tile.copy_g2s %A[%c0, %c0], %sa
  tile.copy_g2s %B[%c0, %c0], %sb
  tile.copy_g2s %C[%c0, %c0], %sc
  %a = tile.copy_s2r %sa : tile<128x64xf16, reg>
  %bt = tile.copy_s2r %sb : tile<64x64xf16, reg>
  %b = tile.transpose %bt : tile<64x64xf16, reg>
  %z = tile.fill 0.0 : tile<128x64xf32, reg>
  %s = tile.mma %a, %b, %z : tile<128x64xf32, reg>
  %p = tile.cast %s : tile<128x64xf16, reg>
  %c = tile.copy_s2r %sc : tile<64x128xf16, reg>
  %z2 = tile.fill 0.0 : tile<128x128xf32, reg>
  %o = tile.mma %p, %c, %z2 : tile<128x128xf32, reg>
  tile.return
}";
        let module = tilec_ir::parse_module(text).unwrap();
        let func = &module.funcs[0];
        let mut mmas = Vec::new();
        func.body.walk(func.entry, &mut |o| {
            if func.body.op(o).kind == OpKind::Mma {
                mmas.push(o);
            }
        });
        let first = wgmma_plan(func, mmas[0], 8).unwrap();
        let second = wgmma_plan(func, mmas[1], 8).unwrap();
        assert_eq!((first.n, first.groups, first.m_tiles), (64, (2, 1), 1));
        let (a, b) = (first.a.as_ref().unwrap(), &first.b);
        assert!(!a.transposed && !a.mn_major);
        // %b = transpose(%bt), %bt row-major [N, K]: K-major, the descriptor indices exchanged.
        assert!(b.transposed && !b.mn_major);
        assert!(second.a.is_none());
        assert!(second.b.mn_major && !second.b.transposed);
        let acc = crate::layout_assignment::wgmma_accumulator_layout(&first).unwrap();
        let reg_a = crate::layout_assignment::wgmma_a_layout(&second, ScalarType::F16, 64).unwrap();
        assert_eq!(crate::layout_conversion::register_permutation(&acc, &reg_a).unwrap(), vec![0, 1, 2, 3, 4]);
        // %sa rewritten after %a's copy and before the mma: the mma's A is the old contents, which a wgmma
        // reading %sa would not see.
        let rewritten = text.replace("  %z = tile.fill", "  tile.copy_g2s %A[%c0, %c0], %sa\n  %z = tile.fill");
        let module = tilec_ir::parse_module(&rewritten).unwrap();
        let f = &module.funcs[0];
        let mut ids = Vec::new();
        f.body.walk(f.entry, &mut |o| {
            if f.body.op(o).kind == OpKind::Mma {
                ids.push(o);
            }
        });
        let why = wgmma_plan(f, ids[0], 8).unwrap_err();
        assert!(why.contains("A's shared tile is written by 'tile.copy_g2s' after its 'tile.copy_s2r'"), "{why}");
        // f32 P: no wgmma (and the reason says so).
        let f32_text = text.replace("%o = tile.mma %p, %c", "%o = tile.mma %s, %c");
        let module = tilec_ir::parse_module(&f32_text).unwrap();
        let why = wgmma_plan(&module.funcs[0], mmas[1], 8).unwrap_err();
        assert!(why.contains("no 'f32' x 'f16' variant"), "{why}");
    }

    /// The panel layouts: one panel is the plain swizzled storage order; several are `#linear` panels.
    #[test]
    fn panel_layouts() {
        let l = panel_layout(128, 32, 1, SwizzleMode::B64, 2).unwrap();
        assert_eq!(l.to_string(), "#swizzle<2, 3, 3, #row_major>");
        let l = panel_layout(64, 128, 0, SwizzleMode::B64, 1).unwrap();
        assert_eq!(l.to_string(), "#swizzle<2, 4, 3, #col_major>");
        // A 32x128 f16 B (row-major, MN-major): two 64-column panels of 32 rows; (row 1, col 64) is element
        // 32 * 64 + 64 before the 128-byte swizzle (which moves chunk 0 of row 1 to chunk 1: + 8 elements).
        let l = panel_layout(32, 128, 1, SwizzleMode::B128, 2).unwrap();
        assert!(l.to_string().starts_with("#swizzle<3, 3, 3, #linear<"));
        assert_eq!(l.element_offset(&[32, 128], &[1, 64]), Some(32 * 64 + 64 + 8));
        assert_eq!(l.element_offset(&[32, 128], &[0, 63]), Some(63));
    }
}
