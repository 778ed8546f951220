// Toolchain smoke for the MLIR backend: upstream nvgpu → NVVM → PTX with mlir-opt-22, the same pipeline
// tilec-lower-ptx runs through melior. The PTX sits escaped (\0A for newlines) in the gpu.binary's assembly.
// RUN: %mlir-opt %s --pass-pipeline='builtin.module(nvvm-attach-target{chip=sm_90 features=+ptx80 O=3},gpu.module(convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-to-llvm,gpu-module-to-binary{format=isa})' | FileCheck %s
// RUN: %mlir-opt %s --pass-pipeline='builtin.module(gpu.module(convert-nvgpu-to-nvvm))' | FileCheck %s --check-prefix=NVVM

// CHECK: gpu.binary @smoke
// CHECK-SAME: chip = "sm_90"
// CHECK-SAME: .target sm_90
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// NVVM-LABEL: gpu.func @ldmatrix_mma
// NVVM: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// NVVM: nvvm.mma.sync
// NVVM-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>

module attributes {gpu.container_module} {
  gpu.module @smoke {
    gpu.func @ldmatrix_mma(%out: memref<32x4xf32, 1>)
        workgroup(%sm: memref<16x16xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %tid = gpu.thread_id x
      %a = nvgpu.ldmatrix %sm[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      %b = nvgpu.ldmatrix %sm[%c0, %c0] {numTiles = 2 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %x = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
      memref.store %x, %out[%tid, %c0] : memref<32x4xf32, 1>
      gpu.return
    }
  }
}
