#!/usr/bin/env python3
"""Peer measurement for one mixed-precision training step of `ember train
--dtype bf16` on the CPU: the MLP 784 -> 128 -> ReLU -> 10 with float32
parameters, a batch of 64 random images and labels, the forward pass and
the cross-entropy under torch.autocast("cpu", dtype=torch.bfloat16) (or
without autocast for --dtype f32), backward, torch.optim.Adam (lr 1e-3),
the loss read back each step. The peer of
`go test -run XXX -bench 'TrainStepDType/mlp' ./train`. PyTorch's CPU
autocast has no float16 policy (1.13), so f16 has no peer here.

For each thread count (1, 2 and PyTorch's default) it times REPEATS runs of
STEPS steps after a warm-up and prints one JSON object with the median time
per step in microseconds; the last line names the fastest setting.

Usage: python3 bench/torch_amp_step.py [--dtype f32|bf16] [--steps N] [--repeats N]
"""
import contextlib, json, os, statistics, sys, time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
import torch_peer  # noqa: E402


def arg(name, default, conv=int):
    if name in sys.argv:
        return conv(sys.argv[sys.argv.index(name) + 1])
    return default


def measure(threads, dtype, steps, repeats):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    m = torch_peer.model("mlp")
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    x = torch.rand(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))

    def ctx():
        if dtype == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step():
        opt.zero_grad(set_to_none=True)
        with ctx():
            loss = lossf(m(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(max(20, steps // 5)):
        step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - t0) / steps * 1e6)
    return statistics.median(times), times


def main():
    dtype = arg("--dtype", "f32", str)
    steps, repeats = arg("--steps", 200), arg("--repeats", 5)
    default = torch.get_num_threads()
    best = None
    for threads in sorted({1, 2, default}):
        med, times = measure(threads, dtype, steps, repeats)
        r = {"dtype": dtype, "threads": threads, "median_us_per_step": round(med, 1),
             "runs_us": [round(t, 1) for t in times], "torch": torch.__version__}
        print(json.dumps(r), flush=True)
        if best is None or med < best["median_us_per_step"]:
            best = r
    print(json.dumps({"best": {k: best[k] for k in ("dtype", "threads", "median_us_per_step")}}))


if __name__ == "__main__":
    main()
