"""Writes tests/lit/sim/Inputs/wgmma_mn_major.tir: one warpgroup computes C (64x128 f32) = A (64x32 f16, row-major:
K-major) x B (32x128 f16, row-major: MN-major, `transposeB`). A's shared tile is one 64-byte swizzle span per row
(#swizzle<2, 3, 3, #row_major>); B's is wgmma's MN-major canonical layout: two column panels of 64 columns (128
bytes), each 32 rows of 128 bytes, the second 4096 bytes after the first (tilec_layout::column_panels(32, 128, 64)),
under the 128-byte swizzle. B's descriptor: leading byte offset 4096 (between the panels along N), stride byte
offset 1024 (between groups of 8 K rows); each k16 step starts 16 rows (2048 bytes) further.
Usage: gen_wgmma_mn_major.py OUT < header-comment-lines"""
import sys

N, K = 128, 32
panels = "#linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 64]]} -> {row = 32, col = 128}>"
L = [sys.stdin.read().rstrip()]
w = L.append
w(f"tile.func @wgmma_mn_major(%A: tile<64x{K}xf16, global>, %B: tile<{K}x{N}xf16, global>, %C: tile<64x{N}xf32, global>) attributes {{num_warps = 4}} {{")
for c in [0, 1, 2, 4, 8, 16, 32, 128]:
    w(f"  %c{c} = tile.constant {c} : index")
w("  %cchunk = tile.constant 8 : index")
w("  %cks = tile.constant 16 : index")
w(f"  %cK = tile.constant {K} : index")
w("  %tid = nvgpu.thread_id x : index")
w(f"  %sa = tile.alloc_shared : tile<64x{K}xf16, shared, #swizzle<2, 3, 3, #row_major>>")
w(f"  %sb = tile.alloc_shared : tile<{K}x{N}xf16, shared, #swizzle<3, 3, 3, {panels}>>")
w("  // Global to shared with cp.async, 16 bytes per copy, through each tile's layout.")
for mat, rows, cols, src, dst in [("a", 64, K, "%A", "%sa"), ("b", K, N, "%B", "%sb")]:
    per_row = cols // 8
    w(f"  %cper{mat} = tile.constant {per_row} : index")
    w(f"  %n{mat} = tile.constant {rows * per_row} : index")
    w(f"  tile.for %i{mat} = %tid to %n{mat} step %c128 {{")
    w(f"    %r{mat} = tile.div %i{mat}, %cper{mat} : index")
    w(f"    %q{mat} = tile.rem %i{mat}, %cper{mat} : index")
    w(f"    %k{mat} = tile.mul %q{mat}, %cchunk : index")
    w(f"    nvgpu.device_async_copy {src}[%r{mat}, %k{mat}], {dst}[%r{mat}, %k{mat}], 8")
    w("    tile.yield")
    w("  }")
w("  nvgpu.device_async_create_group")
w("  nvgpu.device_async_wait {numGroups = 0}")
w("  nvgpu.fence.proxy.async")
w("  nvgpu.barrier")
w(f"  %zero = tile.fill 0.0 : vector<{N // 2}xf32>")
w("  nvgpu.wgmma.fence")
w(f"  %d = tile.for %k = %c0 to %cK step %cks iter_args(%acc = %zero) -> (vector<{N // 2}xf32>) {{")
w("    %da = nvgpu.warpgroup.generate.descriptor %sa[%c0, %k] {swizzle = 64, leadingByteOffset = 16, strideByteOffset = 512} : index")
w(f"    %db = nvgpu.warpgroup.generate.descriptor %sb[%k, %c0] {{swizzle = 128, leadingByteOffset = {K * 128}, strideByteOffset = 1024}} : index")
w(f"    %next = nvgpu.warpgroup.mma %da, %db, %acc {{mmaShape = [64, {N}, 16], transposeB = true}} : vector<{N // 2}xf32>")
w("    tile.yield %next")
w("  }")
w("  nvgpu.wgmma.commit_group")
w("  nvgpu.wgmma.wait_group {numGroups = 0}")
w("  // Thread t holds D[16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2)][8 (i / 4) + 2 (t % 4) + i % 2] in element i.")
w("  %warp = tile.div %tid, %c32 : index")
w("  %lane = tile.rem %tid, %c32 : index")
w("  %wr = tile.mul %warp, %c16 : index")
w("  %lr = tile.div %lane, %c4 : index")
w("  %r0 = tile.add %wr, %lr : index")
w("  %r1 = tile.add %r0, %c8 : index")
w("  %lc = tile.rem %lane, %c4 : index")
w("  %c0col = tile.mul %lc, %c2 : index")
w("  %c1col = tile.add %c0col, %c1 : index")
for blk in range(1, N // 8):
    for par in range(2):
        w(f"  %coff{blk}_{par} = tile.constant {8 * blk} : index")
        w(f"  %col{blk}_{par} = tile.add %c{par}col, %coff{blk}_{par} : index")
for i in range(N // 2):
    blk, half, par = i // 4, (i // 2) % 2, i % 2
    col = f"%c{par}col" if blk == 0 else f"%col{blk}_{par}"
    w(f"  %e{i} = nvgpu.extract %d [{i}] : f32")
    w(f"  nvgpu.store %e{i}, %C[%r{half}, {col}]")
w("  tile.return")
w("}")
open(sys.argv[1], "w").write("\n".join(L) + "\n")
