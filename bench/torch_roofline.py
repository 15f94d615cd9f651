#!/usr/bin/env python3
"""PyTorch peer of gpu_roofline_test.go: the same ops on cuda, timed with
CUDA events (median of 7 runs of 20 ops after a warm-up); one JSON object
per line with GB/s (bytes the op must move) or TFLOP/s. The ops are
internal/torchpeer/torch_peer.py's cases (`ember bench kernels --device
cuda` times them through the Go package internal/torchpeer, synchronizing
after each op instead)."""
import json, os, sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
import torch_peer  # noqa: E402


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


def case(name, dtype, *dims):
    return torch_peer.build(name, "cuda", dtype, dims)


n = 1 << 28
out("sum_f32_2^28", timed(case("sum", "f32", n)), gb=4 * n)
out("sum_axis0_16384", timed(case("sum_axis", "f32", 16384, 16384, 0)), gb=4 * 16384 * 16384)
out("sum_axis1_16384", timed(case("sum_axis", "f32", 16384, 16384, 1)), gb=4 * 16384 * 16384)
out("softmax_16384x4096", timed(case("softmax", "f32", 16384, 4096)), gb=8 * 16384 * 4096)
out("add_bf16_2^28", timed(case("add", "bf16", n)), gb=6 * n)
flop = 2 * 64 * 64 * 56 * 56 * 64 * 9
for dt in ("f32", "bf16"):
    f = case("conv_fwd", dt, 64, 64, 56, 56, 64, 3, 3, 1)  # sets cudnn.benchmark
    for tf32 in ((False, True) if dt == "f32" else (False,)):
        torch.backends.cudnn.allow_tf32 = tf32
        out("conv2d_64x64x56x56_k3", timed(f), flop=flop, dtype=str(torch_peer.DTYPES[dt]), tf32=tf32)
