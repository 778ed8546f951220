"""Writes the nvgpu-level wgmma tile kernels of examples/hopper/wgmma_gemm_tile.tir and tests/lit/sim/Inputs/wgmma_*.tir:
one warpgroup, A (64xK) and Bt (NxK) copied with cp.async into shared tiles of one swizzle atom per row
(#swizzle<B, 3|4, 3, #row_major>), a proxy fence and a barrier, K/KSTEP nvgpu.warpgroup.mma through descriptors,
commit/wait, and every D element stored where the ISA's D layout puts it.
Usage: gen_wgmma_tile.py NAME N K SWIZZLE ELEM ACC OUT < header-comment-lines"""
import sys
# generate a wgmma tile kernel: A (64 x K) row-major, Bt (N x K) row-major (B column-major), C = A.B (64 x N) f32
def kernel(name, N, K, swz, elem='f16', acc='f32', header=''):
    ebytes = 2 if elem in ('f16','bf16') else 1
    kstep = 16 if ebytes == 2 else 32
    row_elems = K  # one swizzle atom wide: K * ebytes == swz bytes
    assert K*ebytes == swz
    bits = {128:3, 64:2, 32:1}[swz]
    base = 3 if ebytes == 2 else 4
    chunk = 16 // ebytes
    lay = f"#swizzle<{bits}, {base}, 3, #row_major>"
    L = []
    w = L.append
    w(header.rstrip())
    w(f"tile.func @{name}(%A: tile<64x{K}x{elem}, global>, %Bt: tile<{N}x{K}x{elem}, global>, %C: tile<64x{N}x{acc}, global>) attributes {{num_warps = 4}} {{")
    for c in [0,1,2,4,8,16,32,128]:
        w(f"  %c{c} = tile.constant {c} : index")
    w(f"  %cchunk = tile.constant {chunk} : index")
    w(f"  %cks = tile.constant {kstep} : index")
    w(f"  %cK = tile.constant {K} : index")
    w(f"  %tid = nvgpu.thread_id x : index")
    w(f"  %sa = tile.alloc_shared : tile<64x{K}x{elem}, shared, {lay}>")
    w(f"  %sb = tile.alloc_shared : tile<{N}x{K}x{elem}, shared, {lay}>")
    w(f"  // Global to shared with cp.async, 16 bytes per copy: thread t copies chunks t, t + 128, ... of each matrix.")
    per_row = K // chunk
    w(f"  %cper = tile.constant {per_row} : index")
    for mat, rows, src, dst in [('a', 64, '%A', '%sa'), ('b', N, '%Bt', '%sb')]:
        n_chunks = rows * per_row

        w(f"  %n{mat} = tile.constant {n_chunks} : index")
        w(f"  tile.for %i{mat} = %tid to %n{mat} step %c128 {{")
        w(f"    %r{mat} = tile.div %i{mat}, %cper : index")
        w(f"    %q{mat} = tile.rem %i{mat}, %cper : index")
        w(f"    %k{mat} = tile.mul %q{mat}, %cchunk : index")
        w(f"    nvgpu.device_async_copy {src}[%r{mat}, %k{mat}], {dst}[%r{mat}, %k{mat}], {chunk}")
        w(f"    tile.yield")
        w(f"  }}")
    w(f"  nvgpu.device_async_create_group")
    w(f"  nvgpu.device_async_wait {{numGroups = 0}}")
    w(f"  // The copies wrote through the generic proxy; wgmma reads through the async proxy.")
    w(f"  nvgpu.fence.proxy.async")
    w(f"  nvgpu.barrier")
    zero = "0.0" if acc == 'f32' else "0"
    w(f"  %zero = tile.fill {zero} : vector<{N//2}x{acc}>")
    w(f"  nvgpu.wgmma.fence")
    w(f"  // K / {kstep} wgmmas, each {kstep} further along K: {kstep*ebytes} bytes inside the {swz}-byte swizzle atom.")
    w(f"  %d = tile.for %k = %c0 to %cK step %cks iter_args(%acc = %zero) -> (vector<{N//2}x{acc}>) {{")
    w(f"    %da = nvgpu.warpgroup.generate.descriptor %sa[%c0, %k] {{swizzle = {swz}, leadingByteOffset = 16, strideByteOffset = {8*swz}}} : index")
    w(f"    %db = nvgpu.warpgroup.generate.descriptor %sb[%c0, %k] {{swizzle = {swz}, leadingByteOffset = 16, strideByteOffset = {8*swz}}} : index")
    w(f"    %next = nvgpu.warpgroup.mma %da, %db, %acc {{mmaShape = [64, {N}, {kstep}]}} : vector<{N//2}x{acc}>")
    w(f"    tile.yield %next")
    w(f"  }}")
    w(f"  nvgpu.wgmma.commit_group")
    w(f"  nvgpu.wgmma.wait_group {{numGroups = 0}}")
    w(f"  // Thread t holds D[16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2)][8 (i / 4) + 2 (t % 4) + i % 2] in element i.")
    w(f"  %warp = tile.div %tid, %c32 : index")
    w(f"  %lane = tile.rem %tid, %c32 : index")
    w(f"  %wr = tile.mul %warp, %c16 : index")
    w(f"  %lr = tile.div %lane, %c4 : index")
    w(f"  %r0 = tile.add %wr, %lr : index")
    w(f"  %r1 = tile.add %r0, %c8 : index")
    w(f"  %lc = tile.rem %lane, %c4 : index")
    w(f"  %c0col = tile.mul %lc, %c2 : index")
    w(f"  %c1col = tile.add %c0col, %c1 : index")
    for blk in range(N // 8):
        for par in range(2):
            off = 8*blk
            if off == 0:
                continue
            w(f"  %coff{blk}_{par} = tile.constant {off} : index")
            w(f"  %col{blk}_{par} = tile.add %c{par}col, %coff{blk}_{par} : index")
    for i in range(N // 2):
        blk, half, par = i // 4, (i // 2) % 2, i % 2
        col = f"%c{par}col" if blk == 0 else f"%col{blk}_{par}"
        w(f"  %e{i} = nvgpu.extract %d [{i}] : {acc}")
        w(f"  nvgpu.store %e{i}, %C[%r{half}, {col}]")
    w(f"  tile.return")
    w(f"}}")
    return "\n".join(L) + "\n"

if __name__ == '__main__':
    name, N, K, swz, elem, acc, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
    header = sys.stdin.read()
    open(out, 'w').write(kernel(name, N, K, swz, elem, acc, header))
