//! Memory tiles and element offsets.
//!
//! Every tile is addressed through a flat 1-D memref; the element offset of logical indices `(row, col, …)`
//! comes from the tile's layout, computed with `arith` on `index` values exactly as the LLVM backend's
//! `memory.rs` does: `#row_major` (default), `#col_major` (rank 2), and `#swizzle<B, M, S, base>`
//! (`o ^ ((o & (((1 << B) - 1) << (M + S))) >> S)`). A contiguous access of `run` elements moves elements
//! consecutive in the tile's storage order (along the last axis of a row-major tile, down a column of a
//! column-major one), so it must stay contiguous through any swizzle.

use tilec_ir::body::{Operation, Value};
use tilec_ir::layout::Layout;
use tilec_ir::types::MemorySpace;

use super::func::FuncEmitter;
use super::Result;
use crate::spine::Extent;

impl FuncEmitter<'_> {
    /// The flat memref of `mem` and the `index` offset of element `indices`, for an access of `run`
    /// contiguous elements: `(memref, memref type, offset)`.
    pub(super) fn element_offset(
        &mut self,
        op: &Operation,
        mem: Value,
        indices: &[Value],
        run: u64,
    ) -> Result<(String, String, String)> {
        let memref = self.memref(op, mem)?.clone();
        memref.check_access(self.func, op, indices.len(), run)?;
        let idx = indices.iter().map(|&i| self.name(op, i)).collect::<Result<Vec<_>>>()?;
        let offset = self.layout_offset(op, &memref.layout, &memref.extents, &idx, memref.space)?;
        Ok((memref.base.name, memref.base.ty, offset))
    }

    fn extent(&mut self, e: &Extent<String>) -> String {
        match e {
            Extent::Static(n) => self.index_constant(*n as i64),
            Extent::Dynamic(v) => v.clone(),
        }
    }

    fn layout_offset(
        &mut self,
        op: &Operation,
        layout: &Layout,
        extents: &[Extent<String>],
        idx: &[String],
        space: MemorySpace,
    ) -> Result<String> {
        match layout {
            Layout::RowMajor => {
                // Horner: ((i0 * d1 + i1) * d2 + i2) …
                let mut offset = idx[0].clone();
                for axis in 1..idx.len() {
                    let d = self.extent(&extents[axis]);
                    let scaled = self.emit(&format!("arith.muli {offset}, {d} overflow<nsw> : index"));
                    offset = self.emit(&format!("arith.addi {scaled}, {} overflow<nsw> : index", idx[axis]));
                }
                Ok(offset)
            }
            Layout::ColMajor if idx.len() == 2 => {
                let rows = self.extent(&extents[0]);
                let scaled = self.emit(&format!("arith.muli {}, {rows} overflow<nsw> : index", idx[1]));
                Ok(self.emit(&format!("arith.addi {scaled}, {} overflow<nsw> : index", idx[0])))
            }
            Layout::Swizzled { swizzle, base } if space == MemorySpace::Shared => {
                let o = self.layout_offset(op, base, extents, idx, space)?;
                if swizzle.bits == 0 {
                    return Ok(o);
                }
                let mask = ((1i64 << swizzle.bits) - 1) << (swizzle.base + swizzle.shift);
                let m = self.index_constant(mask);
                let high = self.emit(&format!("arith.andi {o}, {m} : index"));
                let s = self.index_constant(i64::from(swizzle.shift));
                let moved = self.emit(&format!("arith.shrui {high}, {s} : index"));
                Ok(self.emit(&format!("arith.xori {o}, {moved} : index")))
            }
            other => Err(self.kernel.unsupported(op, format!("{} tiles with layout {other} are not supported", space))),
        }
    }
}
