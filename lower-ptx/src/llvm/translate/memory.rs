//! Memory tiles and element addresses.
//!
//! Indices into a tile are logical `(row, col, …)`; the physical element offset is the one definition of a
//! memory layout's offset map, `tilec_layout::Layout::offset_with`, emitted as LLVM IR through
//! [`OffsetArith`] on the builder (`nsw` adds and multiplies): `#row_major` (the default), `#col_major`
//! (rank 2), and `#swizzle<B, M, S, base>` (shared tiles only). Global offsets are computed in `i64`
//! (extents may be run-time values); shared offsets in `i32` (shared tiles are small and static), which
//! keeps address arithmetic 32-bit.
//!
//! An access of `run` contiguous elements (a vector load, `ldmatrix` row, `cp.async`) moves `run`
//! elements consecutive in the tile's storage order, from the address of its first index: along the last
//! axis of a row-major tile, down a column of a column-major one (as the warp simulator reads them). Every
//! swizzle must leave the low `log2(run)` offset bits alone (`2^M >= run`) so the run stays contiguous.

use inkwell::builder::{Builder, BuilderError};
use inkwell::types::{BasicType, IntType};
use inkwell::values::{IntValue, PointerValue};

use tilec_ir::body::{Operation, Value};
use tilec_ir::layout::{Layout, OffsetArith};
use tilec_ir::types::MemorySpace;

use super::func::FuncTranslator;
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
                // Shared tiles are static: their extents are `i32` constants.
                let extents = memref
                    .extents
                    .iter()
                    .map(|e| match e {
                        Extent::Static(n) => Ok(Extent::Static(*n)),
                        Extent::Dynamic(_) => Err(self.kernel.unsupported(op, "shared tiles must have static extents")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.layout_offset(op, memref.space, &memref.layout, i32_ty, &extents, &narrowed)?
            }
            space => self.layout_offset(op, space, &memref.layout, self.cx.i64_type(), &memref.extents, &index_values)?,
        };
        Ok(unsafe { self.builder.build_in_bounds_gep(elem_ty.as_basic_type_enum(), memref.base, &[offset], "")? })
    }

    /// The element offset of `indices` in a tile with `layout` and `extents`, as `ty` arithmetic.
    fn layout_offset(
        &self,
        op: &Operation,
        space: MemorySpace,
        layout: &Layout,
        ty: IntType<'ctx>,
        extents: &[Extent<IntValue<'ctx>>],
        indices: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>> {
        let unsupported = || self.kernel.unsupported(op, format!("{space} tiles with layout {layout} are not supported"));
        // Swizzles address shared tiles only.
        if space != MemorySpace::Shared && matches!(layout, Layout::Swizzled { .. }) {
            return Err(unsupported());
        }
        let mut arith = Arith { builder: &self.builder, ty };
        layout.offset_with(&mut arith, extents, indices)?.ok_or_else(unsupported)
    }
}

/// [`OffsetArith`] as LLVM IR of one integer type.
struct Arith<'a, 'ctx> {
    builder: &'a Builder<'ctx>,
    ty: IntType<'ctx>,
}

impl<'ctx> OffsetArith for Arith<'_, 'ctx> {
    type Value = IntValue<'ctx>;
    type Error = BuilderError;
    fn constant(&mut self, n: u64) -> IntValue<'ctx> {
        self.ty.const_int(n, false)
    }
    fn add(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        self.builder.build_int_nsw_add(a, b, "")
    }
    fn mul(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        self.builder.build_int_nsw_mul(a, b, "")
    }
    fn and(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        self.builder.build_and(a, b, "")
    }
    fn shr(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        self.builder.build_right_shift(a, b, false, "")
    }
    fn xor(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, BuilderError> {
        self.builder.build_xor(a, b, "")
    }
}
