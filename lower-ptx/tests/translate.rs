//! nvgpu-level `.tir` → LLVM IR → PTX: for each nvgpu op kind a small input (`tests/inputs/*.tir`) is
//! translated, the PTX is checked for the instruction, and ptxas assembles it for sm_80 and sm_90. Every
//! seed program (`examples/seeds/*.tir`) translates and assembles; output is deterministic.
#![cfg(feature = "llvm")]

mod common;

use std::path::{Path, PathBuf};

use tilec_ir::body::Module;
use tilec_lower_ptx::ptxas::PtxasReport;
use tilec_lower_ptx::llvm::translate::{compile, emit_ir, emit_unoptimized_ir};
use tilec_lower_ptx::{CompiledModule, TranslateError};
use tilec_ir::Target;
use tilec_lower_ptx::{AbiRole, KernelInfo, OptLevel, ParamKind};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn parse(name: &str, text: &str) -> Module {
    let module = tilec_ir::parse_module(text).unwrap_or_else(|d| panic!("{name}: parse errors: {d:?}"));
    tilec_ir::verify::verify_module(&module).unwrap_or_else(|d| panic!("{name}: verifier errors: {d:?}"));
    module
}

fn input(name: &str) -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(name, &text)
}

fn ptx(name: &str, module: &Module, target: Target) -> CompiledModule {
    compile(module, target, OptLevel::O3).unwrap_or_else(|e| panic!("{name} for {target}: {e}"))
}

/// Assembles with ptxas (or skips visibly without one; fails under TILEC_REQUIRE_PTXAS=1).
fn assemble(test: &str, ptx: &str, target: Target) -> Option<PtxasReport> {
    let ptxas = common::ptxas_or_skip(test)?;
    match ptxas.assemble(ptx, target) {
        Ok(report) => Some(report),
        Err(e) => panic!("{test}: {e}\n--- PTX ---\n{ptx}"),
    }
}

/// Compiles `name` for sm_80 and sm_90 (only sm_90 when `sm90_only`), checks `expected` lines in the PTX,
/// and has ptxas assemble it. Returns the sm_80 (or sm_90) result.
fn check_input(name: &str, expected: &[&str], sm90_only: bool) -> CompiledModule {
    let module = input(name);
    let targets: &[Target] = if sm90_only { &[Target::Sm90] } else { &[Target::Sm80, Target::Sm90] };
    let mut first = None;
    for &target in targets {
        let compiled = ptx(name, &module, target);
        assert!(compiled.ptx.contains(&format!(".target {}", target.chip())), "{name}: no .target line");
        // Compare with whitespace runs collapsed (PTX separates operands with tabs).
        let flat = compiled.ptx.split_whitespace().collect::<Vec<_>>().join(" ");
        for e in expected {
            assert!(flat.contains(e), "{name} for {target}: `{e}` not in the PTX:\n{}", compiled.ptx);
        }
        assert!(!compiled.ptx.contains("call.uni"), "{name}: an intrinsic became a call:\n{}", compiled.ptx);
        if let Some(report) = assemble(&format!("{name}:{target}"), &compiled.ptx, target) {
            for k in &report.kernels {
                eprintln!(
                    "{name} {target} {}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes smem",
                    k.name, k.registers, k.spill_stores, k.spill_loads, k.shared_bytes
                );
            }
        }
        first.get_or_insert(compiled);
    }
    first.unwrap()
}

#[test]
fn ldmatrix_x1_x2_x4_trans() {
    check_input(
        "ldmatrix.tir",
        &[
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
            "cp.async.cg.shared.global",
            "cp.async.commit_group",
            "cp.async.wait_group 0",
            "bar.sync 0",
            ".maxntid 32 {",
        ],
        false,
    );
}

#[test]
fn stmatrix_needs_sm90_and_assembles_there() {
    check_input(
        "stmatrix.tir",
        &["stmatrix.sync.aligned.m8n8.x4.shared.b16", "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16"],
        true,
    );
    let err = compile(&input("stmatrix.tir"), Target::Sm80, OptLevel::O3).unwrap_err();
    assert!(matches!(err, TranslateError::Unsupported { op: "nvgpu.stmatrix", .. }), "{err}");
    assert!(err.to_string().contains("sm_90"), "{err}");
}

#[test]
fn mma_sync_variants() {
    check_input(
        "mma.tir",
        &[
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
            "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
        ],
        false,
    );
}

#[test]
fn device_async_copy_sizes_zero_fill_and_groups() {
    let compiled = check_input(
        "async_copy.tir",
        &[
            "cp.async.cg.shared.global [",
            "], 16;",
            "cp.async.ca.shared.global [",
            "], 8;",
            "], 4;",
            "cp.async.commit_group",
            "cp.async.wait_group 1",
            "cp.async.wait_group 0",
        ],
        false,
    );
    // The zero-fill variant carries a fourth (src-size) operand.
    let zero_fill = compiled.ptx.lines().filter(|l| l.contains("cp.async.ca.shared.global") && l.matches(',').count() == 3);
    assert_eq!(zero_fill.count(), 1, "{}", compiled.ptx);
}

#[test]
fn gemm_loop_with_swizzle_dynamic_extents_and_masked_stores() {
    let compiled = check_input(
        "gemm_warp.tir",
        &[
            ".maxntid 128 {",
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "cp.async.cg.shared.global",
            "bar.sync 0",
            "st.global.v2.b32",
            "%ctaid.y",
        ],
        false,
    );
    let info = &compiled.kernels[0];
    assert_eq!(info.block, [128, 1, 1]);
    assert_eq!(info.shared_bytes, 64 * 16 * 2 + 16 * 8 * 2);
    assert_eq!(info.dynamic_shared_bytes, 0);
    let abi: Vec<(&str, &str)> = info.abi.iter().map(|p| (p.name.as_str(), p.ty.as_str())).collect();
    assert_eq!(
        abi,
        [
            ("A", "ptr"),
            ("A_dim0", "i64"),
            ("A_dim1", "i64"),
            ("B", "ptr"),
            ("B_dim0", "i64"),
            ("B_dim1", "i64"),
            ("C", "ptr"),
            ("C_dim0", "i64"),
            ("C_dim1", "i64"),
            ("alpha", "f32")
        ]
    );
    // The PTX entry has the same parameters in the same order.
    let entry = compiled.ptx.split(".entry gemm_warp(").nth(1).unwrap().split(')').next().unwrap();
    let params: Vec<&str> = entry.lines().map(str::trim).filter(|l| l.starts_with(".param")).collect();
    assert_eq!(params.len(), 10, "{entry}");
    assert!(params[0].starts_with(".param .u64 .ptr .global"), "{}", params[0]);
    assert!(params[9].starts_with(".param .f32"), "{}", params[9]);
}

#[test]
fn scalar_ops_and_casts() {
    check_input("scalar_ops.tir", &["cvt.rn.f16.f32", "cvt.rn.bf16.f32", "max.f32", "min.f32", "cvt.rzi.s64.f32", "cvt.rn.f32.u32"], false);
}

#[test]
fn dynamic_shared_memory_above_48k() {
    let compiled = check_input("big_shared.tir", &[".extern .shared .align 128 .b8 big_shared_dynamic_shared[]", ".maxntid 256 {"], false);
    let info = &compiled.kernels[0];
    assert_eq!(info.shared_bytes, 128 + 128 * 256 * 2);
    assert_eq!(info.dynamic_shared_bytes, info.shared_bytes);
}

#[test]
fn static_shared_arrays_are_aligned() {
    let compiled = ptx("ldmatrix.tir", &input("ldmatrix.tir"), Target::Sm80);
    assert!(compiled.ptx.contains(".shared .align 128 .b8 ldmatrix_shared0[512]"), "{}", compiled.ptx);
}

#[test]
fn every_example_input_compiles_for_all_four_targets() {
    for name in ["ldmatrix.tir", "mma.tir", "async_copy.tir", "gemm_warp.tir", "scalar_ops.tir", "big_shared.tir"] {
        let module = input(name);
        for target in Target::ALL {
            let compiled = ptx(name, &module, target);
            if target != Target::Sm80 && target != Target::Sm90 {
                assemble(&format!("{name}:{target}"), &compiled.ptx, target);
            }
        }
    }
}

#[test]
fn output_is_deterministic() {
    for name in ["gemm_warp.tir", "mma.tir", "scalar_ops.tir"] {
        let a = ptx(name, &input(name), Target::Sm80);
        let b = ptx(name, &input(name), Target::Sm80);
        assert_eq!(a, b, "{name}: two translations differ");
    }
}

#[test]
fn llvm_ir_uses_the_nvvm_intrinsics() {
    let ir = emit_ir(&input("gemm_warp.tir"), Target::Sm80, OptLevel::O3).unwrap();
    for name in [
        "define ptx_kernel void @gemm_warp(ptr addrspace(1) noalias readonly captures(none) %A",
        "@llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(",
        "@llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3(",
        "@llvm.nvvm.mma.m16n8k16.row.col.f32.f32(",
        "@llvm.nvvm.cp.async.cg.shared.global.16.s(",
        "@llvm.nvvm.cp.async.commit.group()",
        "@llvm.nvvm.cp.async.wait.group(i32 0)",
        "@llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)",
        "\"nvvm.maxntid\"=\"128\"",
    ] {
        assert!(ir.contains(name.split('(').next().unwrap()), "`{name}` not in the LLVM IR:\n{ir}");
    }
    let raw = emit_unoptimized_ir(&input("gemm_warp.tir"), Target::Sm80, OptLevel::O0).unwrap();
    assert!(raw.contains("phi <4 x float>"), "loop-carried fragment is not a vector phi:\n{raw}");
}

#[test]
fn kernel_info_serialises_to_json() {
    let compiled = ptx("gemm_warp.tir", &input("gemm_warp.tir"), Target::Sm80);
    let info = &compiled.kernels[0];
    let json = serde_json::to_string_pretty(info).unwrap();
    eprintln!("{json}");
    let back: KernelInfo = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, info);
    assert!(json.contains("\"kind\": \"tile\""), "{json}");
    assert!(json.contains("\"extent\": 1"), "{json}");
    match &info.params[0].kind {
        ParamKind::Tile { shape, dynamic_axes, elem, .. } => {
            assert_eq!(shape, &[None, None]);
            assert_eq!(dynamic_axes, &[0, 1]);
            assert_eq!(elem, "f16");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(info.abi[1].role, AbiRole::Extent(0));
}

#[test]
fn tile_level_ops_are_rejected_with_a_located_error() {
    let text = std::fs::read_to_string(workspace().join("examples/mma.tir")).unwrap();
    let module = parse("examples/mma.tir", &text);
    let err = compile(&module, Target::Sm80, OptLevel::O3).unwrap_err();
    assert!(err.to_string().contains("lower the kernel to the nvgpu dialect first"), "{err}");
    assert!(!err.to_diagnostic().span.is_unknown());
}

#[test]
fn every_seed_translates_and_assembles() {
    let dir = workspace().join("examples/seeds");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "tir")).collect())
        .unwrap_or_default();
    paths.sort();
    if paths.is_empty() {
        eprintln!("SKIPPED every_seed_translates_and_assembles: no examples/seeds/*.tir yet");
        return;
    }
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let module = parse(&name, &std::fs::read_to_string(&path).unwrap());
        let uses_stmatrix = std::fs::read_to_string(&path).unwrap().contains("nvgpu.stmatrix");
        for target in [Target::Sm80, Target::Sm90] {
            if uses_stmatrix && target == Target::Sm80 {
                assert!(compile(&module, target, OptLevel::O3).is_err(), "{name}: stmatrix accepted for sm_80");
                continue;
            }
            let compiled = ptx(&name, &module, target);
            let again = ptx(&name, &module, target);
            assert_eq!(compiled.ptx, again.ptx, "{name}: not deterministic");
            if let Some(report) = assemble(&format!("{name}:{target}"), &compiled.ptx, target) {
                for k in &report.kernels {
                    eprintln!("seed {name} {target} {}: {} registers, {} spill bytes", k.name, k.registers, k.spill_stores + k.spill_loads);
                    assert!(!k.has_spills(), "{name}: spills");
                }
            }
        }
    }
}

/// An `mma.sync` whose operands come straight from `ldmatrix` and from another `mma.sync` takes their registers as
/// they are: the translation emits no `shufflevector` for A and B (one `bitcast` of each `i32` register to
/// `<2 x half>`: 4 for A's x4, 2 for B's x2), reads the first D's registers for the second C (no
/// `extractelement` but the one `nvgpu.extract` of the stored element: the zero accumulator's are constants),
/// and packs only the second `mma.sync`'s D, which the extract reads (4 `insertelement`s); the first D, which only
/// the second `mma.sync` reads, is not packed. Counts from the kernel's dataflow, not from a previous output.
#[test]
fn mma_operands_from_ldmatrix_and_mma_are_passed_as_registers() {
    let text = r#"
tile.func @chain(%C: tile<16x8xf32, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c16 = tile.constant 16 : index
  %lane = nvgpu.lane_id : index
  %row = tile.rem %lane, %c16 : index
  %sa = tile.alloc_shared : tile<16x16xf16, shared>
  %sb = tile.alloc_shared : tile<16x8xf16, shared>
  %a = nvgpu.ldmatrix %sa[%row, %c0] {numTiles = 4} : vector<4x2xf16>
  %b = nvgpu.ldmatrix %sb[%row, %c0] {numTiles = 2, transpose = true} : vector<2x2xf16>
  %zero = tile.fill 0.0 : vector<2x2xf32>
  %d1 = nvgpu.mma.sync(%a, %b, %zero) {mmaShape = [16, 8, 16]} : vector<2x2xf32>
  %d2 = nvgpu.mma.sync(%a, %b, %d1) {mmaShape = [16, 8, 16]} : vector<2x2xf32>
  %v = nvgpu.extract %d2 [0, 0] : f32
  nvgpu.store %v, %C[%row, %c0]
  tile.return
}
"#;
    let module = parse("chain", text);
    let raw = emit_unoptimized_ir(&module, Target::Sm80, OptLevel::O0).unwrap();
    let count = |needle: &str| raw.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(count("shufflevector"), 0, "{raw}");
    assert_eq!(count("to <2 x half>"), 6, "{raw}");
    assert_eq!(count("= extractelement <4 x float>"), 1, "{raw}");
    assert_eq!(count("= insertelement <4 x float>"), 4, "{raw}");
    assert_eq!(count("= call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32("), 2, "{raw}");
    // And the kernel still assembles to the two MMAs.
    let compiled = ptx("chain", &module, Target::Sm80);
    assert_eq!(compiled.ptx.matches("mma.sync.aligned.m16n8k16").count(), 2, "{}", compiled.ptx);
}

/// Fragments regrouped with `nvgpu.extract`/`insert` (a GEMM's B operands: the four registers of one
/// `ldmatrix.x4.trans` split into two `vector<2x2xf16>`s, each an `mma.sync`'s B) pass the `ldmatrix` registers
/// along: the `mma.sync`s read the `i32` words as `<2 x half>` (one `bitcast` each: 4 for A, 4 for the two Bs)
/// and nothing is shuffled. What remains is the loop's: each f32 accumulator is a `<4 x float>` phi, unpacked
/// for its `mma.sync` (4 `extractelement`s each) and packed for the back edge (4 `insertelement`s each), and
/// the two stored elements are extracted from the loop's results (2). Counts from the kernel's dataflow.
#[test]
fn fragments_regrouped_by_extract_and_insert_pass_registers() {
    let text = r#"
tile.func @regroup(%C: tile<16x16xf32, global>, %n: index) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c8 = tile.constant 8 : index
  %c16 = tile.constant 16 : index
  %lane = nvgpu.lane_id : index
  %row = tile.rem %lane, %c16 : index
  %sa = tile.alloc_shared : tile<16x16xf16, shared>
  %sb = tile.alloc_shared : tile<16x16xf16, shared>
  %a = nvgpu.ldmatrix %sa[%row, %c0] {numTiles = 4} : vector<4x2xf16>
  %b = nvgpu.ldmatrix %sb[%row, %c0] {numTiles = 4, transpose = true} : vector<4x2xf16>
  %e = tile.fill 0.0 : vector<2x2xf16>
  %x0 = nvgpu.extract %b [0, 0] : f16
  %y0 = nvgpu.insert %x0, %e [0, 0] : vector<2x2xf16>
  %x1 = nvgpu.extract %b [0, 1] : f16
  %y1 = nvgpu.insert %x1, %y0 [0, 1] : vector<2x2xf16>
  %x2 = nvgpu.extract %b [1, 0] : f16
  %y2 = nvgpu.insert %x2, %y1 [1, 0] : vector<2x2xf16>
  %x3 = nvgpu.extract %b [1, 1] : f16
  %b0 = nvgpu.insert %x3, %y2 [1, 1] : vector<2x2xf16>
  %x4 = nvgpu.extract %b [2, 0] : f16
  %y4 = nvgpu.insert %x4, %e [0, 0] : vector<2x2xf16>
  %x5 = nvgpu.extract %b [2, 1] : f16
  %y5 = nvgpu.insert %x5, %y4 [0, 1] : vector<2x2xf16>
  %x6 = nvgpu.extract %b [3, 0] : f16
  %y6 = nvgpu.insert %x6, %y5 [1, 0] : vector<2x2xf16>
  %x7 = nvgpu.extract %b [3, 1] : f16
  %b1 = nvgpu.insert %x7, %y6 [1, 1] : vector<2x2xf16>
  %zero = tile.fill 0.0 : vector<2x2xf32>
  %d0, %d1 = tile.for %k = %c0 to %n step %c1 iter_args(%acc0 = %zero, %acc1 = %zero) -> (vector<2x2xf32>, vector<2x2xf32>) {
    %n0 = nvgpu.mma.sync(%a, %b0, %acc0) {mmaShape = [16, 8, 16]} : vector<2x2xf32>
    %n1 = nvgpu.mma.sync(%a, %b1, %acc1) {mmaShape = [16, 8, 16]} : vector<2x2xf32>
    tile.yield %n0, %n1
  }
  %v0 = nvgpu.extract %d0 [0, 0] : f32
  %v1 = nvgpu.extract %d1 [0, 0] : f32
  nvgpu.store %v0, %C[%row, %c0]
  nvgpu.store %v1, %C[%row, %c8]
  tile.return
}
"#;
    let module = parse("regroup", text);
    let raw = emit_unoptimized_ir(&module, Target::Sm80, OptLevel::O0).unwrap();
    let count = |needle: &str| raw.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(count("shufflevector"), 0, "{raw}");
    assert_eq!(count("to <2 x half>"), 8, "{raw}");
    assert_eq!(count("= phi <4 x float>"), 2, "{raw}");
    assert_eq!(count("= extractelement <4 x float>"), 2 * 4 + 2, "{raw}");
    assert_eq!(count("= insertelement <4 x float>"), 2 * 4, "{raw}");
    assert_eq!(count("insertelement <4 x half>") + count("extractelement <4 x half>"), 0, "{raw}");
    assert_eq!(count("= call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32("), 2, "{raw}");
    // And the kernel compiles to PTX with the loop's two MMAs (LLVM unrolls the loop: a multiple of two).
    let compiled = ptx("regroup", &module, Target::Sm80);
    let mmas = compiled.ptx.matches("mma.sync.aligned.m16n8k16").count();
    assert!(mmas >= 2 && mmas % 2 == 0, "{mmas} MMAs:\n{}", compiled.ptx);
}
