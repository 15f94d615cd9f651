#!/usr/bin/env python3
"""PyTorch peer of gpu_roofline_test.go: the same ops on cuda, timed with
CUDA events (median of 7 runs of 20 ops after a warm-up); one JSON object
per line with GB/s (bytes the op must move) or TFLOP/s."""
import json

import torch

dev = "cuda"


def timed(f, reps=20):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            f()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / reps)
    return sorted(ts)[len(ts) // 2]


def out(bench, t, gb=None, flop=None, **kw):
    r = {"bench": bench, "ms": t * 1e3}
    if gb is not None:
        r["gbps"] = gb / t / 1e9
    if flop is not None:
        r["tflops"] = flop / t / 1e12
    r.update(kw)
    print(json.dumps(r), flush=True)


n = 1 << 28
x = torch.randn(n, device=dev)
out("sum_f32_2^28", timed(lambda: x.sum()), gb=4 * n)
del x
m = torch.randn(16384, 16384, device=dev)
out("sum_axis0_16384", timed(lambda: m.sum(0)), gb=4 * 16384 * 16384)
out("sum_axis1_16384", timed(lambda: m.sum(1)), gb=4 * 16384 * 16384)
del m
s = torch.randn(16384, 4096, device=dev)
out("softmax_16384x4096", timed(lambda: torch.softmax(s, 1)), gb=8 * 16384 * 4096)
del s
a = torch.randn(n, device=dev, dtype=torch.bfloat16)
b = torch.randn(n, device=dev, dtype=torch.bfloat16)
out("add_bf16_2^28", timed(lambda: a + b), gb=6 * n)
del a, b
flop = 2 * 64 * 64 * 56 * 56 * 64 * 9
torch.backends.cudnn.benchmark = True
for dt in (torch.float32, torch.bfloat16):
    xi = torch.randn(64, 64, 56, 56, device=dev, dtype=dt)
    w = torch.randn(64, 64, 3, 3, device=dev, dtype=dt) * 0.1
    for tf32 in ((False, True) if dt == torch.float32 else (False,)):
        torch.backends.cudnn.allow_tf32 = tf32
        out("conv2d_64x64x56x56_k3", timed(lambda: torch.nn.functional.conv2d(xi, w, padding=1)), flop=flop,
            dtype=str(dt), tf32=tf32)
