//! Memory tiles and element addresses.
//!
//! Indices into a tile are logical `(row, col, …)`; the physical element offset comes from the tile's
//! layout: `#row_major` (the default), `#col_major` (rank 2), and `#swizzle<B, M, S, base>` (CuTe's XOR
//! swizzle on the base layout's offset: `o ^ ((o & (((1 << B) - 1) << (M + S))) >> S)`, see
//! `tilec_layout::Swizzle`). Global offsets are computed in `i64` (extents may be run-time values); shared
//! offsets in `i32` (shared tiles are small and static), which keeps address arithmetic 32-bit.
//!
//! An access of `run` contiguous elements (a vector load, `ldmatrix` row, `cp.async`) moves `run`
//! elements consecutive in the tile's storage order, from the address of its first index: along the last
//! axis of a row-major tile, down a column of a column-major one (as the warp simulator reads them). Every
//! swizzle must leave the low `log2(run)` offset bits alone (`2^M >= run`) so the run stays contiguous.

use inkwell::types::BasicType;
use inkwell::values::{IntValue, PointerValue};

use tilec_ir::body::{Operation, Value};
use tilec_ir::layout::Layout;
use tilec_ir::types::MemorySpace;

use super::func::{FuncTranslator, LlvmMemRef};
use super::{types, Result};
use crate::spine::Extent;

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// The address of element `indices` of the tile `mem`, for an access of `run` contiguous elements.
    pub(super) fn element_pointer(
        &self,
        op: &Operation,
        mem: Value,
        indices: &[Value],
        run: u64,
    ) -> Result<PointerValue<'ctx>> {
        let memref = self.memref(op, mem)?;
        memref.check_access(self.func, op, indices.len(), run)?;
        let elem_ty = types::scalar_type(self.cx, memref.elem).ok_or_else(|| super::internal("addressable elements"))?;
        let index_values = indices.iter().map(|&i| self.int(op, i)).collect::<Result<Vec<_>>>()?;
        let offset = match memref.space {
            MemorySpace::Shared => {
                let i32_ty = self.cx.i32_type();
                let narrowed = index_values
                    .iter()
                    .map(|&i| self.builder.build_int_truncate_or_bit_cast(i, i32_ty, ""))
                    .collect::<Result<Vec<_>, _>>()?;
                let shape: Vec<u64> = memref
                    .extents
                    .iter()
                    .map(|e| match e {
                        Extent::Static(n) => *n,
                        Extent::Dynamic(_) => 0,
                    })
                    .collect();
                self.shared_offset(op, &memref.layout, &shape, &narrowed)?
            }
            _ => self.global_offset(op, memref, &index_values)?,
        };
        Ok(unsafe { self.builder.build_in_bounds_gep(elem_ty.as_basic_type_enum(), memref.base, &[offset], "")? })
    }

    /// The element offset in a global tile (`i64`): row-major, or column-major for rank 2.
    fn global_offset(&self, op: &Operation, memref: &LlvmMemRef<'ctx>, indices: &[IntValue<'ctx>]) -> Result<IntValue<'ctx>> {
        let i64_ty = self.cx.i64_type();
        let extent = |e: &Extent<IntValue<'ctx>>| match e {
            Extent::Static(n) => i64_ty.const_int(*n, false),
            Extent::Dynamic(v) => *v,
        };
        let b = &self.builder;
        match memref.layout {
            Layout::ColMajor if indices.len() == 2 => {
                let rows = extent(&memref.extents[0]);
                let scaled = b.build_int_nsw_mul(indices[1], rows, "")?;
                Ok(b.build_int_nsw_add(scaled, indices[0], "")?)
            }
            Layout::RowMajor => {
                // Horner: ((i0 * d1 + i1) * d2 + i2) …
                let mut offset = i64_ty.const_zero();
                for (axis, &i) in indices.iter().enumerate() {
                    if axis > 0 {
                        offset = b.build_int_nsw_mul(offset, extent(&memref.extents[axis]), "")?;
                    }
                    offset = b.build_int_nsw_add(offset, i, "")?;
                }
                Ok(offset)
            }
            ref other => Err(self.kernel.unsupported(op, format!("global tiles with layout {other} are not supported"))),
        }
    }

    /// The physical element offset in a shared tile of static `shape` (`i32`), through its layout.
    fn shared_offset(
        &self,
        op: &Operation,
        layout: &Layout,
        shape: &[u64],
        indices: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        let i32_ty = self.cx.i32_type();
        let b = &self.builder;
        match layout {
            Layout::RowMajor => {
                let mut offset = i32_ty.const_zero();
                for (axis, &i) in indices.iter().enumerate() {
                    if axis > 0 {
                        offset = b.build_int_nsw_mul(offset, i32_ty.const_int(shape[axis], false), "")?;
                    }
                    offset = b.build_int_nsw_add(offset, i, "")?;
                }
                Ok(offset)
            }
            Layout::ColMajor if indices.len() == 2 => {
                let scaled = b.build_int_nsw_mul(indices[1], i32_ty.const_int(shape[0], false), "")?;
                Ok(b.build_int_nsw_add(scaled, indices[0], "")?)
            }
            Layout::Swizzled { swizzle, base } => {
                let o = self.shared_offset(op, base, shape, indices)?;
                if swizzle.bits == 0 {
                    return Ok(o);
                }
                let mask = ((1u64 << swizzle.bits) - 1) << (swizzle.base + swizzle.shift);
                let high = b.build_and(o, i32_ty.const_int(mask, false), "")?;
                let moved = b.build_right_shift(high, i32_ty.const_int(u64::from(swizzle.shift), false), false, "")?;
                Ok(b.build_xor(o, moved, "")?)
            }
            other => Err(self.kernel.unsupported(op, format!("shared tiles with layout {other} are not supported"))),
        }
    }
}
