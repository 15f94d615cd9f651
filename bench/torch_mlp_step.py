#!/usr/bin/env python3
"""Peer measurement for one training step of `ember train`'s models on the
CPU: the MLP 784 -> 128 -> ReLU -> 10 (default) or, with --model cnn, the
CNN conv5 1->32, ReLU, max-pool 2, conv5 32->64, ReLU, max-pool 2, linear
1024 -> 10 (train/models.go); a batch of 64 random images and labels,
cross-entropy loss, torch.optim.Adam (lr 1e-3), the loss read back each
step (as ember's step does with loss.Item()). The peer of
`go test -bench 'TrainStep/cpu/(mlp|cnn)/eager' ./train`. The models and
the step are internal/torchpeer/torch_peer.py's cases mlp_step and
cnn_step, which `ember bench kernels` runs through the Go package
internal/torchpeer.

For each thread count (1, 2 and PyTorch's default) and each Adam
implementation (foreach off and on) it times REPEATS runs of STEPS steps
after a warm-up and prints one JSON object with the median time per step
in microseconds and the process CPU time per step (user + system, all
threads); the last line names the fastest setting.

Usage: python3 bench/torch_mlp_step.py [--model mlp|cnn] [--steps N] [--repeats N]
"""
import json, os, resource, statistics, sys, time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
import torch_peer  # noqa: E402


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(name, threads, foreach, steps, repeats):
    torch.set_num_threads(threads)
    step = torch_peer.build(name + "_step", "cpu", "f32", (64, int(foreach)))
    for _ in range(max(20, steps // 5)):
        step()
    times, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), cpu_seconds()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - t0) / steps * 1e6)
        cpus.append((cpu_seconds() - c0) / steps * 1e6)
    return statistics.median(times), times, statistics.median(cpus)


def main():
    steps, repeats = arg("--steps", 300), arg("--repeats", 7)
    name = "mlp"
    if "--model" in sys.argv:
        name = sys.argv[sys.argv.index("--model") + 1]
    default = torch.get_num_threads()
    best = None
    for threads in sorted({1, 2, default}):
        for foreach in (False, True):
            med, times, cpu = measure(name, threads, foreach, steps, repeats)
            r = {"model": name, "threads": threads, "foreach": foreach, "median_us_per_step": round(med, 1),
                 "cpu_us_per_step": round(cpu, 1), "runs_us": [round(t, 1) for t in times], "torch": torch.__version__}
            print(json.dumps(r), flush=True)
            if best is None or med < best["median_us_per_step"]:
                best = r
    print(json.dumps({"best": {k: best[k] for k in ("threads", "foreach", "median_us_per_step")}}))


if __name__ == "__main__":
    main()
