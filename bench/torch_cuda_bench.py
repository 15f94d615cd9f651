#!/usr/bin/env python3
"""PyTorch peer for the CUDA benchmarks of gpu_cuda_test.go: bf16 8192³ and
f32 4096³ matmul (TF32 off), 2^28 f32 add, and the host time of a tiny add.
Prints one JSON object per line.

Matmuls are timed twice: in bursts (median of 5 runs of 10 products, the
card at its boost clock) and sustained (back-to-back products for about
2 s, as `go test -bench -benchtime 2s` runs them, where the power limit
lowers the clock); compare each with the same regime of the Go benchmark."""
import json, time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"


def timed(f, reps):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            f()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / reps)
    return sorted(times)[len(times) // 2]


for dt, n in ((torch.bfloat16, 8192), (torch.float32, 4096)):
    a = torch.randn(n, n, device=dev, dtype=dt)
    b = torch.randn(n, n, device=dev, dtype=dt)
    t = timed(lambda: a @ b, 10)
    reps = max(10, int(2.0 / t))
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        a @ b
    e.record()
    torch.cuda.synchronize()
    ts = s.elapsed_time(e) / 1e3 / reps
    print(json.dumps({"bench": "matmul", "dtype": str(dt), "n": n, "tflops": 2 * n**3 / t / 1e12,
                      "tflops_sustained": 2 * n**3 / ts / 1e12, "sustained_reps": reps}))
n = 1 << 28
a = torch.randn(n, device=dev)
b = torch.randn(n, device=dev)
t = timed(lambda: a + b, 20)
print(json.dumps({"bench": "add", "n": n, "gbps": 12 * n / t / 1e9}))
a = torch.ones(1, device=dev)
b = torch.ones(1, device=dev)
for _ in range(1000):
    a + b
torch.cuda.synchronize()
reps = 20000
t0 = time.perf_counter()
for _ in range(reps):
    a + b
torch.cuda.synchronize()
print(json.dumps({"bench": "tiny_add", "us_per_op": (time.perf_counter() - t0) / reps * 1e6}))
