//! NVPTX target machines, the optimisation pipeline and PTX emission.

use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
    TargetTriple,
};
use inkwell::OptimizationLevel;

use crate::error::{Error, Result};
use crate::target::{OptLevel, Target};

/// The LLVM target triple of 64-bit PTX for CUDA.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

/// LLVM command-line options for NVPTX code generation, set once per process (they are LLVM globals).
///
/// `-disable-lsr`: loop strength reduction, which runs in code generation rather than in `default<O3>`,
/// turns the source address of every `cp.async` of a pipelined k-loop into a loop-carried 64-bit pointer
/// of its own (16 registers for the 8 copies of a 128x128x32 GEMM step). At 255 registers, with 128
/// accumulators and double-buffered fragments live, those pointers push ptxas into spilling; without LSR
/// the addresses are recomputed each k-step from a few loop-invariant values, which is cheaper than the
/// spills. Measured on the H100 (4096³ fp16, 256x128x32 tile, 8 warps): 0.356 ms with LSR (spilling, or
/// without fragment double-buffering) against 0.322 ms without it.
///
/// Straight-line strength reduction (SLSR) stays on, although it is the most expensive codegen pass on a GEMM
/// (0.20 of 0.35 s of `llc` user time on `gemm.tir`: its cost is quadratic in the chain of blocks that the
/// epilogue's 192 masked stores make after speculative execution hoists their address arithmetic). Without
/// it (`-opt-disable=slsr`) every example's k-loop PTX is the same instructions (register names only) and
/// only prologue and C-store address arithmetic changes, yet on the H100 the 8192³ GEMMs ran 2.5–4% slower
/// (min time; cuBLAS in the same runs within 0.3%), measured twice on 2026-11-24 (`-O1` against `-O3`, and
/// this flag against none: docs/bench-no-slsr-2026-11-24.jsonl), while 4096³ was unchanged. Until the
/// lowering emits what SLSR produces for those kernels, kernel speed wins over what it costs. What it costs is
/// mostly its poison checks (`ScalarEvolution::canReuseInstruction`), made cheaper by marking the kernel's
/// parameters `noundef` before code generation ([`mark_parameters_noundef`]: SLSR 0.54 → 0.35 G instructions
/// of a cold `gemm.tir` compile, same machine code).
///
/// `-spec-exec-max-speculation-cost=2` (LLVM's default is 7): most of SLSR's cost was the input that
/// NVPTX's speculative execution (`SpeculativeExecutionPass`, run just before SLSR) gave it, not SLSR's
/// rewriting. That pass hoisted the address arithmetic of every masked store out of its `if` block into the
/// block before, leaving the epilogue's 192 masked C stores of `gemm.tir` as one chain of blocks, each
/// dominating the next, full of address candidates of one SLSR key; for each delta it could reuse, SLSR
/// asks ScalarEvolution whether it may be poison (`canReuseInstruction`), which walks that dominator chain:
/// 1.37 of the 2.82 G instructions of a cold `gemm.tir` compile (callgrind). Hoisting only blocks whose
/// speculated instructions cost at most 2 keeps most of that arithmetic in its store's block. Not hoisting at
/// all (`-spec-exec-max-not-hoisted=0`, or cost 1) is cheaper still but makes ptxas spill 64-72 bytes in
/// every 255-register GEMM at sm_90; cost 2 spills nowhere more than before (every example, ptxas 13, sm_90;
/// the causal attention kernel 60 -> 16 bytes). The PTX changes only in the epilogues' address arithmetic.
/// GPU-checked: README "Compile time".
const CODEGEN_OPTIONS: &[&std::ffi::CStr] = &[c"tilec", c"-disable-lsr", c"-spec-exec-max-speculation-cost=2"];

/// Parses [`CODEGEN_OPTIONS`] once per process, when the first target machine above `-O0` is created (LLVM's
/// options are process globals that can be parsed only once; `-O0` machines, such as the one the
/// translation configures modules with, do not run these passes).
///
/// Both backends reach it through [`NvptxTargetMachine::new`]: the MLIR backend translates its `gpu.module` to
/// LLVM IR and generates code with this target machine too.
pub(crate) fn set_codegen_options(opt_level: OptLevel) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if opt_level == OptLevel::O0 {
        return;
    }
    ONCE.call_once(|| {
        let argv: Vec<*const std::ffi::c_char> = CODEGEN_OPTIONS.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: argv holds `argv.len()` pointers to NUL-terminated strings that live for the whole program
        // ('static literals); LLVM copies what it keeps. The Once keeps LLVM's option parser single-threaded
        // and unrepeated (a second parse of the same option is an error in LLVM).
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(argv.len() as i32, argv.as_ptr(), c"tilec".as_ptr());
        }
    });
}

/// The IR pipeline of `-O2` and `-O3`: LLVM 22's `default<O1>` (as `opt -passes='default<O1>'
/// -print-pipeline-passes` prints it) cut down to the passes that can act on what the translation emits, one
/// kernel function with no calls but intrinsics: five of its eight InstCombine runs removed (each found nothing
/// left to combine on the GEMMs), and the inliner and its CGSCC walk, coroutine, OpenMP, memprof, annotation
/// and expect lowering, global-variable, dead-argument, library-call, tail-call,
/// `float2int`, `memcpyopt`, `loop-idiom` (which would make `memset` calls), loop distribution and vectorisation
/// and the module-level clean-ups dropped. Kept: SROA, EarlyCSE, three InstCombines, SimplifyCFG, IPSCCP/SCCP,
/// reassociation, the loop passes (LICM, rotation, unswitching, `indvars`, full and partial unrolling, deletion),
/// BDCE/ADCE, `vector-combine`, alignment inference and function-attribute inference (`writeonly` and
/// `captures(none)` on the kernel's pointers, which `--emit llvm` shows). No verifier at the end: the module
/// is verified before the pipeline (see [`NvptxTargetMachine::optimize_and_emit`]).
///
/// It gives byte-identical PTX to `default<O3>` for every GEMM example and `mma.tir` (sm_80 and sm_90), and
/// to the uncut `default<O1>`-based pipeline of the previous version for every example (`scripts/ptx-snapshot.sh`),
/// in ~40% of `default<O3>`'s time on `gemm.tir`. InstCombine remains most of it.
///
/// It ends with an `early-cse` that `default<O1>` does not have: the late loop and CFG passes leave repeated
/// address computations (`gemm.tir`: 560 `getelementptr`s, 505 after it) that code generation's
/// straight-line strength reduction would otherwise pair up as candidates; it costs ~22 M instructions and
/// saves ~51 M in code generation. The PTX of every example is unchanged (`scripts/ptx-snapshot.sh`) but for the
/// two sm_90a Hopper GEMMs, where one `add.s64` takes its address from another base; their machine code
/// (`scripts/sass-snapshot.sh`) is identical.
pub const TILEC_PIPELINE: &str = concat!(
    "nvvm-reflect,",
    "function(nvvm-intr-range),",
    "function<eager-inv>(simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,sroa<modify-cfg>,early-cse<>),",
    "ipsccp,",
    "function<eager-inv>(mem2reg,instcombine<max-iterations=1;no-verify-fixpoint>,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>),",
    "function<eager-inv>(sroa<modify-cfg>,early-cse<memssa>,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,instcombine<max-iterations=1;no-verify-fixpoint>,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,reassociate,loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,simple-loop-unswitch<no-nontrivial;trivial>),simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,loop(indvars,loop-deletion,loop-unroll-full),sroa<modify-cfg>,sccp,bdce,adce,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,instcombine<max-iterations=1;no-verify-fixpoint>),",
    "cgscc(function-attrs),",
    "function<eager-inv>(lower-constant-intrinsics,loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),infer-alignment,simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,vector-combine,loop-unroll<O1>,sroa<preserve-cfg>,infer-alignment,loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>,early-cse<>)",
);

/// Marks every parameter of every function defined in the module `noundef`, after the IR pipeline and before
/// code generation.
///
/// True of a kernel: the host passes each parameter as defined bytes (pointers, extents, scalars, tensor maps),
/// never undef or poison. It matters to NVPTX's straight-line strength reduction (SLSR), which for each basis
/// it may reuse asks ScalarEvolution whether that basis can be more poisonous than the expression it stands
/// for (`ScalarEvolution::canReuseInstruction` → `isGuaranteedNotToBePoison`): each operand not known to be
/// defined costs a walk up the whole dominator chain, which is hundreds of blocks deep in the epilogue of a
/// GEMM (one `if` per masked store). With the extents and the output pointer known defined, `gemm.tir`'s
/// cold compile executes ≈ 0.19 G fewer instructions (of 1.84 G), with byte-identical PTX. The PTX of every
/// example is unchanged but for the Hopper GEMMs', where code generation now drops a `freeze` of an extent
/// (made by loop unswitching) and so orders two parameter loads differently: their machine code (ptxas 13.5,
/// `scripts/sass-snapshot.sh`) is identical.
///
/// Only after the pipeline: given to the IR pipeline, the same fact lets InstCombine rewrite the epilogue's
/// mask logic (`select` into `xor`/`not`), which changes the PTX and the machine code.
fn mark_parameters_noundef(module: &Module<'_>) {
    let context = module.get_context();
    let kind = inkwell::attributes::Attribute::get_named_enum_kind_id;
    let noundef = context.create_enum_attribute(kind("noundef"), 0);
    for function in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        for i in 0..function.count_params() {
            let at = inkwell::attributes::AttributeLoc::Param(i);
            // Not the `byval` tensor maps: the pointer to a by-value parameter is no value the host passed.
            if function.get_enum_attribute(at, kind("byval")).is_none() {
                function.add_attribute(at, noundef);
            }
        }
    }
}

/// Rewrites the short-circuit forms of `i1` logic that the IR pipeline leaves, `select i1 %a, i1 %b, i1 false`
/// and `select i1 %a, i1 true, i1 %b`, as `and i1 %a, %b` and `or i1 %a, %b`, after the pipeline and before code
/// generation.
///
/// Why: a masked store's branch condition that is an `and` of comparisons makes poison in any of their operands
/// undefined behaviour, so NVPTX's straight-line strength reduction (SLSR) learns at once that reusing an address
/// basis adds no poison (`programUndefinedIfPoison`); behind a `select` it cannot, and asks again for every
/// (basis, candidate) pair by walking the epilogue's chain of blocks (`isGuaranteedNotToBePoison`). On `gemm.tir`
/// SLSR drops from 0.30 to 0.11 G instructions and the cold compile from 1.56 to 1.36 G. (The lowering combines
/// masks with `tile.min`, which the translation writes as `icmp` + `select`; InstCombine keeps that a `select`
/// because it cannot prove the second operand free of poison.)
///
/// Sound for these kernels: the two forms differ only when `%b` is poison while `%a` is false, and their `i1`
/// values are comparisons of defined values (kernel parameters, which are `noundef`, special registers,
/// constants, index arithmetic whose wrap flags the translation or InstCombine proved). Only after the pipeline,
/// like [`mark_parameters_noundef`]: given to InstCombine, `and` masks change its other choices, which moved
/// ptxas's register allocation and slowed the 2-byte-aligned gemm_256x128 variant by 18%
/// (docs/bench-minmax-2026-11-25). This way the PTX changes but the H100 runs every benchmarked kernel at the
/// same speed (docs/bench-masks-2026-11-25: 15 GEMMs, ratios 0.996-1.006, geomean 1.000).
fn conjunctions_as_and(module: &Module<'_>) {
    use inkwell::values::{BasicValueEnum, InstructionOpcode, Operand};
    let context = module.get_context();
    let builder = context.create_builder();
    let is_bool = |v: &BasicValueEnum<'_>, bit: u64| {
        matches!(v, BasicValueEnum::IntValue(c) if c.is_const() && c.get_zero_extended_constant() == Some(bit))
    };
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(select) = next {
                next = select.get_next_instruction();
                let is_i1 = select.get_type().is_int_type() && select.get_type().into_int_type().get_bit_width() == 1;
                if select.get_opcode() != InstructionOpcode::Select || !is_i1 {
                    continue;
                }
                let operand = |i| match select.get_operand(i) {
                    Some(Operand::Value(v)) => Some(v),
                    _ => None,
                };
                let (Some(cond), Some(if_true), Some(if_false)) = (operand(0), operand(1), operand(2)) else {
                    continue;
                };
                builder.position_before(&select);
                let (a, b) = (cond.into_int_value(), if_true.into_int_value());
                let logic = if is_bool(&if_false, 0) {
                    builder.build_and(a, b, "")
                } else if is_bool(&if_true, 1) {
                    builder.build_or(a, if_false.into_int_value(), "")
                } else {
                    continue;
                };
                let Ok(logic) = logic else { continue };
                let Some(instruction) = logic.as_instruction() else { continue };
                let name = select.get_name().and_then(|n| n.to_str().ok()).unwrap_or_default().to_owned();
                select.replace_all_uses_with(&instruction);
                select.erase_from_basic_block();
                logic.set_name(&name); // `--emit llvm` keeps the select's name
            }
        }
    }
}

/// Rewrites each `extractelement` of one f16 or bf16 lane from a narrowing conversion (`fptrunc <N x float>`)
/// as the lane's half of the 32-bit word it shares with its neighbour (the pair shuffled out, bit-cast to
/// `i32`, shifted for the high lane, truncated, bit-cast back), after the IR pipeline and before code
/// generation.
///
/// Why: code generation folds an extraction from a conversion into the conversion of the lane alone, so the
/// first pair of an f16 or bf16 tile converted from an f32 accumulator, whose lanes the masked epilogue's
/// one-element stores read, became two `cvt.rn.f16.f32` of accumulator registers. On sm_90a ptxas then
/// serialises every `wgmma.mma_async` of the kernel (warning C7514, "non wgmma instructions reading accumulator
/// registers"; seen in `gemm_batched.tir` with an f16 C) though every read follows `wgmma.wait_group 0`. Through
/// the word the pair is converted together (`cvt.rn.f16x2.f32`), as every other pair of the tile already is,
/// and the lane split off with `mov.b32`. Only after the pipeline: InstCombine folds the word back into the
/// `extractelement`. Values are unchanged: the same conversion, the same 16 bits.
fn packed_half_lanes(module: &Module<'_>) {
    use inkwell::types::BasicTypeEnum;
    use inkwell::values::{BasicValue, BasicValueEnum, InstructionOpcode, Operand};
    let context = module.get_context();
    let builder = context.create_builder();
    let i32_ty = context.i32_type();
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(extract) = next {
                next = extract.get_next_instruction();
                if extract.get_opcode() != InstructionOpcode::ExtractElement {
                    continue;
                }
                let (Some(Operand::Value(BasicValueEnum::VectorValue(vector))), Some(Operand::Value(BasicValueEnum::IntValue(index)))) =
                    (extract.get_operand(0), extract.get_operand(1))
                else {
                    continue;
                };
                let from_conversion = vector.as_instruction().is_some_and(|i| i.get_opcode() == InstructionOpcode::FPTrunc);
                let elem = vector.get_type().get_element_type();
                let half = matches!(elem, BasicTypeEnum::FloatType(t) if t == context.f16_type() || t == context.bf16_type());
                let (Some(index), true, true) = (index.get_zero_extended_constant(), from_conversion, half) else {
                    continue;
                };
                let size = u64::from(vector.get_type().get_size());
                if size % 2 != 0 || index >= size {
                    continue;
                }
                builder.position_before(&extract);
                let lane = || -> Result<BasicValueEnum<'_>, inkwell::builder::BuilderError> {
                    let pair = inkwell::types::VectorType::const_vector(&[i32_ty.const_int(index & !1, false), i32_ty.const_int(index | 1, false)]);
                    let pair = builder.build_shuffle_vector(vector, vector.get_type().get_poison(), pair, "")?;
                    let word = builder.build_bit_cast(pair, i32_ty, "")?.into_int_value();
                    let word = if index % 2 == 1 { builder.build_right_shift(word, i32_ty.const_int(16, false), false, "")? } else { word };
                    let bits = builder.build_int_truncate(word, context.i16_type(), "")?;
                    builder.build_bit_cast(bits, elem, "")
                };
                let Ok(lane) = lane() else { continue };
                let Some(instruction) = lane.as_instruction_value() else { continue };
                extract.replace_all_uses_with(&instruction);
                extract.erase_from_basic_block();
            }
        }
    }
}

/// An LLVM NVPTX target machine for one [`Target`] and [`OptLevel`].
pub struct NvptxTargetMachine {
    machine: TargetMachine,
    target: Target,
    opt_level: OptLevel,
    /// Whether [`Self::optimize`] ends with [`conjunctions_as_and`] (see [`Self::keeping_short_circuit_masks`]).
    conjunctions_as_and: bool,
}

impl NvptxTargetMachine {
    /// Creates the target machine (`nvptx64-nvidia-cuda`, CPU `target.chip()`, features
    /// `target.ptx_features()`). Initialises LLVM's NVPTX target on first use.
    pub fn new(target: Target, opt_level: OptLevel) -> Result<Self> {
        LlvmTarget::initialize_nvptx(&InitializationConfig::default());
        set_codegen_options(opt_level);
        let triple = TargetTriple::create(NVPTX_TRIPLE);
        let llvm_target =
            LlvmTarget::from_triple(&triple).map_err(|e| Error::Llvm(e.to_string()))?;
        // `-O3` generates code at LLVM's default level, as `-O2` does: at `Aggressive` NVPTX runs GVN instead of
        // EarlyCSE after straight-line strength reduction, 25 M more instructions on `gemm.tir` for the same PTX
        // on every example and bench variant but `b2b_gemm` (its register numbering; the same speed on the H100:
        // docs/bench-masks-2026-11-25/b2b.md).
        let codegen_level = match opt_level {
            OptLevel::O0 => OptimizationLevel::None,
            OptLevel::O1 => OptimizationLevel::Less,
            OptLevel::O2 | OptLevel::O3 => OptimizationLevel::Default,
        };
        let machine = llvm_target
            .create_target_machine(
                &triple,
                target.chip(),
                target.ptx_features(),
                codegen_level,
                RelocMode::Default,
                CodeModel::Default,
            )
            .ok_or_else(|| {
                Error::Llvm(format!(
                    "could not create an NVPTX target machine for {target}"
                ))
            })?;
        Ok(NvptxTargetMachine {
            machine,
            target,
            opt_level,
            conjunctions_as_and: true,
        })
    }

    /// This machine without the [`conjunctions_as_and`] rewrite after the IR pipeline: what the MLIR backend
    /// uses. Its masks are already `and`s (`arith.minui`), so the rewrite saves it little compile time, and it
    /// changed the machine code of its `gemm.tir` (sm_90), which then ran 0.5% (4096³) and 1.4% (8192³) slower on
    /// the H100 (docs/bench-masks-2026-11-25/mlir.md); without it that PTX is byte-identical to before.
    pub fn keeping_short_circuit_masks(mut self) -> Self {
        self.conjunctions_as_and = false;
        self
    }

    /// The GPU target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The optimisation level.
    pub fn opt_level(&self) -> OptLevel {
        self.opt_level
    }

    /// The underlying inkwell target machine.
    pub fn llvm_target_machine(&self) -> &TargetMachine {
        &self.machine
    }

    /// Sets the module's triple and data layout to this machine's. Call it before building IR that
    /// depends on type sizes, and always before [`optimize`](Self::optimize).
    pub fn configure_module(&self, module: &Module<'_>) {
        module.set_triple(&self.machine.get_triple());
        module.set_data_layout(&self.machine.get_target_data().get_data_layout());
    }

    /// Checks the module with LLVM's verifier.
    pub fn verify(&self, module: &Module<'_>) -> Result<()> {
        module
            .verify()
            .map_err(|e| Error::InvalidLlvmModule(e.to_string()))
    }

    /// The new pass manager's pipeline this machine runs: [`TILEC_PIPELINE`] at `-O2` and `-O3`,
    /// `default<O1>` and `default<O0>` below.
    pub fn pipeline(&self) -> String {
        match self.opt_level {
            OptLevel::O2 | OptLevel::O3 => TILEC_PIPELINE.to_string(),
            level => level.llvm_pipeline(),
        }
    }

    /// Runs [`pipeline`](Self::pipeline) on the module.
    pub fn optimize(&self, module: &Module<'_>) -> Result<()> {
        let options = PassBuilderOptions::create();
        let pipeline = self.pipeline();
        module
            .run_passes(&pipeline, &self.machine, options)
            .map_err(|e| Error::Llvm(format!("pass pipeline {pipeline}: {e}")))?;
        mark_parameters_noundef(module);
        packed_half_lanes(module);
        if self.conjunctions_as_and {
            conjunctions_as_and(module);
        }
        Ok(())
    }

    /// Emits the module as PTX text. The output depends only on the module's contents (not on its name,
    /// time or paths), so the same module gives byte-identical PTX.
    pub fn emit_ptx(&self, module: &Module<'_>) -> Result<String> {
        let buffer = self
            .machine
            .write_to_memory_buffer(module, FileType::Assembly)
            .map_err(|e| Error::Llvm(format!("PTX code generation: {e}")))?;
        String::from_utf8(buffer.as_slice().to_vec())
            .map_err(|e| Error::Llvm(format!("PTX code generation produced non-UTF-8 text: {e}")))
    }

    /// The whole back half for a module nobody has verified yet: configure, verify, optimise, emit PTX.
    pub fn compile_to_ptx(&self, module: &Module<'_>) -> Result<String> {
        self.configure_module(module);
        self.verify(module)?;
        self.optimize_and_emit(module)
    }

    /// Optimises and emits PTX for a module already configured and verified.
    ///
    /// The module is verified once, before the IR pipeline, where a fault of tilec's translation becomes an
    /// error instead of undefined behaviour in LLVM's passes; what LLVM's own passes make of a valid module is
    /// verified only in debug builds, as a release `clang` does (`-disable-llvm-verifier`). Each verification
    /// of `gemm.tir`'s module costs ~10-12 M instructions, ~1% of its cold compile.
    pub fn optimize_and_emit(&self, module: &Module<'_>) -> Result<String> {
        self.optimize(module)?;
        if cfg!(debug_assertions) {
            self.verify(module)?;
        }
        self.emit_ptx(module)
    }
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The instructions (`%x = ...` lines) of the function in `input` after `rewrite`, and the whole module's text.
    fn rewritten(input: &str, rewrite: fn(&inkwell::module::Module<'_>)) -> (String, Vec<String>) {
        let context = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(input.as_bytes(), "k");
        let module = context.create_module_from_ir(buffer).unwrap();
        rewrite(&module);
        module.verify().unwrap();
        let text = module.print_to_string().to_string();
        let body = text.lines().map(str::trim).filter(|l| l.starts_with('%')).map(str::to_string).collect();
        (text, body)
    }

    /// `packed_half_lanes` takes f16/bf16 lanes of a conversion from their 32-bit words (the high lane shifted
    /// down), and leaves other extractions alone.
    #[test]
    fn half_lanes_of_conversions_come_from_their_words() {
        let input = r#"
define void @k(<4 x float> %acc, <4 x half> %h, ptr %p) {
  %c = fptrunc <4 x float> %acc to <4 x half>
  %lo = extractelement <4 x half> %c, i64 2
  %hi = extractelement <4 x half> %c, i64 3
  %other = extractelement <4 x half> %h, i64 1
  store volatile half %lo, ptr %p
  store volatile half %hi, ptr %p
  store volatile half %other, ptr %p
  ret void
}
"#;
        let (text, body) = rewritten(input, super::packed_half_lanes);
        assert_eq!(
            body,
            [
                "%c = fptrunc <4 x float> %acc to <4 x half>",
                "%1 = shufflevector <4 x half> %c, <4 x half> poison, <2 x i32> <i32 2, i32 3>",
                "%2 = bitcast <2 x half> %1 to i32",
                "%3 = trunc i32 %2 to i16",
                "%4 = bitcast i16 %3 to half",
                "%5 = shufflevector <4 x half> %c, <4 x half> poison, <2 x i32> <i32 2, i32 3>",
                "%6 = bitcast <2 x half> %5 to i32",
                "%7 = lshr i32 %6, 16",
                "%8 = trunc i32 %7 to i16",
                "%9 = bitcast i16 %8 to half",
                "%other = extractelement <4 x half> %h, i64 1",
            ],
            "{text}"
        );
    }

    /// `conjunctions_as_and` rewrites exactly the two short-circuit forms and leaves other `i1` selects alone.
    #[test]
    fn conjunctions_become_and_and_or() {
        let input = r#"
define void @k(i1 %a, i1 %b, i1 %c, ptr %p) {
  %and = select i1 %a, i1 %b, i1 false
  %or = select i1 %a, i1 true, i1 %c
  %other = select i1 %a, i1 %b, i1 %c
  %wide = select i1 %a, i32 1, i32 0
  store volatile i1 %and, ptr %p
  store volatile i1 %or, ptr %p
  store volatile i1 %other, ptr %p
  store volatile i32 %wide, ptr %p
  ret void
}
"#;
        let (text, body) = rewritten(input, super::conjunctions_as_and);
        assert_eq!(
            body,
            [
                "%and = and i1 %a, %b",
                "%or = or i1 %a, %c",
                "%other = select i1 %a, i1 %b, i1 %c",
                "%wide = select i1 %a, i32 1, i32 0",
            ],
            "{text}"
        );
    }
}
