"""The timing loop, the --serve protocol and the table output shared by the
PyTorch peer scripts (torch_conv_bench.py, torch_norm_bench.py): a script
passes a function returning its named cases (callables) to main."""
import json, statistics, sys, time

import torch


WARMUP = 0.1


def timed(f, iters):
    """The median seconds of iters calls of f and the number of calls made,
    after WARMUP seconds of warm-up calls (at least two): the Go side's
    benchTimed warms up for as long (backend/cpu/softmax_bench_test.go)."""
    calls = 0
    t0 = time.perf_counter()
    while calls < 2 or time.perf_counter() - t0 < WARMUP:
        f()
        calls += 1
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), calls + iters


def serve(ops, with_cpu):
    """Answers requests "OP THREADS ITERS" (THREADS 0: PyTorch's default)
    read from stdin, one per line, with the median seconds of ITERS calls,
    followed (with_cpu) by the process CPU seconds per call, all threads,
    the warm-up calls included."""
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
            wall, calls = timed(cases[op], iters)
            if with_cpu:
                print(wall, (time.process_time() - c0) / calls, flush=True)
            else:
                print(wall, flush=True)


def main(ops, width, with_cpu=False):
    """Runs a peer script: --serve (see serve), or [--rounds R] [--iters I]
    [--json] timing every case at 1 and 2 threads and PyTorch's default,
    interleaved round by round, and printing the medians over rounds (ms)
    with the best setting, names padded to width."""
    args = sys.argv[1:]
    if "--serve" in args:
        serve(ops, with_cpu)
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
                    res.setdefault((name, label), []).append(timed(f, iters)[0])
    torch.set_num_threads(default)
    for name in cases:
        best = None
        for label, _ in settings:
            ms = statistics.median(res[(name, label)]) * 1e3
            best = ms if best is None else min(best, ms)
            if as_json:
                print(json.dumps({"op": name, "threads": label, "ms": round(ms, 4)}))
            else:
                print(f"{name:{width}s} threads={label:11s} {ms:8.3f} ms")
        if as_json:
            print(json.dumps({"op": name, "threads": "best", "ms": round(best, 4)}))
        else:
            print(f"{name:{width}s} threads=best        {best:8.3f} ms")
