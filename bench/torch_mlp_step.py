#!/usr/bin/env python3
"""Peer measurement for one training step of `ember train`'s default model
on the CPU: the MLP 784 -> 128 -> ReLU -> 10, a batch of 64 random images
and labels, cross-entropy loss, torch.optim.Adam (lr 1e-3), the loss read
back each step (as ember's step does with loss.Item()). The peer of
`go test -bench 'TrainStep/cpu/mlp/eager' ./train`.

For each thread count (1, 2 and PyTorch's default) and each Adam
implementation (foreach off and on) it times REPEATS runs of STEPS steps
after a warm-up and prints one JSON object with the median time per step
in microseconds; the last line names the fastest setting.

Usage: python3 bench/torch_mlp_step.py [--steps N] [--repeats N]
"""
import json, os, statistics, sys, time

import torch
import torch.nn as nn


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


def measure(threads, foreach, steps, repeats):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    m = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, foreach=foreach)
    lossf = nn.CrossEntropyLoss()
    x = torch.rand(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad(set_to_none=True)
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
    steps, repeats = arg("--steps", 300), arg("--repeats", 7)
    default = torch.get_num_threads()
    best = None
    for threads in sorted({1, 2, default}):
        for foreach in (False, True):
            med, times = measure(threads, foreach, steps, repeats)
            r = {"threads": threads, "foreach": foreach, "median_us_per_step": round(med, 1),
                 "runs_us": [round(t, 1) for t in times], "torch": torch.__version__}
            print(json.dumps(r), flush=True)
            if best is None or med < best["median_us_per_step"]:
                best = r
    print(json.dumps({"best": {k: best[k] for k in ("threads", "foreach", "median_us_per_step")}}))


if __name__ == "__main__":
    main()
