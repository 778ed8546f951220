//! What a launcher needs to know about a compiled kernel, without LLVM: its name, block size, shared
//! memory, and the parameter list of its PTX entry in order.
//!
//! The driver writes one [`KernelInfo`] per kernel as a JSON manifest beside the PTX, so the small GPU
//! runner (cudarc, no LLVM) can launch it. Everything here is computed from the nvgpu-level
//! [`Func`](tilec_ir::Func) alone; the LLVM translation (`translate`) uses the same [`KernelInfo`] and
//! [`SharedPlan`] to build the entry's signature and the shared-memory globals, so the manifest and the PTX
//! cannot disagree.
//!
//! # Kernel ABI
//! Parameters follow the function's arguments in order:
//! - a global tile `tile<?x128xf16, global>` becomes `ptr addrspace(1)` (the first element), then one
//!   `i64` per `?` extent, in axis order (`A`, `A_dim0`);
//! - a scalar becomes its LLVM type: `index` → `i64`, `i32` → `i32`, `f32`/`tf32` → `float`,
//!   `f16` → `half`, `bf16` → `bfloat`, `f64` → `double`, `i8`/`u8` → `i8`, and `i1` → `i8` (0 or 1;
//!   PTX has no 1-bit parameters).
//!
//! - a TMA op's tensor map (`tilec_ir::tma`) becomes a 128-byte, 64-byte aligned by-value parameter
//!   (`.param .align 64 .b8 A_tmap0[128]`, CUDA's `const __grid_constant__ CUtensorMap`), after every
//!   argument's parameters, one per distinct map in order of first use ([`KernelInfo::tensor_maps`]).
//!
//! The block is one-dimensional: `32 × num_warps` threads (the function attribute `num_warps`, default 1).
//! The grid is the launcher's choice.
//!
//! # Shared memory
//! One allocation per `tile.alloc_shared`, in program order, each 128-byte aligned
//! ([`tilec_ir::shared_memory::place_shared_allocations`], the placement every other component uses). Up to [`STATIC_SHARED_LIMIT`] bytes in total they are static `.shared` arrays and
//! [`KernelInfo::dynamic_shared_bytes`] is 0; above it they live in one `extern .shared` array that the
//! launcher must size: pass `dynamic_shared_bytes` as the launch's shared-memory size after raising the
//! function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to it.

use serde::{Deserialize, Serialize};

use tilec_ir::body::{Func, OpId};
use tilec_ir::layout::Layout;
use tilec_ir::shared_memory::place_shared_allocations;
use tilec_ir::types::{Dim, MemorySpace, ScalarType, Type};
use tilec_ir::KernelAttrs;

pub use tilec_ir::shared_memory::{MAX_SHARED_BYTES, SHARED_ALIGN, STATIC_SHARED_LIMIT};

/// A kernel as the launcher sees it. Serialises to the JSON manifest the driver writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// The PTX entry's name.
    pub name: String,
    /// Warps per block (the `num_warps` attribute, default 1).
    pub num_warps: u32,
    /// Threads per block along x, y, z: `[32 * num_warps, 1, 1]`.
    pub block: [u32; 3],
    /// Shared memory per block in bytes (static or dynamic).
    pub shared_bytes: u64,
    /// The dynamic shared memory to request at launch: 0 when every allocation is static, else
    /// `shared_bytes` (raise the function's dynamic shared-memory limit to it first).
    pub dynamic_shared_bytes: u64,
    /// The kernel's arguments in order.
    pub params: Vec<KernelParam>,
    /// The PTX entry's parameters in order, each tied to the argument it comes from.
    pub abi: Vec<AbiParam>,
    /// The tensor maps of the kernel's TMA ops, in order: each is an [`AbiRole::TensorMap`] parameter after
    /// the arguments' own, which the launcher encodes (`cuTensorMapEncodeTiled`) from the argument's device
    /// pointer and extents. Empty (and left out of the JSON) for kernels without TMA.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tensor_maps: Vec<TensorMapInfo>,
    /// A persistent kernel (`persistent = true`, the `persistent-grid` pass): its last three arguments are the
    /// logical grid `x, y, z` (hidden `index` arguments the launcher fills in), and the launch is P blocks along
    /// x, P = min(tiles, SMs x resident blocks per SM), each looping over the tiles `t += P`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
}

/// One tensor map parameter: what `cuTensorMapEncodeTiled` needs besides the tensor's address and extents
/// (`tilec_ir::tma`). Axis lists are in the tile's order (outermost first); the driver wants them innermost
/// first, with byte strides of every axis but the innermost (row-major: the pitch of each axis).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorMapInfo {
    /// The global tile argument it maps (index into [`KernelInfo::params`]).
    pub arg: usize,
    /// The element type (`f16`, ...).
    pub elem: String,
    /// `CUtensorMapDataType` (`cuda.h`: FLOAT16 6, FLOAT32 7, BFLOAT16 9, ...).
    pub data_type: u32,
    /// The box: the shared tile's shape (or one column panel's), outermost axis first, in the map's axis
    /// order (reversed when `transposed`).
    #[serde(rename = "box")]
    pub box_shape: Vec<u64>,
    /// The tensor is column-major (rank 2) and the map is over its transpose, the row-major view of its
    /// memory: the launcher passes its extents reversed (innermost first: rows, then columns). Left out of
    /// the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transposed: bool,
    /// `none`, `32b`, `64b` or `128b` (`tilec_layout::SwizzleMode`).
    pub swizzle: String,
    /// Out-of-bounds elements read as zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`).
    pub oob_fill: String,
    /// `CU_TENSOR_MAP_L2_PROMOTION_NONE`.
    pub l2_promotion: String,
    /// `CU_TENSOR_MAP_INTERLEAVE_NONE`.
    pub interleave: String,
}

/// One argument of the kernel (as written in the IR).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelParam {
    /// The argument's name in the IR (`A` for `%A`), or `arg<i>` when it has none.
    pub name: String,
    /// What is passed.
    #[serde(flatten)]
    pub kind: ParamKind,
}

/// A kernel argument: a global tile or a scalar.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A global tile: a device pointer to its first element, then an `i64` for each `?` extent.
    Tile {
        /// The element type (`f16`, `f32`, …).
        elem: String,
        /// Bytes per element.
        elem_bytes: u32,
        /// Extents, `null` for `?` (passed at launch).
        shape: Vec<Option<u64>>,
        /// `row_major` (the default) or `col_major`.
        layout: String,
        /// The axes whose extents follow the pointer as `i64` parameters, in order.
        dynamic_axes: Vec<usize>,
        /// What the kernel's copies need of the extents (the lowering's `async_copy_alignment`): extent
        /// `axis` a multiple of `multiple` elements, or a copy's address would be misaligned and fault. A
        /// launcher checks them; `tilec bundle`/`bench` compile a narrower variant (`global_alignment`)
        /// for shapes that break them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        extent_multiples: Vec<ExtentMultiple>,
    },
    /// A scalar passed by value.
    Scalar {
        /// The IR type (`f32`, `index`, …).
        ty: String,
    },
}

/// Extent `axis` of a tile argument must be a multiple of `multiple` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtentMultiple {
    /// The axis of the tile (0: rows, 1: columns).
    pub axis: usize,
    /// In elements.
    pub multiple: u64,
}

/// The lowering's `async_copy_alignment` entries of argument `index`.
fn extent_multiples(func: &Func, index: usize) -> Vec<ExtentMultiple> {
    let Some(entries) = KernelAttrs::of(func).ok().and_then(|a| a.async_copy_alignment) else { return Vec::new() };
    entries
        .iter()
        .filter(|e| e.argument as usize == index && e.multiple > 1)
        .map(|e| ExtentMultiple { axis: e.axis as usize, multiple: u64::from(e.multiple) })
        .collect()
}

/// One parameter of the PTX entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbiParam {
    /// The LLVM parameter's name (`A`, `A_dim0`, `alpha`).
    pub name: String,
    /// Which kernel argument it belongs to (index into [`KernelInfo::params`]).
    pub arg: usize,
    /// What it holds.
    pub role: AbiRole,
    /// Its type as the launcher writes it: `ptr` (8 bytes), `i64`, `i32`, `i8`, `f64`, `f32`, `f16`, `bf16`.
    pub ty: String,
    /// Its size in bytes.
    pub bytes: u32,
}

/// What an entry parameter holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbiRole {
    /// A global tile's device pointer.
    Pointer,
    /// A global tile's run-time extent along this axis.
    Extent(usize),
    /// A scalar argument's value.
    Value,
    /// Tensor map number `k` of [`KernelInfo::tensor_maps`]: 128 bytes, 64-byte aligned, by value
    /// (`const __grid_constant__ CUtensorMap`).
    TensorMap(usize),
}

/// A kernel the backend cannot describe.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelInfoError {
    /// An argument whose type cannot be a kernel parameter.
    #[error("@{kernel}: argument #{index} of type '{ty}' cannot be passed to a kernel ({reason})")]
    BadArgument {
        /// The kernel.
        kernel: String,
        /// The argument's position.
        index: usize,
        /// Its type, as text.
        ty: String,
        /// Why not.
        reason: String,
    },
    /// A shared allocation without a static shape, or too much shared memory.
    #[error("@{kernel}: {message}")]
    SharedMemory {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },
}

/// One `tile.alloc_shared`, placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedAllocation {
    /// The `tile.alloc_shared` op.
    pub op: OpId,
    /// Byte offset in the block's shared memory (a multiple of [`SHARED_ALIGN`]).
    pub offset: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// Element type.
    pub elem: ScalarType,
    /// Number of elements.
    pub elements: u64,
    /// Alignment in bytes: [`SHARED_ALIGN`], or 1024 for a tile a wgmma descriptor reads
    /// (`tilec_ir::shared_memory::WGMMA_ALIGN`).
    pub align: u64,
}

/// Where every shared tile of a kernel lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedPlan {
    /// In program order.
    pub allocations: Vec<SharedAllocation>,
    /// End of the last allocation.
    pub total_bytes: u64,
    /// Whether the allocations live in dynamic shared memory (`total_bytes > STATIC_SHARED_LIMIT`).
    pub dynamic: bool,
}

impl SharedPlan {
    /// Places the kernel's shared tiles (see the [module documentation](self)).
    pub fn new(func: &Func) -> Result<SharedPlan, KernelInfoError> {
        let error = |message: String| KernelInfoError::SharedMemory { kernel: func.name.clone(), message };
        let mut allocations = Vec::new();
        let mut next = 0u64;
        for placed in place_shared_allocations(func) {
            let tile = match placed.tile {
                Some(t) if t.space == MemorySpace::Shared => t,
                _ => return Err(error("'tile.alloc_shared' must produce a shared tile".into())),
            };
            let elements = tile
                .num_elements()
                .ok_or_else(|| error(format!("shared tile '{tile}' needs a static shape")))?;
            next = placed.end();
            if next > MAX_SHARED_BYTES {
                return Err(error(format!(
                    "shared tiles need {next} bytes, more than the {MAX_SHARED_BYTES} a block can have"
                )));
            }
            allocations.push(SharedAllocation { op: placed.op, offset: placed.offset, bytes: placed.bytes, elem: tile.elem, elements, align: placed.align });
        }
        Ok(SharedPlan { allocations, total_bytes: next, dynamic: next > STATIC_SHARED_LIMIT })
    }


    /// The allocation made by `op`.
    pub fn allocation(&self, op: OpId) -> Option<&SharedAllocation> {
        self.allocations.iter().find(|a| a.op == op)
    }
}

/// The function's `num_warps` attribute ([`KernelAttrs`]' default when absent, 1 when malformed).
pub fn num_warps(func: &Func) -> u32 {
    KernelAttrs::of(func).map_or(1, |a| a.num_warps.clamp(1, 32))
}

/// The name of a scalar type's parameter as the launcher writes it, and its size in bytes.
pub fn scalar_abi_type(ty: ScalarType) -> Option<(&'static str, u32)> {
    Some(match ty {
        ScalarType::Index => ("i64", 8),
        ScalarType::I32 => ("i32", 4),
        ScalarType::I8 | ScalarType::U8 | ScalarType::I1 => ("i8", 1),
        ScalarType::F32 | ScalarType::TF32 => ("f32", 4),
        ScalarType::F16 => ("f16", 2),
        ScalarType::BF16 => ("bf16", 2),
        ScalarType::F64 => ("f64", 8),
        ScalarType::I4 | ScalarType::U4 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => return None,
    })
}

/// Bytes per element of a global tile (sub-byte element types are not passed to kernels).
fn element_bytes(ty: ScalarType) -> Option<u32> {
    (ty.bit_width() >= 8).then(|| ty.bit_width() / 8)
}

impl KernelInfo {
    /// Describes `func`'s entry point, block size and shared memory.
    pub fn from_func(func: &Func) -> Result<KernelInfo, KernelInfoError> {
        let num_warps = num_warps(func);
        let shared = SharedPlan::new(func)?;
        let mut params = Vec::new();
        let mut abi = Vec::new();
        for (index, &arg) in func.args().iter().enumerate() {
            let name = func.body.value(arg).name.clone().unwrap_or_else(|| format!("arg{index}"));
            let ty = func.body.ty(arg);
            let bad = |reason: &str| KernelInfoError::BadArgument {
                kernel: func.name.clone(),
                index,
                ty: ty.to_string(),
                reason: reason.to_string(),
            };
            let kind = match ty {
                Type::Tile(t) => {
                    if t.space != MemorySpace::Global {
                        return Err(bad("only global tiles are kernel arguments"));
                    }
                    let elem_bytes = element_bytes(t.elem).ok_or_else(|| bad("sub-byte elements are not supported"))?;
                    let layout = match &t.layout {
                        None | Some(Layout::RowMajor) => "row_major",
                        Some(Layout::ColMajor) if t.rank() == 2 => "col_major",
                        Some(_) => return Err(bad("a global tile must be #row_major or (rank 2) #col_major")),
                    };
                    abi.push(AbiParam { name: name.clone(), arg: index, role: AbiRole::Pointer, ty: "ptr".into(), bytes: 8 });
                    let mut dynamic_axes = Vec::new();
                    for (axis, d) in t.shape.iter().enumerate() {
                        if *d == Dim::Dynamic {
                            dynamic_axes.push(axis);
                            abi.push(AbiParam {
                                name: format!("{name}_dim{axis}"),
                                arg: index,
                                role: AbiRole::Extent(axis),
                                ty: "i64".into(),
                                bytes: 8,
                            });
                        }
                    }
                    ParamKind::Tile {
                        elem: t.elem.name().to_string(),
                        elem_bytes,
                        shape: t.shape.iter().map(|d| d.as_static()).collect(),
                        layout: layout.to_string(),
                        dynamic_axes,
                        extent_multiples: extent_multiples(func, index),
                    }
                }
                Type::Scalar(s) => {
                    let (abi_ty, bytes) = scalar_abi_type(*s).ok_or_else(|| bad("no parameter type for it"))?;
                    abi.push(AbiParam { name: name.clone(), arg: index, role: AbiRole::Value, ty: abi_ty.into(), bytes });
                    ParamKind::Scalar { ty: s.name().to_string() }
                }
                Type::Vector(_) => return Err(bad("kernel arguments are scalars or global tiles")),
            };
            params.push(KernelParam { name, kind });
        }
        let mut tensor_maps = Vec::new();
        for (k, map) in tilec_ir::tma::kernel_tensor_maps(func).into_iter().enumerate() {
            let name = params.get(map.arg).map_or_else(|| format!("arg{}", map.arg), |p| p.name.clone());
            abi.push(AbiParam { name: format!("{name}_tmap{k}"), arg: map.arg, role: AbiRole::TensorMap(k), ty: "tensormap".into(), bytes: 128 });
            // The tensor's pitches must be multiples of 16 bytes: its innermost extent a multiple of 16/e elements.
            if let Some(ParamKind::Tile { extent_multiples, .. }) = params.get_mut(map.arg).map(|p| &mut p.kind) {
                let multiple = 16 / u64::from(map.elem_bytes().max(1));
                let axis = map.contiguous_axis();
                if map.rank >= 2 && multiple > 1 && !extent_multiples.iter().any(|m| m.axis == axis && m.multiple % multiple == 0) {
                    extent_multiples.push(ExtentMultiple { axis, multiple });
                }
            }
            tensor_maps.push(TensorMapInfo {
                arg: map.arg,
                elem: map.elem.name().to_string(),
                data_type: tilec_ir::tma::cu_tensor_map_data_type(map.elem).unwrap_or(0),
                box_shape: map.box_shape.clone(),
                transposed: map.transposed,
                swizzle: map.swizzle.name().to_string(),
                oob_fill: "zero".into(),
                l2_promotion: "none".into(),
                interleave: "none".into(),
            });
        }
        Ok(KernelInfo {
            name: func.name.clone(),
            num_warps,
            block: [32 * num_warps, 1, 1],
            shared_bytes: shared.total_bytes,
            dynamic_shared_bytes: if shared.dynamic { shared.total_bytes } else { 0 },
            params,
            abi,
            tensor_maps,
            persistent: tilec_ir::ops::kernel::has_persistent_grid_args(func),
        })
    }

    /// For a [`KernelInfo::persistent`] kernel, which axis of the logical grid argument number `arg` holds.
    pub fn logical_grid_axis(&self, arg: usize) -> Option<usize> {
        let first = self.params.len().checked_sub(3)?;
        (self.persistent && arg >= first).then(|| arg - first)
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }
}
