// Package libtorch is Ember's backend over LibTorch (PyTorch's C++
// library): every op runs as ATen calls through a thin C shim (shim.h,
// shim.cpp) compiled by cgo. It is the only backend that needs cgo, and it
// is built only with the build tag libtorch (go build -tags libtorch),
// against libtorch's headers and libraries (Debian's libtorch-dev: headers
// in /usr/include and /usr/include/torch/csrc/api/include, -ltorch
// -ltorch_cpu -lc10). Without the tag the package is empty, and the root
// package's "libtorch" device reports that the build lacks it.
//
// The package registers the driver "libtorch" (priority 5, below flex, so
// it is never the default device): its CPU device is named "libtorch";
// "libtorch:cuda:N", "libtorch:mps:0" and "libtorch:vulkan:0" open where
// the libtorch build has them (Debian's is CPU-only: their Init reports
// ErrBackendUnavailable saying so).
//
// Tensors stay in libtorch's memory: a Tensor holds an opaque handle to
// an at::Tensor (views share storage), released when the Tensor becomes
// unreachable (runtime.AddCleanup); the package starts a garbage
// collection when the storage held by live handles has grown by 32 MiB
// (or a quarter of what was live at the last one), since Go's collector
// does not see that memory. ATen's CPU allocations go through the shim's
// caching allocator, which keeps freed blocks of 64 KiB and more (up to
// 1 GiB) for reuse, so that new tensors do not pay page faults over fresh
// memory; the backend's memory contract (backend.MemoryManager) reports
// it, frees its cache (MemoryCleanup) and turns it off (the Direct
// layout). FromData and ToData copy. Every C++ exception is caught in the
// shim and comes back as an *Error (wrapping backend.ErrOutOfMemory or
// backend.ErrExecution), never a crash.
//
// The backend executes every base kind of package ir and the fast paths
// MaxPool2d (ATen's max_pool2d), Conv2dWeightGrad (ATen's
// convolution_backward), SliceScatter, CumSum and AdamStep (one pass in
// the shim, bit-identical to the decomposition, for F32, Flex32 and F64);
// other kinds are lowered by the caller. Semantics are Ember's, not ATen's where
// they differ: F16 and BF16 arithmetic (which ATen 1.13 lacks on the CPU
// for many ops) runs in float32 and rounds once; float32 sums and
// products accumulate in float64; float-to-integer casts truncate and
// saturate, NaN giving 0; F64 to F16/BF16 rounds once; integer Div, Rem,
// FloorDiv and Mod are Go's and Python's (INT_MIN / -1 wraps instead of
// trapping); shifts by amounts outside [0, bits) give 0 or the sign fill;
// Max and Min propagate NaN and order -0 below +0 as Go does. Float32
// matrix products run on oneDNN's sgemm, which libtorch loads, rather than
// on whatever BLAS libtorch was linked with. ATen has no U16, U32 or U64:
// SupportsDType reports false for them. Random ops draw from a per-backend
// ATen generator (Seed).
package libtorch
