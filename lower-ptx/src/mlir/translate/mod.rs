//! nvgpu-level tilec IR → MLIR text (`gpu`/`nvgpu`/`arith`/`scf`/`vector`/`memref`) → PTX (feature `mlir`).
//!
//! The translation writes MLIR *text* (what `tilec --emit mlir` prints) and parses it with
//! [`MlirToolchain`]; the upstream pipeline ([`mlir_backend_pipeline`]) lowers it to the LLVM and NVVM dialects,
//! MLIR translates the `gpu.module` to LLVM IR, and the LLVM backend's
//! [`NvptxTargetMachine`](crate::llvm::nvptx_target::NvptxTargetMachine) optimises it and generates the PTX
//! (the same IR pipeline and code-generation options as the LLVM backend's).
//! The walk over a kernel is the spine's ([`crate::spine`], shared with the LLVM backend, `llvm/translate/`),
//! whose traits this backend implements in the same files: [`func`] the `gpu.func` entry and arguments,
//! [`nvgpu`] one method per nvgpu op kind ([`hopper`] those of sm_90), [`scalar`] the per-thread `tile` ops, [`control`] `tile.for`,
//! [`memory`] element offsets through tile layouts, and [`types`] the IR-type → MLIR-type map.
//!
//! # Kernel ABI: identical to the LLVM backend
//! The `gpu.func` takes exactly the parameters of [`KernelInfo::abi`] in order: a global tile is an
//! `!llvm.ptr<1>` plus one `i64` per `?` extent, scalars are `i64`/`i32`/`i8`/`f16`/`bf16`/`f32`/`f64`
//! (`i1` as `i8`). Inside the kernel each global tile becomes a flat `memref<?xT, 1>` (a memref
//! descriptor built with `llvm.insertvalue` and `builtin.unrealized_conversion_cast`), which
//! `reconcile-unrealized-casts` folds away, so the PTX entry has the same parameters as the LLVM
//! backend's and the same launcher (and manifest) runs both.
//!
//! Memory is addressed through 1-D views: element offsets (row-major, column-major, XOR swizzles) are
//! computed with `arith` on `index` values, as `memory.rs` does in the LLVM backend. Shared tiles are
//! `memref.global`s in `#gpu.address_space<workgroup>` (128-byte aligned), or above 48 KiB `memref.view`s of
//! one `extern .shared` array (an external `llvm.mlir.global` in address space 3, 128-byte aligned) (the same [`SharedPlan`](crate::kernel_info::SharedPlan) as the LLVM backend).

mod control;
mod func;
mod hopper;
mod memory;
mod nvgpu;
mod scalar;
mod types;

use tilec_ir::body::Module;

use super::MlirToolchain;
use crate::llvm::nvptx_target::NvptxTargetMachine;
use crate::kernel_info::KernelInfo;
use crate::target::{OptLevel, Target};
use crate::spine::{self, Kernel};
use func::FuncEmitter;

/// The symbol of the `gpu.module` that holds the kernels.
pub const GPU_MODULE_NAME: &str = "tilec";

pub use crate::translation::{CompiledModule, TranslateError};
pub(crate) use crate::translation::internal;

pub(crate) use crate::spine::Result;

/// The pass pipeline from the translated module to a `gpu.module` in the LLVM and NVVM dialects, which
/// [`compile`] translates to LLVM IR. The `gpu.module`'s `#nvvm.target` names the chip, features and
/// optimisation level (what `--emit mlir` shows); code generation takes them from [`compile`]'s arguments.
///
/// Until 2026-11-25 the pipeline went on with `gpu-to-llvm,gpu-module-to-binary{format=isa}`, which ran LLVM's
/// `default<O3>` and generated the PTX itself. The LLVM backend's pipeline gives the same PTX for every GEMM
/// example in less time (`gemm.tir`: 2.72 -> 2.34 G instructions for a cold compile; the other files'
/// PTX that changed was checked on the GPU: docs/gpu-check-2026-11-25e). MLIR's `canonicalize` and `cse` are not
/// run either: the LLVM IR pipeline does that clean-up, and without them the PTX of every example is byte-identical
/// for 0.16 G fewer instructions (2.32 -> 2.16 G).
pub fn mlir_backend_pipeline() -> String {
    "builtin.module(gpu.module(convert-scf-to-cf,convert-nvgpu-to-nvvm,convert-vector-to-llvm,\
     convert-gpu-to-nvvm,reconcile-unrealized-casts,convert-nvvm-to-llvm))"
        .to_string()
}

/// Translates every kernel of `module` into MLIR text for `target` (the `#nvvm.target` carries `opt`).
pub fn translate_module(module: &Module, target: Target, opt: OptLevel) -> Result<(String, Vec<KernelInfo>)> {
    let mut globals = String::new();
    let mut bodies = String::new();
    spine::check_kernel_names(module)?;
    let mut kernels = Vec::with_capacity(module.funcs.len());
    for func in &module.funcs {
        let kernel = Kernel::new(func, target)?;
        let mut emitter = FuncEmitter::new(&kernel);
        spine::emit_kernel(&mut emitter, &kernel)?;
        let (g, body) = emitter.finish();
        globals.push_str(&g);
        bodies.push_str(&body);
        kernels.push(kernel.info);
    }
    let text = format!(
        "module attributes {{gpu.container_module}} {{\n  gpu.module @{GPU_MODULE_NAME} [#nvvm.target<O = {o}, chip = \"{chip}\", features = \"{features}\">] {{\n{globals}{bodies}  }}\n}}\n",
        o = opt.as_u32(),
        chip = target.chip(),
        features = target.ptx_features(),
    );
    Ok((text, kernels))
}

/// The MLIR text of `module` (what `tilec --emit mlir` prints).
pub fn emit_ir(module: &Module, target: Target, opt: OptLevel) -> Result<String> {
    translate_module(module, target, opt).map(|(text, _)| text)
}

/// Translates `module`, parses and verifies the MLIR, lowers it upstream to the LLVM dialect, translates that
/// to LLVM IR and generates the PTX with the LLVM backend's target machine.
pub fn compile(module: &Module, target: Target, opt: OptLevel) -> Result<CompiledModule> {
    let (text, kernels) = translate_module(module, target, opt)?;
    let toolchain = MlirToolchain::new();
    let mut parsed = toolchain.parse_module(&text)?;
    toolchain.run_pipeline(&mut parsed, &mlir_backend_pipeline())?;
    let context = inkwell::context::Context::create();
    let llvm = toolchain.translate_gpu_module(&parsed, GPU_MODULE_NAME, &context)?;
    let machine = NvptxTargetMachine::new(target, opt)?.keeping_short_circuit_masks();
    let ptx = machine.compile_to_ptx(&llvm)?;
    Ok(CompiledModule { ptx, kernels })
}
