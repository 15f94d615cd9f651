"""The PyTorch side of Ember's kernel comparisons: the cases (what PyTorch
runs for each measurement Ember compares itself with), the timing loop and
the --serve protocol that the Go package
github.com/emberml/ember/internal/torchpeer speaks. Go embeds this file and
runs it as `python3 -c SOURCE --serve`; bench/torch_norm_bench.py,
torch_conv_bench.py, torch_mlp_step.py and torch_roofline.py import it to run
the same cases by hand.

A case is a function of the device ("cpu" or "cuda"), the dtype and its
dimensions returning the call to time (on cuda the call only queues work: the
caller synchronizes). CASES maps each name to its function and default
dimensions.

--serve: one JSON object per line each way. The peer first prints
  {"ready": true, "torch": VERSION, "threads": DEFAULT, "cuda": AVAILABLE}
then answers each request
  {"case": NAME, "device": "cpu"|"cuda", "dtype": "f32"|"bf16"|"f64",
   "dims": [...], "threads": N, "iters": I, "warmup": SECONDS}
(THREADS 0: PyTorch's default; on cuda the call ends with
torch.cuda.synchronize()) with
  {"seconds": MEDIAN, "cpu_seconds": CPU_PER_CALL, "calls": CALLS, "threads": N}
(the median seconds of I calls after WARMUP seconds of warm-up calls, at
least two; the process CPU seconds per call, all threads, warm-up calls
included; the calls made; the thread count used) or {"error": TEXT}. The
input's end or {"quit": true} stops it.
"""
import sys

if __name__ == "__main__" and sys.argv[:1] == ["-c"]:
    # Run as `python -c`: the working directory is not a source of modules.
    sys.path = [p for p in sys.path if p not in ("", ".")]

import gc, json, statistics, time

import torch
import torch.nn as nn
import torch.nn.functional as F

WARMUP = 0.1

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}


def timed(f, iters, warmup=WARMUP):
    """The median seconds of iters calls of f and the number of calls made,
    after warmup seconds of warm-up calls (at least two): the Go side
    (torchpeer.Time) warms up for as long."""
    calls = 0
    t0 = time.perf_counter()
    while calls < 2 or time.perf_counter() - t0 < warmup:
        f()
        calls += 1
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), calls + iters


CASES = {}


def case(name, *dims):
    """Registers the decorated function as case name with default dims."""
    def register(f):
        CASES[name] = (f, dims)
        return f
    return register


def randn(dev, dt, *shape):
    return torch.randn(*shape, device=dev, dtype=dt)


# Normalizations over the last axis of [rows, cols] (weight and bias of
# [cols], eps 1e-5), and their backward kernels (aten's input gradients).

@case("softmax", 4096, 1024)
def _softmax(dev, dt, rows, cols):
    x = randn(dev, dt, rows, cols)
    return lambda: torch.softmax(x, -1)


@case("log_softmax", 4096, 1024)
def _log_softmax(dev, dt, rows, cols):
    x = randn(dev, dt, rows, cols)
    return lambda: torch.log_softmax(x, -1)


@case("layer_norm", 4096, 1024)
def _layer_norm(dev, dt, rows, cols):
    x, w, b = randn(dev, dt, rows, cols), randn(dev, dt, cols), randn(dev, dt, cols)
    return lambda: F.layer_norm(x, [cols], w, b, 1e-5)


@case("softmax_grad", 4096, 1024)
def _softmax_grad(dev, dt, rows, cols):
    x, g = randn(dev, dt, rows, cols), randn(dev, dt, rows, cols)
    y = torch.softmax(x, -1)
    return lambda: torch.ops.aten._softmax_backward_data(g, y, -1, dt)


@case("log_softmax_grad", 4096, 1024)
def _log_softmax_grad(dev, dt, rows, cols):
    x, g = randn(dev, dt, rows, cols), randn(dev, dt, rows, cols)
    y = torch.log_softmax(x, -1)
    return lambda: torch.ops.aten._log_softmax_backward_data(g, y, -1, dt)


@case("layer_norm_grad", 4096, 1024)
def _layer_norm_grad(dev, dt, rows, cols):
    x, g = randn(dev, dt, rows, cols), randn(dev, dt, rows, cols)
    w, b = randn(dev, dt, cols), randn(dev, dt, cols)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [cols], w, b, 1e-5)
    return lambda: torch.ops.aten.native_layer_norm_backward(g, x, [cols], mean, rstd, w, b, [True, False, False])


# Reductions and elementwise ops.

@case("sum", 1 << 28)
def _sum(dev, dt, n):
    x = randn(dev, dt, n)
    return lambda: x.sum()


@case("sum_axis", 16384, 16384, 0)
def _sum_axis(dev, dt, rows, cols, axis):
    x = randn(dev, dt, rows, cols)
    return lambda: x.sum(axis)


@case("add", 1 << 28)
def _add(dev, dt, n):
    a, b = randn(dev, dt, n), randn(dev, dt, n)
    return lambda: a + b


# Convolutions: x [n, cin, h, w], weights [cout, cin, kh, kw], stride 1,
# padding pad. The gradients are aten.convolution_backward with one output
# mask bit set, the kernels autograd runs for conv2d. On cuda, cuDNN picks
# its algorithms by timing them (cudnn.benchmark) and f32 stays f32 (TF32
# off).

def _conv(dev, dt, n, cin, h, w, cout, kh, kw, pad):
    if dev == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False
    x, wt = randn(dev, dt, n, cin, h, w), randn(dev, dt, cout, cin, kh, kw) * 0.1
    y = F.conv2d(x, wt, padding=pad)
    g = randn(dev, dt, *y.shape)

    def bwd(mask):
        return torch.ops.aten.convolution_backward(g, x, wt, None, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1, mask)
    return x, wt, bwd


@case("conv_fwd", 64, 64, 56, 56, 64, 3, 3, 1)
def _conv_fwd(dev, dt, *dims):
    x, wt, _ = _conv(dev, dt, *dims)
    pad = dims[-1]
    return lambda: F.conv2d(x, wt, padding=pad)


@case("conv_dgrad", 64, 64, 56, 56, 64, 3, 3, 1)
def _conv_dgrad(dev, dt, *dims):
    _, _, bwd = _conv(dev, dt, *dims)
    return lambda: bwd([True, False, False])


@case("conv_wgrad", 64, 64, 56, 56, 64, 3, 3, 1)
def _conv_wgrad(dev, dt, *dims):
    _, _, bwd = _conv(dev, dt, *dims)
    return lambda: bwd([False, True, False])


# Training steps of `ember train`'s models (train/models.go): a batch of
# random images and labels, cross-entropy, backward, torch.optim.Adam
# (lr 1e-3; foreach off or on), the loss read back each step as ember's step
# does with loss.Item().

def model(name):
    """The MLP 784 -> 128 -> ReLU -> 10 ("mlp") or the CNN conv5 1->32,
    ReLU, max-pool 2, conv5 32->64, ReLU, max-pool 2, linear 1024 -> 10
    ("cnn")."""
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    if name == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(1024, 10))
    raise ValueError(f"unknown model {name!r} (have mlp, cnn)")


def train_step(name, dev, dt, batch, foreach):
    """One training step of model(name) on a batch of batch random images,
    as a function returning the loss."""
    m = model(name).to(device=dev, dtype=dt)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, foreach=bool(foreach))
    lossf = nn.CrossEntropyLoss()
    x = torch.rand(batch, 1, 28, 28, device=dev, dtype=dt)
    y = torch.randint(0, 10, (batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = lossf(m(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


@case("mlp_step", 64, 0)
def _mlp_step(dev, dt, batch, foreach):
    return train_step("mlp", dev, dt, batch, foreach)


@case("cnn_step", 64, 0)
def _cnn_step(dev, dt, batch, foreach):
    return train_step("cnn", dev, dt, batch, foreach)


class CaseError(ValueError):
    """A request build cannot satisfy: an unknown case, device or dtype, or
    a wrong number of dimensions."""


def build(name, dev="cpu", dtype="f32", dims=None):
    """The call of case name on dev (cpu or cuda) in dtype (a DTYPES key)
    with dims (the case's defaults when None). Raises CaseError for an
    unknown case, device or dtype, a CUDA device torch lacks, or a wrong
    number of dimensions."""
    if name not in CASES:
        raise CaseError(f"unknown case {name!r} (have {', '.join(sorted(CASES))})")
    f, defaults = CASES[name]
    if dev not in ("cpu", "cuda"):
        raise CaseError(f"unknown device {dev!r} (have cpu, cuda)")
    if dev == "cuda" and not torch.cuda.is_available():
        raise CaseError(f"torch {torch.__version__} has no CUDA device")
    if dtype not in DTYPES:
        raise CaseError(f"unknown dtype {dtype!r} (have {', '.join(DTYPES)})")
    dims = tuple(defaults if dims is None else dims)
    if len(dims) != len(defaults) or not all(isinstance(d, int) for d in dims):
        raise CaseError(f"case {name} takes {len(defaults)} integer dimensions, got {list(dims)}")
    torch.manual_seed(1)
    return f(dev, DTYPES[dtype], *dims)


def synced(f, dev):
    """f, followed on cuda by torch.cuda.synchronize()."""
    if dev != "cuda":
        return f

    def call():
        f()
        torch.cuda.synchronize()
    return call


def serve():
    """The --serve protocol (see the module's doc)."""
    default = torch.get_num_threads()
    reply({"ready": True, "torch": torch.__version__, "threads": default, "cuda": torch.cuda.is_available()})
    current = [None, None]  # the last request's case key and call

    def answer(req):
        for k in ("case", "iters"):
            if k not in req:
                raise CaseError(f"the request lacks {k!r}")
        dev = req.get("device", "cpu")
        key = (req["case"], dev, req.get("dtype", "f32"), tuple(req.get("dims", ())))
        if current[0] != key:
            current[0] = current[1] = None
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            current[1] = synced(build(key[0], key[1], key[2], req.get("dims")), dev)
            current[0] = key
        n = int(req.get("threads", 0))
        torch.set_num_threads(n if n > 0 else default)
        c0 = time.process_time()
        wall, calls = timed(current[1], int(req["iters"]), float(req.get("warmup", WARMUP)))
        return {"seconds": wall, "cpu_seconds": (time.process_time() - c0) / calls, "calls": calls,
                "threads": torch.get_num_threads()}

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            reply({"error": f"bad request {line.strip()!r}: {e}"})
            continue
        if req.get("quit"):
            break
        try:
            reply(answer(req))
        except CaseError as e:
            reply({"error": str(e)})
        except Exception as e:
            reply({"error": f"{type(e).__name__}: {e}"})


def reply(obj):
    print(json.dumps(obj), flush=True)


def main(cases, width):
    """Runs a peer script by hand: --serve (serve), or [--rounds R]
    [--iters I] [--json] timing each of cases (a list of (label, case name,
    dims)) on the cpu at 1 and 2 threads and PyTorch's default, interleaved
    round by round, and printing the medians over rounds (ms) with the best
    setting, labels padded to width."""
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
    calls = {label: build(name, "cpu", "f32", dims) for label, name, dims in cases}
    res = {}
    for _ in range(rounds):
        for label, n in settings:
            torch.set_num_threads(n)
            for name, f in calls.items():
                res.setdefault((name, label), []).append(timed(f, iters)[0])
    torch.set_num_threads(default)
    for name in calls:
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


if __name__ == "__main__":
    serve()
