#!/usr/bin/env python3
"""Peer measurement for BenchmarkSmallVersusOpenBLAS
(backend/cpu/internal/gemm): torch.mm on float32 for 256x256x256 and the
products of one MNIST MLP training step (784 -> 128 -> 10, batch 64) with
the same operand layouts (a transposed operand is a .t() view).

For each shape and each thread count (1, 2 and PyTorch's default) it times
REPEATS samples of enough calls for about 2 ms and prints one JSON object
per shape with the median microseconds per call of each setting and the
best. The BLAS PyTorch calls is whatever libblas.so.3 resolves to: Debian's
python3-torch links the system BLAS (reference BLAS by default); run with
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread to give it
OpenBLAS instead.

Usage: /usr/bin/python3 bench/torch_small_gemm.py [--repeats N]
"""
import json, statistics, sys, time

import torch

SHAPES = [
    ("256x256x256", False, False, 256, 256, 256),
    ("fc1-64x128x784-NT", False, True, 64, 128, 784),
    ("fc2-64x10x128-NT", False, True, 64, 10, 128),
    ("fc2-dx-64x128x10-NN", False, False, 64, 128, 10),
    ("fc2-dw-128x10x64-TN", True, False, 128, 10, 64),
    ("fc1-dw-784x128x64-TN", True, False, 784, 128, 64),
]


def operands(ta, tb, m, n, k):
    g = torch.Generator().manual_seed(m * n * k)
    a = torch.rand(k, m, generator=g).t() if ta else torch.rand(m, k, generator=g)
    b = torch.rand(n, k, generator=g).t() if tb else torch.rand(k, n, generator=g)
    return a - 0.5, b - 0.5


def main():
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 30
    default = torch.get_num_threads()
    for name, ta, tb, m, n, k in SHAPES:
        a, b = operands(ta, tb, m, n, k)
        if ta:
            a = a.t().contiguous().t()
        if tb:
            b = b.t().contiguous().t()
        out = torch.empty(m, n)
        reps = max(1, int(2e-3 * 100e9 / (2 * m * n * k)))
        res = {"shape": name, "us": {}}
        for threads in (1, 2, default):
            torch.set_num_threads(threads)
            torch.mm(a, b, out=out)
            samples = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(reps):
                    torch.mm(a, b, out=out)
                samples.append((time.perf_counter() - t0) / reps * 1e6)
            res["us"][f"threads={threads}"] = round(statistics.median(samples), 2)
        res["best"] = min(res["us"].items(), key=lambda kv: kv[1])
        print(json.dumps(res), flush=True)
    torch.set_num_threads(default)


if __name__ == "__main__":
    main()
