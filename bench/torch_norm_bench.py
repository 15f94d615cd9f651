#!/usr/bin/env python3
"""Peer measurement for the CPU normalization kernels (backend/cpu
softmax.go and norm.go): PyTorch CPU's softmax, log_softmax and layer_norm
(over the last axis, with weight and bias, eps 1e-5) of a [4096, 1024]
float32 tensor, and their backward kernels (aten._softmax_backward_data,
aten._log_softmax_backward_data, aten.native_layer_norm_backward for the
input gradient), at 1 and 2 threads and PyTorch's default thread count.
The cases are internal/torchpeer/torch_peer.py's, which `ember bench
kernels` and backend/cpu's BenchmarkNormVersusTorch run through the Go
package internal/torchpeer.

Thread settings are interleaved round by round; each figure is the median
over rounds of a per-round median of --iters calls after 100 ms of warm-up
calls.

Usage: python3 bench/torch_norm_bench.py [--rounds R] [--iters I] [--json]
Prints one line per op and thread setting (milliseconds), and with --json
one JSON object per line instead.
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
import torch_peer  # noqa: E402

NAMES = ["softmax", "log_softmax", "layer_norm", "softmax_grad", "log_softmax_grad", "layer_norm_grad"]

if __name__ == "__main__":
    torch_peer.main([(n, n, (4096, 1024)) for n in NAMES], 16)
