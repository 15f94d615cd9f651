// Package ember is a tensor library with automatic differentiation and many
// compute backends behind one Device handle, the Go counterpart of Burn's
// device model.
//
//	dev := ember.DefaultDevice().Autodiff()
//	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev)
//	w := ember.Randn([]int{2, 2}, dev).RequireGrad()
//	loss := x.Matmul(w).Relu().Sum()
//	grads := loss.Backward()
//	fmt.Println(grads.Of(w))
//
// Layers, losses and checkpoints are in package nn, optimizers and
// learning-rate schedules in package optim; the examples of the three
// packages are complete programs.
//
// # Coming from PyTorch
//
// A tensor is a *Tensor on a Device, and operations are methods. The
// differences that matter: a tensor's device is given when it is made
// (there is no implicit default device in the calls), gradient tracking is
// a property of the device rather than of each tensor, Backward returns
// the gradients instead of storing them in .grad (so there is no
// zero_grad), and misuse panics with an *Error instead of raising (Try
// catches it). The usual calls map like this:
//
//	PyTorch                                 Ember
//	torch.tensor([[1., 2.], [3., 4.]])      FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev)
//	torch.tensor([1, 2]) (int64)            FromInts([]int{1, 2}, []int{2}, dev)
//	torch.zeros/ones/full(shape)            Zeros(shape, dev), Ones(shape, dev), Full(shape, v, dev)
//	torch.arange(5), torch.linspace(0,1,5)  Arange(0, 5, dev), Linspace(0, 1, 5, dev)
//	torch.rand/randn(shape)                 Rand(shape, dev), Randn(shape, dev), Random(shape, dist, dev)
//	torch.manual_seed(s)                    dev.Seed(s)
//	torch.device("cuda:1")                  CUDA(1), or ParseDevice("cuda:1")
//	x.to(device)                            x.ToDevice(dev)
//	x.shape, x.dtype, x.device              x.Shape(), x.DType(), x.Device()
//	x.item(), x.tolist()                    x.Item(), x.Float32s() / Float64s() / Int64s()
//	x.numpy() (raw buffer)                  x.ToData() (*TensorData: shape, dtype, bytes)
//	x.to(torch.float64)                     x.Cast(F64)
//	x + y, x * y, x @ y                     x.Add(y), x.Mul(y), x.Matmul(y)
//	x.sum(), x.sum(dim=1, keepdim=True)     x.Sum(), x.SumAxis(1, true)
//	x.view(2, -1), x.permute(1, 0)          x.Reshape(2, -1), x.Permute(1, 0)
//	x[:, 1:3], x[::-1]                      x.Slice(All(), R(1, 3)), x.Slice(Reverse())
//	torch.cat, torch.stack, torch.where     Cat, Stack, Where
//	torch.set_default_dtype(torch.float64)  dev.Configure(DeviceConfig{}.WithFloatDType(FloatF64))
//	torch.randn(2, requires_grad=True)      Randn([]int{2}, CPU().Autodiff()).RequireGrad()
//	loss.backward(); w.grad                 grads := loss.Backward(); grads.Of(w)
//	y.backward(g)                           y.BackwardWith(g)
//	with torch.no_grad(): ...               NoGrad(func() { ... })
//	x.detach()                              x.Detach()
//	torch.utils.checkpoint                  dev.Autodiff().GradientCheckpointing()
//	with torch.autocast(dtype=bfloat16):    model.Forward(x.ToDevice(dev.Autocast(BF16)))
//	torch.amp.GradScaler()                  optim.NewGradScaler(params, optim.GradScalerConfig{})
//	model.double()                          nn.ToDType(model, F64)
//	torch.cuda.synchronize()                dev.Sync()
//	torch.cuda.empty_cache()                dev.MemoryCleanup()
//	print(x)                                fmt.Println(x) (PyTorch's format; %.2f, %e apply)
//
// # Devices
//
// A Device is a small comparable value naming one device of one backend,
// with autodiff (and gradient checkpointing) on or off. Copy it freely and
// use it from many goroutines; it is opaque to users, and backend authors
// reach the backend it runs on through Device.Backend.
//
// Every backend has a constructor: CPU (the optimized CPU backend: fusion,
// SIMD kernels, all cores), Flex (portable pure Go, every GOARCH and
// wasm), CUDA(i), ROCm(i), WGPU, Vulkan, Metal and WebGPU of a DeviceKind,
// LibTorch and its variants (behind the libtorch build tag), NdArray
// (deprecated), RemoteWebSocket, RemoteQUIC and RemoteQUICAuthorized
// (devices of an ember serve host), and Capture (records instead of
// running). Constructors are lazy and never fail: Device.Init initializes
// the backend now (loads its library, creates its context, connects) and
// returns why the device cannot run, a *DeviceError wrapping
// ErrBackendUnavailable for a backend this build or this machine lacks;
// any operation on such a device panics with an *Error wrapping that same
// error. An index is a DeviceIndex: DefaultIndex lets the backend pick
// (index 0), and any other negative index panics ("device index must be
// non-negative"). A DeviceKind selects the adapter of a graphics-API
// backend: DiscreteGPU(i), IntegratedGPU(i), VirtualGPU(i), KindCPU,
// Existing(id), or DefaultKind, which honours EMBER_WGPU_DEFAULT_DEVICE
// (spelled as the kinds print, "discrete:0").
//
// Device.String prints a name that ParseDevice parses back to the same
// device: "cpu", "flex", "cuda:1", "vulkan:discrete:0",
// "remote+ws://host:3000/0", "capture:3", followed by "+autodiff" or
// "+autodiff+checkpointing", then "+autocast:bf16" or "+autocast:f16" on
// an autocast device. Device.Equal compares the hardware and ignores
// autodiff, checkpointing and autocast (CPU().Autodiff().Equal(CPU()) is
// true).
//
// DefaultDevice takes the device EMBER_DEVICE names, then the best local
// backend that runs (cuda, rocm, vulkan/wgpu, cpu, flex, in that order;
// a software Vulkan adapter such as lavapipe ranks below cpu, so it is
// never the automatic default); it never returns a device that cannot
// run, nor an autodiff device, so
// DefaultDevice().Autodiff() always works. Enumerate lists the devices
// present of the given DeviceTypes (all local types when none is given),
// best backend first; RemoteWebSocketType(addr) connects and lists every
// device the server hosts. The Devices it returns have Autodiff and
// Configure for the whole list.
//
// Autodiff: Device.Autodiff returns the device with gradient tracking for
// the tensors made on it; calling it on an autodiff device panics ("only
// first-order autodiff is supported"). IsAutodiff reports it and Inner
// strips it. GradientCheckpointing switches an autodiff device to the
// Balanced strategy: backward recomputes the memory-bound ops
// (elementwise, activations included, and movement) instead of keeping
// their outputs, and keeps those of the compute-bound ones (matmul,
// convolution, reductions, gather and scatter, casts; package
// backend/autodiff has the table per op); gradients are identical and peak
// memory lower. GradientCheckpointingStrategy says Balanced or Disabled;
// both panic on a device without autodiff. An untracked tensor (a
// gradient, say) moved to an autodiff device stays untracked.
//
// Mixed precision: Device.Autocast(BF16) (or F16) returns the device with
// automatic mixed precision, PyTorch's torch.autocast as a device
// property: ops on it run matrix products and convolutions in the 16-bit
// dtype and sums, cumulative sums, softmax, log-softmax, logsumexp and
// norms in F32, whatever their operands' dtypes (other ops follow their
// operands; F64 and integers are never cast). An op's device is the one
// its operands share, autocast when any operand is, so keeping a model's
// parameters in F32 on dev.Autodiff() and making its input on
// dev.Autodiff().Autocast(BF16) runs the forward and backward passes in
// mixed precision, with the gradients reaching the F32 parameters (master
// weights) through the recorded casts. Gradients.Of returns gradients on
// the Inner device, without autocast, so an optimizer updates the masters
// in F32. F16 training needs loss scaling (optim.GradScaler); BF16 does
// not. Autocast devices are immutable values like every Device: there is
// no per-goroutine state. See ExampleDevice_Autocast.
//
// Execution: Sync waits for the device's pending work and returns an
// *ExecutionError if any of it failed; Flush starts buffered work (the
// fusion queue, a remote batch) without waiting, and does nothing on eager
// backends. Seed makes random ops reproducible: the same seed and the same
// sequence of random ops give the same values on the same backend.
// SupportsDType says whether the device stores, converts and computes in a
// dtype.
//
// Settings: every device has default float, int and bool dtypes (F32, I64
// and Bool stored Native, unless the backend reports its own), read with
// Settings. Configure changes them (and fusion, DeviceConfig.WithFusion)
// once, before the device's first tensor operation; later, or a second
// time, it returns a *DeviceError wrapping ErrAlreadyInitialized, and a
// dtype the device cannot compute in gives ErrUnsupportedDType. The dtypes
// are F64, F32, Flex32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8
// and Bool (stored Native, as U8 or as U32); FloatDType, IntDType and
// BoolDType are distinct types, so a setting cannot take the wrong kind.
//
// Memory: backends with a managed allocator (cpu and cuda) pool device
// memory, and the Memory methods steer the pools; elsewhere they do
// nothing, report false or return an *UnsupportedError.
// MemoryPersistentAllocations (or MemoryPersistent, returning a value)
// puts the allocations of a function in the persistent pool, outside every
// dynamic pool: the place for model parameters. MemoryCleanup releases
// cached, unused memory, with no amount guaranteed. MemoryInstallPools
// replaces the dynamic pools with a layout: Sliced(pools), Direct() (no
// pooling) or Preset() (the backend's default). A SlicedPool has pages of
// PageSize bytes, at most Pages of them (nil: grow as needed), each carved
// into slices of at most MaxSlice bytes (nil: the page size); an
// allocation goes to the first pool, in install order, that accepts its
// size. It fails with a *PoolsInUseError while allocations are live (retry
// at a quiescent point), a *StreamUnavailableError, an *UnsupportedError
// or an *InvalidLayoutError, and on any error the layout in force stays.
// MemoryPoolReport gives, per dynamic pool in install order, PageSize,
// Pages, PagesPeak and LargestAlloc; MemoryPoolUsage the allocator's
// NumberAllocs, BytesInUse, BytesPadding and BytesReserved; both report
// false where the backend keeps no such numbers. The sizing cycle works
// end to end: install a growable layout, run the workload, read PagesPeak,
// install the same layout with Pages capped at the peak, and the workload
// runs again without growing. Staging prepares host data for fast
// transfer (pinned memory on CUDA).
//
// Performance statistics: PerformanceStats runs one micro-benchmark per
// ThroughputKey, in order: ComputeDirect(dt), FLOP/s of the
// general-purpose units (an FMA counts two); ComputeCMMA(dt, m, n, k), the
// peak FLOP/s of the whole device's matrix units on an m×n×k instruction
// tile; Memory, a copy, counting bytes read plus written per second;
// MemoryRead and MemoryWrite; MemoryWorkingSet(access, bytes), the rate
// over a working set of that size accessed in that order; and Launch, the time
// per kernel launch or op dispatch. ThroughputStat.String prints an
// aligned row: mode, parameters (blank where the mode has none), value
// with its unit. A key the device cannot measure comes back with Err set.
//
// Every backend is a registered driver (package backend), as database/sql
// drivers are, so a third party can add one without forking.
//
// # Operations
//
// Every tensor method builds one operation value (an ir.Op), validates it
// and computes its output shape with its kind's ir.Spec, and runs it on the
// device's stack of backends: the device's backend, then the decorators
// that apply to the device (autodiff on an autodiff device). A kind the
// stack has no kernel for runs as its decomposition into other kinds
// (ir.Run), so every method works on every backend; CumSum, MaxPool2d,
// AdamStep and SGDStep are examples of kinds that some backends run as one
// kernel and others decompose.
//
// On cpu and cuda devices the stack also fuses: elementwise operations are
// queued per goroutine and run, when something reads them, as one kernel
// per chain (one pass over memory), with the same bits as one kernel per
// operation. EMBER_FUSION=0 or DeviceConfig.WithFusion(false) turns it off.
//
// Beyond the primitive kinds, the API PyTorch and Burn users reach for is
// composed from them, so it runs (and differentiates) on every backend:
// sorting and selection (Sort, TopK, Median, MaxWithIndices), scans
// (CumSum, CumProd, CumMax), boolean tests and reductions (IsNaN, Any,
// AllAxis), tiling and splitting (Repeat, Chunk, Split, Unbind),
// assignment (SliceAssign, IndexAdd, MaskedScatter), triangles and masks
// (Tril, TriuMask, Eye), resampling and pooling (Interpolate, GridSample,
// AdaptiveAvgPool2d, MaxPool2dWith, MaxPool3d), convolution variants
// (Conv1d, Conv3d, ConvTranspose3d, Conv2dPadded) and Einsum; each
// method's documentation names the PyTorch function it matches and its
// behaviour at ties, NaN and infinities.
//
// # Capture and remote devices
//
// Capture() records operations instead of running them
// (Device.CaptureScope returns a CapturedGraph that replays on any device
// and round-trips through a file); CapturedGraph.Compile prepares a graph
// for many runs on one device with some outputs carried into the next
// run's inputs — a compiled training step, replayed on CUDA as one CUDA
// graph launch per run (see backend.GraphRecorder). Data goes onto a
// capture device (becoming the graph's values) and never comes back.
// RemoteWebSocket and RemoteQUIC run them on an Ember server (ember
// serve), which gives each connection its own session and frees its
// tensors when the connection ends; a server's PeerAuthorizer refusing a
// client makes Init fail with an error matching remote.ErrUnauthorized.
//
// # Semantics
//
// Shapes are row-major []int; axes may be negative. Broadcasting follows
// NumPy. Binary ops promote dtypes with PromoteTypes (PyTorch's rules).
// Reductions take a keepDim flag; full reductions return rank-0 tensors.
// Max/min/argmax/argmin propagate NaN (the first NaN's index wins) and pick
// the lowest index on ties; their gradient is split evenly among ties.
// Rounding is half to even; float→int casts truncate toward zero; F16 and
// BF16 round to nearest even. Integer Div truncates (Go's /), FloorDiv
// floors (Python's //), Rem takes the dividend's sign (Go's %), Mod the
// divisor's (Python's %).
//
// Data-dependent errors — an integer division by zero, an index out of
// range in Gather, ScatterAdd, IndexSelect and their compositions, a
// OneHot label outside its classes — are found where finding them is
// free. On devices that check on the host (flex, cpu) the operands are
// read back first and the op panics with an *Error naming the op and the
// bad value. Devices that check on the device (cuda, remote, capture:
// backend.DivisorChecker and backend.IndexChecker) read nothing back, so
// these ops queue without waiting for the device, and the next
// Device.Sync or read of a tensor of that device returns an error wrapping
// ErrExecution that names the device and the op ("cuda:0: execution
// failed: div: integer division by zero (i32 operands)"); the device
// keeps working after reporting it. The failing op's result is not to be
// used (on cuda a failing element holds 0 and a bad scatter is skipped; a
// remote device fails every read of it). A capture device checks nothing:
// the device a graph replays on does.
//
// Integer Arange is computed exactly in integers; F64 sums and means add
// pairwise. Tensor.String summarizes large tensors as PyTorch does and
// reads only the elements it shows.
//
// # Concurrency
//
// A Device and its tensors are safe to use from many goroutines; backends
// guard their own state. NoGrad switches gradient recording off for the
// calling goroutine only, so one goroutine may evaluate under NoGrad while
// another trains.
//
// # Errors
//
// Misuse in tensor math (shape, dtype, device, axis) panics with an *Error
// naming the op and its operands' shapes, dtypes and devices; Try converts
// such panics to errors (see ExampleTry). Failures outside the program's
// control return errors wrapping sentinels such as ErrOutOfMemory and
// ErrBackendUnavailable, for errors.Is.
package ember
