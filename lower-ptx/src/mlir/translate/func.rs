//! One kernel: its `gpu.func` entry, its shared memory, and the walk over its ops.

use std::collections::HashMap;
use std::fmt::Write as _;

use tilec_ir::body::{BlockId, Func, OpId, Operation, Value};
use tilec_ir::layout::Layout;
use tilec_ir::ops::OpKind;
use tilec_ir::types::{MemorySpace, ScalarType, Type};

use super::memory::{Extent, MemRef};
use super::{control, nvgpu, scalar, types, Result, TranslateError};
use crate::kernel_info::{AbiRole, KernelInfo, ParamKind, SharedPlan, SHARED_ALIGN};
use crate::target::Target;

/// The memory space of shared tiles (NVVM address space 3).
pub(super) const WORKGROUP: &str = "#gpu.address_space<workgroup>";

/// Emits one `tile.func` as a `gpu.func` (and its `memref.global`s for shared tiles).
pub(super) struct FuncEmitter<'a> {
    pub(super) func: &'a Func,
    pub(super) target: Target,
    shared: SharedPlan,
    info: KernelInfo,
    /// Module-level declarations (shared-memory globals).
    globals: String,
    /// The body being written.
    out: String,
    indent: usize,
    next: usize,
    /// Each IR register value: its SSA name and MLIR type.
    values: HashMap<Value, (String, String)>,
    memrefs: HashMap<Value, MemRef>,
    dynamic_shared: Option<String>,
    /// Async-copy tokens issued since the last group in the current region, and the token of the newest
    /// group visible here (for `nvgpu.device_async_wait`).
    pub(super) pending_copies: Vec<String>,
    pub(super) group_token: Option<String>,
}

impl<'a> FuncEmitter<'a> {
    pub(super) fn new(func: &'a Func, target: Target) -> Result<Self> {
        Ok(FuncEmitter {
            info: KernelInfo::from_func(func)?,
            shared: SharedPlan::new(func)?,
            func,
            target,
            globals: String::new(),
            out: String::new(),
            indent: 3,
            next: 0,
            values: HashMap::new(),
            memrefs: HashMap::new(),
            dynamic_shared: None,
            pending_copies: Vec::new(),
            group_token: None,
        })
    }

    /// Returns (module-level globals, the `gpu.func` text, the launch description).
    pub(super) fn translate(mut self) -> Result<(String, String, KernelInfo)> {
        let header = self.signature();
        self.bind_arguments()?;
        if self.shared.dynamic {
            // An `extern .shared` array, as in the LLVM backend (`gpu.dynamic_shared_memory` makes an internal
            // zero-sized global that NVPTX demotes to a 1-byte static variable).
            let symbol = format!("{}_dynamic_shared", self.func.name);
            let _ = writeln!(
                self.globals,
                "    llvm.mlir.global external @{symbol}() {{addr_space = 3 : i32, alignment = {SHARED_ALIGN} : i64}} : !llvm.array<0 x i8>"
            );
            let ptr = self.emit(&format!("llvm.mlir.addressof @{symbol} : !llvm.ptr<3>"));
            let size = self.emit(&format!("arith.constant {} : i64", self.shared.total_bytes));
            let name = self.memref_from_pointer(&ptr, &size, "3", &format!("memref<?xi8, {WORKGROUP}>"));
            self.dynamic_shared = Some(name);
        }
        let func = self.func;
        self.translate_block(func.entry)?;
        if !self.out.trim_end().ends_with("gpu.return") {
            self.line("gpu.return");
        }
        let text = format!("{header}{}    }}\n", self.out);
        Ok((self.globals, text, self.info))
    }

    /// `gpu.func @name(%A: !llvm.ptr<1> {llvm.noalias}, %A_dim0: i64, …) kernel attributes {…} {`.
    fn signature(&self) -> String {
        let written = self.written_arguments();
        let params: Vec<String> = self
            .info
            .abi
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let name = abi_name(&p.name, i);
                match p.role {
                    AbiRole::Pointer if written.contains(&p.arg) => format!("{name}: !llvm.ptr<1> {{llvm.noalias}}"),
                    AbiRole::Pointer => format!("{name}: !llvm.ptr<1> {{llvm.noalias, llvm.readonly}}"),
                    _ => format!("{name}: {}", abi_type(&p.ty)),
                }
            })
            .collect();
        let threads = self.info.threads_per_block();
        format!(
            "    gpu.func @{}({}) kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{\n",
            self.func.name,
            params.join(", ")
        )
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

    /// Binds each IR argument: a global tile to a `memref<?xT, 1>` built from its pointer (and its extents as
    /// `index` values), a scalar to its value.
    fn bind_arguments(&mut self) -> Result<()> {
        let mut next = 0usize;
        let func = self.func;
        for (index, &arg) in func.args().iter().enumerate() {
            match (&self.info.params[index].kind, func.body.ty(arg)) {
                (ParamKind::Tile { .. }, Type::Tile(tile)) => {
                    let ptr = abi_name(&self.info.abi[next].name, next);
                    next += 1;
                    let mut extents = Vec::with_capacity(tile.rank());
                    let mut size = self.emit("arith.constant 1 : i64");
                    for d in &tile.shape {
                        match d.as_static() {
                            Some(n) => {
                                let c = self.emit(&format!("arith.constant {n} : i64"));
                                size = self.emit(&format!("arith.muli {size}, {c} : i64"));
                                extents.push(Extent::Static(n));
                            }
                            None => {
                                let p = abi_name(&self.info.abi[next].name, next);
                                next += 1;
                                size = self.emit(&format!("arith.muli {size}, {p} : i64"));
                                let v = self.emit(&format!("arith.index_cast {p} : i64 to index"));
                                extents.push(Extent::Dynamic(v));
                            }
                        }
                    }
                    let elem = types::scalar_type(tile.elem)
                        .filter(|_| tile.elem.bit_width() >= 8)
                        .ok_or_else(|| self.arg_error(index, format!("global tiles of '{}' are not supported", tile.elem)))?;
                    let ty = format!("memref<?x{elem}, 1>");
                    let name = self.memref_from_pointer(&ptr, &size, "1", &ty);
                    let layout = tile.layout.clone().unwrap_or(Layout::RowMajor);
                    self.memrefs.insert(arg, MemRef { name, ty, space: MemorySpace::Global, elem: tile.elem, extents, layout });
                }
                (ParamKind::Scalar { .. }, Type::Scalar(s)) => {
                    let p = abi_name(&self.info.abi[next].name, next);
                    next += 1;
                    let (name, ty) = match s {
                        ScalarType::I1 => (self.emit(&format!("arith.trunci {p} : i8 to i1")), "i1".to_string()),
                        ScalarType::Index => (self.emit(&format!("arith.index_cast {p} : i64 to index")), "index".to_string()),
                        other => (p, types::scalar_type(*other).unwrap_or("f32").to_string()),
                    };
                    self.values.insert(arg, (name, ty));
                }
                _ => unreachable!("KernelInfo::from_func describes exactly these argument kinds"),
            }
        }
        Ok(())
    }

    /// A flat memref of type `ty` over `size` elements at the `!llvm.ptr<space>` `ptr`: its descriptor (pointer,
    /// pointer, offset 0, size, stride 1) cast to the memref type; `reconcile-unrealized-casts` folds it away.
    fn memref_from_pointer(&mut self, ptr: &str, size: &str, space: &str, ty: &str) -> String {
        let desc = format!("!llvm.struct<(ptr<{space}>, ptr<{space}>, i64, array<1 x i64>, array<1 x i64>)>");
        let zero = self.emit("arith.constant 0 : i64");
        let one = self.emit("arith.constant 1 : i64");
        let mut d = self.emit(&format!("llvm.mlir.undef : {desc}"));
        for (value, pos) in [(ptr, "0"), (ptr, "1"), (&zero, "2"), (size, "3, 0"), (&one, "4, 0")] {
            d = self.emit(&format!("llvm.insertvalue {value}, {d}[{pos}] : {desc}"));
        }
        self.emit(&format!("builtin.unrealized_conversion_cast {d} : {desc} to {ty}"))
    }

    /// The shared tile made by `tile.alloc_shared` `id`: a `memref.global` in address space 3, or a view of
    /// the dynamic shared memory at its planned offset.
    pub(super) fn bind_shared_allocation(&mut self, id: OpId) -> Result<()> {
        let op = self.func.body.op(id);
        let (Some(result), Some(alloc)) = (op.result(), self.shared.allocation(id).cloned()) else {
            return Err(self.unsupported(op, "it must produce a shared tile of static shape"));
        };
        let Type::Tile(tile) = self.func.body.ty(result) else {
            return Err(self.unsupported(op, "it must produce a shared tile"));
        };
        let elem = types::scalar_type(tile.elem)
            .filter(|_| tile.elem.bit_width() >= 8)
            .ok_or_else(|| self.unsupported(op, format!("shared tiles of '{}' are not supported", tile.elem)))?;
        let ty = format!("memref<{}x{elem}, {WORKGROUP}>", alloc.elements);
        let name = match self.dynamic_shared.clone() {
            Some(dynamic) => {
                let offset = self.emit(&format!("arith.constant {} : index", alloc.offset));
                self.emit(&format!("memref.view {dynamic}[{offset}][] : memref<?xi8, {WORKGROUP}> to {ty}"))
            }
            None => {
                let index = self.shared.allocations.iter().position(|a| a.op == id).unwrap_or(0);
                let symbol = format!("{}_shared{index}", self.func.name);
                let _ = writeln!(
                    self.globals,
                    "    memref.global \"private\" @{symbol} : {ty} = uninitialized {{alignment = {SHARED_ALIGN} : i64}}"
                );
                self.emit(&format!("memref.get_global @{symbol} : {ty}"))
            }
        };
        let extents = tile.shape.iter().map(|d| Extent::Static(d.as_static().unwrap_or(0))).collect();
        let layout = tile.layout.clone().unwrap_or(Layout::RowMajor);
        self.memrefs.insert(result, MemRef { name, ty, space: MemorySpace::Shared, elem: tile.elem, extents, layout });
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
                    self.line("gpu.return");
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
            _ => Err(self.unsupported(op, "the MLIR backend does not translate it")),
        }
    }

    // ---- text ----------------------------------------------------------------------------------------------

    /// Writes one line at the current indentation.
    pub(super) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A fresh SSA name.
    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%{}", self.next - 1)
    }

    /// Writes `%n = <rhs>` and returns `%n`.
    pub(super) fn emit(&mut self, rhs: &str) -> String {
        let name = self.fresh();
        self.line(&format!("{name} = {rhs}"));
        name
    }

    pub(super) fn push_indent(&mut self) {
        self.indent += 1;
    }

    pub(super) fn pop_indent(&mut self) {
        self.indent -= 1;
    }

    /// `arith.constant n : index`.
    pub(super) fn index_constant(&mut self, n: i64) -> String {
        self.emit(&format!("arith.constant {n} : index"))
    }

    // ---- values --------------------------------------------------------------------------------------------

    /// The SSA name and MLIR type of an IR register value.
    pub(super) fn value(&self, op: &Operation, v: Value) -> Result<(String, String)> {
        self.values.get(&v).cloned().ok_or_else(|| {
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

    /// The SSA name of an operand.
    pub(super) fn name(&self, op: &Operation, v: Value) -> Result<String> {
        self.value(op, v).map(|(n, _)| n)
    }

    /// The memory tile an operand names.
    pub(super) fn memref(&self, op: &Operation, v: Value) -> Result<&MemRef> {
        self.memrefs
            .get(&v)
            .ok_or_else(|| self.unsupported(op, "its memory operand must be a kernel argument or a 'tile.alloc_shared'"))
    }

    /// Binds an IR value to an SSA name of MLIR type `ty`.
    pub(super) fn set(&mut self, v: Value, name: String, ty: String) {
        self.values.insert(v, (name, ty));
    }

    /// Binds the op's single result.
    pub(super) fn set_result(&mut self, op: &Operation, name: String) -> Result<()> {
        let r = op.result().ok_or_else(|| self.unsupported(op, "it must have a result"))?;
        let (_, ty) = self.result_type(op)?;
        self.set(r, name, ty);
        Ok(())
    }

    /// The IR type and MLIR type of the op's single result.
    pub(super) fn result_type(&self, op: &Operation) -> Result<(Type, String)> {
        let r = op.result().ok_or_else(|| self.unsupported(op, "it must have a result"))?;
        let ty = self.func.body.ty(r).clone();
        let mlir = types::value_type(&ty)
            .ok_or_else(|| self.unsupported(op, format!("values of type '{ty}' are not supported by the MLIR backend")))?;
        Ok((ty, mlir))
    }

    // ---- errors --------------------------------------------------------------------------------------------

    /// An error at `op`.
    pub(super) fn unsupported(&self, op: &Operation, message: impl Into<String>) -> TranslateError {
        TranslateError::Unsupported { kernel: self.func.name.clone(), op: op.kind.name(), span: op.span, message: message.into() }
    }

    fn arg_error(&self, index: usize, message: String) -> TranslateError {
        TranslateError::Unsupported {
            kernel: self.func.name.clone(),
            op: "tile.func",
            span: self.func.span,
            message: format!("argument #{index}: {message}"),
        }
    }
}

/// The SSA name of an entry parameter (its ABI name when that is a valid MLIR identifier).
fn abi_name(name: &str, index: usize) -> String {
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'));
    if valid {
        format!("%{name}")
    } else {
        format!("%arg{index}")
    }
}

/// The MLIR type of a scalar entry parameter (as `KernelInfo` writes it).
fn abi_type(ty: &str) -> &str {
    match ty {
        "i64" | "i32" | "i8" | "f16" | "bf16" | "f32" | "f64" => ty,
        _ => "i64",
    }
}
