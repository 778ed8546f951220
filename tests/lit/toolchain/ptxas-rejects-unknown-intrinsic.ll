; Why tilec-lower-ptx looks every NVVM intrinsic name up before declaring it: a misspelt name (here the
; mma with a wrong type suffix) is not an error for LLVM. It becomes a call to an external function, llc
; emits it, and only ptxas fails.
; REQUIRES: ptxas
; RUN: %llc -march=nvptx64 -mcpu=sm_80 -mattr=+ptx80 %s -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: not %ptxas -arch=sm_80 %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

; PTX: .extern .func {{.*}}llvm.nvvm.mma.m16n8k16.row.col.f32.f16
; PTXAS: error

target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %out) {
  %d = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half> zeroinitializer, <2 x half> zeroinitializer, <2 x half> zeroinitializer, <2 x half> zeroinitializer, <2 x half> zeroinitializer, <2 x half> zeroinitializer, float 0.0, float 0.0, float 0.0, float 0.0)
  %x = extractvalue { float, float, float, float } %d, 0
  store float %x, ptr addrspace(1) %out
  ret void
}

declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f16(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
