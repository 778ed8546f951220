# cuBLAS (through torch.matmul) fp16 GEMM timing on the GPU machine, for the ratio in tilec's figures.
# Usage: python3 scripts/cublas_baseline.py M,N,K [M,N,K ...]   (prints one line per shape)
import sys
import torch

def median_ms(fn, reps=50):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        fn()
    times = []
    for _ in range(reps):
        start.record(); fn(); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]

for shape in sys.argv[1:]:
    m, n, k = (int(x) for x in shape.split(","))
    a = torch.rand(m, k, device="cuda", dtype=torch.float16) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=torch.float16) * 2 - 1
    ms = median_ms(lambda: a @ b)
    print(f"cublas {m}x{n}x{k}: median {ms:.4f} ms, {2.0 * m * n * k / ms / 1e9:.1f} TF/s")
