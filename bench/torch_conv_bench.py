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
of --iters calls after 100 ms of warm-up calls.

Usage: python3 bench/torch_conv_bench.py [--rounds R] [--iters I] [--json]
Prints one line per op and thread setting (milliseconds), and with --json
one JSON object per line instead.

       python3 bench/torch_conv_bench.py --serve
Reads requests "OP THREADS ITERS" (THREADS 0: PyTorch's default) from
stdin, one per line, and answers each on one line with the median seconds
of ITERS calls and the process CPU seconds per call (all threads, the
warm-up calls included), so that a peer process can interleave its own
timings with PyTorch's (backend/cpu's BenchmarkConvVersusTorch does).
"""
import torch

import torch_peer

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


if __name__ == "__main__":
    torch_peer.main(ops, 12, with_cpu=True)
