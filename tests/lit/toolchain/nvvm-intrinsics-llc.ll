; Toolchain smoke: LLVM 22's NVPTX backend lowers the NVVM intrinsics tilec relies on, and ptxas accepts the result.
; RUN: %llc -march=nvptx64 -mcpu=sm_80 -mattr=+ptx80 %s -o - | FileCheck %s
; RUN: %llc -march=nvptx64 -mcpu=sm_80 -mattr=+ptx80 %s -o %t.ptx
; REQUIRES: ptxas
; RUN: %ptxas -arch=sm_80 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

; CHECK: .version 8.0
; CHECK: .target sm_80
; CHECK-LABEL: .visible .entry smoke(
; CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
; CHECK: cp.async.commit_group;
; CHECK: cp.async.wait_group {{[[:space:]]*}}0;
; CHECK: bar.sync {{[[:space:]]*}}0;
; CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
; CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

; PTXAS: Compiling entry function 'smoke' for 'sm_80'
; PTXAS: Used {{[0-9]+}} registers

target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [512 x half] undef, align 16

define ptx_kernel void @smoke(ptr addrspace(1) %a, ptr addrspace(1) %d) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %off = mul i32 %tid, 8
  %src = getelementptr half, ptr addrspace(1) %a, i32 %off
  %dst = getelementptr half, ptr addrspace(3) @tile, i32 %off
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %dst, ptr addrspace(1) %src)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %f = call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(ptr addrspace(3) %dst)
  %r0 = extractvalue { i32, i32, i32, i32 } %f, 0
  %r1 = extractvalue { i32, i32, i32, i32 } %f, 1
  %r2 = extractvalue { i32, i32, i32, i32 } %f, 2
  %r3 = extractvalue { i32, i32, i32, i32 } %f, 3
  %a0 = bitcast i32 %r0 to <2 x half>
  %a1 = bitcast i32 %r1 to <2 x half>
  %a2 = bitcast i32 %r2 to <2 x half>
  %a3 = bitcast i32 %r3 to <2 x half>
  %acc = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %a0, <2 x half> %a1, float 0.0, float 0.0, float 0.0, float 0.0)
  %c0 = extractvalue { float, float, float, float } %acc, 0
  %out = getelementptr float, ptr addrspace(1) %d, i32 %tid
  store float %c0, ptr addrspace(1) %out
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(ptr addrspace(3))
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
