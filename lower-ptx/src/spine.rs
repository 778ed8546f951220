//! The backend spine: one walk over a kernel's nvgpu-level IR, which the LLVM emitter (`llvm::translate`) and
//! the MLIR emitter (`mlir::translate`) both implement (Cranelift's `LowerBackend`, naga's `back/`).
//!
//! [`emit_kernel`] reads top to bottom: the entry point, its arguments, the dynamic shared memory, then every
//! op in order (into `tile.for` bodies), each decoded once into its typed view ([`typed::AnyOp`]) and handed
//! to the emitter: one method per op kind, [`EmitNvgpu`] for the nvgpu dialect and [`EmitScalar`] for the
//! per-thread `tile` ops, plus the structure the walk needs ([`EmitKernel`]: entry, arguments, shared tiles;
//! [`EmitLoop`]: `tile.for`). [`Emitter`] is the four together.
//!
//! Legality is checked once: the verifier checks the ops' attributes and shapes; this walk checks, for both
//! backends at once, what depends on the target (`stmatrix` needs sm_90) or that only a backend cares about
//! (tile-level ops left over, memory accesses through layouts, shared and accessed element types, async copy
//! sizes). An emitter checks only its own limits (which `mma.sync` variants it translates) and names itself in
//! those messages.

use std::collections::HashMap;

use tilec_ir::body::{BlockId, Func, Module, OpId, Operation, Value};
use tilec_ir::layout::Layout;
use tilec_ir::ops::typed::{self, AnyOp};
use tilec_ir::ops::{Literal, UnaryMath};
use tilec_ir::types::{MemorySpace, ScalarType, TileType, Type};

use crate::kernel_info::{KernelInfo, ParamKind, SharedPlan, SHARED_ALIGN};
use tilec_ir::tma::TensorMap;
use crate::target::Target;
use crate::translation::{internal, TranslateError};

/// Result alias of the translation.
pub(crate) type Result<T, E = TranslateError> = std::result::Result<T, E>;

// ---- the kernel -----------------------------------------------------------------------------------------------

/// What both emitters know of a kernel before emitting it: its launch description, its shared memory plan and
/// the arguments it writes.
pub(crate) struct Kernel<'a> {
    pub func: &'a Func,
    pub target: Target,
    pub info: KernelInfo,
    pub shared: SharedPlan,
    /// The arguments some `nvgpu.store` writes (the others are read-only).
    pub written: Vec<usize>,
    /// The tensor maps of the kernel's TMA ops, in parameter order ([`KernelInfo::tensor_maps`]).
    pub tensor_maps: Vec<TensorMap>,
    /// Shared tiles that need more than [`SHARED_ALIGN`]: a swizzled TMA tile starts at a multiple of its
    /// mode's repeat (1024 bytes for 128B), so that the address-based swizzle is the tile's own.
    pub shared_align: HashMap<Value, u64>,
}

impl<'a> Kernel<'a> {
    pub fn new(func: &'a Func, target: Target) -> Result<Kernel<'a>> {
        let tensor_maps = tilec_ir::tma::kernel_tensor_maps(func);
        Ok(Kernel {
            func,
            target,
            info: KernelInfo::from_func(func)?,
            shared: SharedPlan::new(func)?,
            written: written_arguments(func),
            tensor_maps,
            shared_align: tilec_ir::shared_memory::tile_alignments(func),
        })
    }

    /// The alignment the dynamic shared memory needs: [`SHARED_ALIGN`], or more for a swizzled TMA tile.
    pub fn dynamic_shared_align(&self) -> u64 {
        self.shared_align.values().copied().fold(SHARED_ALIGN, u64::max)
    }

    /// The number of the tensor map of the TMA op `op` (between `tensor` and the shared tile `shared`).
    fn tensor_map(&self, op: &Operation, tensor: Value, shared: Value) -> Result<usize> {
        let map = tilec_ir::tma::tensor_map_of(self.func, tensor, shared).map_err(|m| self.unsupported(op, m))?;
        self.tensor_maps.iter().position(|m| *m == map).ok_or_else(|| internal("every TMA op's map is a kernel tensor map"))
    }

    /// An error at `op` in this kernel.
    pub fn unsupported(&self, op: &Operation, message: impl Into<String>) -> TranslateError {
        unsupported(self.func, op, message)
    }

    /// The single result of `op`.
    pub fn result(&self, op: &Operation) -> Result<Value> {
        op.result().ok_or_else(|| self.unsupported(op, "it must have a result"))
    }

    /// The IR type of the single result of `op`.
    pub fn result_type(&self, op: &Operation) -> Result<Type> {
        Ok(self.func.body.ty(self.result(op)?).clone())
    }

    /// The kernel's arguments with their ABI parameters (indices into [`KernelInfo::abi`]).
    fn arguments(&self) -> Result<Vec<Argument<'a>>> {
        let func = self.func;
        let mut next = 0usize;
        let mut arguments = Vec::with_capacity(func.args().len());
        for (index, &value) in func.args().iter().enumerate() {
            let kind = self.info.params.get(index).map(|p| &p.kind);
            match (kind, func.body.ty(value)) {
                (Some(ParamKind::Tile { .. }), Type::Tile(tile)) => {
                    let pointer = next;
                    next += 1;
                    let extents = tile
                        .shape
                        .iter()
                        .map(|d| match d.as_static() {
                            Some(n) => Extent::Static(n),
                            None => {
                                next += 1;
                                Extent::Dynamic(next - 1)
                            }
                        })
                        .collect();
                    arguments.push(Argument::Tile { value, index, tile, pointer, extents });
                }
                (Some(ParamKind::Scalar { .. }), Type::Scalar(ty)) => {
                    arguments.push(Argument::Scalar { value, ty: *ty, param: next });
                    next += 1;
                }
                _ => return Err(internal("KernelInfo::from_func describes every argument")),
            }
        }
        Ok(arguments)
    }

    /// The shared tile made by the `tile.alloc_shared` op `id`.
    fn shared_tile(&self, id: OpId, op: &Operation) -> Result<SharedTile<'a>> {
        let body = &self.func.body;
        let (Some(result), Some(alloc)) = (op.result(), self.shared.allocation(id)) else {
            return Err(self.unsupported(op, "it must produce a shared tile of static shape"));
        };
        let Type::Tile(tile) = body.ty(result) else {
            return Err(self.unsupported(op, "it must produce a shared tile"));
        };
        if !addressable(tile.elem) {
            return Err(self.unsupported(op, format!("shared tiles of '{}' are not supported", tile.elem)));
        }
        let index = self.shared.allocations.iter().position(|a| a.op == id).unwrap_or(0);
        let align = self.shared_align.get(&result).copied().unwrap_or(SHARED_ALIGN);
        if self.shared.dynamic && !alloc.offset.is_multiple_of(align) {
            return Err(self.unsupported(
                op,
                format!("a swizzled TMA tile (or one a wgmma descriptor reads) must start at a multiple of {align} bytes; the dynamic shared memory places it at {}", alloc.offset),
            ));
        }
        Ok(SharedTile { result, tile, offset: alloc.offset, elements: alloc.elements, index, align })
    }
}

/// An error at `op` of `func`.
pub(crate) fn unsupported(func: &Func, op: &Operation, message: impl Into<String>) -> TranslateError {
    TranslateError::Unsupported { kernel: func.name.clone(), op: op.kind.name(), span: op.span, message: message.into() }
}

/// The arguments some op writes (`nvgpu.store` into a global tile, a TMA store).
fn written_arguments(func: &Func) -> Vec<usize> {
    let body = &func.body;
    let args = func.args();
    let mut written = Vec::new();
    body.walk(func.entry, &mut |id| {
        let dst = match body.op(id).view::<typed::Store>() {
            Some(store) => Some(store.dst),
            None => body.op(id).view::<typed::TmaAsyncStore>().map(|s| s.tensor),
        };
        if let Some(i) = dst.and_then(|dst| args.iter().position(|&a| a == dst)) {
            written.push(i);
        }
    });
    written
}

/// Kernel names are unique in a module (each is a PTX entry).
pub(crate) fn check_kernel_names(module: &Module) -> Result<()> {
    for (i, func) in module.funcs.iter().enumerate() {
        if module.funcs[..i].iter().any(|f| f.name == func.name) {
            return Err(TranslateError::Unsupported {
                kernel: func.name.clone(),
                op: "tile.func",
                span: func.span,
                message: format!("a kernel named @{} is already defined", func.name),
            });
        }
    }
    Ok(())
}

/// A kernel argument and the entry parameters that carry it.
pub(crate) enum Argument<'a> {
    /// A global tile (argument number `index`): a pointer parameter, and one `i64` parameter per dynamic extent.
    Tile {
        value: Value,
        /// Read by the MLIR emitter only (its memref type needs the element type at the argument).
        #[cfg_attr(not(feature = "mlir"), allow(dead_code))]
        index: usize,
        tile: &'a TileType,
        pointer: usize,
        extents: Vec<Extent<usize>>,
    },
    /// A scalar (`i1` is passed as `i8`).
    Scalar { value: Value, ty: ScalarType, param: usize },
}

/// A shared tile of a `tile.alloc_shared`: where the [`SharedPlan`] puts it.
pub(crate) struct SharedTile<'a> {
    pub result: Value,
    pub tile: &'a TileType,
    /// In bytes from the start of the dynamic shared memory (when the plan is dynamic).
    pub offset: u64,
    pub elements: u64,
    /// Its number among the kernel's shared tiles (names its static array).
    pub index: usize,
    /// The alignment of its static array in bytes ([`SHARED_ALIGN`], or a TMA swizzle's repeat).
    pub align: u64,
}

impl SharedTile<'_> {
    /// The tile at `base`.
    pub fn memref<B, X>(&self, base: B) -> MemRef<B, X> {
        let extents = self.tile.shape.iter().map(|d| Extent::Static(d.as_static().unwrap_or(0))).collect();
        MemRef::new(base, MemorySpace::Shared, self.tile, extents)
    }
}

// ---- values and memory tiles ----------------------------------------------------------------------------------

/// Each IR register value's value in the backend.
pub(crate) struct Values<V>(HashMap<Value, V>);

impl<V: Clone> Values<V> {
    pub fn new() -> Self {
        Values(HashMap::new())
    }

    /// The backend value of `v`, an operand of `op`.
    pub fn get(&self, func: &Func, op: &Operation, v: Value) -> Result<V> {
        self.0.get(&v).cloned().ok_or_else(|| {
            let what = match func.body.ty(v) {
                Type::Tile(t) if t.space == MemorySpace::Register => {
                    "register tiles are tile-level values; lower the kernel to the nvgpu dialect first"
                }
                Type::Tile(_) => "it uses a memory tile as a value",
                _ => "an operand is not defined before its use",
            };
            unsupported(func, op, what)
        })
    }

    pub fn insert(&mut self, v: Value, x: V) {
        self.0.insert(v, x);
    }
}

/// The memory tiles (kernel arguments and shared tiles) by IR value.
pub(crate) struct MemRefs<B, X>(HashMap<Value, MemRef<B, X>>);

impl<B, X> MemRefs<B, X> {
    pub fn new() -> Self {
        MemRefs(HashMap::new())
    }

    /// The memory tile `v`, an operand of `op`.
    pub fn get(&self, func: &Func, op: &Operation, v: Value) -> Result<&MemRef<B, X>> {
        self.0
            .get(&v)
            .ok_or_else(|| unsupported(func, op, "its memory operand must be a kernel argument or a 'tile.alloc_shared'"))
    }

    pub fn insert(&mut self, v: Value, memref: MemRef<B, X>) {
        self.0.insert(v, memref);
    }
}

/// One extent of a memory tile: known when compiling, or a kernel parameter (its backend value, or its ABI
/// index in an [`Argument`]). The layout crate's, so a backend passes a tile's extents straight to
/// `Layout::offset_with`.
pub(crate) use tilec_ir::layout::Extent;

/// A global or shared tile: where its first element is (`B`: the backend's pointer or view), and how indices map
/// to elements (`X`: the backend's value of a dynamic extent).
#[derive(Clone, Debug)]
pub(crate) struct MemRef<B, X> {
    pub base: B,
    pub space: MemorySpace,
    pub elem: ScalarType,
    pub extents: Vec<Extent<X>>,
    pub layout: Layout,
}

impl<B, X> MemRef<B, X> {
    /// The tile `tile` at `base` (row-major unless it has a layout).
    pub fn new(base: B, space: MemorySpace, tile: &TileType, extents: Vec<Extent<X>>) -> Self {
        MemRef { base, space, elem: tile.elem, extents, layout: tile.layout.clone().unwrap_or(Layout::RowMajor) }
    }

    /// Extent `axis` (of `tile.dim` `op`).
    pub fn extent(&self, func: &Func, op: &Operation, axis: u32) -> Result<&Extent<X>> {
        self.extents.get(axis as usize).ok_or_else(|| unsupported(func, op, format!("axis {axis} is out of range")))
    }

    /// An access of `run` contiguous elements at `indices` (one per axis) into this tile: the rank, the element
    /// type, and whether the layout keeps the run contiguous.
    pub fn check_access(&self, func: &Func, op: &Operation, indices: usize, run: u64) -> Result<()> {
        let rank = self.extents.len();
        if indices != rank {
            return Err(unsupported(func, op, format!("a rank-{rank} tile needs {rank} indices")));
        }
        if !self.keeps_contiguous(run) {
            return Err(unsupported(
                func,
                op,
                format!("it accesses {run} contiguous elements, which the layout {} does not keep contiguous", self.layout),
            ));
        }
        if !addressable(self.elem) {
            return Err(unsupported(func, op, format!("memory of '{}' elements is not supported", self.elem)));
        }
        Ok(())
    }

    /// Whether `run` elements consecutive in the base layout's storage order stay consecutive in memory.
    fn keeps_contiguous(&self, run: u64) -> bool {
        fn check(layout: &Layout, run: u64) -> bool {
            match layout {
                // A run follows the storage order: the last axis, or down a column of a col-major tile.
                Layout::RowMajor | Layout::ColMajor => true,
                Layout::Swizzled { swizzle, base } => (swizzle.bits == 0 || (1u64 << swizzle.base) >= run) && check(base, run),
                // A `#linear` memory layout (column panels) keeps runs within its lowest contiguous bits.
                Layout::Linear(_) => layout.linear_contiguous_run().is_some_and(|n| n >= run),
                _ => false,
            }
        }
        run <= 1 || check(&self.layout, run)
    }
}

/// Whether tiles of `elem` can be in memory for the backends (whole bytes, not fp8).
pub(crate) fn addressable(elem: ScalarType) -> bool {
    elem.bit_width() >= 8 && !matches!(elem, ScalarType::F8E4M3 | ScalarType::F8E5M2)
}

/// Bytes of `count` elements of `ty` (whole bytes only).
pub(crate) fn bytes_of(ty: ScalarType, count: u64) -> u64 {
    count * u64::from(ty.bit_width()) / 8
}

/// The elements a load or store of `ty` moves (a vector's, or one).
pub(crate) fn access_count(ty: &Type) -> u64 {
    match ty {
        Type::Vector(v) => v.num_elements(),
        _ => 1,
    }
}

/// Byte alignment of an access of `count` elements: its size rounded down to a power of two, at most 16.
pub(crate) fn access_alignment(elem: ScalarType, count: u64) -> u64 {
    let bytes = bytes_of(elem, count).max(1);
    (1u64 << bytes.trailing_zeros()).min(16)
}

/// The elements of one `ldmatrix` row (16 bytes: 8 16-bit elements, or 16 8-bit ones) of the tile `src`.
pub(crate) fn ldmatrix_row_elements(func: &Func, src: Value) -> u64 {
    128 / u64::from(func.body.ty(src).element_type().bit_width().max(1))
}

/// tf32 rounding at compile time (as the interpreter does it): round to nearest even at mantissa bit 13.
pub(crate) fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let lsb = (bits >> 13) & 1;
    f32::from_bits(bits.wrapping_add(0x0fff + lsb) & !0x1fff)
}

// ---- the emitter ----------------------------------------------------------------------------------------------

/// The kernel around the ops: entry point, arguments, shared memory, return.
pub(crate) trait EmitKernel {
    /// The entry point (parameters from [`KernelInfo::abi`], launch bounds); the ops follow.
    fn begin_kernel(&mut self) -> Result<()>;
    /// Binds one kernel argument to its entry parameters.
    fn bind_argument(&mut self, argument: Argument<'_>) -> Result<()>;
    /// The kernel's dynamic shared memory (only when the [`SharedPlan`] is dynamic).
    fn bind_dynamic_shared(&mut self) -> Result<()>;
    /// Binds tensor map `map` ([`Kernel::tensor_maps`]) to its entry parameter `param`.
    fn bind_tensor_map(&mut self, map: usize, param: usize) -> Result<()>;
    /// Ends the kernel after its last op (a return unless the body ended with one).
    fn end_kernel(&mut self) -> Result<()>;
    /// `tile.return`.
    fn return_(&mut self, op: &Operation) -> Result<()>;
    /// `tile.alloc_shared`: binds its result to the tile.
    fn alloc_shared(&mut self, op: &Operation, tile: SharedTile<'_>) -> Result<()>;
}

/// `tile.for`, around the walk of its body.
pub(crate) trait EmitLoop {
    /// What the emitter keeps from the start of a loop to its end.
    type Loop;

    /// Starts `tile.for`: binds the induction variable `iv` and the loop-carried body arguments `carried`.
    fn begin_for(&mut self, op: &Operation, v: &typed::For, iv: Value, carried: &[Value]) -> Result<Self::Loop>;
    /// Ends `tile.for` after its body, which yielded `yielded` (as many as `carried`); binds its results.
    fn end_for(&mut self, op: &Operation, lp: Self::Loop, yielded: &[Value]) -> Result<()>;
}

/// The nvgpu dialect: one method per op kind (as MLIR's `NVGPUToNVVM` has one pattern per op).
pub(crate) trait EmitNvgpu {
    fn thread_id(&mut self, op: &Operation, v: &typed::ThreadId) -> Result<()>;
    fn lane_id(&mut self, op: &Operation, v: &typed::LaneId) -> Result<()>;
    fn warp_id(&mut self, op: &Operation, v: &typed::WarpId) -> Result<()>;
    fn ldmatrix(&mut self, op: &Operation, v: &typed::LdMatrix) -> Result<()>;
    /// Only for targets with `stmatrix` (the walk checks `OpKind::min_target`).
    fn stmatrix(&mut self, op: &Operation, v: &typed::StMatrix) -> Result<()>;
    /// A and B of one element type (checked by the walk).
    fn mma_sync(&mut self, op: &Operation, v: &typed::MmaSync) -> Result<()>;
    /// 4, 8 or 16 bytes of whole-byte elements (checked by the walk).
    fn device_async_copy(&mut self, op: &Operation, v: &typed::DeviceAsyncCopy) -> Result<()>;
    fn device_async_create_group(&mut self, op: &Operation, v: &typed::DeviceAsyncCreateGroup) -> Result<()>;
    fn device_async_wait(&mut self, op: &Operation, v: &typed::DeviceAsyncWait) -> Result<()>;
    fn barrier(&mut self, op: &Operation, v: &typed::Barrier) -> Result<()>;
    fn load(&mut self, op: &Operation, v: &typed::Load) -> Result<()>;
    fn store(&mut self, op: &Operation, v: &typed::Store) -> Result<()>;
    /// `position` inside the vector's shape (checked by the walk).
    fn extract(&mut self, op: &Operation, v: &typed::Extract) -> Result<()>;
    /// `position` inside the vector's shape (checked by the walk).
    fn insert(&mut self, op: &Operation, v: &typed::Insert) -> Result<()>;
    // ---- reductions (issue 16) ----
    /// A 32-bit scalar (f32 or i32, checked by the verifier), `xor` over the full warp.
    fn shuffle(&mut self, op: &Operation, v: &typed::Shuffle) -> Result<()>;
}

/// The Hopper ops of the nvgpu dialect (issue 18): one method per op kind, in each backend's own `hopper`
/// module. `nvgpu.mbarrier.create` is bound like a shared tile ([`EmitKernel::alloc_shared`]: the placement
/// counts it as one); the walk has checked the target (sm_90).
pub(crate) trait EmitHopper {
    /// Only the threads where `predicate` (if any) is true initialize.
    fn mbarrier_init(&mut self, op: &Operation, v: &typed::MBarrierInit) -> Result<()>;
    fn mbarrier_arrive(&mut self, op: &Operation, v: &typed::MBarrierArrive) -> Result<()>;
    fn mbarrier_arrive_expect_tx(&mut self, op: &Operation, v: &typed::MBarrierArriveExpectTx) -> Result<()>;
    /// A blocking wait: loops on `mbarrier.try_wait.parity` until the phase has completed.
    fn mbarrier_try_wait_parity(&mut self, op: &Operation, v: &typed::MBarrierTryWaitParity) -> Result<()>;
    /// `wgmma.fence.sync.aligned` (sm_90a).
    fn wgmma_fence(&mut self, op: &Operation, v: &typed::WgmmaFence) -> Result<()>;
    /// `wgmma.commit_group.sync.aligned` (sm_90a).
    fn wgmma_commit_group(&mut self, op: &Operation, v: &typed::WgmmaCommitGroup) -> Result<()>;
    /// `wgmma.wait_group.sync.aligned N` (sm_90a).
    fn wgmma_wait_group(&mut self, op: &Operation, v: &typed::WgmmaWaitGroup) -> Result<()>;
    /// The 64-bit matrix descriptor of `%tensor[indices]` (sm_90a): `((address & 0x3ffff) >> 4)` or'ed with
    /// the constant fields ([`wgmma_descriptor_bits`]).
    fn warpgroup_generate_descriptor(&mut self, op: &Operation, v: &typed::WarpgroupGenerateDescriptor) -> Result<()>;
    /// One `wgmma.mma_async.sync.aligned.m64nNkK` with B in shared memory and A in shared memory or, when
    /// `descriptor_a` is a vector, in registers (sm_90a; [`wgmma_register_a`]).
    fn warpgroup_mma(&mut self, op: &Operation, v: &typed::WarpgroupMma) -> Result<()>;
    /// `elect.sync _|p, 0xffffffff` (sm_90): an `i1`, true in the warp's lowest lane.
    fn elect_sync(&mut self, op: &Operation, v: &typed::ElectSync) -> Result<()>;
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (sm_90a): `increase` for `.inc`.
    fn setmaxnreg(&mut self, op: &Operation, increase: bool, count: u32) -> Result<()>;
    /// A TMA load through tensor map `map` ([`Kernel::tensor_maps`]); coordinates are in the tile's axis
    /// order (the instruction wants them innermost first). Only where `predicate` (if any) is true.
    fn tma_async_load(&mut self, op: &Operation, v: &typed::TmaAsyncLoad, map: usize) -> Result<()>;
    /// A TMA store through tensor map `map`.
    fn tma_async_store(&mut self, op: &Operation, v: &typed::TmaAsyncStore, map: usize) -> Result<()>;
    /// `cp.async.bulk.commit_group`.
    fn tma_commit_group(&mut self, op: &Operation) -> Result<()>;
    /// `cp.async.bulk.wait_group[.read] N`.
    fn tma_wait_group(&mut self, op: &Operation, v: &typed::TmaWaitGroup) -> Result<()>;
    /// `fence.proxy.async.shared::cta`.
    fn fence_proxy_async(&mut self, op: &Operation) -> Result<()>;
}

/// The per-thread `tile` ops: one method per op kind (the seven elementwise arithmetic ops share
/// [`EmitScalar::binary`], which reads the kind from `op`).
pub(crate) trait EmitScalar {
    fn constant(&mut self, op: &Operation, v: &typed::Constant) -> Result<()>;
    fn block_id(&mut self, op: &Operation, v: &typed::BlockId) -> Result<()>;
    fn grid_dim(&mut self, op: &Operation, v: &typed::GridDim) -> Result<()>;
    fn dim(&mut self, op: &Operation, v: &typed::Dim) -> Result<()>;
    /// `tile.add`, `sub`, `mul`, `div`, `rem`, `min`, `max`.
    fn binary(&mut self, op: &Operation, lhs: Value, rhs: Value) -> Result<()>;
    /// `tile.neg`, `abs`, `exp`, `exp2`, `log`, `sqrt`, `rsqrt`, `tanh`, `sigmoid`. Both emitters give the same
    /// instructions (docs/math.md): `neg`, `abs` (exact, floats of any width and signed integers), `ex2.approx.f32`
    /// (of x·log2(e) for `exp`), `lg2.approx.f32` (times ln 2 for `log`), `sqrt.rn.f32`, `rsqrt.approx.f32`,
    /// `tanh.approx.f32` (of x/2, then `fma` by 1/2 plus 1/2, for `sigmoid`); the math functions extend f16
    /// and bf16 to f32 and round back.
    fn unary(&mut self, op: &Operation, f: UnaryMath, source: Value) -> Result<()>;
    fn cmp(&mut self, op: &Operation, v: &typed::Cmp) -> Result<()>;
    fn select(&mut self, op: &Operation, v: &typed::Select) -> Result<()>;
    /// `tile.fma` (f32): `fma.rn.f32` on each element.
    fn fma(&mut self, op: &Operation, v: &typed::Fma) -> Result<()>;
    /// Not of or to `i4`, `u4` or fp8 (checked by the walk).
    fn cast(&mut self, op: &Operation, v: &typed::Cast) -> Result<()>;
    fn fill(&mut self, op: &Operation, v: &typed::Fill) -> Result<()>;
    fn splat(&mut self, op: &Operation, v: &typed::Splat) -> Result<()>;
}

/// The descriptor bits that do not depend on the address ([`tilec_ir::ops::wgmma::constant_bits`]).
pub(crate) fn wgmma_descriptor_bits(v: &typed::WarpgroupGenerateDescriptor) -> u64 {
    tilec_ir::ops::wgmma::constant_bits(v).unwrap_or(0)
}

/// The PTX type names of an `nvgpu.warpgroup.mma`: A's and B's (`f16`, `bf16`, `s8`, `u8`, from the tiles of
/// their descriptors, or A's register fragment) and D's (`f32` or `s32`).
pub(crate) fn wgmma_types(func: &Func, v: &typed::WarpgroupMma) -> Option<(&'static str, &'static str, &'static str)> {
    let body = &func.body;
    let elem = |d: Value| {
        body.defining_op(d)
            .map(|o| body.op(o))
            .filter(|o| o.kind == tilec_ir::OpKind::WarpgroupGenerateDescriptor)
            .and_then(|o| o.operands.first())
            .map(|&t| body.ty(t).element_type())
    };
    let name = |e: ScalarType| match e {
        ScalarType::F16 => Some("f16"),
        ScalarType::BF16 => Some("bf16"),
        ScalarType::I8 => Some("s8"),
        ScalarType::U8 => Some("u8"),
        _ => None,
    };
    let a = tilec_ir::ops::wgmma::register_a_elem(body.ty(v.descriptor_a)).or_else(|| elem(v.descriptor_a))?;
    let b = elem(v.descriptor_b)?;
    let d = if a.is_integer() { "s32" } else { "f32" };
    Some((name(a)?, name(b)?, d))
}

/// Whether the A of an `nvgpu.warpgroup.mma` is in registers (its `descriptor_a` is the thread's fragment).
pub(crate) fn wgmma_register_a(func: &Func, v: &typed::WarpgroupMma) -> bool {
    tilec_ir::ops::wgmma::register_a_elem(func.body.ty(v.descriptor_a)).is_some()
}

/// The inline PTX of one `wgmma.mma_async` (both backends emit it: LLVM has no intrinsic, and MLIR's
/// `nvvm.wgmma.mma_async` takes A only through a descriptor), with `$i` operands: D's `count = n / 2`
/// registers (`0..count`), C's (tied to D's), then A (four `.b32` registers when `register_a`, else one 64-bit descriptor),
/// B's descriptor, and an `i32` scale-d (non-zero: D = A·B + C), the last operand. f16/bf16 take
/// imm-scale-a, imm-scale-b (1: not negated) and imm-trans-b (0: K-major, 1: MN-major), and imm-trans-a
/// for a shared A only (A from registers is K-major).
pub(crate) fn wgmma_asm(n: u32, k: u32, types: (&str, &str, &str), register_a: bool, transpose: (bool, bool)) -> String {
    let (ta, tb, td) = types;
    let count = n / 2;
    let d: Vec<String> = (0..count).map(|i| format!("${i}")).collect();
    // Operands `0..count` are D, `count..2 count` C (tied to D), then A.
    let first = 2 * count;
    let (a, next) = if register_a {
        (format!("{{${}, ${}, ${}, ${}}}", first, first + 1, first + 2, first + 3), first + 4)
    } else {
        (format!("${first}"), first + 1)
    };
    let immediates = match (td, register_a) {
        ("f32", false) => format!(", 1, 1, {}, {}", u8::from(transpose.0), u8::from(transpose.1)),
        ("f32", true) => format!(", 1, 1, {}", u8::from(transpose.1)),
        _ => String::new(),
    };
    format!(
        "{{\n.reg .pred p;\nsetp.ne.b32 p, ${}, 0;\nwgmma.mma_async.sync.aligned.m64n{n}k{k}.{td}.{ta}.{tb} {{{}}}, {a}, ${next}, p{immediates};\n}}\n",
        next + 1,
        d.join(", "),
    )
}

/// A backend: the kernel, loops, the nvgpu ops (Hopper's too) and the scalar ops.
pub(crate) trait Emitter: EmitKernel + EmitLoop + EmitNvgpu + EmitHopper + EmitScalar {}

impl<E: EmitKernel + EmitLoop + EmitNvgpu + EmitHopper + EmitScalar> Emitter for E {}

// ---- the walk -------------------------------------------------------------------------------------------------

/// Emits `kernel` through `e`.
pub(crate) fn emit_kernel<E: Emitter>(e: &mut E, kernel: &Kernel<'_>) -> Result<()> {
    e.begin_kernel()?;
    for argument in kernel.arguments()? {
        e.bind_argument(argument)?;
    }
    if kernel.shared.dynamic {
        e.bind_dynamic_shared()?;
    }
    for (param, p) in kernel.info.abi.iter().enumerate() {
        if let crate::kernel_info::AbiRole::TensorMap(map) = p.role {
            e.bind_tensor_map(map, param)?;
        }
    }
    walk_block(e, kernel, kernel.func.entry)?;
    e.end_kernel()
}

/// The ops of `block` in order. Returns the values of its `tile.yield`, if it ends with one.
fn walk_block<E: Emitter>(e: &mut E, kernel: &Kernel<'_>, block: BlockId) -> Result<Option<Vec<Value>>> {
    let body = &kernel.func.body;
    for &id in &body.block(block).ops {
        let op = body.op(id);
        let view = AnyOp::from_op(op).ok_or_else(|| kernel.unsupported(op, "it is malformed (the verifier reports how)"))?;
        match view {
            AnyOp::Yield(y) => return Ok(Some(y.values)),
            AnyOp::Return(_) => {
                e.return_(op)?;
                return Ok(None);
            }
            view => emit_op(e, kernel, id, op, view)?,
        }
    }
    Ok(None)
}

/// One op, by kind.
fn emit_op<E: Emitter>(e: &mut E, kernel: &Kernel<'_>, id: OpId, op: &Operation, view: AnyOp) -> Result<()> {
    // The catalogue says which ops need a newer target (`OpKind::min_target`, also in docs/ops.md).
    let needs = op.kind.min_target();
    if kernel.target < needs {
        let short = op.kind.name().trim_start_matches("nvgpu.");
        // An arch-specific target (sm_90a) has no newer targets: its instructions run on it alone.
        let newer = if needs.is_arch_specific() { "" } else { " or newer" };
        return Err(kernel.unsupported(op, format!("{short} needs {}{newer}; the target is {}", needs.chip(), kernel.target)));
    }
    let func = kernel.func;
    match view {
        AnyOp::For(v) => walk_for(e, kernel, op, &v),
        AnyOp::AllocShared(_) | AnyOp::MBarrierCreate(_) => {
            let tile = kernel.shared_tile(id, op)?;
            e.alloc_shared(op, tile)
        }
        // nvgpu dialect, Hopper.
        AnyOp::MBarrierInit(v) => e.mbarrier_init(op, &v),
        AnyOp::MBarrierArrive(v) => e.mbarrier_arrive(op, &v),
        AnyOp::MBarrierArriveExpectTx(v) => e.mbarrier_arrive_expect_tx(op, &v),
        AnyOp::MBarrierTryWaitParity(v) => e.mbarrier_try_wait_parity(op, &v),
        AnyOp::WgmmaFence(v) => e.wgmma_fence(op, &v),
        AnyOp::WarpgroupGenerateDescriptor(v) => e.warpgroup_generate_descriptor(op, &v),
        AnyOp::WarpgroupMma(v) => e.warpgroup_mma(op, &v),
        AnyOp::WgmmaCommitGroup(v) => e.wgmma_commit_group(op, &v),
        AnyOp::WgmmaWaitGroup(v) => e.wgmma_wait_group(op, &v),
        AnyOp::ElectSync(v) => e.elect_sync(op, &v),
        AnyOp::SetMaxNRegInc(v) => e.setmaxnreg(op, true, v.count),
        AnyOp::SetMaxNRegDec(v) => e.setmaxnreg(op, false, v.count),
        AnyOp::TmaAsyncLoad(v) => {
            let map = kernel.tensor_map(op, v.tensor, v.dst)?;
            e.tma_async_load(op, &v, map)
        }
        AnyOp::TmaAsyncStore(v) => {
            let map = kernel.tensor_map(op, v.tensor, v.src)?;
            e.tma_async_store(op, &v, map)
        }
        AnyOp::TmaCommitGroup(_) => e.tma_commit_group(op),
        AnyOp::TmaWaitGroup(v) => e.tma_wait_group(op, &v),
        AnyOp::FenceProxyAsync(_) => e.fence_proxy_async(op),
        // nvgpu dialect.
        AnyOp::ThreadId(v) => e.thread_id(op, &v),
        AnyOp::LaneId(v) => e.lane_id(op, &v),
        AnyOp::WarpId(v) => e.warp_id(op, &v),
        AnyOp::LdMatrix(v) => e.ldmatrix(op, &v),
        AnyOp::StMatrix(v) => e.stmatrix(op, &v),
        AnyOp::MmaSync(v) => {
            let (ea, eb) = (func.body.ty(v.a).element_type(), func.body.ty(v.b).element_type());
            if ea != eb {
                return Err(kernel.unsupported(op, format!("A and B must have one element type, found '{ea}' and '{eb}'")));
            }
            e.mma_sync(op, &v)
        }
        AnyOp::DeviceAsyncCopy(v) => {
            let elem = func.body.ty(v.dst).element_type();
            let n = v.dst_elements;
            if ![4, 8, 16].contains(&bytes_of(elem, u64::from(n))) || !addressable(elem) {
                return Err(kernel.unsupported(op, format!("it copies 4, 8 or 16 bytes, not {n} x '{elem}'")));
            }
            e.device_async_copy(op, &v)
        }
        AnyOp::DeviceAsyncCreateGroup(v) => e.device_async_create_group(op, &v),
        AnyOp::DeviceAsyncWait(v) => e.device_async_wait(op, &v),
        AnyOp::Barrier(v) => e.barrier(op, &v),
        AnyOp::Load(v) => e.load(op, &v),
        AnyOp::Store(v) => e.store(op, &v),
        AnyOp::Extract(v) => {
            check_position(kernel, op, v.vector, &v.position)?;
            e.extract(op, &v)
        }
        AnyOp::Insert(v) => {
            check_position(kernel, op, v.vector, &v.position)?;
            e.insert(op, &v)
        }
        AnyOp::Shuffle(v) => e.shuffle(op, &v),
        // Per-thread tile ops.
        AnyOp::Constant(v) => e.constant(op, &v),
        AnyOp::BlockId(v) => e.block_id(op, &v),
        AnyOp::GridDim(v) => e.grid_dim(op, &v),
        AnyOp::Dim(v) => e.dim(op, &v),
        AnyOp::Add(typed::Add { lhs, rhs })
        | AnyOp::Sub(typed::Sub { lhs, rhs })
        | AnyOp::Mul(typed::Mul { lhs, rhs })
        | AnyOp::Div(typed::Div { lhs, rhs })
        | AnyOp::Rem(typed::Rem { lhs, rhs })
        | AnyOp::Min(typed::Min { lhs, rhs })
        | AnyOp::Max(typed::Max { lhs, rhs }) => e.binary(op, lhs, rhs),
        view @ (tilec_ir::unary_math_view!()) => {
            let (f, source) = UnaryMath::of_view(&view).ok_or_else(|| internal("a unary op's view"))?;
            e.unary(op, f, source)
        }
        AnyOp::Cmp(v) => e.cmp(op, &v),
        AnyOp::Select(v) => e.select(op, &v),
        AnyOp::Fma(v) => e.fma(op, &v),
        AnyOp::Cast(v) => {
            let from = func.body.ty(v.source).element_type();
            let to = op.result().map_or(from, |r| func.body.ty(r).element_type());
            for s in [from, to] {
                if matches!(s, ScalarType::F8E4M3 | ScalarType::F8E5M2 | ScalarType::I4 | ScalarType::U4) {
                    return Err(kernel.unsupported(op, format!("casts of '{s}' are not supported")));
                }
            }
            e.cast(op, &v)
        }
        AnyOp::Fill(v) => e.fill(op, &v),
        AnyOp::Splat(v) => e.splat(op, &v),
        AnyOp::CopyG2S(_)
        | AnyOp::CopyS2R(_)
        | AnyOp::CopyR2S(_)
        | AnyOp::CopyR2G(_)
        | AnyOp::Mma(_)
        | AnyOp::ConvertLayout(_)
        | AnyOp::Func(_)
        | AnyOp::Reduce(_)
        | AnyOp::Broadcast(_)
        | AnyOp::Iota(_)
        | AnyOp::Transpose(_)
        | AnyOp::TileBarrier(_) => {
            Err(kernel.unsupported(op, "it is a tile-level op; lower the kernel to the nvgpu dialect first"))
        }
        AnyOp::Yield(_) | AnyOp::Return(_) => Err(kernel.unsupported(op, "it must end a block")),
    }
}

/// `tile.for`: the emitter's loop around the walk of its body.
fn walk_for<E: Emitter>(e: &mut E, kernel: &Kernel<'_>, op: &Operation, v: &typed::For) -> Result<()> {
    let body = &kernel.func.body;
    let Some(&region) = op.regions.first() else {
        return Err(kernel.unsupported(op, "it needs bounds, a step and a body"));
    };
    let args = &body.block(region).args;
    if args.len() != v.inits.len() + 1 || op.results.len() != v.inits.len() {
        return Err(kernel.unsupported(op, "it needs one body argument per iter_arg plus the induction variable"));
    }
    let lp = e.begin_for(op, v, args[0], &args[1..])?;
    let yielded = walk_block(e, kernel, region)?.unwrap_or_default();
    if yielded.len() != v.inits.len() {
        return Err(kernel.unsupported(
            op,
            format!("its body yields {} values for {} loop-carried ones", yielded.len(), v.inits.len()),
        ));
    }
    e.end_for(op, lp, &yielded)
}

/// `position` of `nvgpu.extract`/`insert` is inside the shape of `vector`.
fn check_position(kernel: &Kernel<'_>, op: &Operation, vector: Value, position: &[u32]) -> Result<()> {
    let Type::Vector(vt) = kernel.func.body.ty(vector) else {
        return Err(kernel.unsupported(op, format!("its operand must be a vector, not '{}'", kernel.func.body.ty(vector))));
    };
    if position.len() != vt.shape.len() || position.iter().zip(&vt.shape).any(|(&i, &n)| u64::from(i) >= n) {
        return Err(kernel.unsupported(op, format!("position {position:?} is outside the vector's shape {:?}", vt.shape)));
    }
    Ok(())
}

/// The integer a literal denotes (`true` is 1), `None` for a float.
pub(crate) fn literal_int(value: Literal) -> Option<i64> {
    match value {
        Literal::Int(n) => Some(n),
        Literal::Bool(b) => Some(i64::from(b)),
        Literal::Float(_) => None,
    }
}

/// The number a literal denotes as a float constant, `None` for `true`/`false`.
pub(crate) fn literal_float(value: Literal) -> Option<f64> {
    match value {
        Literal::Int(n) => Some(n as f64),
        Literal::Float(x) => Some(x),
        Literal::Bool(_) => None,
    }
}
