"""Reference values of composed ops from PyTorch, for ops_torch_test.go.

Run with any PyTorch: python3 ops_torch.py > ops_torch.json
Each case stores its inputs (float64), its arguments and PyTorch's outputs.
"""
import json
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(99)
cases = []


def t(*shape, lo=-2.0, hi=2.0):
    return torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo


def enc(v):
    return {"v": v.flatten().tolist(), "shape": list(v.shape), "dtype": str(v.dtype)}


def add(op, args, inputs, outputs):
    cases.append({"op": op, "args": args, "inputs": [enc(i) for i in inputs], "outputs": [enc(o) for o in outputs]})


x = t(2, 3, 5, 6)
for mode in ["nearest", "bilinear", "bicubic"]:
    for align in ([None] if mode == "nearest" else [False, True]):
        for size in [(9, 4), (3, 11), (5, 6)]:
            y = F.interpolate(x, size=size, mode=mode, align_corners=align)
            add("interpolate", {"mode": mode, "align": bool(align), "size": list(size)}, [x], [y])
for out in [(2, 3), (4, 4), (7, 9), (1, 1)]:
    add("adaptive_avg_pool2d", {"size": list(out)}, [x], [F.adaptive_avg_pool2d(x, out)])
    add("adaptive_max_pool2d", {"size": list(out)}, [x], [F.adaptive_max_pool2d(x, out)])
grid = t(2, 4, 3, 2, lo=-1.3, hi=1.3)
for mode in ["bilinear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        for align in [False, True]:
            add("grid_sample", {"mode": mode, "padding": pad, "align": align}, [x, grid],
                [F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=align)])
for k, s, p, ceil in [((3, 2), (2, 2), (1, 1), True), ((2, 3), (3, 2), (0, 1), True), ((3, 3), (2, 2), (1, 0), False)]:
    add("max_pool2d", {"k": list(k), "s": list(s), "p": list(p), "ceil": ceil}, [x],
        list(F.max_pool2d(x, k, s, p, ceil_mode=ceil, return_indices=True)))
    for inc in [True, False]:
        add("avg_pool2d", {"k": list(k), "s": list(s), "p": list(p), "ceil": ceil, "include": inc}, [x],
            [F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=inc)])
v = t(2, 3, 4, 5, 4)
add("max_pool3d", {"k": [2, 3, 2], "s": [2, 2, 1], "p": [1, 1, 0]}, [v], [F.max_pool3d(v, (2, 3, 2), (2, 2, 1), (1, 1, 0))])
add("avg_pool3d", {"k": [2, 3, 2], "s": [2, 2, 1], "p": [1, 1, 0], "include": False}, [v],
    [F.avg_pool3d(v, (2, 3, 2), (2, 2, 1), (1, 1, 0), count_include_pad=False)])
s = torch.tensor([[3.0, float("nan"), 1.0, 3.0, -0.0, 0.0, 2.0], [1.0, 1.0, float("nan"), -5.0, float("nan"), 7.0, 1.0]], dtype=torch.float64)
for desc in [False, True]:
    add("sort", {"desc": desc}, [s], list(torch.sort(s, dim=1, descending=desc, stable=True)))
add("topk", {"k": 3, "largest": True}, [s], list(torch.topk(s, 3, dim=1, largest=True, sorted=True)))
add("median", {}, [s], list(torch.median(s, dim=1)))
add("median", {}, [s[:, [0, 2, 3, 4, 5, 6]]], list(torch.median(s[:, [0, 2, 3, 4, 5, 6]], dim=1)))
add("cummax", {}, [s], list(torch.cummax(s, dim=1)))
add("cummin", {}, [s], list(torch.cummin(s, dim=1)))
add("kthvalue", {"k": 2}, [s], list(torch.kthvalue(s, 2, dim=1)))
u = t(3, 7, lo=-3, hi=3)
e = t(50, lo=-0.999, hi=0.999)
add("erfinv", {}, [e], [torch.special.erfinv(e)])
add("softplus", {"beta": 2.0, "threshold": 3.0}, [u], [F.softplus(u, beta=2.0, threshold=3.0)])
add("mish", {}, [u], [F.mish(u)])
add("hardswish", {}, [u], [F.hardswish(u)])
add("gelu_tanh", {}, [u], [F.gelu(u, approximate="tanh")])
add("elu", {"alpha": 0.7}, [u], [F.elu(u, alpha=0.7)])
add("selu", {}, [u], [F.selu(u)])
h2 = t(3, 7)
add("hypot", {}, [u, h2], [torch.hypot(u, h2)])
add("linspace", {"start": -3.0, "end": 7.5, "steps": 11}, [], [torch.linspace(-3.0, 7.5, 11, dtype=torch.float64)])
add("logspace", {"start": -1.0, "end": 2.0, "steps": 7, "base": 2.0}, [], [torch.logspace(-1.0, 2.0, 7, base=2.0, dtype=torch.float64)])
ea, eb = t(2, 3, 4), t(2, 4, 5)
add("einsum", {"spec": "bij,bjk->bik"}, [ea, eb], [torch.einsum("bij,bjk->bik", ea, eb)])
for mode in ["reflect", "replicate", "circular"]:
    add("pad", {"mode": mode, "pads": [2, 1, 1, 3]}, [x], [F.pad(x, (2, 1, 1, 3), mode=mode)])
w3 = t(4, 3, 2, 3, 2)
add("conv3d", {"s": [2, 1, 2], "p": [1, 1, 0], "d": [2, 1, 1]}, [v[:, :3], w3], [F.conv3d(v[:, :3], w3, None, (2, 1, 2), (1, 1, 0), (2, 1, 1))])
print(json.dumps({"torch": torch.__version__, "cases": cases}))
