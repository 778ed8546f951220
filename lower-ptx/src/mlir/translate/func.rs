//! One kernel: its `gpu.func` entry, its arguments and shared memory ([`EmitKernel`]), the text being written
//! and the values the ops read and write. The walk over the ops is the spine's ([`crate::spine::emit_kernel`]).

use std::fmt::Write as _;

use tilec_ir::body::{Func, Operation, Value};
use tilec_ir::types::{MemorySpace, ScalarType, Type};

use super::{types, Result, TranslateError};
use crate::kernel_info::AbiRole;
use crate::spine::{Argument, EmitKernel, Extent, Kernel, MemRef, MemRefs, SharedTile, Values};

/// The memory space of shared tiles (NVVM address space 3).
pub(super) const WORKGROUP: &str = "#gpu.address_space<workgroup>";

/// A flat 1-D memref: its SSA name and its MLIR type (`memref<?xf16, 1>`,
/// `memref<256xf16, #gpu.address_space<workgroup>>`).
#[derive(Clone, Debug)]
pub(super) struct FlatView {
    pub name: String,
    pub ty: String,
}

/// A memory tile in MLIR: its flat view, `index` dynamic extents.
pub(super) type MlirMemRef = MemRef<FlatView, String>;

/// Emits one `tile.func` as a `gpu.func` (and its `memref.global`s for shared tiles).
pub(super) struct FuncEmitter<'a> {
    pub(super) kernel: &'a Kernel<'a>,
    pub(super) func: &'a Func,
    /// Module-level declarations (shared-memory globals).
    globals: String,
    /// The `gpu.func` line.
    header: String,
    /// The body being written.
    out: String,
    indent: usize,
    next: usize,
    /// Each IR register value: its SSA name and MLIR type.
    values: Values<(String, String)>,
    memrefs: MemRefs<FlatView, String>,
    dynamic_shared: Option<String>,
    /// Async-copy tokens issued since the last group in the current region, and the token of the newest
    /// group visible here (for `nvgpu.device_async_wait`).
    pub(super) pending_copies: Vec<String>,
    pub(super) group_token: Option<String>,
    /// Each tensor map's parameter (an `!llvm.ptr` to the `byval` 128 bytes), by map number.
    pub(super) tensor_maps: std::collections::HashMap<usize, String>,
}

impl<'a> FuncEmitter<'a> {
    pub(super) fn new(kernel: &'a Kernel<'a>) -> Self {
        FuncEmitter {
            kernel,
            func: kernel.func,
            globals: String::new(),
            header: String::new(),
            out: String::new(),
            indent: 3,
            next: 0,
            values: Values::new(),
            memrefs: MemRefs::new(),
            dynamic_shared: None,
            pending_copies: Vec::new(),
            group_token: None,
            tensor_maps: std::collections::HashMap::new(),
        }
    }

    /// (module-level globals, the `gpu.func` text).
    pub(super) fn finish(self) -> (String, String) {
        let text = format!("{}{}    }}\n", self.header, self.out);
        (self.globals, text)
    }

    /// `gpu.func @name(%A: !llvm.ptr<1> {llvm.noalias}, %A_dim0: i64, …) kernel attributes {…} {`.
    fn signature(&self) -> String {
        let params: Vec<String> = self
            .kernel
            .info
            .abi
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let name = abi_name(&p.name, i);
                match p.role {
                    AbiRole::TensorMap(_) => {
                        format!("{name}: !llvm.ptr {{llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}}")
                    }
                    AbiRole::Pointer if self.kernel.written.contains(&p.arg) => format!("{name}: !llvm.ptr<1> {{llvm.noalias}}"),
                    AbiRole::Pointer => format!("{name}: !llvm.ptr<1> {{llvm.noalias, llvm.readonly}}"),
                    _ => format!("{name}: {}", abi_type(&p.ty)),
                }
            })
            .collect();
        let threads = self.kernel.info.threads_per_block();
        if self.is_llvm_func() {
            // `gpu.func` cannot carry `nvvm.grid_constant` (nor does its lowering keep `llvm.byval`), so a kernel
            // with tensor maps is an `llvm.func` kernel from the start; the pipeline converts its body alike.
            return format!(
                "    llvm.func @{}({}) attributes {{nvvm.kernel, nvvm.maxntid = array<i32: {threads}, 1, 1>}} {{\n",
                self.func.name,
                params.join(", ")
            );
        }
        format!(
            "    gpu.func @{}({}) kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{\n",
            self.func.name,
            params.join(", ")
        )
    }

    /// Whether the kernel is an `llvm.func` (it has tensor-map parameters) rather than a `gpu.func`.
    fn is_llvm_func(&self) -> bool {
        !self.kernel.tensor_maps.is_empty()
    }

    /// The return op of the kernel's function kind.
    fn return_op(&self) -> &'static str {
        if self.is_llvm_func() { "llvm.return" } else { "gpu.return" }
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
        self.values.get(self.func, op, v)
    }

    /// The SSA name of an operand.
    pub(super) fn name(&self, op: &Operation, v: Value) -> Result<String> {
        self.value(op, v).map(|(n, _)| n)
    }

    /// The memory tile an operand names.
    pub(super) fn memref(&self, op: &Operation, v: Value) -> Result<&MlirMemRef> {
        self.memrefs.get(self.func, op, v)
    }

    /// Binds an IR value to an SSA name of MLIR type `ty`.
    pub(super) fn set(&mut self, v: Value, name: String, ty: String) {
        self.values.insert(v, (name, ty));
    }

    /// Binds the op's single result.
    pub(super) fn set_result(&mut self, op: &Operation, name: String) -> Result<()> {
        let r = self.kernel.result(op)?;
        let (_, ty) = self.result_type(op)?;
        self.set(r, name, ty);
        Ok(())
    }

    /// The IR type and MLIR type of the op's single result.
    pub(super) fn result_type(&self, op: &Operation) -> Result<(Type, String)> {
        let ty = self.kernel.result_type(op)?;
        let mlir = types::value_type(&ty)
            .ok_or_else(|| self.kernel.unsupported(op, format!("values of type '{ty}' are not supported by the MLIR backend")))?;
        Ok((ty, mlir))
    }
}

impl EmitKernel for FuncEmitter<'_> {
    fn begin_kernel(&mut self) -> Result<()> {
        self.header = self.signature();
        Ok(())
    }

    /// A global tile: a `memref<?xT, 1>` built from its pointer (and its extents as `index` values); a scalar:
    /// its value (`i1` passed as `i8`, `index` as `i64`).
    fn bind_argument(&mut self, argument: Argument<'_>) -> Result<()> {
        let abi = &self.kernel.info.abi;
        match argument {
            Argument::Tile { value, index, tile, pointer, extents } => {
                let ptr = abi_name(&abi[pointer].name, pointer);
                let mut bound = Vec::with_capacity(extents.len());
                let mut size = self.emit("arith.constant 1 : i64");
                for e in extents {
                    match e {
                        Extent::Static(n) => {
                            let c = self.emit(&format!("arith.constant {n} : i64"));
                            size = self.emit(&format!("arith.muli {size}, {c} : i64"));
                            bound.push(Extent::Static(n));
                        }
                        Extent::Dynamic(param) => {
                            let p = abi_name(&abi[param].name, param);
                            size = self.emit(&format!("arith.muli {size}, {p} : i64"));
                            let v = self.emit(&format!("arith.index_cast {p} : i64 to index"));
                            bound.push(Extent::Dynamic(v));
                        }
                    }
                }
                // The memref needs an element type at the argument (the LLVM backend's pointer does not).
                let elem = types::scalar_type(tile.elem)
                    .filter(|_| tile.elem.bit_width() >= 8)
                    .ok_or_else(|| self.arg_error(index, format!("global tiles of '{}' are not supported", tile.elem)))?;
                let ty = format!("memref<?x{elem}, 1>");
                let name = self.memref_from_pointer(&ptr, &size, "1", &ty);
                self.memrefs.insert(value, MemRef::new(FlatView { name, ty }, MemorySpace::Global, tile, bound));
            }
            Argument::Scalar { value, ty, param } => {
                let p = abi_name(&abi[param].name, param);
                let (name, mlir) = match ty {
                    ScalarType::I1 => (self.emit(&format!("arith.trunci {p} : i8 to i1")), "i1".to_string()),
                    ScalarType::Index => (self.emit(&format!("arith.index_cast {p} : i64 to index")), "index".to_string()),
                    other => (p, types::scalar_type(other).unwrap_or("f32").to_string()),
                };
                self.set(value, name, mlir);
            }
        }
        Ok(())
    }

    /// An `extern .shared` array, as in the LLVM backend (`gpu.dynamic_shared_memory` makes an internal
    /// zero-sized global that NVPTX demotes to a 1-byte static variable).
    fn bind_dynamic_shared(&mut self) -> Result<()> {
        let symbol = format!("{}_dynamic_shared", self.func.name);
        let _ = writeln!(
            self.globals,
            "    llvm.mlir.global external @{symbol}() {{addr_space = 3 : i32, alignment = {} : i64}} : !llvm.array<0 x i8>",
            self.kernel.dynamic_shared_align()
        );
        let ptr = self.emit(&format!("llvm.mlir.addressof @{symbol} : !llvm.ptr<3>"));
        let size = self.emit(&format!("arith.constant {} : i64", self.kernel.shared.total_bytes));
        let name = self.memref_from_pointer(&ptr, &size, "3", &format!("memref<?xi8, {WORKGROUP}>"));
        self.dynamic_shared = Some(name);
        Ok(())
    }

    fn bind_tensor_map(&mut self, map: usize, param: usize) -> Result<()> {
        let abi = &self.kernel.info.abi;
        self.tensor_maps.insert(map, abi_name(&abi[param].name, param));
        Ok(())
    }

    fn end_kernel(&mut self) -> Result<()> {
        let ret = self.return_op();
        if !self.out.trim_end().ends_with(ret) {
            self.line(ret);
        }
        Ok(())
    }

    fn return_(&mut self, _op: &Operation) -> Result<()> {
        self.line(self.return_op());
        Ok(())
    }

    /// A `memref.global` in address space 3, or a view of the dynamic shared memory at its planned offset.
    fn alloc_shared(&mut self, _op: &Operation, tile: SharedTile<'_>) -> Result<()> {
        let elem = types::scalar_type(tile.tile.elem).ok_or_else(|| super::internal("shared tiles are addressable"))?;
        let ty = format!("memref<{}x{elem}, {WORKGROUP}>", tile.elements);
        let name = match self.dynamic_shared.clone() {
            Some(dynamic) => {
                let offset = self.emit(&format!("arith.constant {} : index", tile.offset));
                self.emit(&format!("memref.view {dynamic}[{offset}][] : memref<?xi8, {WORKGROUP}> to {ty}"))
            }
            None => {
                let symbol = format!("{}_shared{}", self.func.name, tile.index);
                let _ = writeln!(
                    self.globals,
                    "    memref.global \"private\" @{symbol} : {ty} = uninitialized {{alignment = {} : i64}}",
                    tile.align
                );
                self.emit(&format!("memref.get_global @{symbol} : {ty}"))
            }
        };
        self.memrefs.insert(tile.result, tile.memref(FlatView { name, ty }));
        Ok(())
    }
}

impl FuncEmitter<'_> {
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
