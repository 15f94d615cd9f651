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
// # Devices
//
// A Device names one device of one backend: CPU(), Flex(), CUDA(i), ...
// Constructors never fail; Device.Init says whether the device can run.
// DefaultDevice honours EMBER_DEVICE and never returns an autodiff device,
// so DefaultDevice().Autodiff() always works. Autodiff is a property of the
// device (Device.Autodiff). ParseDevice accepts exactly the names
// Device.String prints. Backends register through package backend like
// database/sql drivers.
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
// graph launch per run (see backend.GraphRecorder). RemoteWebSocket and
// RemoteQUIC run them on an Ember server (ember serve).
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
// divisor's (Python's %); integer division by zero panics with an *Error.
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
// naming the op and its operands; Try converts such panics to errors.
// Failures outside the program's control return errors wrapping sentinels
// such as ErrOutOfMemory and ErrBackendUnavailable.
package ember
