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
use tilec_ir::types::{MemorySpace, ScalarType};

use super::func::FuncEmitter;
use super::Result;

/// One extent of a memory tile.
#[derive(Clone, Debug)]
pub(super) enum Extent {
    /// Known when compiling.
    Static(u64),
    /// A kernel parameter, as an `index` SSA value.
    Dynamic(String),
}

/// A global or shared tile: its flat memref and how indices map to elements.
#[derive(Clone, Debug)]
pub(super) struct MemRef {
    /// SSA name of the flat memref.
    pub name: String,
    /// Its MLIR type (`memref<?xf16, 1>`, `memref<256xf16, #gpu.address_space<workgroup>>`).
    pub ty: String,
    pub space: MemorySpace,
    pub elem: ScalarType,
    pub extents: Vec<Extent>,
    pub layout: Layout,
}

impl MemRef {
    fn keeps_contiguous(&self, run: u64) -> bool {
        fn check(layout: &Layout, run: u64) -> bool {
            match layout {
                // A run follows the storage order: the last axis, or down a column of a col-major tile.
                Layout::RowMajor | Layout::ColMajor => true,
                Layout::Swizzled { swizzle, base } => {
                    (swizzle.bits == 0 || (1u64 << swizzle.base) >= run) && check(base, run)
                }
                _ => false,
            }
        }
        run <= 1 || check(&self.layout, run)
    }
}

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
        if indices.len() != memref.extents.len() {
            return Err(self.unsupported(op, format!("a rank-{} tile needs {} indices", memref.extents.len(), memref.extents.len())));
        }
        if !memref.keeps_contiguous(run) {
            return Err(self.unsupported(
                op,
                format!("it accesses {run} contiguous elements, which the layout {} does not keep contiguous", memref.layout),
            ));
        }
        let idx = indices.iter().map(|&i| self.name(op, i)).collect::<Result<Vec<_>>>()?;
        let offset = self.layout_offset(op, &memref.layout, &memref.extents, &idx, memref.space)?;
        Ok((memref.name, memref.ty, offset))
    }

    fn extent(&mut self, e: &Extent) -> String {
        match e {
            Extent::Static(n) => self.index_constant(*n as i64),
            Extent::Dynamic(v) => v.clone(),
        }
    }

    fn layout_offset(
        &mut self,
        op: &Operation,
        layout: &Layout,
        extents: &[Extent],
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
            other => Err(self.unsupported(op, format!("{} tiles with layout {other} are not supported", space))),
        }
    }
}
