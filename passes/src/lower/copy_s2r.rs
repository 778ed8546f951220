//! `tile.copy_s2r` → plan a [`CopyPlan`], then execute it: one `nvgpu.ldmatrix` (or `nvgpu.load`) per
//! instance in temporal order, then the loaded registers are regrouped into the destination's fragments.
//! A window of the shared tile (a register tile smaller than it, at an offset) is planned on the window
//! and offset (see [`super::window`]). The A and B copies of a wgmma `tile.mma` emit nothing: the wgmma
//! reads the shared tile itself ([`super::mma`]).

use tilec_ir::layout::{row_major, Layout};
use tilec_ir::{typed, Diagnostic, OpId, Type, TypedOp, Value, VectorType};

use super::copy_plan::{CopyInstr, CopyPlan, SharedSource};
use super::window::Window;
use super::{Fragments, Lowering};

/// Where one register value was loaded: a vector and a position in it, or a scalar.
#[derive(Clone, Debug)]
pub(super) struct Loaded {
    pub value: Value,
    pub position: Option<Vec<u32>>,
}

/// The [`SharedSource`] of a shared tile type (its layout, row-major when it has none).
pub fn shared_source(t: &tilec_ir::TileType) -> Result<SharedSource, String> {
    let Some(&[rows, cols]) = t.static_shape().as_deref() else {
        return Err(format!("'{t}' is not a static rank-2 tile"));
    };
    let (rows, cols) = (rows as u32, cols as u32);
    let (memory, memory_name) = match &t.layout {
        None => (row_major(rows, cols).map_err(|e| e.to_string())?, "row-major".to_string()),
        Some(l @ (Layout::RowMajor | Layout::ColMajor | Layout::Swizzled { .. } | Layout::Linear(_))) => {
            (l.to_linear(rows, cols).map_err(|e| e.to_string())?, l.to_string())
        }
        Some(l) => return Err(format!("shared tile layout {l} is not a memory layout")),
    };
    Ok(SharedSource { rows, cols, elem_bits: t.elem.bit_width(), memory, memory_name })
}

impl<'f> Lowering<'f> {
    pub(super) fn lower_copy_s2r(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(typed::CopyS2R { src, src_indices }), Some(result)) = (op.view(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.copy_s2r'"));
        };
        let Type::Tile(st) = self.ty(src).clone() else { return Err(Diagnostic::error(span, "malformed 'tile.copy_s2r'")) };
        if self.wgmma_operands.contains(&result) {
            // A wgmma operand: the mma reads the shared tile through descriptors, nothing is loaded here. The
            // barrier bookkeeping stays: the read happens (until the mma's wait_group) as if here.
            if self.shared_barriers && self.pending_shared_writes.contains(&src) {
                self.shared_barrier();
            }
            self.pending_shared_reads.insert(src);
            self.read_shared.insert(src);
            return Ok(());
        }
        let frags = self.fragments_of(result)?;
        let dst_shape = self.ty(result).as_tile().and_then(|t| t.static_shape()).unwrap_or_default();
        let window = self.shared_window(&st, &dst_shape, &src_indices, "tile.copy_s2r")?;
        // Read after write: what other warps stored with `tile.copy_r2s` must land first.
        if self.shared_barriers && self.pending_shared_writes.contains(&src) {
            self.shared_barrier();
        }
        self.pending_shared_reads.insert(src);
        if dst_shape.contains(&1) {
            // A thin tile (slice layout): per-element loads, of the whole tile.
            if window.offsets != [None, None] || (window.source.rows, window.source.cols) != window.tile {
                return Err(Diagnostic::error(span, "'tile.copy_s2r' of a window into a thin (1xN or Mx1) register tile is not supported by the lowering yet"));
            }
            self.lower_copy_s2r_elementwise(src, result)?;
            self.read_shared.insert(src);
            return Ok(());
        }
        let plan = CopyPlan::for_fragments(window.source.clone(), &frags.layout, Some(frags.values))
            .map_err(|m| Diagnostic::error(span, format!("no copy plan: {m}")))?;
        window.check_offsets(&plan, span, "tile.copy_s2r")?;
        let loaded = self.execute_copy_plan(&plan, src, st.elem, &window)?;
        let out = self.assemble(&frags, &loaded);
        self.frags.insert(result, out);
        self.read_shared.insert(src);
        Ok(())
    }

    /// Emits the plan's instances; returns where each register value landed.
    pub(super) fn execute_copy_plan(&mut self, plan: &CopyPlan, src: Value, elem: tilec_ir::ScalarType, window: &Window) -> Result<Vec<Loaded>, Diagnostic> {
        let (row0, col0) = self.thread_coords(&plan.lane_bases, &plan.warp_bases);
        let row0 = self.add_window_offset(row0, window, 0);
        let col0 = self.add_window_offset(col0, window, 1);
        let mut loaded = Vec::with_capacity(plan.register_values as usize);
        for inst in &plan.instances {
            let row = self.add_const(row0, inst.origin.0 as i64);
            let col = self.add_const(col0, inst.origin.1 as i64);
            match plan.instr {
                CopyInstr::LdMatrix { num, trans } => {
                    // One 32-bit register per matrix: 2 16-bit elements, or 4 8-bit ones (two b16 pairs).
                    let per = 32 / elem.bit_width().max(1);
                    let ldmatrix = typed::LdMatrix { src, indices: vec![row, col], num_tiles: num, transpose: trans };
                    let v = self.emit_value(ldmatrix.into_spec().result(VectorType::new(&[u64::from(num), u64::from(per)], elem)));
                    for j in 0..per * num {
                        loaded.push(Loaded { value: v, position: Some(vec![j / per, j % per]) });
                    }
                }
                CopyInstr::Load { width } => {
                    let ty: Type = if width == 1 { Type::Scalar(elem) } else { VectorType::new(&[width as u64], elem).into() };
                    let v = self.emit_value(typed::Load { src, indices: vec![row, col], mask: None }.into_spec().result(ty));
                    for j in 0..width {
                        loaded.push(Loaded { value: v, position: (width > 1).then(|| vec![j]) });
                    }
                }
            }
        }
        Ok(loaded)
    }

    /// Regroups loaded register values into fragment vectors: a loaded vector that is exactly one
    /// fragment is used as is; otherwise the fragment is built with `nvgpu.extract`/`nvgpu.insert`.
    pub(super) fn assemble(&mut self, frags: &Fragments, loaded: &[Loaded]) -> Vec<Value> {
        let vty = frags.vector_type();
        let v = frags.values as usize;
        let mut out = Vec::new();
        for f in 0..frags.count() as usize {
            let parts = &loaded[f * v..(f + 1) * v];
            let first = parts[0].value;
            let whole = self.ty(first) == &Type::Vector(vty.clone())
                && parts.iter().enumerate().all(|(j, p)| p.value == first && p.position.as_deref() == Some(&frags.position(j as u32)[..]));
            if whole {
                out.push(first);
                continue;
            }
            let mut acc = self.zero_vector(vty.clone());
            for (j, p) in parts.iter().enumerate() {
                let x = match &p.position {
                    Some(pos) => self.extract(p.value, pos.clone()),
                    None => p.value,
                };
                acc = self.insert(x, acc, frags.position(j as u32));
            }
            out.push(acc);
        }
        out
    }
}
