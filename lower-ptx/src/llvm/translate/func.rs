//! One kernel: its entry point, its shared memory, and the walk over its ops.

use std::collections::HashMap;

use inkwell::attributes::AttributeLoc;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::module::Module as LlvmModule;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue, VectorValue};

use tilec_ir::body::{BlockId, Func, OpId, Operation, Value};
use tilec_ir::layout::Layout;
use tilec_ir::ops::OpKind;
use tilec_ir::types::{MemorySpace, ScalarType, Type};

use super::memory::{Extent, MemRef};
use super::{control, nvgpu, scalar, types, Result, TranslateError};
use crate::kernel_info::{AbiRole, KernelInfo, ParamKind, SharedPlan, SHARED_ALIGN};
use crate::llvm::{
    add_dynamic_shared_memory, add_static_shared_array, declare_kernel, set_launch_bounds, AddressSpace, Nvvm,
};
use crate::target::Target;

/// Translates one `tile.func` into a kernel of an LLVM module.
pub(crate) struct FuncTranslator<'a, 'ctx> {
    pub(super) module: &'a LlvmModule<'ctx>,
    pub(super) cx: ContextRef<'ctx>,
    pub(super) builder: Builder<'ctx>,
    pub(super) nvvm: Nvvm<'a, 'ctx>,
    pub(super) func: &'a Func,
    pub(super) target: Target,
    pub(super) function: Option<FunctionValue<'ctx>>,
    shared: SharedPlan,
    info: KernelInfo,
    values: HashMap<Value, BasicValueEnum<'ctx>>,
    memrefs: HashMap<Value, MemRef<'ctx>>,
    dynamic_shared: Option<PointerValue<'ctx>>,
}

impl<'a, 'ctx> FuncTranslator<'a, 'ctx> {
    /// Prepares the translation of `func` into `module` (nothing is added to the module yet).
    pub(crate) fn new(module: &'a LlvmModule<'ctx>, func: &'a Func, target: Target) -> Result<Self> {
        let info = KernelInfo::from_func(func)?;
        let shared = SharedPlan::new(func)?;
        let cx = module.get_context();
        Ok(FuncTranslator {
            module,
            cx,
            builder: cx.create_builder(),
            nvvm: Nvvm::new(module),
            func,
            target,
            function: None,
            shared,
            info,
            values: HashMap::new(),
            memrefs: HashMap::new(),
            dynamic_shared: None,
        })
    }

    /// Adds the kernel to the module and returns its launch description.
    pub(crate) fn translate(mut self) -> Result<KernelInfo> {
        let function = self.declare_entry()?;
        self.function = Some(function);
        let entry = self.cx.append_basic_block(function, "entry");
        self.builder.position_at_end(entry);
        self.bind_arguments(function)?;
        if self.shared.dynamic {
            let global = add_dynamic_shared_memory(self.module, &format!("{}_dynamic_shared", self.func.name), SHARED_ALIGN as u32);
            self.dynamic_shared = Some(global.as_pointer_value());
        }
        let func = self.func;
        self.translate_block(func.entry)?;
        if self.builder.get_insert_block().and_then(|b| b.get_terminator()).is_none() {
            self.builder.build_return(None)?;
        }
        Ok(self.info)
    }

    /// `define ptx_kernel void @name(<abi params>)` with names, `noalias`/`readonly` pointers and
    /// `"nvvm.maxntid"`.
    fn declare_entry(&self) -> Result<FunctionValue<'ctx>> {
        if self.module.get_function(&self.func.name).is_some() {
            return Err(self.error_at(None, "tile.func", format!("a kernel named @{} is already defined", self.func.name)));
        }
        let global_ptr = self.cx.ptr_type(AddressSpace::Global.into()).as_basic_type_enum();
        let params: Vec<BasicTypeEnum<'ctx>> = self
            .info
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
                _ => self.cx.f64_type().into(),
            })
            .collect();
        let function = declare_kernel(self.module, &self.func.name, &params);
        let written = self.written_arguments();
        let noalias = self.cx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("noalias"), 0);
        let readonly = self.cx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("readonly"), 0);
        for (i, p) in self.info.abi.iter().enumerate() {
            let param = function.get_nth_param(i as u32).ok_or_else(|| super::internal("declared with this many parameters"))?;
            param.set_name(&p.name);
            if p.role == AbiRole::Pointer {
                // Distinct kernel arguments are distinct tensors in tilec's semantics (the interpreter and the
                // simulator give each its own storage), so no two pointers alias.
                function.add_attribute(AttributeLoc::Param(i as u32), noalias);
                if !written.contains(&p.arg) {
                    function.add_attribute(AttributeLoc::Param(i as u32), readonly);
                }
            }
        }
        set_launch_bounds(function, self.info.threads_per_block(), None);
        Ok(function)
    }

    /// The arguments some op writes (`nvgpu.store` into a global tile).
    fn written_arguments(&self) -> Vec<usize> {
        let body = &self.func.body;
        let args = self.func.args();
        let mut written = Vec::new();
        body.walk(self.func.entry, &mut |id| {
            let op = body.op(id);
            if op.kind == OpKind::Store {
                if let Some(i) = op.operand("dst").and_then(|d| args.iter().position(|&a| a == d)) {
                    written.push(i);
                }
            }
        });
        written
    }

    /// Binds each IR argument to its LLVM parameters: a global tile to its pointer and extents, a scalar
    /// to its value.
    fn bind_arguments(&mut self, function: FunctionValue<'ctx>) -> Result<()> {
        let mut next = 0u32;
        for (index, &arg) in self.func.args().iter().enumerate() {
            match (&self.info.params[index].kind, self.func.body.ty(arg)) {
                (ParamKind::Tile { .. }, Type::Tile(tile)) => {
                    let base = function.get_nth_param(next).ok_or_else(|| super::internal("pointer parameter"))?.into_pointer_value();
                    next += 1;
                    let mut extents = Vec::with_capacity(tile.rank());
                    for d in &tile.shape {
                        extents.push(match d.as_static() {
                            Some(n) => Extent::Static(n),
                            None => {
                                let v = function.get_nth_param(next).ok_or_else(|| super::internal("extent parameter"))?.into_int_value();
                                next += 1;
                                Extent::Dynamic(v)
                            }
                        });
                    }
                    let layout = tile.layout.clone().unwrap_or(Layout::RowMajor);
                    self.memrefs.insert(arg, MemRef { base, space: MemorySpace::Global, elem: tile.elem, extents, layout });
                }
                (ParamKind::Scalar { .. }, Type::Scalar(s)) => {
                    let mut v = function.get_nth_param(next).ok_or_else(|| super::internal("scalar parameter"))?;
                    next += 1;
                    if *s == ScalarType::I1 {
                        // Passed as i8 (0 or 1).
                        v = self.builder.build_int_truncate(v.into_int_value(), self.cx.bool_type(), "")?.into();
                    }
                    self.values.insert(arg, v);
                }
                _ => unreachable!("KernelInfo::from_func describes exactly these argument kinds"),
            }
        }
        Ok(())
    }

    /// The shared tile made by the `tile.alloc_shared` op `id`: a static `.shared` array, or its offset in
    /// the dynamic shared memory.
    pub(super) fn bind_shared_allocation(&mut self, id: OpId) -> Result<()> {
        let op = self.func.body.op(id);
        let (Some(result), Some(alloc)) = (op.result(), self.shared.allocation(id).cloned()) else {
            return Err(self.unsupported(op, "it must produce a shared tile of static shape"));
        };
        let Type::Tile(tile) = self.func.body.ty(result) else {
            return Err(self.unsupported(op, "it must produce a shared tile"));
        };
        let elem_ty = types::scalar_type(self.cx, tile.elem)
            .filter(|_| tile.elem.bit_width() >= 8)
            .ok_or_else(|| self.unsupported(op, format!("shared tiles of '{}' are not supported", tile.elem)))?;
        let base = match self.dynamic_shared {
            Some(dynamic) => unsafe {
                self.builder.build_in_bounds_gep(
                    self.cx.i8_type(),
                    dynamic,
                    &[self.cx.i32_type().const_int(alloc.offset, false)],
                    "",
                )?
            },
            None => {
                let index = self.shared.allocations.iter().position(|a| a.op == id).unwrap_or(0);
                let name = format!("{}_shared{index}", self.func.name);
                add_static_shared_array(self.module, &name, elem_ty, alloc.elements as u32, SHARED_ALIGN as u32)
                    .as_pointer_value()
            }
        };
        let extents = tile.shape.iter().map(|d| Extent::Static(d.as_static().unwrap_or(0))).collect();
        let layout = tile.layout.clone().unwrap_or(Layout::RowMajor);
        self.memrefs.insert(result, MemRef { base, space: MemorySpace::Shared, elem: tile.elem, extents, layout });
        Ok(())
    }

    /// Translates the ops of `block` in order. Returns the values of its `tile.yield`, if it ends with one.
    pub(super) fn translate_block(&mut self, block: BlockId) -> Result<Option<Vec<Value>>> {
        let body = &self.func.body;
        for &id in &body.block(block).ops {
            let op = body.op(id);
            match op.kind {
                OpKind::Yield => return Ok(Some(op.group("values").to_vec())),
                OpKind::Return => {
                    self.builder.build_return(None)?;
                    return Ok(None);
                }
                _ => self.translate_op(id)?,
            }
        }
        Ok(None)
    }

    /// One op, by kind.
    fn translate_op(&mut self, id: OpId) -> Result<()> {
        let op = self.func.body.op(id);
        match op.kind {
            OpKind::For => control::lower_for(self, id),
            OpKind::AllocShared => self.bind_shared_allocation(id),
            // nvgpu dialect: one function per op kind.
            OpKind::ThreadId => nvgpu::lower_thread_id(self, op),
            OpKind::LaneId => nvgpu::lower_lane_id(self, op),
            OpKind::WarpId => nvgpu::lower_warp_id(self, op),
            OpKind::LdMatrix => nvgpu::lower_ldmatrix(self, op),
            OpKind::StMatrix => nvgpu::lower_stmatrix(self, op),
            OpKind::MmaSync => nvgpu::lower_mma_sync(self, op),
            OpKind::DeviceAsyncCopy => nvgpu::lower_device_async_copy(self, op),
            OpKind::DeviceAsyncCreateGroup => nvgpu::lower_device_async_create_group(self, op),
            OpKind::DeviceAsyncWait => nvgpu::lower_device_async_wait(self, op),
            OpKind::Load => nvgpu::lower_load(self, op),
            OpKind::Store => nvgpu::lower_store(self, op),
            OpKind::Barrier => nvgpu::lower_barrier(self, op),
            OpKind::Extract => nvgpu::lower_extract(self, op),
            OpKind::Insert => nvgpu::lower_insert(self, op),
            // Per-thread tile ops.
            OpKind::Constant => scalar::lower_constant(self, op),
            OpKind::BlockId | OpKind::GridDim => scalar::lower_block_id(self, op),
            OpKind::Dim => scalar::lower_dim(self, op),
            k if k.is_binary_arith() => scalar::lower_binary(self, op),
            OpKind::Cmp => scalar::lower_cmp(self, op),
            OpKind::Select => scalar::lower_select(self, op),
            OpKind::Cast => scalar::lower_cast(self, op),
            OpKind::Fill => scalar::lower_fill(self, op),
            OpKind::Splat => scalar::lower_splat(self, op),
            OpKind::CopyG2S | OpKind::CopyS2R | OpKind::CopyR2S | OpKind::CopyR2G | OpKind::Mma | OpKind::Func => Err(
                self.unsupported(op, "it is a tile-level op; lower the kernel to the nvgpu dialect first"),
            ),
            OpKind::Yield | OpKind::Return => Err(self.unsupported(op, "it must end a block")),
            _ => Err(self.unsupported(op, "the LLVM backend does not translate it")),
        }
    }

    // ---- values ------------------------------------------------------------------------------------------

    /// The LLVM value of an IR register value.
    pub(super) fn value(&self, op: &Operation, v: Value) -> Result<BasicValueEnum<'ctx>> {
        self.values.get(&v).copied().ok_or_else(|| {
            let what = match self.func.body.ty(v) {
                Type::Tile(t) if t.space == MemorySpace::Register => {
                    "register tiles are tile-level values; lower the kernel to the nvgpu dialect first".to_string()
                }
                Type::Tile(_) => "it uses a memory tile as a value".to_string(),
                _ => "an operand is not defined before its use".to_string(),
            };
            self.unsupported(op, what)
        })
    }

    /// An operand that is an integer scalar.
    pub(super) fn int(&self, op: &Operation, v: Value) -> Result<IntValue<'ctx>> {
        match self.value(op, v)? {
            BasicValueEnum::IntValue(i) => Ok(i),
            _ => Err(self.unsupported(op, "an operand must be an integer")),
        }
    }

    /// An operand that is a vector.
    pub(super) fn vector(&self, op: &Operation, v: Value) -> Result<VectorValue<'ctx>> {
        match self.value(op, v)? {
            BasicValueEnum::VectorValue(x) => Ok(x),
            _ => Err(self.unsupported(op, "an operand must be a vector")),
        }
    }

    /// The memory tile an operand names.
    pub(super) fn memref(&self, op: &Operation, v: Value) -> Result<&MemRef<'ctx>> {
        self.memrefs
            .get(&v)
            .ok_or_else(|| self.unsupported(op, "its memory operand must be a kernel argument or a 'tile.alloc_shared'"))
    }

    /// Binds an IR value.
    pub(super) fn set(&mut self, v: Value, x: BasicValueEnum<'ctx>) {
        self.values.insert(v, x);
    }

    /// Binds the op's single result.
    pub(super) fn set_result(&mut self, op: &Operation, x: BasicValueEnum<'ctx>) -> Result<()> {
        let r = op.result().ok_or_else(|| self.unsupported(op, "it must have a result"))?;
        self.set(r, x);
        Ok(())
    }

    /// The LLVM type of the op's single result.
    pub(super) fn result_type(&self, op: &Operation) -> Result<(Type, BasicTypeEnum<'ctx>)> {
        let r = op.result().ok_or_else(|| self.unsupported(op, "it must have a result"))?;
        let ty = self.func.body.ty(r).clone();
        let llvm = types::value_type(self.cx, &ty)
            .ok_or_else(|| self.unsupported(op, format!("values of type '{ty}' are not supported by the LLVM backend")))?;
        Ok((ty, llvm))
    }

    // ---- errors ------------------------------------------------------------------------------------------

    /// An error at `op`.
    pub(super) fn unsupported(&self, op: &Operation, message: impl Into<String>) -> TranslateError {
        TranslateError::Unsupported {
            kernel: self.func.name.clone(),
            op: op.kind.name(),
            span: op.span,
            message: message.into(),
        }
    }

    fn error_at(&self, op: Option<&Operation>, name: &'static str, message: String) -> TranslateError {
        TranslateError::Unsupported {
            kernel: self.func.name.clone(),
            op: op.map_or(name, |o| o.kind.name()),
            span: op.map_or(self.func.span, |o| o.span),
            message,
        }
    }
}
