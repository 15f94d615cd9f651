#!/usr/bin/env python3
"""Peer measurement for the CPU convolution kernels (backend/cpu conv*.go):
PyTorch CPU's conv2d forward, input gradient and weight gradient of the two
convolutions of the MNIST CNN (train/models.go, batch 64, float32):

  conv1: x [64, 1, 28, 28],  w [32, 1, 5, 5]  -> y [64, 32, 24, 24]
  conv2: x [64, 32, 12, 12], w [64, 32, 5, 5] -> y [64, 64, 8, 8]

The gradients are aten.convolution_backward with one output mask bit set,
the kernels PyTorch's autograd runs for conv2d (oneDNN where PyTorch picks
it). Op names: conv1_fwd, conv1_dgrad, conv1_wgrad, conv2_fwd, conv2_dgrad,
conv2_wgrad; the cases are internal/torchpeer/torch_peer.py's conv_fwd,
conv_dgrad and conv_wgrad, which `ember bench kernels` and backend/cpu's
BenchmarkConvVersusTorch run through the Go package internal/torchpeer.
Thread settings 1, 2 and PyTorch's default are interleaved round by round;
each figure is the median over rounds of a per-round median of --iters
calls after 100 ms of warm-up calls.

Usage: python3 bench/torch_conv_bench.py [--rounds R] [--iters I] [--json]
Prints one line per op and thread setting (milliseconds), and with --json
one JSON object per line instead.
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "torchpeer"))
import torch_peer  # noqa: E402

# name: (n, cin, h, w, cout, kh, kw, pad)
LAYERS = {
    "conv1": (64, 1, 28, 28, 32, 5, 5, 0),
    "conv2": (64, 32, 12, 12, 64, 5, 5, 0),
}

if __name__ == "__main__":
    torch_peer.main([(f"{layer}_{k}", f"conv_{k}", dims) for layer, dims in LAYERS.items()
                     for k in ("fwd", "dgrad", "wgrad")], 12)
