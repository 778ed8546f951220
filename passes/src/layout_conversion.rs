//! Layout conversions: `tile.convert_layout`, inserted where layout assignment meets two requirements on
//! one class of register tiles, and decided per op: in registers or through shared memory.
//!
//! **Insertion** ([`insert_conversions`]). Layout assignment ties values into classes that must share a
//! layout (an mma's accumulator and result, a cast's source and result, ...). When a `tile.mma` needs its
//! operand in a layout other than the one its class already has, the class is split: a
//! `tile.convert_layout` of the operand is placed just before the mma, and the mma reads the converted
//! value, whose class then takes the mma's layout. A `tile.transpose` whose result is required in a layout
//! that is not the transpose of its source's gets a conversion of its source the same way. A thin tile (`1xN`,
//! `Mx1`) takes the slice of the layout of the tile it is reduced from or broadcast to
//! ([`crate::slice_layout`]); when two such edges give one class of thin tiles different slices (a row vector
//! broadcast against two tiles of different layouts), the second edge gets the conversion: of its source
//! before a `tile.broadcast`, of its result after a `tile.reduce`. Repeats until no conflict is left.
//!
//! **Kind** ([`register_permutation`]). Both layouts are linear maps from (`register`, `lane`, `warp`) to
//! (`row`, `col`). When the lane and warp bases of source and destination agree and the register bases are
//! a permutation of each other, every thread already holds exactly the elements it needs, only in other
//! registers: the conversion is a renaming (and regrouping into fragments) of registers, no data moves
//! between threads. The key case is the m16n8k16 f32 accumulator, cast to f16, used as the A operand of the
//! next mma: the C fragments of two adjacent n8 tiles hold exactly the A fragment of one k16 tile
//! (FlashAttention-2 keeps P in registers this way) when both mmas split the rows over the same warps.
//! Otherwise ([`expand_through_shared`]) the conversion becomes a shared scratch tile (allocated at the top
//! of the function, so the swizzle pass gives it a swizzle like any other tile), a `tile.copy_r2s` of the
//! source (stmatrix on sm_90, st.shared otherwise), and a `tile.copy_s2r` in the destination's layout
//! (ldmatrix); the lowering places the barriers between them (read after write, and write after read when
//! the conversion runs again in a loop).
//!
//! Each conversion gets a remark stating its kind and cost.

use tilec_ir::layout::LinearLayout;
use tilec_ir::{typed, Diagnostic, Func, MemorySpace, OpId, Span, Target, TileType, Type, TypedOp, Value};

use crate::layout_assignment::{solve_layouts_or_conflict, LayoutConflict, Role};
use crate::lower::{CopyInstr, CopyPlan, DistributedBases};

/// How many conflicts a function may resolve (each adds one conversion; a bound against a loop).
const MAX_CONVERSIONS: usize = 256;

/// Splits every class of register tiles that two ops require in different layouts by a
/// `tile.convert_layout` before the second op (see the [module documentation](self)).
pub fn insert_conversions(func: &mut Func) -> Result<usize, Diagnostic> {
    let mut inserted = 0;
    loop {
        let conflict = match solve_layouts_or_conflict(func)? {
            Ok(_) => return Ok(inserted),
            Err(conflict) => conflict,
        };
        if inserted >= MAX_CONVERSIONS {
            return Err(conflict_error(func, &conflict));
        }
        let LayoutConflict { op, operand, role, .. } = conflict;
        let span = func.body.op(op).span;
        match typed::AnyOp::from_op(func.body.op(op)) {
            Some(typed::AnyOp::Broadcast(bc)) => {
                let converted = convert_before(func, op, bc.source).ok_or_else(|| conflict_error(func, &conflict))?;
                func.body.op_mut(op).set_from(typed::Broadcast { source: converted });
                inserted += 1;
                continue;
            }
            Some(typed::AnyOp::Reduce(_)) => {
                convert_after(func, op, operand).ok_or_else(|| conflict_error(func, &conflict))?;
                inserted += 1;
                continue;
            }
            Some(typed::AnyOp::Transpose(t)) => {
                // A transpose whose two sides are required in layouts that are not each other's transpose:
                // convert its source.
                let converted = convert_before(func, op, t.source).ok_or_else(|| conflict_error(func, &conflict))?;
                func.body.op_mut(op).set_from(typed::Transpose { source: converted });
                inserted += 1;
                continue;
            }
            _ => {}
        }
        let Some(mma) = func.body.op(op).view::<typed::Mma>() else { return Err(conflict_error(func, &conflict)) };
        let Some(mut ty) = func.body.ty(operand).as_tile().cloned() else { return Err(conflict_error(func, &conflict)) };
        ty.layout = None;
        let spec = typed::ConvertLayout { source: operand }.into_spec().result(Type::Tile(ty)).span(span);
        let id = func.body.create_op(spec);
        func.body.insert_before(op, id);
        let Some(converted) = func.body.op(id).result() else { return Err(conflict_error(func, &conflict)) };
        // Only the operand in the conflicting role: `tile.mma %x, %x, ...` needs %x in two layouts.
        let view = match role {
            Role::A => typed::Mma { a: converted, ..mma },
            Role::B => typed::Mma { b: converted, ..mma },
            Role::C => typed::Mma { c: converted, ..mma },
            Role::Free => return Err(conflict_error(func, &conflict)),
        };
        func.body.op_mut(op).set_from(view);
        inserted += 1;
    }
}

fn conflict_error(func: &Func, c: &LayoutConflict) -> Diagnostic {
    Diagnostic::error(func.body.op(c.op).span, c.describe(func)).with_note_at(func.body.op(c.other).span, "the other requirement comes from here")
}

/// `%c = tile.convert_layout %v` placed just before `op` (the register tile type without its layout); `%c`.
fn convert_before(func: &mut Func, op: OpId, v: Value) -> Option<Value> {
    let mut ty = func.body.ty(v).as_tile().cloned()?;
    ty.layout = None;
    let span = func.body.op(op).span;
    let id = func.body.create_op(typed::ConvertLayout { source: v }.into_spec().result(Type::Tile(ty)).span(span));
    func.body.insert_before(op, id);
    func.body.op(id).result()
}

/// `%c = tile.convert_layout %r` placed just after `op` (a reduce whose result is `r`), every later use of `%r`
/// reading `%c`: the reduce's result keeps the slice of its source's layout, its users the one their class needs.
fn convert_after(func: &mut Func, op: OpId, r: Value) -> Option<()> {
    let mut ty = func.body.ty(r).as_tile().cloned()?;
    ty.layout = None;
    let span = func.body.op(op).span;
    let id = func.body.create_op(typed::ConvertLayout { source: r }.into_spec().result(Type::Tile(ty)).span(span));
    let converted = func.body.op(id).result()?;
    // Not placed yet, so its own operand stays `r`.
    func.body.replace_all_uses(r, converted);
    let block = func.body.op(op).parent?;
    let ops = &mut func.body.block_mut(block).ops;
    let at = ops.iter().position(|&o| o == op)? + 1;
    ops.insert(at, id);
    func.body.op_mut(id).parent = Some(block);
    Some(())
}

/// For a register-only conversion from `src` to `dst`: `perm[b]` is the source register bit that
/// destination register bit `b` is; `None` when the lane or warp bases differ, or the register bases are
/// not a permutation of each other (then the conversion goes through shared memory). The reason, too.
pub fn register_permutation(src: &LinearLayout, dst: &LinearLayout) -> Result<Vec<usize>, String> {
    let (s, d) = (DistributedBases::of(src), DistributedBases::of(dst));
    if s.lane != d.lane {
        return Err(format!("the lanes hold different elements (lane bases {:?} against {:?})", s.lane, d.lane));
    }
    if s.warp != d.warp {
        return Err(format!("the warps hold different elements (warp bases {:?} against {:?})", s.warp, d.warp));
    }
    if s.register.len() != d.register.len() {
        return Err(format!("{} register values per thread against {}", 1u32 << s.register.len(), 1u32 << d.register.len()));
    }
    let mut used = vec![false; s.register.len()];
    let mut perm = Vec::with_capacity(d.register.len());
    for &b in &d.register {
        let Some(i) = (0..s.register.len()).find(|&i| !used[i] && s.register[i] == b) else {
            return Err(format!("register basis {b:?} of the destination is no register basis of the source"));
        };
        used[i] = true;
        perm.push(i);
    }
    Ok(perm)
}

/// The source register that holds destination register `r` under a [`register_permutation`].
pub fn permuted_register(perm: &[usize], r: u32) -> u32 {
    perm.iter().enumerate().filter(|(b, _)| r >> b & 1 == 1).fold(0, |acc, (_, &s)| acc | 1 << s)
}

/// The layout a register tile value has (after layout assignment).
fn layout_of(func: &Func, v: Value) -> Option<LinearLayout> {
    let t = func.body.ty(v).as_tile()?;
    let [rows, cols] = t.static_shape()?.try_into().ok()?;
    t.layout.as_ref()?.to_linear(rows as u32, cols as u32).ok()
}

/// One decided conversion, for its remark.
#[derive(Clone, Debug)]
pub struct ConversionRemark {
    pub span: Span,
    pub message: String,
}

/// Expands every `tile.convert_layout` whose layouts (already assigned) are not a register permutation
/// into a shared scratch tile, a store and a load; states each conversion's kind and cost. Returns whether
/// anything was expanded (layout assignment then runs again for the new values).
pub fn expand_through_shared(func: &mut Func, target: Target) -> Result<(bool, Vec<ConversionRemark>), Diagnostic> {
    let mut ops = Vec::new();
    func.body.walk(func.entry, &mut |op| ops.push(op));
    let mut remarks = Vec::new();
    let mut expanded = false;
    for id in ops {
        let op = func.body.op(id);
        let (Some(conv), Some(result)) = (op.view::<typed::ConvertLayout>(), op.result()) else { continue };
        let span = op.span;
        let (Some(src), Some(dst), Some(tile)) = (layout_of(func, conv.source), layout_of(func, result), func.body.ty(result).as_tile().cloned()) else {
            return Err(Diagnostic::error(span, "'tile.convert_layout' of a register tile without an assigned layout"));
        };
        let what = describe(func, conv.source, &tile);
        match register_permutation(&src, &dst) {
            Ok(perm) => {
                let registers = 1u32 << perm.len();
                let identity = perm.iter().enumerate().all(|(b, &s)| b == s);
                let how = if identity { "the same registers".to_string() } else { format!("register bits permuted {perm:?}") };
                remarks.push(ConversionRemark {
                    span,
                    message: format!(
                        "layout conversion of {what} in registers: lane and warp bases agree, {how}; {registers} values per thread regrouped into the destination's fragments, 0 bytes through shared memory, no shuffles"
                    ),
                });
            }
            Err(why) => {
                let cost = shared_cost(&tile, &src, &dst, target);
                expand_one(func, id, conv.source, result, &tile);
                expanded = true;
                remarks.push(ConversionRemark {
                    span,
                    message: format!("layout conversion of {what} through shared memory ({why}): {cost}"),
                });
            }
        }
    }
    Ok((expanded, remarks))
}

fn describe(func: &Func, v: Value, t: &TileType) -> String {
    let shape = t.static_shape().unwrap_or_default().iter().map(u64::to_string).collect::<Vec<_>>().join("x");
    match &func.body.value(v).name {
        Some(name) => format!("%{name} ({shape}x{})", t.elem),
        None => format!("a {shape}x{} tile", t.elem),
    }
}

/// `%s = tile.alloc_shared` at the top of the function, `tile.copy_r2s %x, %s`, `%y = tile.copy_s2r %s`.
fn expand_one(func: &mut Func, id: OpId, source: Value, result: Value, tile: &TileType) {
    let span = func.body.op(id).span;
    let scratch_ty = TileType { space: MemorySpace::Shared, layout: None, ..tile.clone() };
    let alloc = func.body.create_op(typed::AllocShared {}.into_spec().result(Type::Tile(scratch_ty)).span(span));
    let entry = func.entry;
    func.body.block_mut(entry).ops.insert(0, alloc);
    func.body.op_mut(alloc).parent = Some(entry);
    let Some(scratch) = func.body.op(alloc).result() else { return };
    func.body.values[scratch.index()].name = Some("convert_scratch".into());
    let store = func.body.create_op(typed::CopyR2S { value: source, dst: scratch, dst_indices: vec![] }.into_spec().span(span));
    func.body.insert_before(id, store);
    let load_ty = TileType { layout: None, ..tile.clone() };
    let load = func.body.create_op(typed::CopyS2R { src: scratch, src_indices: vec![] }.into_spec().result(Type::Tile(load_ty)).span(span));
    func.body.insert_before(id, load);
    if let Some(loaded) = func.body.op(load).result() {
        func.body.replace_all_uses(result, loaded);
    }
    func.body.erase(id);
}

/// The cost of a conversion through shared memory, from the copy plans of its store and load (on the
/// unswizzled scratch tile; the swizzle pass changes addresses, not instruction counts).
fn shared_cost(tile: &TileType, src: &LinearLayout, dst: &LinearLayout, target: Target) -> String {
    let scratch = TileType { space: MemorySpace::Shared, layout: None, ..tile.clone() };
    let bytes = tile.static_shape().unwrap_or_default().iter().product::<u64>() * u64::from(tile.elem.bit_width()) / 8;
    let Ok(source) = crate::lower::shared_source(&scratch) else { return format!("{bytes} bytes stored and loaded back, 2 barriers") };
    let store = match CopyPlan::for_fragments(source.clone(), src, None) {
        Ok(p) if matches!(p.instr, CopyInstr::LdMatrix { .. }) && target.has_stmatrix() && tile.elem.bit_width() == 16 => Some(p),
        _ => CopyPlan::per_thread(source.clone(), src).ok(),
    };
    // A thin destination (1xN, Mx1) is loaded one element per register value (`lower::reduce`'s thin copy_s2r).
    let thin = tile.static_shape().unwrap_or_default().contains(&1);
    let load = if thin { None } else { CopyPlan::for_fragments(source, dst, None).ok() };
    let show = |p: Option<CopyPlan>, stores: bool| match p {
        Some(p) => {
            let instr = match (p.instr, stores) {
                (CopyInstr::LdMatrix { num, trans }, true) => format!("stmatrix.x{num}{}", if trans { ".trans" } else { "" }),
                (CopyInstr::Load { width }, true) => format!("st.shared of {width} element(s)"),
                (i, false) => i.to_string(),
            };
            format!("{} {instr}", p.instruction_count())
        }
        None => "per-element accesses".into(),
    };
    let load = if thin { format!("{} scalar load(s) per thread", dst.in_dim_size("register").unwrap_or(1)) } else { show(load, false) };
    format!(
        "{bytes} bytes stored and loaded back through a shared scratch tile; per warp {} then {load}, a barrier between (and one before the store when it runs again)",
        show(store, true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_assignment::assign_mma_with;
    use tilec_ir::ScalarType::{F16, F32};

    /// PTX ISA, m16n8k16: C holds c0,c1 at (g, 2t..2t+1) and c2,c3 at (g+8, ..); A holds a0,a1 at (g, 2t..),
    /// a2,a3 at (g+8, ..), a4,a5 at (g, 2t+8..), a6,a7 at (g+8, 2t+8..). So two n8 C tiles side by side are
    /// one k16 A tile register for register: with 4 warps over the rows in both mmas, the identity.
    #[test]
    fn accumulator_to_a_operand_is_a_renaming_when_the_warps_split_rows() {
        let first = assign_mma_with(64, 64, 32, F16, F32, 4, Some((16, 64))).unwrap();
        let second = assign_mma_with(64, 64, 64, F16, F32, 4, Some((16, 64))).unwrap();
        let perm = register_permutation(&first.c, &second.a).unwrap();
        assert_eq!(perm, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_2x2_warp_grid_needs_shared_memory() {
        let first = assign_mma_with(64, 64, 32, F16, F32, 4, None).unwrap();
        let second = assign_mma_with(64, 64, 64, F16, F32, 4, None).unwrap();
        assert_eq!(first.warps, (2, 2));
        let why = register_permutation(&first.c, &second.a).unwrap_err();
        assert!(why.contains("warps hold different elements"), "{why}");
    }

    #[test]
    fn a_and_b_fragments_differ_in_their_lanes() {
        let asg = assign_mma_with(16, 16, 16, F16, F32, 1, None).unwrap();
        let why = register_permutation(&asg.a, &asg.b).unwrap_err();
        assert!(why.contains("lanes hold different elements"), "{why}");
    }

    #[test]
    fn permuted_registers_follow_the_bits() {
        // Destination bit 0 is source bit 2, bit 1 is bit 0, bit 2 is bit 1.
        let perm = [2, 0, 1];
        assert_eq!(permuted_register(&perm, 0b001), 0b100);
        assert_eq!(permuted_register(&perm, 0b010), 0b001);
        assert_eq!(permuted_register(&perm, 0b111), 0b111);
        assert_eq!(permuted_register(&perm, 0b110), 0b011);
    }
}
