//! Typed declarations and calls of the NVVM intrinsics tilec lowers to.
//!
//! LLVM turns a call to an unknown `llvm.nvvm.*` name into a call to an external function, which verifies,
//! optimises and emits fine, and is only rejected by ptxas. Every helper here therefore looks the name up in
//! LLVM's intrinsic table ([`Nvvm::declare`] fails with [`Error::UnknownIntrinsic`]), lets LLVM create the
//! declaration with its own signature, and checks the operands against that signature before building the
//! call ([`Error::IntrinsicOperands`]).
//!
//! Names follow `llvm/IR/IntrinsicsNVVM.td` of LLVM 22. The pointer-overloaded ones (`ldmatrix`,
//! `stmatrix`) get their `.p3` suffix from LLVM.

use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue,
};

use crate::error::{Error, Result};

/// A special register read through `llvm.nvvm.read.ptx.sreg.*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialRegister {
    /// `%tid.x`, thread index in the block.
    TidX,
    /// `%tid.y`.
    TidY,
    /// `%tid.z`.
    TidZ,
    /// `%ntid.x`, block size.
    NtidX,
    /// `%ntid.y`.
    NtidY,
    /// `%ntid.z`.
    NtidZ,
    /// `%ctaid.x`, block index in the grid.
    CtaidX,
    /// `%ctaid.y`.
    CtaidY,
    /// `%ctaid.z`.
    CtaidZ,
    /// `%nctaid.x`, grid size.
    NctaidX,
    /// `%nctaid.y`.
    NctaidY,
    /// `%nctaid.z`.
    NctaidZ,
    /// `%laneid`, lane in the warp.
    LaneId,
    /// `%warpid` (the hardware warp slot: not `tid / 32`, and not stable over a kernel's life).
    WarpId,
}

impl SpecialRegister {
    /// The intrinsic's name.
    pub fn intrinsic_name(self) -> &'static str {
        use SpecialRegister::*;
        match self {
            TidX => "llvm.nvvm.read.ptx.sreg.tid.x",
            TidY => "llvm.nvvm.read.ptx.sreg.tid.y",
            TidZ => "llvm.nvvm.read.ptx.sreg.tid.z",
            NtidX => "llvm.nvvm.read.ptx.sreg.ntid.x",
            NtidY => "llvm.nvvm.read.ptx.sreg.ntid.y",
            NtidZ => "llvm.nvvm.read.ptx.sreg.ntid.z",
            CtaidX => "llvm.nvvm.read.ptx.sreg.ctaid.x",
            CtaidY => "llvm.nvvm.read.ptx.sreg.ctaid.y",
            CtaidZ => "llvm.nvvm.read.ptx.sreg.ctaid.z",
            NctaidX => "llvm.nvvm.read.ptx.sreg.nctaid.x",
            NctaidY => "llvm.nvvm.read.ptx.sreg.nctaid.y",
            NctaidZ => "llvm.nvvm.read.ptx.sreg.nctaid.z",
            LaneId => "llvm.nvvm.read.ptx.sreg.laneid",
            WarpId => "llvm.nvvm.read.ptx.sreg.warpid",
        }
    }
}

/// How many 8x8 matrices one `ldmatrix`/`stmatrix` moves (`.x1`, `.x2`, `.x4`); also the number of `i32`
/// registers per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixCount {
    /// One 8x8 matrix (lanes 0–7 give the row addresses).
    X1,
    /// Two (lanes 0–15).
    X2,
    /// Four (lanes 0–31).
    X4,
}

impl MatrixCount {
    /// 1, 2 or 4.
    pub fn count(self) -> u32 {
        match self {
            MatrixCount::X1 => 1,
            MatrixCount::X2 => 2,
            MatrixCount::X4 => 4,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            MatrixCount::X1 => "x1",
            MatrixCount::X2 => "x2",
            MatrixCount::X4 => "x4",
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16` (sm_75+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LdMatrix {
    /// Matrices per instruction.
    pub count: MatrixCount,
    /// Transpose each 8x8 matrix while loading.
    pub transpose: bool,
}

impl LdMatrix {
    /// The intrinsic's base name (LLVM appends the pointer overload `.p3`).
    pub fn intrinsic_name(self) -> String {
        format!(
            "llvm.nvvm.ldmatrix.sync.aligned.m8n8.{}{}.b16",
            self.count.suffix(),
            if self.transpose { ".trans" } else { "" }
        )
    }
}

/// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16` (sm_90+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StMatrix {
    /// Matrices per instruction.
    pub count: MatrixCount,
    /// Transpose each 8x8 matrix while storing.
    pub transpose: bool,
}

impl StMatrix {
    /// The intrinsic's base name (LLVM appends the pointer overload `.p3`).
    pub fn intrinsic_name(self) -> String {
        format!(
            "llvm.nvvm.stmatrix.sync.aligned.m8n8.{}{}.b16",
            self.count.suffix(),
            if self.transpose { ".trans" } else { "" }
        )
    }
}

/// The cache policy of `cp.async`: `.ca` (cache in L1 and L2) or `.cg` (L2 only, 16-byte copies only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpAsyncCache {
    /// `.ca`: 4, 8 or 16 bytes.
    Ca,
    /// `.cg`: 16 bytes.
    Cg,
}

/// `cp.async.{ca,cg}.shared.global [dst], [src], bytes{, src_size}` (sm_80+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpAsync {
    /// Cache policy.
    pub cache: CpAsyncCache,
    /// Bytes copied: 4, 8 or 16 for `.ca`, 16 for `.cg`.
    pub bytes: u32,
    /// The `.s` variant: a run-time `src_size` operand; bytes past it are zero-filled (predicated loads).
    pub zero_fill: bool,
}

impl CpAsync {
    /// The intrinsic's name, or an error for a size the instruction does not have.
    pub fn intrinsic_name(self) -> Result<String> {
        let cache = match (self.cache, self.bytes) {
            (CpAsyncCache::Ca, 4 | 8 | 16) => "ca",
            (CpAsyncCache::Cg, 16) => "cg",
            (cache, bytes) => {
                return Err(Error::IntrinsicOperands {
                    intrinsic: "cp.async".into(),
                    message: format!(
                        "{cache:?} copies 4, 8 or 16 bytes (.cg only 16), not {bytes}"
                    ),
                })
            }
        };
        Ok(format!(
            "llvm.nvvm.cp.async.{cache}.shared.global.{}{}",
            self.bytes,
            if self.zero_fill { ".s" } else { "" }
        ))
    }
}

/// The operand roles of an `mma`: D = A·B + C, where D has C's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaOperand {
    /// The M×K left operand.
    A,
    /// The K×N right operand.
    B,
    /// The M×N accumulator (and the result D).
    C,
}

/// The type of one register of an `mma` fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FragmentRegister {
    /// `<2 x half>`: two f16 values.
    F16x2,
    /// `i32`: packed bf16/tf32/s8/u8 values, or an s32 accumulator.
    I32,
    /// `float`.
    F32,
}

impl FragmentRegister {
    /// The LLVM type of the register.
    pub fn llvm_type<'ctx>(self, context: ContextRef<'ctx>) -> BasicTypeEnum<'ctx> {
        match self {
            FragmentRegister::F16x2 => context.f16_type().vec_type(2).as_basic_type_enum(),
            FragmentRegister::I32 => context.i32_type().as_basic_type_enum(),
            FragmentRegister::F32 => context.f32_type().as_basic_type_enum(),
        }
    }
}

/// The warp-level `mma.sync.aligned` variants tilec uses, all `.row.col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaInstr {
    /// m16n8k16, f16 inputs, f32 accumulator (sm_80).
    M16N8K16F16F32,
    /// m16n8k16, f16 inputs, f16 accumulator (sm_80).
    M16N8K16F16F16,
    /// m16n8k8, f16 inputs, f32 accumulator (sm_75).
    M16N8K8F16F32,
    /// m16n8k8, f16 inputs, f16 accumulator (sm_75).
    M16N8K8F16F16,
    /// m16n8k16, bf16 inputs, f32 accumulator (sm_80).
    M16N8K16Bf16F32,
    /// m16n8k8, bf16 inputs, f32 accumulator (sm_80).
    M16N8K8Bf16F32,
    /// m16n8k8, tf32 inputs, f32 accumulator (sm_80).
    M16N8K8Tf32F32,
    /// m16n8k32, s8 inputs, s32 accumulator, wrapping (sm_80).
    M16N8K32S8S32,
    /// m16n8k32, s8 inputs, s32 accumulator, `.satfinite` (sm_80).
    M16N8K32S8S32Satfinite,
    /// m16n8k32, u8 inputs, s32 accumulator (sm_80).
    M16N8K32U8S32,
    /// m8n8k4, f16 inputs, f32 accumulator (sm_70; slow on sm_80+, kept for completeness).
    M8N8K4F16F32,
    /// m8n8k4, f16 inputs, f16 accumulator (sm_70).
    M8N8K4F16F16,
}

impl MmaInstr {
    /// Every variant.
    pub const ALL: [MmaInstr; 12] = [
        MmaInstr::M16N8K16F16F32,
        MmaInstr::M16N8K16F16F16,
        MmaInstr::M16N8K8F16F32,
        MmaInstr::M16N8K8F16F16,
        MmaInstr::M16N8K16Bf16F32,
        MmaInstr::M16N8K8Bf16F32,
        MmaInstr::M16N8K8Tf32F32,
        MmaInstr::M16N8K32S8S32,
        MmaInstr::M16N8K32S8S32Satfinite,
        MmaInstr::M16N8K32U8S32,
        MmaInstr::M8N8K4F16F32,
        MmaInstr::M8N8K4F16F16,
    ];

    /// (M, N, K).
    pub fn shape(self) -> (u32, u32, u32) {
        use MmaInstr::*;
        match self {
            M16N8K16F16F32 | M16N8K16F16F16 | M16N8K16Bf16F32 => (16, 8, 16),
            M16N8K8F16F32 | M16N8K8F16F16 | M16N8K8Bf16F32 | M16N8K8Tf32F32 => (16, 8, 8),
            M16N8K32S8S32 | M16N8K32S8S32Satfinite | M16N8K32U8S32 => (16, 8, 32),
            M8N8K4F16F32 | M8N8K4F16F16 => (8, 8, 4),
        }
    }

    /// The intrinsic's name. For f16 inputs LLVM names the variant by the D and C types, for the others by
    /// the input type (see `MMA_SIGNATURE` in `IntrinsicsNVVM.td`).
    pub fn intrinsic_name(self) -> &'static str {
        use MmaInstr::*;
        match self {
            M16N8K16F16F32 => "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
            M16N8K16F16F16 => "llvm.nvvm.mma.m16n8k16.row.col.f16.f16",
            M16N8K8F16F32 => "llvm.nvvm.mma.m16n8k8.row.col.f32.f32",
            M16N8K8F16F16 => "llvm.nvvm.mma.m16n8k8.row.col.f16.f16",
            M16N8K16Bf16F32 => "llvm.nvvm.mma.m16n8k16.row.col.bf16",
            M16N8K8Bf16F32 => "llvm.nvvm.mma.m16n8k8.row.col.bf16",
            M16N8K8Tf32F32 => "llvm.nvvm.mma.m16n8k8.row.col.tf32",
            M16N8K32S8S32 => "llvm.nvvm.mma.m16n8k32.row.col.s8",
            M16N8K32S8S32Satfinite => "llvm.nvvm.mma.m16n8k32.row.col.satfinite.s8",
            M16N8K32U8S32 => "llvm.nvvm.mma.m16n8k32.row.col.u8",
            M8N8K4F16F32 => "llvm.nvvm.mma.m8n8k4.row.col.f32.f32",
            M8N8K4F16F16 => "llvm.nvvm.mma.m8n8k4.row.col.f16.f16",
        }
    }

    /// The PTX instruction it becomes, as NVPTX prints it.
    pub fn ptx_instruction(self) -> &'static str {
        use MmaInstr::*;
        match self {
            M16N8K16F16F32 => "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            M16N8K16F16F16 => "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
            M16N8K8F16F32 => "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
            M16N8K8F16F16 => "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
            M16N8K16Bf16F32 => "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            M16N8K8Bf16F32 => "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
            M16N8K8Tf32F32 => "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            M16N8K32S8S32 => "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
            M16N8K32S8S32Satfinite => "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
            M16N8K32U8S32 => "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
            M8N8K4F16F32 => "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
            M8N8K4F16F16 => "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16",
        }
    }

    /// The registers per thread of one operand's fragment: their type and number.
    pub fn fragment(self, operand: MmaOperand) -> (FragmentRegister, u32) {
        use FragmentRegister::*;
        use MmaInstr::*;
        use MmaOperand::*;
        match (self, operand) {
            (M16N8K16F16F32 | M16N8K16F16F16, A) => (F16x2, 4),
            (M16N8K16F16F32 | M16N8K16F16F16, B) => (F16x2, 2),
            (M16N8K8F16F32 | M16N8K8F16F16, A) => (F16x2, 2),
            (M16N8K8F16F32 | M16N8K8F16F16, B) => (F16x2, 1),
            (M16N8K16F16F32 | M16N8K8F16F32, C) => (F32, 4),
            (M16N8K16F16F16 | M16N8K8F16F16, C) => (F16x2, 2),
            (M16N8K16Bf16F32, A) => (I32, 4),
            (M16N8K16Bf16F32, B) => (I32, 2),
            (M16N8K8Bf16F32, A) => (I32, 2),
            (M16N8K8Bf16F32, B) => (I32, 1),
            (M16N8K8Tf32F32, A) => (I32, 4),
            (M16N8K8Tf32F32, B) => (I32, 2),
            (M16N8K16Bf16F32 | M16N8K8Bf16F32 | M16N8K8Tf32F32, C) => (F32, 4),
            (M16N8K32S8S32 | M16N8K32S8S32Satfinite | M16N8K32U8S32, A) => (I32, 4),
            (M16N8K32S8S32 | M16N8K32S8S32Satfinite | M16N8K32U8S32, B) => (I32, 2),
            (M16N8K32S8S32 | M16N8K32S8S32Satfinite | M16N8K32U8S32, C) => (I32, 4),
            (M8N8K4F16F32 | M8N8K4F16F16, A | B) => (F16x2, 2),
            (M8N8K4F16F32, C) => (F32, 8),
            (M8N8K4F16F16, C) => (F16x2, 4),
        }
    }
}

/// Declares and calls NVVM intrinsics in one module.
pub struct Nvvm<'a, 'ctx> {
    module: &'a Module<'ctx>,
}

impl<'a, 'ctx> Nvvm<'a, 'ctx> {
    /// Helpers for `module`.
    pub fn new(module: &'a Module<'ctx>) -> Self {
        Nvvm { module }
    }

    /// The module's context.
    pub fn context(&self) -> ContextRef<'ctx> {
        self.module.get_context()
    }

    /// Declares the intrinsic `name` (idempotent). `overload_types` picks the overload of an overloaded
    /// intrinsic (e.g. the shared pointer type for `ldmatrix`) and must be empty otherwise.
    pub fn declare(
        &self,
        name: &str,
        overload_types: &[BasicTypeEnum<'ctx>],
    ) -> Result<FunctionValue<'ctx>> {
        let intrinsic =
            Intrinsic::find(name).ok_or_else(|| Error::UnknownIntrinsic(name.to_string()))?;
        if intrinsic.is_overloaded() == overload_types.is_empty() {
            return Err(Error::IntrinsicOperands {
                intrinsic: name.to_string(),
                message: if intrinsic.is_overloaded() {
                    "is overloaded: give the overload types".into()
                } else {
                    "is not overloaded: give no overload types".into()
                },
            });
        }
        intrinsic
            .get_declaration(self.module, overload_types)
            .ok_or_else(|| Error::IntrinsicOperands {
                intrinsic: name.to_string(),
                message: "LLVM could not declare it with these overload types".into(),
            })
    }

    /// Declares `name` and calls it with `args`, after checking their number and types against the
    /// declaration. Returns the call's value (`None` for `void`).
    pub fn call(
        &self,
        builder: &Builder<'ctx>,
        name: &str,
        overload_types: &[BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        let function = self.declare(name, overload_types)?;
        let params = function.get_type().get_param_types();
        if params.len() != args.len() {
            return Err(Error::IntrinsicOperands {
                intrinsic: name.to_string(),
                message: format!("takes {} operands, got {}", params.len(), args.len()),
            });
        }
        for (i, (param, arg)) in params.iter().zip(args).enumerate() {
            let found: BasicMetadataTypeEnum<'ctx> = arg.get_type().into();
            if *param != found {
                return Err(Error::IntrinsicOperands {
                    intrinsic: name.to_string(),
                    message: format!(
                        "operand {i} must be {}, got {}",
                        type_text(*param),
                        arg.get_type().print_to_string().to_string()
                    ),
                });
            }
        }
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        let call = builder
            .build_call(function, &args, "")
            .map_err(builder_error)?;
        Ok(call.try_as_basic_value().basic())
    }

    /// Reads a special register (`%tid.x`, `%ctaid.x`, `%laneid`, …).
    pub fn special_register(
        &self,
        builder: &Builder<'ctx>,
        register: SpecialRegister,
    ) -> Result<IntValue<'ctx>> {
        let value = self.call(builder, register.intrinsic_name(), &[], &[])?;
        Ok(value
            .ok_or_else(|| Error::Llvm("internal: special registers return i32".into()))?
            .into_int_value())
    }

    /// `bar.sync id` for all threads of the block (`llvm.nvvm.barrier.cta.sync.aligned.all`; id 0 is
    /// `__syncthreads()`).
    pub fn barrier_sync(&self, builder: &Builder<'ctx>, barrier_id: u32) -> Result<()> {
        let id = self
            .context()
            .i32_type()
            .const_int(u64::from(barrier_id), false);
        self.call(
            builder,
            "llvm.nvvm.barrier.cta.sync.aligned.all",
            &[],
            &[id.into()],
        )?;
        Ok(())
    }

    /// `ldmatrix` from a shared-memory pointer (`ptr addrspace(3)`, this thread's row address). Returns
    /// `count` `i32` registers, each two b16 values.
    pub fn ldmatrix(
        &self,
        builder: &Builder<'ctx>,
        op: LdMatrix,
        row_address: PointerValue<'ctx>,
    ) -> Result<Vec<IntValue<'ctx>>> {
        let name = op.intrinsic_name();
        let value = self
            .call(
                builder,
                &name,
                &[row_address.get_type().into()],
                &[row_address.into()],
            )?
            .ok_or_else(|| Error::Llvm("internal: ldmatrix returns registers".into()))?;
        self.unpack(builder, value)?
            .into_iter()
            .map(|v| Ok(v.into_int_value()))
            .collect()
    }

    /// `stmatrix` to a shared-memory pointer (`ptr addrspace(3)`, this thread's row address) from `count`
    /// `i32` registers (sm_90+).
    pub fn stmatrix(
        &self,
        builder: &Builder<'ctx>,
        op: StMatrix,
        row_address: PointerValue<'ctx>,
        registers: &[IntValue<'ctx>],
    ) -> Result<()> {
        let name = op.intrinsic_name();
        let mut args: Vec<BasicValueEnum<'ctx>> = vec![row_address.into()];
        args.extend(registers.iter().map(|r| r.as_basic_value_enum()));
        self.call(builder, &name, &[row_address.get_type().into()], &args)?;
        Ok(())
    }

    /// `mma.sync.aligned`: D = A·B + C, operands given as the registers of their fragments (see
    /// [`MmaInstr::fragment`]). Returns D's registers.
    pub fn mma(
        &self,
        builder: &Builder<'ctx>,
        instr: MmaInstr,
        a: &[BasicValueEnum<'ctx>],
        b: &[BasicValueEnum<'ctx>],
        c: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        for (operand, values) in [(MmaOperand::A, a), (MmaOperand::B, b), (MmaOperand::C, c)] {
            let (_, count) = instr.fragment(operand);
            if values.len() as u32 != count {
                return Err(Error::IntrinsicOperands {
                    intrinsic: instr.intrinsic_name().to_string(),
                    message: format!("{operand:?} takes {count} registers, got {}", values.len()),
                });
            }
        }
        let args: Vec<_> = a.iter().chain(b).chain(c).copied().collect();
        let value = self
            .call(builder, instr.intrinsic_name(), &[], &args)?
            .ok_or_else(|| Error::Llvm("internal: mma returns D".into()))?;
        self.unpack(builder, value)
    }

    /// `cp.async.{ca,cg}.shared.global` from a global pointer to a shared pointer. `src_size` is required
    /// exactly when `op.zero_fill` is set.
    pub fn cp_async(
        &self,
        builder: &Builder<'ctx>,
        op: CpAsync,
        dst_shared: PointerValue<'ctx>,
        src_global: PointerValue<'ctx>,
        src_size: Option<IntValue<'ctx>>,
    ) -> Result<()> {
        let name = op.intrinsic_name()?;
        if op.zero_fill != src_size.is_some() {
            return Err(Error::IntrinsicOperands {
                intrinsic: name,
                message: "src_size is given exactly for the zero-fill (.s) variant".into(),
            });
        }
        let mut args: Vec<BasicValueEnum<'ctx>> = vec![dst_shared.into(), src_global.into()];
        args.extend(src_size.map(|s| s.as_basic_value_enum()));
        self.call(builder, &name, &[], &args)?;
        Ok(())
    }

    /// `cp.async.commit_group`.
    pub fn cp_async_commit_group(&self, builder: &Builder<'ctx>) -> Result<()> {
        self.call(builder, "llvm.nvvm.cp.async.commit.group", &[], &[])?;
        Ok(())
    }

    /// `cp.async.wait_group n`: wait until at most `n` committed groups are pending.
    pub fn cp_async_wait_group(&self, builder: &Builder<'ctx>, pending: u32) -> Result<()> {
        let n = self
            .context()
            .i32_type()
            .const_int(u64::from(pending), false);
        self.call(builder, "llvm.nvvm.cp.async.wait.group", &[], &[n.into()])?;
        Ok(())
    }

    /// `cp.async.wait_all`.
    pub fn cp_async_wait_all(&self, builder: &Builder<'ctx>) -> Result<()> {
        self.call(builder, "llvm.nvvm.cp.async.wait.all", &[], &[])?;
        Ok(())
    }

    /// Splits a struct return value into its fields; a non-struct value is one register.
    fn unpack(
        &self,
        builder: &Builder<'ctx>,
        value: BasicValueEnum<'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        match value {
            BasicValueEnum::StructValue(s) => (0..s.get_type().count_fields())
                .map(|i| builder.build_extract_value(s, i, "").map_err(builder_error))
                .collect(),
            other => Ok(vec![other]),
        }
    }
}

fn builder_error(e: inkwell::builder::BuilderError) -> Error {
    Error::Llvm(format!("IR builder: {e}"))
}

fn type_text(t: BasicMetadataTypeEnum<'_>) -> String {
    match BasicTypeEnum::try_from(t) {
        Ok(t) => t.print_to_string().to_string(),
        Err(_) => "metadata".to_string(),
    }
}
