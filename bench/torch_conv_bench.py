#!/usr/bin/env python3
"""Peer measurement for the CPU convolution kernels (backend/cpu conv*.go):
PyTorch CPU's conv2d forward, input gradient and weight gradient of the two
convolutions of the MNIST CNN (train/models.go, batch 64, float32):

  conv1: x [64, 1, 28, 28],  w [32, 1, 5, 5]  -> y [64, 32, 24, 24]
  conv2: x [64, 32, 12, 12], w [64, 32, 5, 5] -> y [64, 64, 8, 8]

The gradients are aten.convolution_backward with one output mask bit set,
the kernels PyTorch's autograd runs for conv2d (oneDNN where PyTorch picks
it). Op names: conv1_fwd, conv1_dgrad, conv1_wgrad, conv2_fwd, conv2_dgrad,
conv2_wgrad. Thread settings 1, 2 and PyTorch's default are interleaved
round by round; each figure is the median over rounds of a per-round median
of --iters calls after two warm-up calls.

Usage: python3 bench/torch_conv_bench.py [--rounds R] [--iters I] [--json]
Prints one line per op and thread setting (milliseconds), and with --json
one JSON object per line instead.

       python3 bench/torch_conv_bench.py --serve
Reads requests "OP THREADS ITERS" (THREADS 0: PyTorch's default) from
stdin, one per line, and answers each on one line with the median seconds
of ITERS calls and the process CPU seconds per call (all threads, the two
warm-up calls included), so that a peer process can interleave its own
timings with PyTorch's (backend/cpu's BenchmarkConvVersusTorch does).
"""
import json, statistics, sys, time

import torch

LAYERS = {
    "conv1": ((64, 1, 28, 28), (32, 1, 5, 5)),
    "conv2": ((64, 32, 12, 12), (64, 32, 5, 5)),
}


def ops():
    torch.manual_seed(1)
    aten = torch.ops.aten
    res = {}
    for name, (xs, ws) in LAYERS.items():
        x, w = torch.randn(*xs), torch.randn(*ws)
        y = torch.nn.functional.conv2d(x, w)
        g = torch.randn(*y.shape)

        def bwd(mask, x=x, w=w, g=g):
            return aten.convolution_backward(g, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask)

        res[name + "_fwd"] = lambda x=x, w=w: torch.nn.functional.conv2d(x, w)
        res[name + "_dgrad"] = lambda bwd=bwd: bwd([True, False, False])
        res[name + "_wgrad"] = lambda bwd=bwd: bwd([False, True, False])
    return res


def timed(f, iters):
    f()
    f()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def serve():
    default = torch.get_num_threads()
    cases = ops()
    print("ready", default, flush=True)
    with torch.no_grad():
        for line in sys.stdin:
            parts = line.split()
            if not parts or parts[0] == "quit":
                break
            op, n, iters = parts[0], int(parts[1]), int(parts[2])
            torch.set_num_threads(n if n > 0 else default)
            c0 = time.process_time()
            wall = timed(cases[op], iters)
            cpu = (time.process_time() - c0) / (iters + 2)
            print(wall, cpu, flush=True)


def main():
    args = sys.argv[1:]
    if "--serve" in args:
        serve()
        return
    rounds, iters = 7, 20
    if "--rounds" in args:
        rounds = int(args[args.index("--rounds") + 1])
    if "--iters" in args:
        iters = int(args[args.index("--iters") + 1])
    as_json = "--json" in args
    default = torch.get_num_threads()
    settings = [("1", 1), ("2", 2), (f"default({default})", default)]
    cases = ops()
    res = {}
    with torch.no_grad():
        for _ in range(rounds):
            for label, n in settings:
                torch.set_num_threads(n)
                for name, f in cases.items():
                    res.setdefault((name, label), []).append(timed(f, iters))
    torch.set_num_threads(default)
    for name in cases:
        best = None
        for label, _ in settings:
            ms = statistics.median(res[(name, label)]) * 1e3
            best = ms if best is None else min(best, ms)
            if as_json:
                print(json.dumps({"op": name, "threads": label, "ms": round(ms, 4)}))
            else:
                print(f"{name:12s} threads={label:11s} {ms:8.3f} ms")
        if as_json:
            print(json.dumps({"op": name, "threads": "best", "ms": round(best, 4)}))
        else:
            print(f"{name:12s} threads=best        {best:8.3f} ms")


if __name__ == "__main__":
    main()
