//! The upstream MLIR pipeline through melior: a hand-written `gpu.module` with `nvgpu.device_async_copy`,
//! `nvgpu.ldmatrix` and `nvgpu.mma.sync` reaches PTX that ptxas accepts; MLIR errors come back as errors.
#![cfg(feature = "mlir")]

mod common;

use tilec_lower_ptx::mlir::{gpu_to_ptx_pipeline, MlirToolchain};
use tilec_ir::Target;
use tilec_lower_ptx::{Error, OptLevel};

const KERNEL: &str = include_str!("nvgpu_ldmatrix_mma.mlir");

#[test]
fn nvgpu_module_lowers_to_ptx_for_every_target() {
    let mlir = MlirToolchain::new();
    for target in Target::ALL {
        let binaries = mlir
            .compile_to_ptx(KERNEL, target, OptLevel::O3)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(binaries.len(), 1);
        let b = &binaries[0];
        assert_eq!(b.binary, "tile_kernels");
        assert!(
            b.target_attribute
                .contains(&format!("chip = \"{}\"", target.chip())),
            "{}",
            b.target_attribute
        );
        for needle in [
            ".version 8.0",
            &format!(".target {}", target.chip()),
            ".visible .entry ldmatrix_mma(",
            "cp.async.ca.shared.global",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        ] {
            assert!(
                b.ptx.contains(needle),
                "{target}: `{needle}` missing from\n{}",
                b.ptx
            );
        }
        assert!(!b.ptx.contains("\\0A"), "the PTX must be unescaped text");
    }
}

#[test]
fn ptxas_accepts_the_mlir_ptx_for_sm80_and_sm90() {
    let Some(ptxas) = common::ptxas_or_skip("ptxas_accepts_the_mlir_ptx_for_sm80_and_sm90") else {
        return;
    };
    let mlir = MlirToolchain::new();
    for target in [Target::Sm80, Target::Sm90] {
        let ptx = &mlir.compile_to_ptx(KERNEL, target, OptLevel::O3).unwrap()[0].ptx;
        let report = ptxas
            .assemble(ptx, target)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let k = report
            .kernel("ldmatrix_mma")
            .expect("kernel in the ptxas report");
        assert!(!k.has_spills(), "{target}: {k:?}");
        assert_eq!(k.shared_bytes, 512, "{target}: 16x16 f16 workgroup buffer");
    }
}

#[test]
fn parse_errors_come_back_with_diagnostics() {
    let mlir = MlirToolchain::new();
    let err = mlir
        .compile_to_ptx(
            "module { %x = arith.constant oops }",
            Target::Sm80,
            OptLevel::O3,
        )
        .unwrap_err();
    let Error::Mlir {
        message,
        diagnostics,
    } = &err
    else {
        panic!("{err}")
    };
    assert!(message.contains("parse"), "{message}");
    assert!(!diagnostics.is_empty(), "no diagnostics captured");
    assert!(err.to_string().contains("error:"), "{err}");
}

#[test]
fn verifier_errors_come_back_with_diagnostics() {
    let mlir = MlirToolchain::new();
    // numTiles = 3 is not a valid ldmatrix.
    let bad = KERNEL.replace("numTiles = 2 : i32", "numTiles = 3 : i32");
    let err = mlir
        .compile_to_ptx(&bad, Target::Sm80, OptLevel::O3)
        .unwrap_err();
    let Error::Mlir { diagnostics, .. } = &err else {
        panic!("{err}")
    };
    assert!(diagnostics.iter().any(|d| d.contains("error:")), "{err}");
}

#[test]
fn bad_pipeline_is_an_error() {
    let mlir = MlirToolchain::new();
    let mut module = mlir.parse_module(KERNEL).unwrap();
    let err = mlir
        .run_pipeline(&mut module, "builtin.module(no-such-pass)")
        .unwrap_err();
    assert!(err.to_string().contains("no-such-pass"), "{err}");
}

#[test]
fn pipeline_text_names_the_target() {
    let p = gpu_to_ptx_pipeline(Target::Sm90, OptLevel::O2);
    assert!(
        p.starts_with("builtin.module(nvvm-attach-target{chip=sm_90 features=+ptx80 O=2},"),
        "{p}"
    );
    assert!(p.ends_with("gpu-module-to-binary{format=isa})"), "{p}");
}

#[test]
fn module_without_gpu_module_is_an_error() {
    let mlir = MlirToolchain::new();
    let err = mlir
        .compile_to_ptx("module {}", Target::Sm80, OptLevel::O3)
        .unwrap_err();
    assert!(err.to_string().contains("no gpu.module"), "{err}");
}

#[test]
fn translating_a_missing_gpu_module_is_an_error() {
    let mlir = MlirToolchain::new();
    let module = mlir.parse_module(KERNEL).unwrap();
    let context = inkwell::context::Context::create();
    let err = mlir.translate_gpu_module(&module, "no_such_module", &context).unwrap_err();
    assert!(err.to_string().contains("no gpu.module @no_such_module"), "{err}");
}

/// The gpu.module must be lowered to the LLVM and NVVM dialects first; untranslatable ops come back as an error
/// with MLIR's diagnostic, not a crash.
#[test]
fn translating_an_unlowered_gpu_module_is_an_error() {
    let mlir = MlirToolchain::new();
    let module = mlir.parse_module(KERNEL).unwrap();
    let context = inkwell::context::Context::create();
    let Err(Error::Mlir { message, diagnostics }) = mlir.translate_gpu_module(&module, "tile_kernels", &context) else {
        panic!("an nvgpu-level gpu.module translated to LLVM IR");
    };
    assert!(message.contains("could not be translated"), "{message}");
    assert!(!diagnostics.is_empty(), "{message}");
}
