//! The tile-level examples (`examples/*.tir`) end to end: the default pipeline of `tilec` (tilec-passes'
//! `full_pipeline`: cleanup, layout assignment, lowering to nvgpu, software pipelining), then this crate's
//! translation to PTX for all four targets; ptxas assembles sm_80 and sm_90 and reports no spills.
#![cfg(feature = "llvm")]

mod common;

use std::path::Path;

use tilec_lower_ptx::llvm::translate::compile;
use tilec_ir::Target;
use tilec_lower_ptx::OptLevel;
use tilec_passes::{full_pipeline, PassContext, PassManager, PassRegistry};

fn lowered(name: &str) -> Result<tilec_ir::Module, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut module = tilec_ir::parse_module(&text).map_err(|d| format!("parse: {d:?}"))?;
    // What `tilec` runs. The passes' output does not depend on the target, except that check-resources
    // holds it to the target's shared memory per block (sm_80's here; every example fits sm_86's 99 KiB too).
    let target = tilec_ir::Target::Sm80;
    let registry = PassRegistry::with_builtin();
    let pm = PassManager::from_pipeline(&registry, &full_pipeline(target)).map_err(|d| format!("pipeline: {d:?}"))?;
    pm.run(&mut module, &mut PassContext::new(target)).map_err(|e| format!("passes: {:?}", e.diagnostics))?;
    tilec_ir::verify::verify_module(&module).map_err(|d| format!("lowered IR does not verify: {d}"))?;
    Ok(module)
}

/// Compiles for every target and assembles sm_80 and sm_90; at most `spill_budget` bytes of spill stores.
fn compile_and_assemble(name: &str, module: &tilec_ir::Module) {
    compile_and_assemble_within(name, module, 0)
}

fn compile_and_assemble_within(name: &str, module: &tilec_ir::Module, spill_budget: u32) {
    for target in Target::ALL {
        let compiled = compile(module, target, OptLevel::O3).unwrap_or_else(|e| panic!("{name} for {target}: {e}"));
        let again = compile(module, target, OptLevel::O3).unwrap();
        assert_eq!(compiled, again, "{name}: not deterministic");
        assert!(!compiled.ptx.contains("call.uni"), "{name}: an intrinsic became a call");
        if target != Target::Sm80 && target != Target::Sm90 {
            continue;
        }
        let Some(ptxas) = common::ptxas_or_skip(&format!("{name}:{target}")) else { return };
        let report = ptxas.assemble(&compiled.ptx, target).unwrap_or_else(|e| panic!("{name}: {e}\n{}", compiled.ptx));
        for k in &report.kernels {
            eprintln!(
                "example {name} {target} {}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes smem, block {:?}",
                k.name, k.registers, k.spill_stores, k.spill_loads, k.shared_bytes, compiled.kernels[0].block
            );
            if spill_budget == 0 {
                assert!(!k.has_spills(), "{name} for {target}: ptxas spilled registers");
            } else {
                assert!(
                    k.spill_stores <= spill_budget && k.spill_loads <= spill_budget,
                    "{name} for {target}: {} / {} bytes of spill stores / loads, more than the {spill_budget} known",
                    k.spill_stores,
                    k.spill_loads
                );
            }
        }
    }
}

#[test]
fn lowered_examples_compile_for_all_targets() {
    // The examples the lowering pass claims (passes/tests/lower_examples.rs).
    for name in [
        "mma.tir",
        "copy_s2r.tir",
        "gemm.tir",
        "gemm_256x128.tir",
        "gemm_bf16_256x128.tir",
        "gemm_epilogue.tir",
        "gemm_bf16.tir",
        "gemm_f16_out.tir",
        "gemm_bf16_out.tir",
        "gemm_a_col.tir",
    ] {
        let module = lowered(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        compile_and_assemble(name, &module);
    }
}

/// Examples that assemble with a few spills today, and the most each may spill (bytes per kernel): a
/// regression past it fails. gemm_b_col: 32-60 bytes on sm_80 and sm_90, gemm_ab_col: 12 bytes on sm_80
/// (column-major B's address chains at 255 registers); gemm_s8_128 (fragments_ahead = false): 256-280
/// bytes of spill stores and 984-996 of loads: A is read with ldmatrix of byte pairs, but its row-major B
/// with single-byte loads, each through its own swizzled address (an open item); gemm_s8_b_col (B K-contiguous, ldmatrix for
/// both): 112 / 296-320 bytes (104 / 200-228 before `conjunctions_as_and`; the same speed on the H100:
/// docs/bench-masks-2026-11-25; scripts/validate-ptx.sh's SPILL_ALLOWED has the per-target figures).
#[test]
fn examples_with_known_spills_stay_within_them() {
    for (name, budget) in [("gemm_b_col.tir", 64), ("gemm_ab_col.tir", 128), ("gemm_s8_128.tir", 1024), ("gemm_s8_b_col.tir", 320)] {
        let module = lowered(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        compile_and_assemble_within(name, &module, budget);
    }
}

#[test]
fn other_examples_compile_once_they_lower() {
    for name in ["gemm_s8.tir"] {
        match lowered(name) {
            Ok(module) => compile_and_assemble(name, &module),
            Err(e) => eprintln!("SKIPPED {name}: the tile -> nvgpu lowering does not handle it yet ({e})"),
        }
    }
}

/// The kernel description says what the copies need of the extents (row lengths that keep every 16-byte
/// cp.async aligned), so that a launcher embedding the PTX can check a shape; the C tile, stored with
/// predicated stores, needs nothing.
#[test]
fn kernel_info_reports_the_extent_multiples_the_copies_need() {
    use tilec_lower_ptx::{ExtentMultiple, ParamKind};
    let module = lowered("gemm.tir").unwrap();
    let info = &compile(&module, Target::Sm80, OptLevel::O3).unwrap().kernels[0];
    let multiples: Vec<Vec<ExtentMultiple>> = info
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tile { extent_multiples, .. } => extent_multiples.clone(),
            ParamKind::Scalar { .. } => Vec::new(),
        })
        .collect();
    let row = vec![ExtentMultiple { axis: 1, multiple: 8 }];
    assert_eq!(multiples, vec![row.clone(), row, Vec::new()]);
}

/// A TMA kernel's description (issue 18): one 128-byte tensor-map parameter per map after the arguments'
/// own, and what the launcher encodes each from (examples/hopper/tma_copy.tir: a 64x64 f16 box with the
/// 128-byte swizzle over %A and over %B; cuda.h's CU_TENSOR_MAP_DATA_TYPE_FLOAT16 is 6); the maps need
/// rows of a multiple of 16 bytes, 8 f16.
#[test]
fn kernel_info_describes_tensor_maps() {
    use tilec_lower_ptx::{AbiRole, ExtentMultiple, ParamKind, TensorMapInfo};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hopper/tma_copy.tir");
    let module = tilec_ir::parse_module(&std::fs::read_to_string(path).unwrap()).unwrap();
    let info = &compile(&module, Target::Sm90a, OptLevel::O3).unwrap().kernels[0];
    let abi: Vec<(&str, &AbiRole, &str, u32)> = info.abi.iter().map(|p| (p.name.as_str(), &p.role, p.ty.as_str(), p.bytes)).collect();
    assert_eq!(
        abi,
        vec![
            ("A", &AbiRole::Pointer, "ptr", 8),
            ("A_dim0", &AbiRole::Extent(0), "i64", 8),
            ("A_dim1", &AbiRole::Extent(1), "i64", 8),
            ("B", &AbiRole::Pointer, "ptr", 8),
            ("B_dim0", &AbiRole::Extent(0), "i64", 8),
            ("B_dim1", &AbiRole::Extent(1), "i64", 8),
            ("A_tmap0", &AbiRole::TensorMap(0), "tensormap", 128),
            ("B_tmap1", &AbiRole::TensorMap(1), "tensormap", 128),
        ]
    );
    let map = |arg| TensorMapInfo {
        arg,
        elem: "f16".into(),
        data_type: 6,
        box_shape: vec![64, 64],
        transposed: false,
        swizzle: "128b".into(),
        oob_fill: "zero".into(),
        l2_promotion: "none".into(),
        interleave: "none".into(),
    };
    assert_eq!(info.tensor_maps, vec![map(0), map(1)]);
    for p in &info.params {
        let ParamKind::Tile { extent_multiples, .. } = &p.kind else { panic!("{p:?}") };
        assert_eq!(extent_multiples, &vec![ExtentMultiple { axis: 1, multiple: 8 }]);
    }
    // The JSON manifest names the box `box`; kernels without TMA have no `tensor_maps` key at all.
    let json = serde_json::to_string(info).unwrap();
    assert!(json.contains(r#""box":[64,64]"#) && json.contains(r#""role":{"tensor_map":0}"#), "{json}");
    assert!(!json.contains("transposed"), "{json}");
}

/// A column-major tensor's map is over its transpose: a 128x64 int8 column-major tile in the 128-byte mode
/// (K = 128 bytes contiguous per column, wgmma's K-major B) is a 64 (n) x 128 (k) box, the launcher passes
/// the extents reversed (`transposed`), and the tensor's columns (axis 0, K) must be a multiple of 16 bytes.
#[test]
fn kernel_info_describes_transposed_tensor_maps() {
    use tilec_lower_ptx::{ExtentMultiple, ParamKind};
    let src = r#"tile.func @tma_col(%B: tile<?x?xi8, global, #col_major>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %s = tile.alloc_shared : tile<128x64xi8, shared, #swizzle<3, 4, 3, #col_major>>
  %bars = nvgpu.mbarrier.create : tile<1xindex, shared>
  nvgpu.mbarrier.init %bars[%c0], %c1
  nvgpu.tma.async.load %B[%c0, %c0], %bars[%c0] to %s
  tile.return
}"#;
    let module = tilec_ir::parse_module(src).unwrap();
    let info = &compile(&module, Target::Sm90a, OptLevel::O3).unwrap().kernels[0];
    let map = &info.tensor_maps[0];
    assert_eq!((map.box_shape.as_slice(), map.swizzle.as_str(), map.transposed, map.data_type), (&[64u64, 128][..], "128b", true, 0));
    let ParamKind::Tile { extent_multiples, .. } = &info.params[0].kind else { panic!("{:?}", info.params[0]) };
    assert_eq!(extent_multiples, &vec![ExtentMultiple { axis: 0, multiple: 16 }]);
    let json = serde_json::to_string(info).unwrap();
    assert!(json.contains(r#""box":[64,128]"#) && json.contains(r#""transposed":true"#), "{json}");
}
