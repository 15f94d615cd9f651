"""Reference values of nn's losses from PyTorch, for losses_torch_test.go.

Run with any PyTorch: python3 losses.py > losses_torch.json
Every case stores its inputs, options and PyTorch's result (float64).
"""
import json
import torch
import torch.nn.functional as F

torch.manual_seed(0)
g = torch.Generator().manual_seed(1234)
cases = []


def t(*shape, scale=1.0):
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale)


def add(name, fn, out, **inputs):
    cases.append({"name": name, "fn": fn, "out": out.detach().flatten().tolist(),
                  "out_shape": list(out.shape),
                  "inputs": {k: (v.flatten().tolist(), list(v.shape), str(v.dtype)) if torch.is_tensor(v) else v
                             for k, v in inputs.items()}})


N, C = 6, 4
logits = t(N, C, scale=3)
targets = torch.tensor([0, 3, 1, 1, 2, 3])
weight = torch.tensor([0.5, 2.0, 1.5, 1.0], dtype=torch.float64)
for red in ["mean", "sum", "none"]:
    for w in [None, weight]:
        for ign in [-100, 1]:
            for eps in [0.0, 0.15]:
                out = F.cross_entropy(logits, targets, weight=w, ignore_index=ign, label_smoothing=eps, reduction=red)
                add(f"ce {red} w={w is not None} ign={ign} eps={eps}", "cross_entropy", out,
                    logits=logits, targets=targets, weight=w if w is not None else "", ignore=ign, eps=eps, reduction=red)
probs = torch.softmax(t(N, C), 1)
for eps in [0.0, 0.2]:
    out = F.cross_entropy(logits, probs, weight=weight, label_smoothing=eps)
    add(f"ce probs eps={eps}", "cross_entropy", out, logits=logits, targets=probs, weight=weight, ignore=-100, eps=eps, reduction="mean")
img = t(2, C, 2, 3)
it = torch.randint(0, C, (2, 2, 3), generator=g)
out = F.cross_entropy(img, it, weight=weight, label_smoothing=0.05)
add("ce spatial", "cross_entropy", out, logits=img, targets=it, weight=weight, ignore=-100, eps=0.05, reduction="mean")

lp = torch.log_softmax(logits, 1)
for red in ["mean", "sum", "none"]:
    out = F.nll_loss(lp, targets, weight=weight, ignore_index=2, reduction=red)
    add(f"nll {red}", "nll", out, logp=lp, targets=targets, weight=weight, ignore=2, reduction=red)

pred, tgt = t(3, 4, scale=2), t(4)
for red in ["mean", "sum", "none"]:
    add(f"mse {red}", "mse", F.mse_loss(pred, tgt.expand(3, 4), reduction=red), pred=pred, target=tgt, reduction=red)
    add(f"l1 {red}", "l1", F.l1_loss(pred, tgt.expand(3, 4), reduction=red), pred=pred, target=tgt, reduction=red)
    add(f"smooth_l1 {red}", "smooth_l1", F.smooth_l1_loss(pred, tgt.expand(3, 4), beta=0.7, reduction=red), pred=pred, target=tgt, beta=0.7, reduction=red)
    add(f"huber {red}", "huber", F.huber_loss(pred, tgt.expand(3, 4), delta=1.3, reduction=red), pred=pred, target=tgt, delta=1.3, reduction=red)

x = t(4, 3, scale=3)
y = torch.rand(4, 3, generator=g, dtype=torch.float64)
bw = torch.rand(4, 3, generator=g, dtype=torch.float64)
pw = torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64)
for red in ["mean", "sum", "none"]:
    add(f"bce {red}", "bce", F.binary_cross_entropy(torch.sigmoid(x), y, weight=bw, reduction=red), probs=torch.sigmoid(x), target=y, weight=bw, reduction=red)
    add(f"bce logits {red}", "bce_logits", F.binary_cross_entropy_with_logits(x, y, weight=bw, pos_weight=pw, reduction=red),
        logits=x, target=y, weight=bw, pos_weight=pw, reduction=red)
edge_p = torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=torch.float64)
edge_y = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64)
add("bce edges", "bce", F.binary_cross_entropy(edge_p, edge_y, reduction="none"), probs=edge_p, target=edge_y, weight="", reduction="none")

kin = torch.log_softmax(t(3, 4), 1)
ktg = torch.rand(3, 4, generator=g, dtype=torch.float64)
ktg[1, 1] = 0.0
for red in ["mean", "sum", "batchmean", "none"]:
    add(f"kl_div {red}", "kl_div", F.kl_div(kin, ktg, reduction=red), input=kin, target=ktg, log_target=False, reduction=red)
add("kl_div log_target", "kl_div", F.kl_div(kin, torch.log(ktg + 0.1), reduction="sum", log_target=True),
    input=kin, target=torch.log(ktg + 0.1), log_target=True, reduction="sum")

a, b = t(3, 5), t(3, 5)
lab = torch.tensor([1, -1, -1])
for red in ["mean", "sum", "none"]:
    add(f"cosine_embedding {red}", "cosine_embedding", F.cosine_embedding_loss(a, b, lab, margin=0.1, reduction=red),
        x1=a, x2=b, y=lab, margin=0.1, reduction=red)

print(json.dumps({"torch": torch.__version__, "cases": cases}))
