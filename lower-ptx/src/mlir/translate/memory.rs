//! Memory tiles and element offsets.
//!
//! Every tile is addressed through a flat 1-D memref; the element offset of logical indices `(row, col, …)`
//! is the one definition of a memory layout's offset map, `tilec_layout::Layout::offset_with`, emitted as
//! `arith` ops on `index` values through [`OffsetArith`] (as the LLVM backend emits it as LLVM IR):
//! `#row_major` (default), `#col_major` (rank 2), and `#swizzle<B, M, S, base>` (shared tiles only). A
//! contiguous access of `run` elements moves elements consecutive in the tile's storage order (along the
//! last axis of a row-major tile, down a column of a column-major one), so it must stay contiguous through
//! any swizzle.

use std::convert::Infallible;

use tilec_ir::body::{Operation, Value};
use tilec_ir::layout::{Layout, OffsetArith};
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

    fn layout_offset(
        &mut self,
        op: &Operation,
        layout: &Layout,
        extents: &[Extent<String>],
        idx: &[String],
        space: MemorySpace,
    ) -> Result<String> {
        let unsupported = |e: &Self| e.kernel.unsupported(op, format!("{space} tiles with layout {layout} are not supported"));
        // Swizzles address shared tiles only.
        if space != MemorySpace::Shared && matches!(layout, Layout::Swizzled { .. }) {
            return Err(unsupported(self));
        }
        let Ok(offset) = layout.offset_with(&mut Arith(self), extents, idx);
        offset.ok_or_else(|| unsupported(self))
    }
}

/// [`OffsetArith`] as `arith` ops on `index` values.
struct Arith<'e, 'a>(&'e mut FuncEmitter<'a>);

impl OffsetArith for Arith<'_, '_> {
    type Value = String;
    type Error = Infallible;
    fn constant(&mut self, n: u64) -> String {
        self.0.index_constant(n as i64)
    }
    fn add(&mut self, a: String, b: String) -> Result<String, Infallible> {
        Ok(self.0.emit(&format!("arith.addi {a}, {b} overflow<nsw> : index")))
    }
    fn mul(&mut self, a: String, b: String) -> Result<String, Infallible> {
        Ok(self.0.emit(&format!("arith.muli {a}, {b} overflow<nsw> : index")))
    }
    fn and(&mut self, a: String, b: String) -> Result<String, Infallible> {
        Ok(self.0.emit(&format!("arith.andi {a}, {b} : index")))
    }
    fn shr(&mut self, a: String, b: String) -> Result<String, Infallible> {
        Ok(self.0.emit(&format!("arith.shrui {a}, {b} : index")))
    }
    fn xor(&mut self, a: String, b: String) -> Result<String, Infallible> {
        Ok(self.0.emit(&format!("arith.xori {a}, {b} : index")))
    }
}
