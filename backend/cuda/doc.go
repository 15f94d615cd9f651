// Package cuda is Ember's NVIDIA GPU backend. It loads the CUDA driver
// (libcuda.so.1), NVRTC (libnvrtc) and cuBLAS (libcublas) at run time with
// purego, so it builds with CGO_ENABLED=0 and the binary runs on machines
// without CUDA (the backend then reports no devices). It registers itself
// as "cuda" with priority 50, above every other local backend.
//
// Ops arrive as values (ir.Op) through Exec, which dispatches on the op's
// kind through a kernel table (backend.Kernels) that each ops_*.go file
// fills from its init function; kernels take the output shape and dtype
// from the op (ir inferred them) and never recompute them. Every base kind
// runs on every dtype, and fast-path kinds have kernels of their own:
// AdamStep (the fused Adam/AdamW update, bit for bit ir's decomposition,
// for F32, Flex32 and F64), CumSum (every dtype but Bool), MaxPool2d and
// its gradient, Softmax and LogSoftmax along the last axis (floats; one
// launch a row, the decomposition's rounding steps) and Conv2dWeightGrad
// (floats). Supports reports false for any other kind and dtype, and the
// caller lowers the op with its ir.Spec.Decompose (ir.Run).
//
// Convolutions run on cuDNN when libcudnn 9 loads (libcudnn.so.9, or the
// file or directory EMBER_CUDNN_PATH names; EMBER_CUDNN=0 turns it off):
// Conv2d as cudnnConvolutionForward, ConvTranspose2d as its backward-data
// and Conv2dWeightGrad as its backward-filter, deterministic algorithms
// only, F32 without TF32 unless SetTF32 (see conv_cudnn.go and
// CuDNNVersion); without it, and for what cuDNN declines, on the backend's
// own im2col/col2im kernels and cuBLAS.
//
// One Backend drives one GPU through its primary context and one
// non-blocking stream: every kernel, copy and cuBLAS call is queued on that
// stream in program order, so operations return before the GPU ran them
// and Sync (or ToData) waits. Contexts are per OS thread and goroutines
// migrate, so each entry point locks its goroutine to the thread and makes
// the context current (cuCtxSetCurrent) for the duration of its driver
// calls. A kernel fault (an illegal address, ...) is sticky: Sync returns
// it wrapped in backend.ErrExecution and every later operation fails with
// the same error; ToData returns it instead of panicking.
//
// Tensors (*Tensor) are views (shape, strides and offset in elements) of a
// Buffer; Reshape (when the strides allow, as PyTorch's view), Permute,
// Expand (stride 0), Slice and Flip (negative strides) return views that
// share it. Kernels are CUDA C compiled by NVRTC for the device's
// architecture (sm_XY, no fast math), cached per process and on disk under
// os.UserCacheDir()/ember/cuda.
//
// Memory comes from a caching allocator (backend.MemoryManager, after
// Burn's cubecl pools): sliced pools of pages carved into 256-byte-aligned
// slices, an exclusive-page pool for requests above every pool's MaxSlice,
// and a persistent pool for MemoryPersistentAllocations. Device memory is
// allocated per page, never per op. A buffer returns to its pool when the
// Go garbage collector finds it unreachable (runtime.AddCleanup), or at
// once through Release; since GPU memory is invisible to the Go heap, the
// allocator forces a collection before growing a pool once a quarter of
// its reserved bytes (at least 64 MiB) was allocated since the last one, so
// the reserved bytes of a steady training loop stay flat. Out of memory, it
// releases unused pages, collects and retries before failing with an error
// wrapping backend.ErrOutOfMemory.
//
// Matmul runs cublasGemmStridedBatchedEx (F32 in float32 unless SetTF32,
// F64, F16 and BF16 with float32 accumulation); the elementwise, reduce,
// cast, random, movement, indexing, scan and optimizer primitives are
// NVRTC kernels. F16 and BF16 need compute capability 8.0. Semantics are
// those documented at the kinds in package ir (PyTorch's), with
// backend/flex as the reference. Gather, ScatterAdd and IndexSelect check
// their indices on the device (backend.IndexChecker), and the integer
// divisions (Div, FloorDiv, Rem, Mod) their divisors
// (backend.DivisorChecker): a failure is reported by the next Sync or read
// as an error wrapping backend.ErrExecution that names the op. DeviceInfo
// names the GPU (backend.DeviceDescriber).
//
// Fused elementwise programs (backend.Fuser, for backend/fusion) become one
// generated kernel per program signature (constants' values excluded: they
// are kernel parameters) and input layout, each node computed by the same
// device code as its unfused kernel and rounded as it would be, so results
// are bit-identical. Those kernels are compiled by tiers (FusedTiering):
// a program whose kernel is not built runs op by op while NVRTC compiles
// it on a background worker, once the program has been seen twice; a
// kernel in the disk cache is loaded at once; EMBER_CUDA_SYNC_COMPILE=1,
// and the recording of a CUDA graph, compile on the calling goroutine at
// the first call instead. Kernels of different names
// compile concurrently, and Open starts compiling, in the background on
// GOMAXPROCS workers, the F32 kernels a training step of the MNIST models
// uses (EMBER_CUDA_WARMUP=0 turns that off); CompileStats and CompileWait
// report the compile work and the time ops spent waiting for it.
//
// CUDA graphs (backend.GraphRecorder): BeginGraph puts the stream into
// relaxed stream capture, so that every kernel, copy and cuBLAS call is
// recorded instead of run, and EndGraph instantiates the graph, which
// DeviceGraph.Launch replays with one cuGraphLaunch. Memory allocated while
// recording comes from an allocator owned by the graph, never handed to
// work outside it, so the addresses the graph uses stay valid until Close;
// waits and frees that a capture forbids are held back until it ends,
// Sync and ToData return ErrRecording meanwhile, and data uploaded while
// recording is staged in pinned memory the graph owns. Random ops draw
// the same numbers at every launch (their Philox offsets are recorded).
package cuda
