//! Without a stage count (pass option or `pipeline_stages`), software-pipeline takes 4 stages or, where their
//! rings would not fit the target's shared memory per block, the most that fit. The kernel below copies
//! 32 KiB of A (256x64 fp16) and 16 KiB of B (64x128 fp16) per k-step, 48 KiB a stage: 4 stages are 192 KiB,
//! which sm_90's 227 KiB per block holds; sm_80 (163 KiB) takes 3 (144 KiB) and sm_86 (99 KiB) 2 (96 KiB).
//! An explicit `pipeline_stages` is obeyed even when it does not fit (check-resources then reports it).

use tilec_ir::{Module, OpKind};
use tilec_ir::Target;
use tilec_passes::{full_pipeline, PassContext, PassManager, PassRegistry};

const KERNEL: &str = "tile.func @gemm(%A: tile<?x?xf16, global>, %B: tile<?x?xf16, global>, %C: tile<?x?xf32, global>) attributes {num_warps = 8ATTRS} {
  %bm = tile.block_id x : index
  %bn = tile.block_id y : index
  %c0 = tile.constant 0 : index
  %c64 = tile.constant 64 : index
  %c128 = tile.constant 128 : index
  %c256 = tile.constant 256 : index
  %K = tile.dim %A, 1 : index
  %m0 = tile.mul %bm, %c256 : index
  %n0 = tile.mul %bn, %c128 : index
  %sa = tile.alloc_shared : tile<256x64xf16, shared>
  %sb = tile.alloc_shared : tile<64x128xf16, shared>
  %zero = tile.fill 0.0 : tile<256x128xf32, reg>
  %acc = tile.for %k = %c0 to %K step %c64 iter_args(%c = %zero) -> (tile<256x128xf32, reg>) {
    tile.copy_g2s %A[%m0, %k], %sa
    tile.copy_g2s %B[%k, %n0], %sb
    %a = tile.copy_s2r %sa : tile<256x64xf16, reg>
    %b = tile.copy_s2r %sb : tile<64x128xf16, reg>
    %d = tile.mma %a, %b, %c : tile<256x128xf32, reg>
    tile.yield %d
  }
  tile.copy_r2g %acc, %C[%m0, %n0]
  tile.return
}
";

/// Lowers the kernel for `target`; the shared allocations after pipelining (one per stage and tile).
fn allocations(target: Target, attrs: &str) -> (usize, Vec<String>) {
    let mut m: Module = tilec_ir::parse_module(&KERNEL.replace("ATTRS", attrs)).unwrap();
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &full_pipeline(target)).unwrap();
    let mut cx = PassContext::new(target);
    let result = pm.run(&mut m, &mut cx);
    let remarks = cx.remarks.iter().map(|r| r.message.clone()).collect();
    if let Err(e) = result {
        return (usize::MAX, vec![format!("{:?}", e.diagnostics)]);
    }
    let f = &m.funcs[0];
    let mut n = 0;
    f.body.walk(f.entry, &mut |id| n += usize::from(f.body.op(id).kind == OpKind::AllocShared));
    (n, remarks)
}

#[test]
fn the_default_stage_count_fits_the_target() {
    for (target, stages) in [(Target::Sm90, 4), (Target::Sm80, 3), (Target::Sm86, 2)] {
        let (n, remarks) = allocations(target, "");
        assert_eq!(n, 2 * stages, "{target:?}: {remarks:?}");
        let said = remarks.iter().any(|r| r.contains(&format!("{stages} stages, not 4")));
        assert_eq!(said, stages < 4, "{target:?}: {remarks:?}");
    }
}

#[test]
fn an_explicit_stage_count_is_obeyed_and_checked() {
    let (n, _) = allocations(Target::Sm90, ", pipeline_stages = 3");
    assert_eq!(n, 6);
    let (n, messages) = allocations(Target::Sm86, ", pipeline_stages = 4");
    assert_eq!(n, usize::MAX, "4 stages of 48 KiB must not fit sm_86: {messages:?}");
    assert!(messages[0].contains("shared memory"), "{messages:?}");
}
