#!/usr/bin/env python3
"""Peer measurement for the CPU normalization kernels (backend/cpu
softmax.go and norm.go): PyTorch CPU's softmax, log_softmax and layer_norm
(over the last axis, with weight and bias, eps 1e-5) of a [4096, 1024]
float32 tensor, and their backward kernels (aten._softmax_backward_data,
aten._log_softmax_backward_data, aten.native_layer_norm_backward for the
input gradient), at 1 and 2 threads and PyTorch's default thread count.

Thread settings are interleaved round by round; each figure is the median
over rounds of a per-round median of --iters calls after 100 ms of warm-up calls.

Usage: python3 bench/torch_norm_bench.py [--rounds R] [--iters I] [--json]
Prints one line per op and thread setting (milliseconds), and with --json
one JSON object per line instead.

       python3 bench/torch_norm_bench.py --serve
Reads requests "OP THREADS ITERS" (THREADS 0: PyTorch's default) from
stdin, one per line, and answers each with the median seconds of ITERS
calls on one line, so that a peer process can interleave its own timings
with PyTorch's (backend/cpu's BenchmarkNormVersusTorch does).
"""
import torch
import torch.nn.functional as F

import torch_peer

ROWS, COLS = 4096, 1024


def ops():
    torch.manual_seed(1)
    x = torch.randn(ROWS, COLS)
    w, b = torch.randn(COLS), torch.randn(COLS)
    g = torch.randn(ROWS, COLS)
    y = torch.softmax(x, -1)
    ly = torch.log_softmax(x, -1)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [COLS], w, b, 1e-5)
    aten = torch.ops.aten
    return {
        "softmax": lambda: torch.softmax(x, -1),
        "log_softmax": lambda: torch.log_softmax(x, -1),
        "layer_norm": lambda: F.layer_norm(x, [COLS], w, b, 1e-5),
        "softmax_grad": lambda: aten._softmax_backward_data(g, y, -1, torch.float32),
        "log_softmax_grad": lambda: aten._log_softmax_backward_data(g, ly, -1, torch.float32),
        "layer_norm_grad": lambda: aten.native_layer_norm_backward(g, x, [COLS], mean, rstd, w, b, [True, False, False]),
    }


if __name__ == "__main__":
    torch_peer.main(ops, 16)
