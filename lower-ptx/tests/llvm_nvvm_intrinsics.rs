//! Builds small kernels by hand with inkwell that use every NVVM intrinsic helper, emits PTX for each
//! target, checks the instructions in the PTX, and has ptxas assemble it for sm_80 and sm_90.
#![cfg(feature = "llvm")]

mod common;

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::BasicType;
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use inkwell::AddressSpace as LlvmAddressSpace;

use tilec_lower_ptx::llvm::{
    add_dynamic_shared_memory, add_static_shared_array, declare_kernel, set_launch_bounds,
    AddressSpace, CpAsync, CpAsyncCache, FragmentRegister, LdMatrix, MatrixCount, MmaInstr,
    MmaOperand, NvptxTargetMachine, Nvvm, SpecialRegister, StMatrix,
};
use tilec_ir::Target;
use tilec_lower_ptx::{Error, OptLevel};

struct Kernel<'ctx> {
    module: Module<'ctx>,
    builder: Builder<'ctx>,
    function: FunctionValue<'ctx>,
}

/// A kernel `name(ptr addrspace(1) %in, ptr addrspace(1) %out)` with an entry block, builder at its end.
fn kernel<'ctx>(context: &'ctx Context, name: &str, tm: &NvptxTargetMachine) -> Kernel<'ctx> {
    let module = context.create_module(name);
    tm.configure_module(&module);
    let global_ptr = context
        .ptr_type(AddressSpace::Global.into())
        .as_basic_type_enum();
    let function = declare_kernel(&module, name, &[global_ptr, global_ptr]);
    let builder = context.create_builder();
    builder.position_at_end(context.append_basic_block(function, "entry"));
    Kernel {
        module,
        builder,
        function,
    }
}

fn param<'ctx>(k: &Kernel<'ctx>, i: u32) -> PointerValue<'ctx> {
    k.function.get_nth_param(i).unwrap().into_pointer_value()
}

/// The shared tile and this thread's row address in it: `&tile[(tid % 32) * 8]` (halves).
fn shared_row_address<'ctx>(
    context: &'ctx Context,
    k: &Kernel<'ctx>,
    nvvm: &Nvvm<'_, 'ctx>,
) -> PointerValue<'ctx> {
    let tile = add_static_shared_array(
        &k.module,
        "tile",
        context.f16_type().as_basic_type_enum(),
        1024,
        16,
    );
    let tid = nvvm
        .special_register(&k.builder, SpecialRegister::TidX)
        .unwrap();
    let lane = k
        .builder
        .build_and(tid, context.i32_type().const_int(31, false), "lane")
        .unwrap();
    let offset = k
        .builder
        .build_int_mul(lane, context.i32_type().const_int(8, false), "offset")
        .unwrap();
    unsafe {
        k.builder
            .build_gep(
                context.f16_type(),
                tile.as_pointer_value(),
                &[offset],
                "row",
            )
            .unwrap()
    }
}

/// Stores every value, bitcast to i32/f32 lanes, to `out[tid * n + i]` so nothing is dead code.
fn store_all<'ctx>(
    context: &'ctx Context,
    k: &Kernel<'ctx>,
    nvvm: &Nvvm<'_, 'ctx>,
    values: &[BasicValueEnum<'ctx>],
) {
    let tid = nvvm
        .special_register(&k.builder, SpecialRegister::TidX)
        .unwrap();
    let base = k
        .builder
        .build_int_mul(
            tid,
            context.i32_type().const_int(values.len() as u64, false),
            "",
        )
        .unwrap();
    for (i, v) in values.iter().enumerate() {
        let idx = k
            .builder
            .build_int_add(base, context.i32_type().const_int(i as u64, false), "")
            .unwrap();
        let as_i32 = k
            .builder
            .build_bit_cast(*v, context.i32_type(), "")
            .unwrap();
        let ptr = unsafe {
            k.builder
                .build_gep(context.i32_type(), param(k, 1), &[idx], "")
                .unwrap()
        };
        k.builder.build_store(ptr, as_i32).unwrap();
    }
}

/// A kernel using cp.async (all variants), commit/wait, the barrier, ldmatrix (x1/x2/x4, ±trans),
/// stmatrix (sm_90 only), every mma variant, special registers and launch bounds.
fn build_everything<'ctx>(context: &'ctx Context, tm: &NvptxTargetMachine) -> Module<'ctx> {
    let k = kernel(context, "everything", tm);
    let nvvm = Nvvm::new(&k.module);
    set_launch_bounds(k.function, 128, Some(2));
    let row = shared_row_address(context, &k, &nvvm);
    let src = param(&k, 0);

    // cp.async: every cache/size, with and without zero fill.
    for (cache, bytes) in [
        (CpAsyncCache::Ca, 4),
        (CpAsyncCache::Ca, 8),
        (CpAsyncCache::Ca, 16),
        (CpAsyncCache::Cg, 16),
    ] {
        nvvm.cp_async(
            &k.builder,
            CpAsync {
                cache,
                bytes,
                zero_fill: false,
            },
            row,
            src,
            None,
        )
        .unwrap();
        let size = context.i32_type().const_int(u64::from(bytes / 2), false);
        nvvm.cp_async(
            &k.builder,
            CpAsync {
                cache,
                bytes,
                zero_fill: true,
            },
            row,
            src,
            Some(size),
        )
        .unwrap();
    }
    nvvm.cp_async_commit_group(&k.builder).unwrap();
    nvvm.cp_async_wait_group(&k.builder, 0).unwrap();
    nvvm.cp_async_wait_all(&k.builder).unwrap();
    nvvm.barrier_sync(&k.builder, 0).unwrap();

    let mut regs = Vec::new();
    for count in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
        for transpose in [false, true] {
            let r = nvvm
                .ldmatrix(&k.builder, LdMatrix { count, transpose }, row)
                .unwrap();
            assert_eq!(r.len() as u32, count.count());
            regs.extend(r);
        }
    }
    if tm.target().has_stmatrix() {
        for count in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
            for transpose in [false, true] {
                let n = count.count() as usize;
                nvvm.stmatrix(&k.builder, StMatrix { count, transpose }, row, &regs[..n])
                    .unwrap();
            }
        }
    }
    nvvm.barrier_sync(&k.builder, 1).unwrap();

    // Every mma variant, fed from the ldmatrix registers (bitcast to the fragment's register type).
    let mut results = Vec::new();
    for instr in MmaInstr::ALL {
        let operand = |op: MmaOperand, offset: usize| -> Vec<BasicValueEnum<'ctx>> {
            let (reg, n) = instr.fragment(op);
            (0..n as usize)
                .map(|i| {
                    let v = regs[(offset + i) % regs.len()];
                    match reg {
                        FragmentRegister::I32 => v.into(),
                        other => k
                            .builder
                            .build_bit_cast(v, other.llvm_type(k.module.get_context()), "")
                            .unwrap(),
                    }
                })
                .collect()
        };
        let d = nvvm
            .mma(
                &k.builder,
                instr,
                &operand(MmaOperand::A, 0),
                &operand(MmaOperand::B, 4),
                &operand(MmaOperand::C, 6),
            )
            .unwrap();
        assert_eq!(d.len() as u32, instr.fragment(MmaOperand::C).1, "{instr:?}");
        results.extend(d);
    }
    for r in [
        SpecialRegister::CtaidX,
        SpecialRegister::LaneId,
        SpecialRegister::NtidX,
    ] {
        results.push(nvvm.special_register(&k.builder, r).unwrap().into());
    }
    store_all(context, &k, &nvvm, &results);
    k.builder.build_return(None).unwrap();
    k.module
}

fn compile(target: Target, opt: OptLevel) -> String {
    let context = Context::create();
    let tm = NvptxTargetMachine::new(target, opt).unwrap();
    let module = build_everything(&context, &tm);
    tm.compile_to_ptx(&module)
        .unwrap_or_else(|e| panic!("{target} {opt}: {e}\n{}", module.print_to_string()))
}

#[test]
fn every_intrinsic_reaches_ptx_for_every_target() {
    for target in Target::ALL {
        let ptx = compile(target, OptLevel::O3);
        assert!(ptx.contains(".version 8.0"), "{target}");
        assert!(
            ptx.contains(&format!(".target {}", target.chip())),
            "{target}"
        );
        assert!(ptx.contains(".visible .entry everything("), "{target}");
        assert!(
            ptx.contains(".maxntid 128"),
            "{target}: launch bounds missing"
        );
        assert!(
            ptx.contains(".minnctapersm 2"),
            "{target}: launch bounds missing"
        );
        for needle in [
            "cp.async.ca.shared.global",
            "cp.async.cg.shared.global",
            "cp.async.commit_group",
            "cp.async.wait_group",
            "cp.async.wait_all",
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            "%tid.x",
            "%ctaid.x",
            "%laneid",
        ] {
            assert!(
                ptx.contains(needle),
                "{target}: `{needle}` missing from PTX"
            );
        }
        for instr in MmaInstr::ALL {
            assert!(
                ptx.contains(instr.ptx_instruction()),
                "{target}: `{}` missing",
                instr.ptx_instruction()
            );
        }
        assert_eq!(
            ptx.contains("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
            target.has_stmatrix(),
            "{target}"
        );
        assert!(
            !ptx.contains(".extern .func"),
            "{target}: an intrinsic became an external call"
        );
    }
}

#[test]
fn ptxas_accepts_the_intrinsics_for_sm80_and_sm90() {
    let Some(ptxas) = common::ptxas_or_skip("ptxas_accepts_the_intrinsics_for_sm80_and_sm90")
    else {
        return;
    };
    for target in [Target::Sm80, Target::Sm90] {
        for opt in [OptLevel::O0, OptLevel::O3] {
            let ptx = compile(target, opt);
            let report = ptxas
                .assemble(&ptx, target)
                .unwrap_or_else(|e| panic!("{target} {opt}: {e}"));
            let k = report
                .kernel("everything")
                .unwrap_or_else(|| panic!("no report for `everything`:\n{}", report.log));
            assert_eq!(k.arch, target.chip());
            assert!(k.registers > 0);
            assert_eq!(
                k.shared_bytes, 2048,
                "{target} {opt}: 1024 halves of static shared memory"
            );
            assert!(!report.cubin.is_empty());
        }
    }
}

#[test]
fn ptx_is_deterministic() {
    for target in [Target::Sm80, Target::Sm90] {
        assert_eq!(compile(target, OptLevel::O3), compile(target, OptLevel::O3));
    }
}

#[test]
fn every_opt_level_compiles() {
    for opt in OptLevel::ALL {
        assert!(compile(Target::Sm86, opt).contains("mma.sync.aligned.m16n8k16"));
    }
}

#[test]
fn dynamic_shared_memory_is_extern_shared() {
    let context = Context::create();
    let tm = NvptxTargetMachine::new(Target::Sm80, OptLevel::O2).unwrap();
    let k = kernel(&context, "dyn", &tm);
    let nvvm = Nvvm::new(&k.module);
    let smem = add_dynamic_shared_memory(&k.module, "dynamic_smem", 16);
    let regs = nvvm
        .ldmatrix(
            &k.builder,
            LdMatrix {
                count: MatrixCount::X4,
                transpose: false,
            },
            smem.as_pointer_value(),
        )
        .unwrap();
    store_all(
        &context,
        &k,
        &nvvm,
        &regs.iter().map(|r| (*r).into()).collect::<Vec<_>>(),
    );
    k.builder.build_return(None).unwrap();
    let ptx = tm.compile_to_ptx(&k.module).unwrap();
    assert!(
        ptx.contains(".extern .shared .align 16 .b8 dynamic_smem[]"),
        "{ptx}"
    );
    if let Some(ptxas) = common::ptxas_or_skip("dynamic_shared_memory_is_extern_shared") {
        ptxas.assemble(&ptx, Target::Sm80).unwrap();
    }
}

#[test]
fn misspelt_intrinsic_is_an_error_not_an_external_call() {
    let context = Context::create();
    let module = context.create_module("m");
    let nvvm = Nvvm::new(&module);
    let err = nvvm
        .declare("llvm.nvvm.mma.m16n8k16.row.col.f32.f16", &[])
        .unwrap_err();
    assert!(matches!(err, Error::UnknownIntrinsic(_)), "{err}");
    // ldmatrix is overloaded on the pointer type: declaring it without one is refused too.
    let err = nvvm
        .declare(
            &LdMatrix {
                count: MatrixCount::X4,
                transpose: false,
            }
            .intrinsic_name(),
            &[],
        )
        .unwrap_err();
    assert!(matches!(err, Error::IntrinsicOperands { .. }), "{err}");
    // Every name the typed layer produces is known to LLVM.
    let shared = context
        .ptr_type(LlvmAddressSpace::from(3u16))
        .as_basic_type_enum();
    for count in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
        for transpose in [false, true] {
            nvvm.declare(&LdMatrix { count, transpose }.intrinsic_name(), &[shared])
                .unwrap();
            nvvm.declare(&StMatrix { count, transpose }.intrinsic_name(), &[shared])
                .unwrap();
        }
    }
    for instr in MmaInstr::ALL {
        let f = nvvm.declare(instr.intrinsic_name(), &[]).unwrap();
        // The fragment table agrees with LLVM's signature.
        let params = f.get_type().get_param_types();
        let expected: Vec<_> = [MmaOperand::A, MmaOperand::B, MmaOperand::C]
            .into_iter()
            .flat_map(|op| {
                let (reg, n) = instr.fragment(op);
                std::iter::repeat_n(reg.llvm_type(module.get_context()), n as usize)
            })
            .map(|t| t.into())
            .collect();
        assert_eq!(params, expected, "{instr:?}");
    }
}

#[test]
fn wrong_operands_are_errors() {
    let context = Context::create();
    let tm = NvptxTargetMachine::new(Target::Sm80, OptLevel::O3).unwrap();
    let k = kernel(&context, "bad", &tm);
    let nvvm = Nvvm::new(&k.module);
    let f32x = context.f32_type().const_float(1.0).into();
    // Too few registers for A.
    let err = nvvm
        .mma(&k.builder, MmaInstr::M16N8K16F16F32, &[f32x], &[], &[])
        .unwrap_err();
    assert!(matches!(err, Error::IntrinsicOperands { .. }), "{err}");
    // Right count, wrong type (f32 where <2 x half> goes).
    let err = nvvm
        .mma(
            &k.builder,
            MmaInstr::M16N8K8F16F32,
            &[f32x, f32x],
            &[f32x],
            &[f32x; 4],
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("operand 0 must be <2 x half>"),
        "{err}"
    );
    // cp.async.cg copies 16 bytes only; src_size only with zero fill.
    let p = param(&k, 0);
    let bad = CpAsync {
        cache: CpAsyncCache::Cg,
        bytes: 8,
        zero_fill: false,
    };
    assert!(nvvm.cp_async(&k.builder, bad, p, p, None).is_err());
    let ok_size = CpAsync {
        cache: CpAsyncCache::Ca,
        bytes: 16,
        zero_fill: false,
    };
    let size = context.i32_type().const_int(4, false);
    assert!(nvvm
        .cp_async(&k.builder, ok_size, p, p, Some(size))
        .is_err());
    // A global pointer where cp.async wants a shared destination.
    let err = nvvm.cp_async(&k.builder, ok_size, p, p, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("operand 0 must be ptr addrspace(3)"),
        "{err}"
    );
}
