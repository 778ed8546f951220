//! The MLIR backend (`tilec_lower_ptx::mlir::translate`) on the seed programs (`examples/seeds/*.tir`,
//! nvgpu-level already) and on the tile-level examples lowered with `tilec_passes::full_pipeline`:
//! the emitted MLIR verifies with `mlir-opt` (MLIR 22), the upstream pipeline produces PTX, ptxas accepts it
//! for sm_80 and sm_90, and the kernel ABI (KernelInfo and the PTX entry's parameters) equals the LLVM
//! backend's.
#![cfg(all(feature = "mlir", feature = "llvm"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use tilec_lower_ptx::mlir::translate::{compile, emit_ir};
use tilec_ir::Target;
use tilec_lower_ptx::OptLevel;

const MLIR_OPT: &str = "/usr/lib/llvm-22/bin/mlir-opt";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn seeds() -> Vec<(String, tilec_ir::Module)> {
    let mut paths: Vec<_> = std::fs::read_dir(examples().join("seeds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let module = tilec_ir::parse_module(&text).unwrap_or_else(|d| panic!("{}: {d:?}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), module)
        })
        .collect()
}

fn lowered(name: &str) -> Result<tilec_ir::Module, String> {
    let text = std::fs::read_to_string(examples().join(name)).map_err(|e| e.to_string())?;
    let mut module = tilec_ir::parse_module(&text).map_err(|d| format!("parse: {d:?}"))?;
    use tilec_passes::{PassContext, PassManager, PassRegistry};
    let pipeline = tilec_passes::full_pipeline(tilec_ir::Target::Sm80);
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &pipeline).map_err(|e| format!("{e:?}"))?;
    pm.run(&mut module, &mut PassContext::new(tilec_ir::Target::Sm80)).map_err(|e| format!("pipeline: {e:?}"))?;
    Ok(module)
}

/// `mlir-opt` parses and verifies `text` (skipped with a message when MLIR 22's tools are missing).
fn mlir_opt_verifies(name: &str, text: &str) {
    if !Path::new(MLIR_OPT).exists() {
        eprintln!("SKIPPED mlir-opt check of {name}: {MLIR_OPT} not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tilec-mlir-translate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.mlir", name.replace(['/', ':'], "_")));
    std::fs::write(&file, text).unwrap();
    let out = Command::new(MLIR_OPT).arg("--verify-each").arg(&file).arg("-o").arg("/dev/null").output().unwrap();
    assert!(out.status.success(), "{name}: mlir-opt rejects the emitted MLIR:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
}

/// The `.entry`'s parameter list of `name` in `ptx` (types only).
fn entry_params(ptx: &str, name: &str) -> Vec<String> {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no .entry {name}"));
    let rest = &ptx[start..];
    let params = &rest[rest.find('(').unwrap() + 1..rest.find(')').unwrap()];
    params
        .split(',')
        .map(|p| {
            let p = p.trim();
            // `.param .u64 .ptr .global .align 1 k_param_0` → `.u64`
            p.split_whitespace().nth(1).unwrap_or("").to_string()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Both backends, one module: MLIR text verifies, PTX assembles for sm_80 and sm_90, same ABI as LLVM.
fn check(name: &str, module: &tilec_ir::Module) {
    for target in [Target::Sm80, Target::Sm90] {
        let label = format!("{name}:{target}");
        let text = emit_ir(module, target, OptLevel::O3).unwrap_or_else(|e| panic!("{label}: {e}"));
        mlir_opt_verifies(&label, &text);
        let mlir = compile(module, target, OptLevel::O3).unwrap_or_else(|e| panic!("{label}: {e}\n{text}"));
        assert_eq!(emit_ir(module, target, OptLevel::O3).unwrap(), text, "{label}: MLIR text not deterministic");
        assert_eq!(compile(module, target, OptLevel::O3).unwrap(), mlir, "{label}: PTX not deterministic");
        let llvm = tilec_lower_ptx::llvm::translate::compile(module, target, OptLevel::O3)
            .unwrap_or_else(|e| panic!("{label} (LLVM backend): {e}"));
        assert_eq!(mlir.kernels, llvm.kernels, "{label}: the backends describe the kernels differently");
        for k in &mlir.kernels {
            assert_eq!(
                entry_params(&mlir.ptx, &k.name),
                entry_params(&llvm.ptx, &k.name),
                "{label}: @{} has different PTX parameters in the two backends\nMLIR:\n{}\nLLVM:\n{}",
                k.name,
                mlir.ptx,
                llvm.ptx
            );
        }
        assert!(!mlir.ptx.contains("call.uni"), "{label}: an intrinsic became a call");
        if mlir.kernels.iter().any(|k| k.dynamic_shared_bytes > 0) {
            assert!(mlir.ptx.contains(".extern .shared .align 128 .b8"), "{label}: dynamic shared memory is not an extern array");
        }
        let Some(ptxas) = common::ptxas_or_skip(&label) else { continue };
        let report = ptxas.assemble(&mlir.ptx, target).unwrap_or_else(|e| panic!("{label}: {e}\n{}", mlir.ptx));
        assert!(!report.kernels.is_empty(), "{label}: ptxas reported no kernel:\n{}", report.log);
        for k in &report.kernels {
            eprintln!(
                "mlir backend {label} {}: {} registers, {} bytes spill stores, {} bytes smem",
                k.name, k.registers, k.spill_stores, k.shared_bytes
            );
        }
    }
}

#[test]
fn seeds_compile_through_mlir() {
    for (name, module) in seeds() {
        if name.starts_with("stmatrix") {
            // sm_80 has no stmatrix: a clear error there; sm_90 compiles.
            let err = emit_ir(&module, Target::Sm80, OptLevel::O3).unwrap_err().to_string();
            assert!(err.contains("stmatrix needs sm_90"), "{name}: {err}");
            let text = emit_ir(&module, Target::Sm90, OptLevel::O3).unwrap();
            mlir_opt_verifies(&name, &text);
            let ptx = compile(&module, Target::Sm90, OptLevel::O3).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert!(ptx.ptx.contains("stmatrix.sync.aligned"), "{name}");
            if let Some(ptxas) = common::ptxas_or_skip(&name) {
                ptxas.assemble(&ptx.ptx, Target::Sm90).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            continue;
        }
        check(&name, &module);
    }
}

#[test]
fn seed_ops_reach_ptx() {
    let seeds = seeds();
    let ptx = |name: &str| {
        let (_, m) = seeds.iter().find(|(n, _)| n == name).unwrap();
        compile(m, Target::Sm80, OptLevel::O3).unwrap().ptx
    };
    assert!(ptx("ldmatrix_x4.tir").contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    assert!(ptx("ldmatrix_x4.tir").contains("cp.async.cg.shared.global"));
    assert!(ptx("ldmatrix_x4_trans.tir").contains(".trans"));
    assert!(ptx("mma_m16n8k16.tir").contains("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    assert!(ptx("mma_m8n8k4_row_col.tir").contains("mma.sync.aligned.m8n8k4.row.col"));
    assert!(ptx("mma_m8n8k4_col_row.tir").contains("mma.sync.aligned.m8n8k4.col.row"));
}

#[test]
fn lowered_examples_compile_through_mlir() {
    for name in ["mma.tir", "copy_s2r.tir", "gemm.tir", "gemm_epilogue.tir", "gemm_s8.tir"] {
        match lowered(name) {
            Ok(module) => check(name, &module),
            Err(e) => eprintln!("SKIPPED {name}: {e}"),
        }
    }
}

#[test]
fn tile_level_input_is_a_diagnostic() {
    let text = std::fs::read_to_string(examples().join("mma.tir")).unwrap();
    let module = tilec_ir::parse_module(&text).unwrap();
    let err = emit_ir(&module, Target::Sm80, OptLevel::O3).unwrap_err();
    assert!(err.to_string().contains("lower the kernel to the nvgpu dialect first"), "{err}");
}
