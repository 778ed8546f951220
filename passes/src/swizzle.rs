//! `swizzle`: gives every row- or column-major shared tile an XOR swizzle (CuTe's `Swizzle<B, M, S>`,
//! [`tilec_ir::layout::Swizzle`]) so that the warp-level accesses the lowering emits for it — 16-byte
//! `cp.async` writes in storage order and `ldmatrix` reads (normal and `.trans`) of 8 consecutive
//! storage rows at one 16-byte chunk — are free of bank conflicts.
//!
//! # The rule
//! Let a *storage row* be the tile's contiguous axis (the columns of a row-major tile, the rows of a
//! column-major one), `row_bytes` its length in bytes and `E` the element size. With the swizzle on
//! element offsets of the unswizzled layout (`#swizzle<B, M, S, #row_major>`):
//! - `M = log2(16 B / E)`: the 16-byte chunk is the unit moved, so each chunk stays contiguous and
//!   aligned (an `ldmatrix` row address and a 16-byte `cp.async` need that);
//! - `B = log2(min(row_bytes, 128) / 16)`: a 128-byte wavefront holds 8 chunks; a row of
//!   `row_bytes <= 128` already spreads over `row_bytes / 16` of them, so `B` bits of chunk index are free
//!   to permute;
//! - `S = log2(max(row_bytes, 128) / 16)`: the XOR source is the `B` address bits just above the 128-byte
//!   line (`M + S = log2(128 B / E)` for rows up to 128 bytes), i.e. the storage-row bits that do *not*
//!   already move the row to another part of the line. For rows wider than 128 bytes they are the
//!   lowest row bits.
//!
//! So 8 consecutive storage rows at one chunk (an `ldmatrix` phase) land on 8 different 16-byte bank
//! groups, and 8 consecutive chunks of one row (a 16-byte `cp.async` phase) are only permuted. Examples
//! for f16: 32-wide rows (64 B) → `Swizzle<2, 3, 3>`; 64-wide (128 B) → `Swizzle<3, 3, 3>`; 128-wide
//! (256 B) → `Swizzle<3, 3, 4>`; for 8-bit elements `M = 4` (`Swizzle<2, 4, 3>` for 64-byte rows).
//!
//! Tiles left alone, with a remark: rows of 16 bytes (already conflict-free), rows narrower than 16 bytes
//! or of a length that is not a power of two, tiles that are not static rank-2, tiles whose element
//! count is not a multiple of the swizzle's period `2^(B+M+S)`, and tiles that already have another
//! layout (a swizzle, `#linear`, ...), among them the operands of a `tile.mma` that becomes a wgmma on the
//! target (the pass makes that choice first, as layout assignment does: wgmma's panel layouts carry the
//! descriptor's swizzle mode).
//!
//! # Checking the choice
//! The pass checks each choice in two ways and reports both in a remark and in a [`SwizzleReport`]
//! (stored in the [`PassContext`]):
//! - against a *model* of the accesses ([`modeled_cost`]): every 16-byte chunk written by `cp.async` in
//!   storage order over all threads, and every 8-row `ldmatrix` phase;
//! - by lowering a copy of the function (`lower-tile-to-nvgpu`, which runs layout assignment itself) and
//!   counting the wavefronts of the accesses to the tile with [`analyze_bank_conflicts`], after, and
//!   before: the same lowered accesses with the tile retyped to its original layout (the analysis takes
//!   addresses from the tile types, so the copy is lowered once, not twice). If the lowered accesses still conflict, the pass tries the other swizzles that keep 16-byte
//!   chunks whole and keeps the one with the fewest wavefronts (the rule's choice on ties). If the copy
//!   cannot be lowered (the function is already at the nvgpu level, or uses ops the lowering does not
//!   handle), the model is the check.

use tilec_ir::layout::{Layout, Swizzle};
use tilec_ir::{typed, Diagnostic, Func, MemorySpace, Module, OpKind, Span, TileType, Type, Value};

use crate::bank_conflicts::{
    analyze_bank_conflicts, element_offset, AccessCost, BankConflictOptions, WarpAccess, WARP_LANES,
};
use crate::context::PassContext;
use crate::layout_assignment::num_warps;
use crate::pass::Pass;

/// The `swizzle` pass (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct SwizzlePass;

impl Pass for SwizzlePass {
    fn name(&self) -> &'static str {
        "swizzle"
    }

    fn description(&self) -> &'static str {
        "XOR-swizzle row/column-major shared tiles so cp.async writes and ldmatrix reads are free of bank conflicts"
    }

    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<(), Diagnostic> {
        swizzle_module(module, cx);
        Ok(())
    }
}

/// What the pass decided for one shared tile.
#[derive(Clone, Debug, PartialEq)]
pub struct TileSwizzle {
    pub func: String,
    /// The `tile.alloc_shared` result.
    pub tile: Value,
    /// `%name` of the tile.
    pub name: String,
    pub span: Span,
    /// The type before the pass.
    pub original: TileType,
    /// The new layout, or `None` when the tile was left alone.
    pub layout: Option<Layout>,
    /// Why (the rule, or why the tile was left alone).
    pub reason: String,
    /// Modeled `cp.async` + `ldmatrix` cost before and after.
    pub modeled_before: AccessCost,
    pub modeled_after: AccessCost,
    /// Cost of the lowered accesses to this tile before and after, when the function could be lowered.
    pub lowered_before: Option<AccessCost>,
    pub lowered_after: Option<AccessCost>,
}

/// Every decision of the `swizzle` pass in one pipeline run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwizzleReport {
    pub tiles: Vec<TileSwizzle>,
}

/// The swizzle the rule gives rows of `row_bytes` bytes of `elem_bits`-bit elements, or why none.
///
/// `Ok(None)`: 16-byte rows need none (8 consecutive rows fill one 128-byte line).
pub fn swizzle_for_rows(row_bytes: u64, elem_bits: u32) -> Result<Option<Swizzle>, String> {
    if elem_bits == 0 || 128 % elem_bits != 0 {
        return Err(format!("{elem_bits}-bit elements do not tile 16-byte chunks"));
    }
    if row_bytes < 16 {
        return Err(format!("rows of {row_bytes} bytes are narrower than a 16-byte chunk"));
    }
    if !row_bytes.is_power_of_two() {
        return Err(format!("rows of {row_bytes} bytes are not a power of two"));
    }
    if row_bytes == 16 {
        return Ok(None);
    }
    let log2 = |x: u64| x.trailing_zeros();
    let bits = log2(row_bytes.min(128) / 16);
    let base = log2(128 / u64::from(elem_bits));
    let shift = log2(row_bytes.max(128) / 16);
    Swizzle::new(bits, base, shift).map(Some).map_err(|e| e.to_string())
}

/// The storage geometry of a shared tile: (storage rows, storage row length in elements, column-major?).
fn storage(ty: &TileType) -> Option<(u64, u64, bool)> {
    let [r, c] = <[u64; 2]>::try_from(ty.static_shape()?).ok()?;
    match &ty.layout {
        None | Some(Layout::RowMajor) => Some((r, c, false)),
        Some(Layout::ColMajor) => Some((c, r, true)),
        Some(Layout::Swizzled { base, .. }) => match **base {
            Layout::RowMajor => Some((r, c, false)),
            Layout::ColMajor => Some((c, r, true)),
            _ => None,
        },
        _ => None,
    }
}

/// The result of [`choose_swizzle`].
#[derive(Clone, Debug, PartialEq)]
pub enum SwizzleChoice {
    /// Swizzle the tile to this layout.
    Swizzle(Layout),
    /// Leave the tile alone, with the reason.
    Leave(String),
}

/// Applies the rule ([`swizzle_for_rows`]) to a shared tile type.
pub fn choose_swizzle(ty: &TileType) -> SwizzleChoice {
    if ty.space != MemorySpace::Shared {
        return SwizzleChoice::Leave("not a shared tile".into());
    }
    let base = match &ty.layout {
        None | Some(Layout::RowMajor) => Layout::RowMajor,
        Some(Layout::ColMajor) => Layout::ColMajor,
        Some(other) => return SwizzleChoice::Leave(format!("it already has the layout {other}")),
    };
    let Some((rows, row_len, _)) = storage(ty) else {
        return SwizzleChoice::Leave("only static rank-2 tiles are swizzled".into());
    };
    let bits = ty.elem.bit_width();
    let row_bytes = row_len * u64::from(bits) / 8;
    match swizzle_for_rows(row_bytes, bits) {
        Err(why) => SwizzleChoice::Leave(why),
        Ok(None) => SwizzleChoice::Leave("rows of 16 bytes are conflict-free without a swizzle".into()),
        Ok(Some(s)) => {
            let period = 1u64 << s.offset_bits();
            if (rows * row_len) % period != 0 {
                return SwizzleChoice::Leave(format!(
                    "{s} permutes blocks of {period} elements and the tile has {} elements",
                    rows * row_len
                ));
            }
            SwizzleChoice::Swizzle(Layout::Swizzled { swizzle: s, base: Box::new(base) })
        }
    }
}

/// Modeled cost of the accesses the lowering makes to a shared tile of this type (with its layout), over
/// `num_warps` warps: `(cp.async writes, ldmatrix reads)`.
///
/// - `cp.async`: 16-byte chunks in storage order, chunk `tid + i * threads` for every thread and `i`
///   (as `lower-tile-to-nvgpu` distributes them); chunks past the end wrap around.
/// - `ldmatrix` (normal or `.trans`: the same addresses): every phase of 8 consecutive storage rows
///   `8q..8q+7` at one 16-byte chunk.
pub fn modeled_cost(ty: &TileType, num_warps: u32) -> (AccessCost, AccessCost) {
    let (mut copies, mut reads) = (AccessCost::default(), AccessCost::default());
    let Some((rows, row_len, col_major)) = storage(ty) else { return (copies, reads) };
    let bits = u64::from(ty.elem.bit_width());
    if bits == 0 || 128 % bits != 0 || row_len * bits < 128 {
        return (copies, reads);
    }
    let chunk = 128 / bits;
    let address = |sr: u64, sc: u64| {
        let index = if col_major { [sc as i64, sr as i64] } else { [sr as i64, sc as i64] };
        element_offset(ty, &index).map(|o| o * bits / 8)
    };
    let add = |acc: &mut AccessCost, c: AccessCost| {
        acc.phases += c.phases;
        acc.min_wavefronts += c.min_wavefronts;
        acc.wavefronts += c.wavefronts;
    };
    let per_row = row_len / chunk;
    let total = rows * per_row;
    let threads = 32 * u64::from(num_warps.max(1));
    for warp in 0..u64::from(num_warps.max(1)) {
        for i in 0..total.div_ceil(threads) {
            let addresses: [Option<u64>; WARP_LANES] = std::array::from_fn(|l| {
                let c = (warp * 32 + l as u64 + i * threads) % total;
                address(c / per_row, (c % per_row) * chunk)
            });
            add(&mut copies, WarpAccess::new(addresses, 16).cost());
        }
    }
    for r0 in (0..rows.saturating_sub(7)).step_by(8) {
        for j in 0..per_row {
            let addresses: [Option<u64>; WARP_LANES] =
                std::array::from_fn(|l| if l < 8 { address(r0 + l as u64, j * chunk) } else { None });
            add(&mut reads, WarpAccess::matrices(addresses, 1).cost());
        }
    }
    (copies, reads)
}

fn sum(a: AccessCost, b: AccessCost) -> AccessCost {
    AccessCost {
        phases: a.phases + b.phases,
        min_wavefronts: a.min_wavefronts + b.min_wavefronts,
        wavefronts: a.wavefronts + b.wavefronts,
    }
}

/// Sets the type of a shared tile value and of the loop arguments and results that carry it.
pub fn set_tile_type(func: &mut Func, tile: Value, ty: TileType) {
    let mut carried = vec![tile];
    let mut fors = Vec::new();
    func.body.walk(func.entry, &mut |op| {
        if func.body.op(op).kind == OpKind::For {
            fors.push(op);
        }
    });
    for op in fors {
        let o = func.body.op(op);
        let (Some(&region), Some(lp)) = (o.regions.first(), o.view::<typed::For>()) else { continue };
        let args = func.body.block(region).args.clone();
        for (i, init) in lp.inits.iter().enumerate() {
            if carried.contains(init) {
                carried.extend(args.get(i + 1).copied());
                carried.extend(o.results.get(i).copied());
            }
        }
    }
    for v in carried {
        func.body.values[v.index()].ty = Type::Tile(ty.clone());
    }
}

/// Lowers a copy of `func` and returns the wavefronts of the accesses to each of `tiles`.
fn lowered_costs(func: &Func, tiles: &[Value]) -> Option<Vec<AccessCost>> {
    lowered_copy(func).map(|copy| costs_of(&copy, tiles))
}

/// A copy of `func` lowered to nvgpu-level IR, if the lowering takes it.
fn lowered_copy(func: &Func) -> Option<Func> {
    let mut copy = func.clone();
    crate::lower::lower_func(&mut copy).ok()?;
    Some(copy)
}

/// The wavefronts of the accesses of a lowered function to each of `tiles`.
fn costs_of(lowered: &Func, tiles: &[Value]) -> Vec<AccessCost> {
    let report = analyze_bank_conflicts(lowered, &BankConflictOptions::default());
    tiles.iter().map(|&t| report.total_for_tile(t)).collect()
}

/// The swizzles that keep the 16-byte chunks of this tile whole, for the search when the rule's choice
/// still conflicts after lowering.
fn alternatives(ty: &TileType, base: &Layout) -> Vec<Layout> {
    let Some((rows, row_len, _)) = storage(ty) else { return Vec::new() };
    let bits = ty.elem.bit_width();
    if bits == 0 || 128 % bits != 0 {
        return Vec::new();
    }
    let m = (128 / bits).trailing_zeros();
    let size_bits = (rows * row_len).trailing_zeros();
    let mut out = Vec::new();
    for b in 1..=3u32 {
        for s in b..=8u32 {
            if b + m + s <= size_bits {
                if let Ok(swizzle) = Swizzle::new(b, m, s) {
                    out.push(Layout::Swizzled { swizzle, base: Box::new(base.clone()) });
                }
            }
        }
    }
    out
}

/// The widest per-thread `nvgpu.load`/`nvgpu.store` of `tile` in bytes, if the function has any (tile-level
/// functions have none: the lowering emits at most 16-byte accesses, which every swizzle here keeps whole).
fn widest_vector_access(func: &Func, tile: Value) -> Option<u64> {
    let mut widest = None;
    func.body.walk(func.entry, &mut |id| {
        let op = func.body.op(id);
        let (memory, value) = match typed::AnyOp::from_op(op) {
            Some(typed::AnyOp::Load(load)) => (load.src, op.result()),
            Some(typed::AnyOp::Store(store)) => (store.dst, Some(store.value)),
            _ => return,
        };
        if memory != tile {
            return;
        }
        if let Some(ty) = value.map(|v| func.body.ty(v)) {
            let bytes = match ty {
                Type::Vector(v) => v.num_elements() * u64::from(v.elem.bit_width()) / 8,
                other => u64::from(other.element_type().bit_width()).div_ceil(8),
            };
            widest = Some(widest.map_or(bytes, |w: u64| w.max(bytes)));
        }
    });
    widest
}

/// Runs the pass on one function; returns the decisions (remarks go to `cx`).
pub fn swizzle_func(func: &mut Func, cx: &mut PassContext) -> Vec<TileSwizzle> {
    // The operands of a wgmma get wgmma's own panel layouts (their swizzle is the descriptor's mode): decide
    // wgmma or mma.sync for the target first (as layout assignment would, and idempotently), so that those
    // tiles already have a layout and are left alone here. A choice that fails (`mma = "wgmma"` where it is
    // illegal) is reported by layout assignment, at the mma.
    let _ = crate::wgmma::choose_instructions(func, cx.target);
    let warps = num_warps(func);
    let mut tiles = Vec::new();
    func.body.walk(func.entry, &mut |op| {
        let o = func.body.op(op);
        if o.kind == OpKind::AllocShared {
            if let Some(r) = o.result() {
                if let Type::Tile(t) = func.body.ty(r) {
                    tiles.push((r, o.span, t.clone()));
                }
            }
        }
    });
    if tiles.is_empty() {
        return Vec::new();
    }
    let values: Vec<Value> = tiles.iter().map(|t| t.0).collect();
    let mut decisions = Vec::new();
    for (value, span, ty) in &tiles {
        let name = func.body.value(*value).name.clone().map_or_else(|| format!("%<{}>", value.0), |n| format!("%{n}"));
        let modeled_before = {
            let (c, r) = modeled_cost(ty, warps);
            sum(c, r)
        };
        let widest = widest_vector_access(func, *value);
        let choice = match widest {
            // A swizzle keeps 16-byte chunks whole; a wider per-thread access would be split.
            Some(bytes) if bytes > 16 => {
                SwizzleChoice::Leave(format!("it is accessed {bytes} bytes at a time, wider than the 16-byte chunks a swizzle keeps whole"))
            }
            _ => choose_swizzle(ty),
        };
        let (layout, reason) = match choice {
            SwizzleChoice::Leave(why) => (None, why),
            SwizzleChoice::Swizzle(l) => {
                let row_bytes = storage(ty).map_or(0, |s| s.1 * u64::from(ty.elem.bit_width()) / 8);
                (Some(l), format!("{row_bytes}-byte storage rows"))
            }
        };
        if let Some(l) = &layout {
            set_tile_type(func, *value, ty.clone().with_layout(l.clone()));
        }
        decisions.push(TileSwizzle {
            func: func.name.clone(),
            tile: *value,
            name,
            span: *span,
            original: ty.clone(),
            layout,
            reason,
            modeled_before,
            modeled_after: modeled_before,
            lowered_before: None,
            lowered_after: None,
        });
    }
    // Check by lowering; search where the rule's choice still conflicts.
    if let Some(mut lowered) = lowered_copy(func) {
        let after = costs_of(&lowered, &values);
        // The costs before: the same lowered accesses on the tiles' original layouts (the lowering's
        // instructions and indices do not depend on a swizzle that keeps 16-byte chunks whole; only the
        // addresses do, and the analysis computes them from the tile types), without lowering again.
        for (value, _, ty) in &tiles {
            set_tile_type(&mut lowered, *value, ty.clone());
        }
        for (d, c) in decisions.iter_mut().zip(costs_of(&lowered, &values)) {
            d.lowered_before = Some(c);
        }
        // Whether the search moved a tile off the rule's layout (then the accesses are lowered once more).
        let mut searched_away = false;
        for (i, d) in decisions.iter_mut().enumerate() {
            let Some(rule) = d.layout.clone() else { continue };
            if after[i].is_conflict_free() {
                continue;
            }
            let base = match &rule {
                Layout::Swizzled { base, .. } => (**base).clone(),
                other => other.clone(),
            };
            let mut best = (after[i].wavefronts, rule.clone());
            for cand in alternatives(&d.original, &base) {
                set_tile_type(func, d.tile, d.original.clone().with_layout(cand.clone()));
                if let Some(c) = lowered_costs(func, &[d.tile]) {
                    if c[0].wavefronts < best.0 {
                        best = (c[0].wavefronts, cand);
                    }
                }
            }
            if best.1 != rule {
                d.reason = format!("{}; the rule's {rule} left conflicts in the lowered accesses, the search found fewer", d.reason);
                searched_away = true;
            }
            set_tile_type(func, d.tile, d.original.clone().with_layout(best.1.clone()));
            d.layout = Some(best.1);
        }
        // Every tile back on the layout `after` was measured with: its costs stand (one lowering fewer).
        let final_costs = if searched_away { lowered_costs(func, &values) } else { Some(after) };
        if let Some(after) = final_costs {
            for (d, c) in decisions.iter_mut().zip(after) {
                d.lowered_after = Some(c);
            }
        }
    }
    for d in &mut decisions {
        let ty = match &d.layout {
            Some(l) => d.original.clone().with_layout(l.clone()),
            None => d.original.clone(),
        };
        let (c, r) = modeled_cost(&ty, warps);
        d.modeled_after = sum(c, r);
        let cost = |c: AccessCost| format!("{} wavefronts (minimum {})", c.wavefronts, c.min_wavefronts);
        let check = match (d.lowered_before, d.lowered_after) {
            (Some(b), Some(a)) => format!("lowered accesses: {} -> {}", cost(b), cost(a)),
            _ => format!("modeled cp.async + ldmatrix: {} -> {}", cost(d.modeled_before), cost(d.modeled_after)),
        };
        let message = match &d.layout {
            Some(l) => format!("{} '{}' gets {l} ({}); {check}", d.name, d.original, d.reason),
            None => format!("{} '{}' left alone: {}", d.name, d.original, d.reason),
        };
        cx.remark(d.span, message);
    }
    decisions
}

/// Runs the pass on every function and stores a [`SwizzleReport`] in `cx` (appending to one there).
pub fn swizzle_module(module: &mut Module, cx: &mut PassContext) {
    let mut all = Vec::new();
    for func in &mut module.funcs {
        all.extend(swizzle_func(func, cx));
    }
    cx.report_or_default::<SwizzleReport>().tiles.extend(all);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_ir::ScalarType;

    fn tile(shape: [u64; 2], elem: ScalarType, layout: Option<Layout>) -> TileType {
        let t = TileType::new(&shape, elem, MemorySpace::Shared);
        match layout {
            Some(l) => t.with_layout(l),
            None => t,
        }
    }

    #[test]
    fn the_rule() {
        let s = |bytes, bits| swizzle_for_rows(bytes, bits).unwrap().map(|s| (s.bits, s.base, s.shift));
        assert_eq!(s(16, 16), None);
        assert_eq!(s(32, 16), Some((1, 3, 3)));
        assert_eq!(s(64, 16), Some((2, 3, 3)));
        assert_eq!(s(128, 16), Some((3, 3, 3)));
        assert_eq!(s(256, 16), Some((3, 3, 4)));
        assert_eq!(s(64, 8), Some((2, 4, 3)));
        assert_eq!(s(128, 8), Some((3, 4, 3)));
        assert_eq!(s(128, 32), Some((3, 2, 3)));
        assert!(swizzle_for_rows(8, 16).is_err());
        assert!(swizzle_for_rows(96, 16).is_err());
    }

    #[test]
    fn choices() {
        let t = tile([128, 32], ScalarType::F16, None);
        assert_eq!(choose_swizzle(&t), SwizzleChoice::Swizzle(Layout::parse("#swizzle<2, 3, 3, #row_major>").unwrap()));
        let t = tile([128, 32], ScalarType::F16, Some(Layout::ColMajor));
        assert_eq!(choose_swizzle(&t), SwizzleChoice::Swizzle(Layout::parse("#swizzle<3, 3, 4, #col_major>").unwrap()));
        assert!(matches!(choose_swizzle(&tile([16, 8], ScalarType::F16, None)), SwizzleChoice::Leave(_)));
        assert!(matches!(choose_swizzle(&tile([16, 4], ScalarType::F16, None)), SwizzleChoice::Leave(_)));
        assert!(matches!(choose_swizzle(&tile([16, 48], ScalarType::F16, None)), SwizzleChoice::Leave(_)));
        // 2 rows of 64 bytes: the period of Swizzle<2, 3, 3> is 256 elements, the tile has 64.
        assert!(matches!(choose_swizzle(&tile([2, 32], ScalarType::F16, None)), SwizzleChoice::Leave(_)));
        let swizzled = Layout::parse("#swizzle<2, 3, 3, #row_major>").unwrap();
        assert!(matches!(choose_swizzle(&tile([128, 32], ScalarType::F16, Some(swizzled))), SwizzleChoice::Leave(_)));
    }

    #[test]
    fn modeled_costs() {
        // 128x32 f16, 4 warps: 512 chunks = 4 cp.async per warp (16 phases, conflict-free); 16 row groups x
        // 4 chunks = 64 ldmatrix phases, 4-way without a swizzle.
        let t = tile([128, 32], ScalarType::F16, None);
        let (c, r) = modeled_cost(&t, 4);
        assert_eq!((c.min_wavefronts, c.wavefronts), (64, 64));
        assert_eq!((r.min_wavefronts, r.wavefronts), (64, 256));
        let SwizzleChoice::Swizzle(l) = choose_swizzle(&t) else { panic!() };
        let (c, r) = modeled_cost(&t.with_layout(l), 4);
        assert!(c.is_conflict_free() && r.is_conflict_free(), "{c:?} {r:?}");
    }
}
