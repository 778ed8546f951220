//! One kernel: its entry point, its arguments and shared memory ([`EmitKernel`]), and the values the ops read
//! and write. The walk over the ops is the spine's ([`crate::spine::emit_kernel`]).

use std::cell::RefCell;
use std::collections::HashMap;

use inkwell::attributes::AttributeLoc;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::module::Module as LlvmModule;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};

use tilec_ir::body::{Func, Operation, Value};
use tilec_ir::types::{MemorySpace, ScalarType, Type};

use super::lanes::{self, Lane, Lanes, Lowered, Made};
use super::{types, Result};
use crate::kernel_info::AbiRole;
use crate::llvm::{
    add_dynamic_shared_memory, add_static_shared_array, declare_kernel, set_launch_bounds, AddressSpace, Nvvm,
};
use crate::spine::{Argument, EmitKernel, Extent, Kernel, MemRef, MemRefs, SharedTile, Values};

/// A memory tile in LLVM: its first element's pointer (address space 1 or 3), `i64` dynamic extents.
pub(super) type LlvmMemRef<'ctx> = MemRef<PointerValue<'ctx>, IntValue<'ctx>>;

/// Translates one `tile.func` into a kernel of an LLVM module.
pub(crate) struct FuncTranslator<'a, 'ctx> {
    pub(super) module: &'a LlvmModule<'ctx>,
    pub(super) cx: ContextRef<'ctx>,
    pub(super) builder: Builder<'ctx>,
    pub(super) nvvm: Nvvm<'a, 'ctx>,
    pub(super) kernel: &'a Kernel<'a>,
    pub(super) func: &'a Func,
    pub(super) function: Option<FunctionValue<'ctx>>,
    values: Values<Lowered<'ctx>>,
    memrefs: MemRefs<PointerValue<'ctx>, IntValue<'ctx>>,
    dynamic_shared: Option<PointerValue<'ctx>>,
    /// The values made from lanes for instructions, reused within their block ([`super::lanes`]).
    pub(super) made: RefCell<Made<'ctx>>,
    /// The values some op reads as LLVM values, made where they are defined ([`lanes::read_whole`]).
    whole: rustc_hash::FxHashSet<Value>,
    /// Each tensor map's parameter (a generic pointer to the `byval` 128 bytes), by map number.
    pub(super) tensor_maps: HashMap<usize, PointerValue<'ctx>>,
}

impl<'a, 'ctx> FuncTranslator<'a, 'ctx> {
    /// Prepares the translation of `kernel` into `module` (nothing is added to the module yet).
    pub(crate) fn new(module: &'a LlvmModule<'ctx>, kernel: &'a Kernel<'a>) -> Self {
        let cx = module.get_context();
        FuncTranslator {
            module,
            cx,
            builder: cx.create_builder(),
            nvvm: Nvvm::new(module),
            kernel,
            func: kernel.func,
            function: None,
            values: Values::new(),
            memrefs: MemRefs::new(),
            dynamic_shared: None,
            made: RefCell::new(Made::default()),
            whole: lanes::read_whole(kernel.func),
            tensor_maps: HashMap::new(),
        }
    }

    /// The `i`th parameter of the entry point.
    fn param(&self, i: usize) -> Result<BasicValueEnum<'ctx>> {
        self.function
            .and_then(|f| f.get_nth_param(i as u32))
            .ok_or_else(|| super::internal("the entry has a parameter per ABI entry"))
    }

    // ---- values ------------------------------------------------------------------------------------------

    /// How an IR register value is held ([`Lowered`]).
    pub(super) fn lowered(&self, op: &Operation, v: Value) -> Result<Lowered<'ctx>> {
        self.values.get(self.func, op, v)
    }

    /// The LLVM value of an IR register value: a scalar, or a vector as one LLVM vector (made from its lanes
    /// where it is not one already).
    pub(super) fn value(&self, op: &Operation, v: Value) -> Result<BasicValueEnum<'ctx>> {
        match self.lowered(op, v)? {
            Lowered::Scalar(Lane::Scalar(x)) => Ok(x),
            Lowered::Scalar(lane) => {
                let elem = types::value_type(self.cx, self.func.body.ty(v))
                    .ok_or_else(|| self.kernel.unsupported(op, format!("values of type '{}' are not supported by the LLVM backend", self.func.body.ty(v))))?;
                self.lane_value(elem, lane)
            }
            Lowered::Vector(lanes) => self.gather(lanes.elem(), &lanes.lanes, lanes.ty.into()),
        }
    }

    /// An operand that is an integer scalar.
    pub(super) fn int(&self, op: &Operation, v: Value) -> Result<IntValue<'ctx>> {
        match self.value(op, v)? {
            BasicValueEnum::IntValue(i) => Ok(i),
            _ => Err(self.kernel.unsupported(op, "an operand must be an integer")),
        }
    }

    /// The memory tile an operand names.
    pub(super) fn memref(&self, op: &Operation, v: Value) -> Result<&LlvmMemRef<'ctx>> {
        self.memrefs.get(self.func, op, v)
    }

    /// Binds an IR value to an LLVM value (a vector as its lanes).
    pub(super) fn set(&mut self, v: Value, x: BasicValueEnum<'ctx>) {
        // An LLVM vector is already whole.
        self.values.insert(v, x.into());
    }

    /// Whether some op reads `v` as an LLVM value ([`lanes::read_whole`]).
    pub(super) fn read_whole(&self, v: Value) -> bool {
        self.whole.contains(&v)
    }

    /// Binds an IR value (one some op reads whole as its LLVM value, made here).
    pub(super) fn bind(&mut self, v: Value, x: Lowered<'ctx>) -> Result<()> {
        let x = match x {
            Lowered::Vector(l) if self.whole.contains(&v) => {
                match self.gather(l.elem(), &l.lanes, l.ty.into())? {
                    BasicValueEnum::VectorValue(w) => Lowered::Vector(Lanes::of_vector(w)),
                    _ => return Err(super::internal("a vector's lanes make a vector")),
                }
            }
            Lowered::Scalar(lane @ Lane::Part { .. }) if self.whole.contains(&v) => {
                let elem = types::value_type(self.cx, self.func.body.ty(v)).ok_or_else(|| super::internal("a lane's type"))?;
                Lowered::Scalar(Lane::Scalar(self.lane_value(elem, lane)?))
            }
            x => x,
        };
        self.values.insert(v, x);
        Ok(())
    }

    /// Binds the op's single result to an LLVM value (a vector as its lanes).
    pub(super) fn set_result(&mut self, op: &Operation, x: BasicValueEnum<'ctx>) -> Result<()> {
        self.bind_result(op, x.into())
    }

    /// Binds the op's single result.
    pub(super) fn bind_result(&mut self, op: &Operation, x: Lowered<'ctx>) -> Result<()> {
        let r = self.kernel.result(op)?;
        self.bind(r, x)
    }

    /// The LLVM type of the op's single result.
    pub(super) fn result_type(&self, op: &Operation) -> Result<(Type, BasicTypeEnum<'ctx>)> {
        let ty = self.kernel.result_type(op)?;
        let llvm = types::value_type(self.cx, &ty)
            .ok_or_else(|| self.kernel.unsupported(op, format!("values of type '{ty}' are not supported by the LLVM backend")))?;
        Ok((ty, llvm))
    }
}

impl EmitKernel for FuncTranslator<'_, '_> {
    /// `define ptx_kernel void @name(<abi params>)` with names, `noalias`/`readonly` pointers and
    /// `"nvvm.maxntid"`, and its entry block.
    fn begin_kernel(&mut self) -> Result<()> {
        let info = &self.kernel.info;
        let global_ptr = self.cx.ptr_type(AddressSpace::Global.into()).as_basic_type_enum();
        let params: Vec<BasicTypeEnum> = info
            .abi
            .iter()
            .map(|p| match p.ty.as_str() {
                "ptr" => global_ptr,
                "i64" => self.cx.i64_type().into(),
                "i32" => self.cx.i32_type().into(),
                "i8" => self.cx.i8_type().into(),
                "f16" => self.cx.f16_type().into(),
                "bf16" => self.cx.bf16_type().into(),
                "f32" => self.cx.f32_type().into(),
                // A tensor map: a generic pointer to the by-value parameter (below).
                "tensormap" => self.cx.ptr_type(AddressSpace::Generic.into()).into(),
                _ => self.cx.f64_type().into(),
            })
            .collect();
        let function = declare_kernel(self.module, &self.func.name, &params);
        let noalias = self.cx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("noalias"), 0);
        let readonly = self.cx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("readonly"), 0);
        for (i, p) in info.abi.iter().enumerate() {
            let param = function.get_nth_param(i as u32).ok_or_else(|| super::internal("declared with this many parameters"))?;
            param.set_name(&p.name);
            if p.role == AbiRole::Pointer {
                // Distinct kernel arguments are distinct tensors in tilec's semantics (the interpreter and the
                // simulator give each its own storage), so no two pointers alias.
                function.add_attribute(AttributeLoc::Param(i as u32), noalias);
                if !self.kernel.written.contains(&p.arg) {
                    function.add_attribute(AttributeLoc::Param(i as u32), readonly);
                }
            }
            if let AbiRole::TensorMap(_) = p.role {
                // `const __grid_constant__ CUtensorMap`: 128 bytes by value, 64-byte aligned, read in place
                // (`.param .align 64 .b8 NAME[128]`, its address taken with `cvta.param`).
                let bytes = self.cx.i8_type().array_type(128);
                let kind = |name: &str| inkwell::attributes::Attribute::get_named_enum_kind_id(name);
                function.add_attribute(AttributeLoc::Param(i as u32), self.cx.create_type_attribute(kind("byval"), bytes.into()));
                function.add_attribute(AttributeLoc::Param(i as u32), self.cx.create_enum_attribute(kind("align"), 64));
                function.add_attribute(AttributeLoc::Param(i as u32), self.cx.create_string_attribute("nvvm.grid_constant", ""));
            }
        }
        set_launch_bounds(function, info.threads_per_block(), None);
        self.function = Some(function);
        let entry = self.cx.append_basic_block(function, "entry");
        self.builder.position_at_end(entry);
        Ok(())
    }

    /// A global tile: its pointer and extents; a scalar: its value (`i1` passed as `i8`).
    fn bind_argument(&mut self, argument: Argument<'_>) -> Result<()> {
        match argument {
            Argument::Tile { value, tile, pointer, extents, .. } => {
                let base = self.param(pointer)?.into_pointer_value();
                let extents = extents
                    .into_iter()
                    .map(|e| match e {
                        Extent::Static(n) => Ok(Extent::Static(n)),
                        Extent::Dynamic(p) => Ok(Extent::Dynamic(self.param(p)?.into_int_value())),
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.memrefs.insert(value, MemRef::new(base, MemorySpace::Global, tile, extents));
            }
            Argument::Scalar { value, ty, param } => {
                let mut v = self.param(param)?;
                if ty == ScalarType::I1 {
                    v = self.builder.build_int_truncate(v.into_int_value(), self.cx.bool_type(), "")?.into();
                }
                self.set(value, v);
            }
        }
        Ok(())
    }

    /// An external `[0 x i8]` in the shared space, sized at launch.
    fn bind_dynamic_shared(&mut self) -> Result<()> {
        let align = self.kernel.dynamic_shared_align() as u32;
        let global = add_dynamic_shared_memory(self.module, &format!("{}_dynamic_shared", self.func.name), align);
        self.dynamic_shared = Some(global.as_pointer_value());
        Ok(())
    }

    fn bind_tensor_map(&mut self, map: usize, param: usize) -> Result<()> {
        let pointer = self.param(param)?.into_pointer_value();
        self.tensor_maps.insert(map, pointer);
        Ok(())
    }

    fn end_kernel(&mut self) -> Result<()> {
        if self.builder.get_insert_block().and_then(|b| b.get_terminator()).is_none() {
            self.builder.build_return(None)?;
        }
        Ok(())
    }

    fn return_(&mut self, _op: &Operation) -> Result<()> {
        self.builder.build_return(None)?;
        Ok(())
    }

    /// A static `.shared` array, or the tile's offset in the dynamic shared memory.
    fn alloc_shared(&mut self, _op: &Operation, tile: SharedTile<'_>) -> Result<()> {
        let elem_ty = types::scalar_type(self.cx, tile.tile.elem).ok_or_else(|| super::internal("shared tiles are addressable"))?;
        let base = match self.dynamic_shared {
            Some(dynamic) => unsafe {
                self.builder.build_in_bounds_gep(
                    self.cx.i8_type(),
                    dynamic,
                    &[self.cx.i32_type().const_int(tile.offset, false)],
                    "",
                )?
            },
            None => {
                let name = format!("{}_shared{}", self.func.name, tile.index);
                add_static_shared_array(self.module, &name, elem_ty, tile.elements as u32, tile.align as u32)
                    .as_pointer_value()
            }
        };
        self.memrefs.insert(tile.result, tile.memref(base));
        Ok(())
    }
}
