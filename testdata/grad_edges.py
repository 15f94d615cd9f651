"""Writes grad_edges.json: forward values and gradients of ops at their
boundary cases (zeros of both signs, infinities, NaN, ties), computed by
PyTorch in float64. The Go test TestGradientEdges compares ember with it.

Run: python3 grad_edges.py > grad_edges.json
"""
import json
import math

import torch
import torch.nn.functional as F

inf, nan = math.inf, math.nan


def enc(v):
    out = []
    for x in v:
        if math.isnan(x):
            out.append("nan")
        elif math.isinf(x):
            out.append("inf" if x > 0 else "-inf")
        elif x == 0 and math.copysign(1, x) < 0:
            out.append("-0")
        else:
            out.append(x)
    return out


cases = []


def case(name, op, xs, fn, shape=None, attrs=None, weights=None):
    """xs: list of flat input lists; fn(*tensors) -> output tensor."""
    ts = []
    for v in xs:
        t = torch.tensor(v, dtype=torch.float64)
        if shape is not None:
            t = t.reshape(shape)
        ts.append(t.requires_grad_(True))
    y = fn(*ts)
    w = torch.ones_like(y) if weights is None else torch.tensor(weights, dtype=torch.float64).reshape(y.shape)
    (y * w).sum().backward()
    cases.append({
        "name": name, "op": op, "attrs": attrs or {}, "shape": list(ts[0].shape),
        "inputs": [enc(t.detach().flatten().tolist()) for t in ts],
        "weights": enc(w.flatten().tolist()),
        "out_shape": list(y.shape), "out": enc(y.detach().flatten().tolist()),
        "grads": [enc(t.grad.flatten().tolist()) if t.grad is not None else None for t in ts],
    })


edge = [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, inf, -inf, nan]
pos = [0.0, -0.0, 0.25, 4.0, inf, -1.0, nan]
unary = {
    "relu": torch.relu, "abs": torch.abs, "sign": torch.sign, "neg": torch.neg,
    "exp": torch.exp, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf,
    "sin": torch.sin, "cos": torch.cos, "floor": torch.floor, "ceil": torch.ceil,
    "round": torch.round, "square": torch.square, "gelu": F.gelu, "silu": F.silu,
}
for name, fn in unary.items():
    case(name + "/edges", name, [edge], fn)
for name, fn in {"sqrt": torch.sqrt, "log": torch.log, "rsqrt": torch.rsqrt, "recip": torch.reciprocal}.items():
    case(name + "/edges", name, [pos], fn)
case("leaky_relu/edges", "leaky_relu", [edge], lambda x: F.leaky_relu(x, 0.1), attrs={"slope": 0.1})
case("clamp/edges", "clamp", [[-2.0, -1.0, -0.5, 0.0, 1.0, 2.0, inf, -inf, nan]], lambda x: torch.clamp(x, -1.0, 1.0), attrs={"min": -1.0, "max": 1.0})
case("clamp_min/edges", "clamp_min", [[-2.0, -1.0, 0.0, 2.0, -inf, nan]], lambda x: torch.clamp(x, min=-1.0), attrs={"min": -1.0})
case("clamp_max/edges", "clamp_max", [[-2.0, 1.0, 0.0, 2.0, inf, nan]], lambda x: torch.clamp(x, max=1.0), attrs={"max": 1.0})
bx = [0.0, 0.0, 0.0, 0.0, 2.0, -2.0, -0.0, 1.0, inf, 0.5]
by = [2.0, 0.0, 0.5, -1.0, 3.0, 2.0, 2.0, inf, 2.0, -inf]
case("pow/edges", "pow", [bx, by], torch.pow)
for p in [0.0, 0.5, 1.0, 2.0, -1.0, 3.0]:
    case("pow_scalar/%g" % p, "pow_scalar", [[0.0, -0.0, 2.0, -2.0, inf, nan]], lambda x, p=p: torch.pow(x, p), attrs={"p": p})
case("div/edges", "div", [[1.0, 0.0, -1.0, 0.0, inf, 2.0], [0.0, 0.0, -0.0, 2.0, inf, inf]], torch.div)
case("mul/edges", "mul", [[0.0, inf, nan, -0.0], [inf, 0.0, 1.0, 2.0]], torch.mul)
tx = [1.0, 2.0, 3.0, -0.0, nan, 5.0]
ty = [1.0, 3.0, 2.0, 0.0, 1.0, nan]
case("maximum/ties", "maximum", [tx, ty], torch.maximum)
case("minimum/ties", "minimum", [tx, ty], torch.minimum)
rows = [[1.0, 2.0, 3.0], [-inf, 0.0, 1.0], [-inf, -inf, -inf], [inf, 0.0, 1.0], [2.0, 2.0, 2.0]]
flat = [v for r in rows for v in r]
w = [0.3, -1.2, 0.7, 1.1, 0.4, -0.5, 0.9, 1.3, -0.2, 0.6, -0.8, 1.5, 0.25, -0.75, 0.5]
case("softmax/rows", "softmax", [flat], lambda x: torch.softmax(x, -1), shape=[5, 3], weights=w)
case("log_softmax/rows", "log_softmax", [flat], lambda x: torch.log_softmax(x, -1), shape=[5, 3], weights=w)
case("logsumexp/rows", "logsumexp", [flat], lambda x: torch.logsumexp(x, -1), shape=[5, 3], weights=[0.3, -1.2, 0.7, 1.1, 0.4])
case("max_axis/ties", "amax", [[1.0, 3.0, 3.0, 2.0, -inf, -inf, 0.0, 0.0, 0.0]], lambda x: torch.amax(x, -1), shape=[3, 3], weights=[0.5, 2.0, -1.0])
case("min_axis/ties", "amin", [[1.0, 1.0, 3.0, 2.0, inf, inf, 0.0, 0.0, 0.0]], lambda x: torch.amin(x, -1), shape=[3, 3], weights=[0.5, 2.0, -1.0])
case("max/ties", "max", [[1.0, 3.0, 3.0, 2.0]], torch.amax)
case("std/constant", "std", [[2.0, 2.0, 2.0, 2.0]], torch.std)
case("var/constant", "var", [[2.0, 2.0, 2.0, 2.0]], torch.var)
case("mean/inf", "mean", [[1.0, inf, 2.0]], torch.mean)
case("prod/zeros", "prod", [[2.0, 0.0, 3.0, 4.0]], torch.prod)
case("prod/two_zeros", "prod", [[2.0, 0.0, 3.0, 0.0]], torch.prod)
lg = [[1.0, 2.0, 3.0], [-inf, 0.0, 1.0], [5.0, -inf, -inf], [1.0, 1.0, 1.0]]
tg = [2, 1, 0, 1]
case("cross_entropy/inf_logits", "cross_entropy", [[v for r in lg for v in r]],
     lambda x: F.cross_entropy(x, torch.tensor(tg)), shape=[4, 3], attrs={"targets": tg})
mp = [1.0, 3.0, 3.0, 2.0,
      0.0, 3.0, 1.0, 1.0,
      5.0, 5.0, 1.0, 2.0,
      5.0, 5.0, 2.0, 2.0]
case("max_pool2d/ties", "max_pool2d", [mp], lambda x: F.max_pool2d(x, 2, 2), shape=[1, 1, 4, 4], attrs={"kernel": 2, "stride": 2},
     weights=[0.5, -1.0, 2.0, 0.25])
case("prod/nan_inf", "prod", [[2.0, nan, 3.0]], torch.prod)
case("prod/inf_zero", "prod", [[inf, 0.0, 3.0]], torch.prod)
case("cumsum/inf", "cumsum", [[1.0, inf, -inf, 2.0]], lambda x: torch.cumsum(x, 0), weights=[0.5, -1.0, 2.0, 0.25])
case("atan2/zeros", "atan2", [[0.0, -0.0, 0.0, 1.0, inf], [0.0, 0.0, -0.0, 0.0, inf]], torch.atan2)
cond = [True, False, True, False]
case("where/nan_branch", "where", [[1.0, nan, 2.0, inf], [nan, 3.0, inf, 4.0]],
     lambda a, b: torch.where(torch.tensor(cond), a, b), attrs={"cond": cond})
case("where/log_of_negative", "where_log", [[-1.0, 2.0, 0.0, 4.0]],
     lambda x: torch.where(x > 0, torch.log(torch.clamp(x, min=1e-300)), torch.zeros_like(x)))
idx = [2, 0, 2, 2]
case("index_select/duplicates", "index_select", [[1.0, 2.0, 3.0]], lambda x: torch.index_select(x, 0, torch.tensor(idx)),
     attrs={"index": idx}, weights=[0.5, -1.0, 2.0, 0.25])
case("matmul/inf", "matmul", [[1.0, inf, 0.0, 2.0], [3.0, 0.0, 1.0, nan]], torch.matmul, shape=[2, 2])
case("var/single", "var", [[3.0]], torch.var)
case("log_softmax/inf_entry", "log_softmax", [[inf, 1.0, 2.0, 0.0, 1.0, 2.0]], lambda x: torch.log_softmax(x, -1), shape=[2, 3],
     weights=[0.5, -1.0, 2.0, 0.25, 1.0, -0.5])
print(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1))
