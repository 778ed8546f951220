//! `tile.reduce`, `tile.broadcast` and `tile.iota`, derived from the distributed layouts (issue 16).
//!
//! A reduce along `axis` of a tile with layout `P` produces the slice of `P` ([`crate::slice_layout`]). Each
//! base of `P` either moves along `axis` (*sliced*), along the other axis (*kept*), or not at all
//! (replicated). The lowering combines, in this order:
//!
//! 1. **in the thread**, over the sliced `register` bits: a butterfly over the thread's values (bit by bit,
//!    `v[r] = v[r] op v[r | 1 << b]`);
//! 2. **in the warp**, over the sliced `lane` bits: `x = x op nvgpu.shuffle xor x, 1 << b` for each such bit
//!    (every lane of a group ends with the same bits: IEEE addition, max and min are commutative);
//! 3. **across warps**, when sliced `warp` bits exist: each thread stores its partials into a shared scratch
//!    tile `K x W` (the kept extent by the warps along the axis), a barrier, every thread reads the `W`
//!    partials of its elements and combines them in order `0..W` (so every thread gets the same result), and a
//!    barrier after the reads, so that the next write of the scratch (a loop's next reduce) cannot race them.
//!    Each reduce op has its own scratch tile.
//!
//! Replicated bits (zero bases) are never combined: they hold copies. A broadcast is the inverse map: parent
//! register `r` takes slice register [`crate::slice_layout::Slice::slice_register`]`(r)`, with no data
//! movement, since the slice's lanes and warps hold the elements the parent's do. `tile.iota` is each
//! element's coordinate: the register's from the layout plus the lane and warp terms.

use tilec_ir::ops::{ReduceKind, ShuffleMode};
use tilec_ir::{typed, Diagnostic, MemorySpace, OpId, ScalarType, TileType, Type, TypedOp, Value};

use super::{Fragments, Lowering};
use crate::slice_layout::{self, BaseMotion};
use tilec_ir::ops::BinaryArith;

impl<'f> Lowering<'f> {
    /// Every per-thread value of a register tile, in register order, as scalars.
    pub(super) fn scalars_of(&mut self, v: Value) -> Result<Vec<Value>, Diagnostic> {
        let frags = self.fragments_of(v)?;
        let vectors = self.frags(v)?;
        let mut out = Vec::with_capacity(frags.register_values as usize);
        for &vector in &vectors {
            for j in 0..frags.values {
                out.push(self.extract(vector, frags.position(j)));
            }
        }
        Ok(out)
    }

    /// Packs per-thread scalars (in register order) into the fragment vectors of `frags`.
    pub(super) fn pack(&mut self, frags: &Fragments, scalars: &[Value]) -> Vec<Value> {
        let mut out = Vec::with_capacity(frags.count() as usize);
        for chunk in scalars.chunks(frags.values as usize) {
            let mut acc = self.zero_vector(frags.vector_type());
            for (j, &x) in chunk.iter().enumerate() {
                acc = self.insert(x, acc, frags.position(j as u32));
            }
            out.push(acc);
        }
        out
    }

    pub(super) fn lower_reduce(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(reduce), Some(result)) = (op.view::<typed::Reduce>(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.reduce'"));
        };
        let src = self.fragments_of(reduce.source)?;
        let out = self.fragments_of(result)?;
        let axis = reduce.axis as usize;
        let axes = [axis];
        let err = |m: String| Diagnostic::error(span, format!("lowering 'tile.reduce': {m}"));
        let slice = slice_layout::slice(&src.layout, &axes).map_err(err)?;
        if slice.layout != out.layout {
            return Err(err("the result's layout is not the slice of the source's (layout conversion is not supported yet)".into()));
        }
        let register = slice_layout::motions(&src.layout, "register", &axes).map_err(err)?;
        let lane = slice_layout::motions(&src.layout, "lane", &axes).map_err(err)?;
        let warp = slice_layout::motions(&src.layout, "warp", &axes).map_err(err)?;
        let combine = match reduce.kind {
            ReduceKind::Sum => BinaryArith::Add,
            ReduceKind::Max => BinaryArith::Max,
            ReduceKind::Min => BinaryArith::Min,
        };
        // 1. In the thread: a butterfly over the register bits that move along the axis.
        let mut vals = self.scalars_of(reduce.source)?;
        for (b, m) in register.iter().enumerate() {
            if *m != BaseMotion::Sliced {
                continue;
            }
            for r in 0..vals.len() {
                if r >> b & 1 == 0 {
                    vals[r] = self.binary(combine, vals[r], vals[r | 1 << b]);
                }
            }
        }
        // Slice register s is parent register r with its kept bits set as in s and every other bit clear.
        let mut partial: Vec<Value> = (0..out.register_values)
            .map(|s| {
                let r = slice.register_map.iter().enumerate().fold(0u32, |r, (b, k)| match k {
                    Some(k) if s >> k & 1 == 1 => r | 1 << b,
                    _ => r,
                });
                vals[r as usize]
            })
            .collect();
        // 2. In the warp: xor shuffles over the lane bits that move along the axis.
        let elem = out.elem;
        for (b, m) in lane.iter().enumerate() {
            if *m != BaseMotion::Sliced {
                continue;
            }
            for x in &mut partial {
                let shuffle = typed::Shuffle { value: *x, mode: ShuffleMode::Xor, offset: 1 << b };
                let other = self.emit_value(shuffle.into_spec().result(Type::Scalar(elem)));
                *x = self.binary(combine, *x, other);
            }
        }
        // 3. Across warps: through shared memory.
        if warp.contains(&BaseMotion::Sliced) {
            self.reduce_across_warps(&out, axis, &warp, combine, &mut partial)?;
        }
        let frags = self.pack(&out, &partial);
        self.frags.insert(result, frags);
        Ok(())
    }

    /// Step 3 of [`Self::lower_reduce`]: partials to a `K x W` shared scratch tile, a barrier, each thread
    /// combines the `W` partials of its elements in order, a barrier.
    fn reduce_across_warps(
        &mut self,
        out: &Fragments,
        axis: usize,
        warp: &[BaseMotion],
        combine: BinaryArith,
        partial: &mut [Value],
    ) -> Result<(), Diagnostic> {
        let sliced: Vec<usize> = warp.iter().enumerate().filter(|(_, m)| **m == BaseMotion::Sliced).map(|(b, _)| b).collect();
        let w_count = 1u64 << sliced.len();
        let kept = if axis == 1 { out.layout.out_dim_size("row") } else { out.layout.out_dim_size("col") }.unwrap_or(1);
        let elem = out.elem;
        let scratch_ty = TileType::new(&[u64::from(kept), w_count], elem, MemorySpace::Shared);
        let scratch = self.hoist_value(typed::AllocShared {}.into_spec().result(Type::Tile(scratch_ty)));
        let (tr, tc) = self.thread_coords(&out.bases.lane, &out.bases.warp);
        let thread_kept = if axis == 1 { tr } else { tc };
        let warp_bases: Vec<(u32, u32)> =
            (0..warp.len()).map(|b| sliced.iter().position(|&s| s == b).map_or((0, 0), |k| (1 << k, 0))).collect();
        let warp_id = self.warp_id();
        let (w_index, _) = self.bit_terms(warp_id, &warp_bases);
        let kept_index = |cx: &mut Self, s: u32| {
            let (cr, cc) = out.bases.register_coord(s);
            cx.add_const(thread_kept, i64::from(if axis == 1 { cr } else { cc }))
        };
        for (s, &x) in partial.iter().enumerate() {
            let k = kept_index(self, s as u32);
            self.emit(typed::Store { value: x, dst: scratch, indices: vec![k, w_index], mask: None }.into_spec());
        }
        self.emit(typed::Barrier {}.into_spec());
        for (s, x) in partial.iter_mut().enumerate() {
            let k = kept_index(self, s as u32);
            let mut acc = None;
            for w in 0..w_count {
                let wi = self.index(w as i64);
                let y = self.emit_value(typed::Load { src: scratch, indices: vec![k, wi], mask: None }.into_spec().result(Type::Scalar(elem)));
                acc = Some(match acc {
                    None => y,
                    Some(a) => self.binary(combine, a, y),
                });
            }
            *x = acc.unwrap_or(*x);
        }
        self.emit(typed::Barrier {}.into_spec());
        Ok(())
    }

    pub(super) fn lower_broadcast(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(bc), Some(result)) = (op.view::<typed::Broadcast>(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.broadcast'"));
        };
        let out = self.fragments_of(result)?;
        let shape = |cx: &Self, v: Value| cx.ty(v).as_tile().and_then(|t| t.static_shape()).unwrap_or_default();
        let axes = crate::layout_assignment::sliced_axes(&shape(self, result), &shape(self, bc.source));
        let err = |m: String| Diagnostic::error(span, format!("lowering 'tile.broadcast': {m}"));
        let slice = slice_layout::slice(&out.layout, &axes).map_err(err)?;
        let src = self.fragments_of(bc.source)?;
        if slice.layout != src.layout {
            return Err(err("the source's layout is not the slice of the result's (layout conversion is not supported yet)".into()));
        }
        let vals = self.scalars_of(bc.source)?;
        let spread: Vec<Value> = (0..out.register_values).map(|r| vals[slice.slice_register(r) as usize]).collect();
        let frags = self.pack(&out, &spread);
        self.frags.insert(result, frags);
        Ok(())
    }

    pub(super) fn lower_iota(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id);
        let span = op.span;
        let (Some(iota), Some(result)) = (op.view::<typed::Iota>(), op.result()) else {
            return Err(Diagnostic::error(span, "malformed 'tile.iota'"));
        };
        let out = self.fragments_of(result)?;
        let (tr, tc) = self.thread_coords(&out.bases.lane, &out.bases.warp);
        let row_axis = iota.axis == 0;
        let mut vals = Vec::with_capacity(out.register_values as usize);
        for r in 0..out.register_values {
            let (cr, cc) = out.bases.register_coord(r);
            let i = if row_axis { self.add_const(tr, i64::from(cr)) } else { self.add_const(tc, i64::from(cc)) };
            vals.push(self.emit_value(typed::Cast { source: i }.into_spec().result(ScalarType::I32)));
        }
        let frags = self.pack(&out, &vals);
        self.frags.insert(result, frags);
        Ok(())
    }

    /// `tile.copy_s2r` into a thin tile (a slice layout: lanes or warps hold copies): one scalar load per
    /// register value, at the element's coordinate.
    pub(super) fn lower_copy_s2r_elementwise(&mut self, src: Value, result: Value) -> Result<(), Diagnostic> {
        let out = self.fragments_of(result)?;
        let (tr, tc) = self.thread_coords(&out.bases.lane, &out.bases.warp);
        let mut vals = Vec::with_capacity(out.register_values as usize);
        for r in 0..out.register_values {
            let (cr, cc) = out.bases.register_coord(r);
            let (row, col) = (self.add_const(tr, i64::from(cr)), self.add_const(tc, i64::from(cc)));
            let load = typed::Load { src, indices: vec![row, col], mask: None };
            vals.push(self.emit_value(load.into_spec().result(Type::Scalar(out.elem))));
        }
        let frags = self.pack(&out, &vals);
        self.frags.insert(result, frags);
        Ok(())
    }
}
