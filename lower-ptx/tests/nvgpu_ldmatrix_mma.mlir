module attributes {gpu.container_module} {
  gpu.module @tile_kernels {
    gpu.func @ldmatrix_mma(%g: memref<16x16xf16, 1>, %out: memref<32x4xf32, 1>)
        workgroup(%sm: memref<16x16xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %tid = gpu.thread_id x
      %row = arith.remui %tid, %c8 : index
      %t0 = nvgpu.device_async_copy %g[%row, %c0], %sm[%row, %c0], 8 : memref<16x16xf16, 1> to memref<16x16xf16, #gpu.address_space<workgroup>>
      %t1 = nvgpu.device_async_create_group %t0
      nvgpu.device_async_wait %t1 {numGroups = 0 : i32}
      gpu.barrier
      %a = nvgpu.ldmatrix %sm[%row, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      %b = nvgpu.ldmatrix %sm[%row, %c8] {numTiles = 2 : i32, transpose = true} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %d0 = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
      %x = vector.extract %d0[0] : f32 from vector<2xf32>
      memref.store %x, %out[%tid, %c0] : memref<32x4xf32, 1>
      gpu.return
    }
  }
}
