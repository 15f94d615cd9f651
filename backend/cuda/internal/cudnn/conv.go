package cudnn

import (
	"fmt"
	"math"
	"unsafe"
)

// DataType is a cudnnDataType_t.
type DataType int32

// The data types the backend uses.
const (
	Float    DataType = 0
	Double   DataType = 1
	Half     DataType = 2
	BFloat16 DataType = 9
)

// MathType is a cudnnMathType_t: whether an algorithm may use tensor cores.
type MathType int32

// The math types. FMAMath keeps float32 convolutions off TF32 tensor
// cores; DefaultMath lets cuDNN use them for float32 data.
const (
	DefaultMath                 MathType = 0
	TensorOpMath                MathType = 1
	TensorOpMathAllowConversion MathType = 2
	FMAMath                     MathType = 3
)

// Deterministic is the cudnnDeterminism_t value of an algorithm whose
// results do not depend on the order of its threads (no atomic sums).
const Deterministic int32 = 1

const (
	formatNCHW       = 0 // CUDNN_TENSOR_NCHW
	crossCorrelation = 1 // CUDNN_CROSS_CORRELATION: PyTorch's conv2d
)

// Direction is one of the three convolution computations.
type Direction int

// The directions: Forward computes y from x and w, BackwardData x from y
// and w (the transposed convolution), BackwardFilter w from x and y.
const (
	Forward Direction = iota
	BackwardData
	BackwardFilter
)

// String names the direction ("forward", "backward-data", "backward-filter").
func (d Direction) String() string {
	switch d {
	case Forward:
		return "forward"
	case BackwardData:
		return "backward-data"
	case BackwardFilter:
		return "backward-filter"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// AlgoPerf is cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t, which
// share one layout: an algorithm, its status, its time in milliseconds (a
// search's measurement; heuristics leave an estimate or -1), its
// workspace in bytes, its determinism and the math type it runs with.
type AlgoPerf struct {
	Algo        int32
	Status      int32
	Time        float32
	_           int32
	Memory      uint64
	Determinism int32
	MathType    MathType
	_           [3]int32
	_           int32
}

// TensorDesc, FilterDesc and ConvDesc are cuDNN descriptors.
type (
	TensorDesc uintptr
	FilterDesc uintptr
	ConvDesc   uintptr
)

// fits reports whether every value is a positive C int (strides may be 0
// for axes of size 1, which callers pass as 1).
func fits(vs ...int) bool {
	for _, v := range vs {
		if v < 0 || v > math.MaxInt32 {
			return false
		}
	}
	return true
}

// NewTensor makes a 4-d tensor descriptor of dims [N, C, H, W] with the
// given element strides (cudnnSetTensor4dDescriptorEx).
func NewTensor(dt DataType, dims, strides [4]int) (TensorDesc, error) {
	if !fits(dims[:]...) || !fits(strides[:]...) {
		return 0, fmt.Errorf("cudnnSetTensor4dDescriptorEx: dims %v or strides %v exceed the C int range", dims, strides)
	}
	var d TensorDesc
	if err := check("cudnnCreateTensorDescriptor", call(pCreateTensor, uintptr(unsafe.Pointer(&d)))); err != nil {
		return 0, err
	}
	err := check("cudnnSetTensor4dDescriptorEx", call(pSetTensor4dEx, uintptr(d), uintptr(dt),
		uintptr(dims[0]), uintptr(dims[1]), uintptr(dims[2]), uintptr(dims[3]),
		uintptr(strides[0]), uintptr(strides[1]), uintptr(strides[2]), uintptr(strides[3])))
	if err != nil {
		_ = d.Destroy()
		return 0, err
	}
	return d, nil
}

// Destroy frees the descriptor; the zero descriptor is ignored.
func (d TensorDesc) Destroy() error {
	if d == 0 {
		return nil
	}
	return check("cudnnDestroyTensorDescriptor", call(pDestroyTensor, uintptr(d)))
}

// NewFilter makes a filter descriptor of dims [K, C/groups, R, S] in
// NCHW (contiguous) layout (cudnnSetFilter4dDescriptor).
func NewFilter(dt DataType, dims [4]int) (FilterDesc, error) {
	if !fits(dims[:]...) {
		return 0, fmt.Errorf("cudnnSetFilter4dDescriptor: dims %v exceed the C int range", dims)
	}
	var d FilterDesc
	if err := check("cudnnCreateFilterDescriptor", call(pCreateFilter, uintptr(unsafe.Pointer(&d)))); err != nil {
		return 0, err
	}
	err := check("cudnnSetFilter4dDescriptor", call(pSetFilter4d, uintptr(d), uintptr(dt), formatNCHW,
		uintptr(dims[0]), uintptr(dims[1]), uintptr(dims[2]), uintptr(dims[3])))
	if err != nil {
		_ = d.Destroy()
		return 0, err
	}
	return d, nil
}

// Destroy frees the descriptor; the zero descriptor is ignored.
func (d FilterDesc) Destroy() error {
	if d == 0 {
		return nil
	}
	return check("cudnnDestroyFilterDescriptor", call(pDestroyFilter, uintptr(d)))
}

// NewConv makes a 2-d cross-correlation descriptor (PyTorch's conv2d:
// zero padding pad, stride, dilation, groups) that accumulates in compute
// and runs with math type m (cudnnSetConvolution2dDescriptor,
// cudnnSetConvolutionGroupCount, cudnnSetConvolutionMathType).
func NewConv(pad, stride, dilation [2]int, groups int, compute DataType, m MathType) (ConvDesc, error) {
	if !fits(pad[0], pad[1], stride[0], stride[1], dilation[0], dilation[1], groups) {
		return 0, fmt.Errorf("cudnnSetConvolution2dDescriptor: padding %v, stride %v, dilation %v or groups %d exceed the C int range", pad, stride, dilation, groups)
	}
	var d ConvDesc
	if err := check("cudnnCreateConvolutionDescriptor", call(pCreateConv, uintptr(unsafe.Pointer(&d)))); err != nil {
		return 0, err
	}
	err := check("cudnnSetConvolution2dDescriptor", call(pSetConv2d, uintptr(d),
		uintptr(pad[0]), uintptr(pad[1]), uintptr(stride[0]), uintptr(stride[1]),
		uintptr(dilation[0]), uintptr(dilation[1]), crossCorrelation, uintptr(compute)))
	if err == nil {
		err = check("cudnnSetConvolutionGroupCount", call(pSetConvGroups, uintptr(d), uintptr(groups)))
	}
	if err == nil {
		err = d.SetMathType(m)
	}
	if err != nil {
		_ = d.Destroy()
		return 0, err
	}
	return d, nil
}

// SetMathType sets the math type the descriptor's convolutions run with
// (cudnnSetConvolutionMathType).
func (d ConvDesc) SetMathType(m MathType) error {
	return check("cudnnSetConvolutionMathType", call(pSetConvMath, uintptr(d), uintptr(m)))
}

// Destroy frees the descriptor; the zero descriptor is ignored.
func (d ConvDesc) Destroy() error {
	if d == 0 {
		return nil
	}
	return check("cudnnDestroyConvolutionDescriptor", call(pDestroyConv, uintptr(d)))
}

// Problem is one convolution as cuDNN describes it, in forward terms
// whatever the direction: X the input [N, C, H, W], W the filter [K,
// C/groups, R, S], Conv the geometry and Y the output [N, K, P, Q]. For
// BackwardData, X describes the computed gradient and Y the given one;
// for BackwardFilter, W describes the computed gradient.
type Problem struct {
	X    TensorDesc
	W    FilterDesc
	Conv ConvDesc
	Y    TensorDesc
}

// Destroy frees the problem's descriptors (the zero ones are ignored) and
// returns the first error.
func (p Problem) Destroy() error {
	errs := []error{p.X.Destroy(), p.W.Destroy(), p.Conv.Destroy(), p.Y.Destroy()}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Buffers are the device addresses of a problem's tensors.
type Buffers struct {
	X, W, Y uint64
}

// MaxAlgorithms returns how many algorithms direction dir has
// (cudnnGetConvolution*AlgorithmMaxCount).
func MaxAlgorithms(h Handle, dir Direction) (int, error) {
	fn, name := pFwdCount, "cudnnGetConvolutionForwardAlgorithmMaxCount"
	switch dir {
	case BackwardData:
		fn, name = pBwdDataCount, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount"
	case BackwardFilter:
		fn, name = pBwdFilterCount, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount"
	}
	var n int32
	err := check(name, call(fn, uintptr(h), uintptr(unsafe.Pointer(&n))))
	return int(n), err
}

// Heuristics ranks the algorithms of direction dir for p by cuDNN's
// heuristics, fastest expected first, without running anything
// (cudnnGetConvolution*Algorithm_v7). Entries whose Status is not 0 are
// not usable.
func (p Problem) Heuristics(h Handle, dir Direction) ([]AlgoPerf, error) {
	n, err := MaxAlgorithms(h, dir)
	if err != nil {
		return nil, err
	}
	perf := make([]AlgoPerf, max(n, 1))
	var got int32
	var r int32
	name := ""
	switch dir {
	case Forward:
		name = "cudnnGetConvolutionForwardAlgorithm_v7"
		r = call(pFwdGet, uintptr(h), uintptr(p.X), uintptr(p.W), uintptr(p.Conv), uintptr(p.Y),
			uintptr(len(perf)), uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])))
	case BackwardData:
		name = "cudnnGetConvolutionBackwardDataAlgorithm_v7"
		r = call(pBwdDataGet, uintptr(h), uintptr(p.W), uintptr(p.Y), uintptr(p.Conv), uintptr(p.X),
			uintptr(len(perf)), uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])))
	default:
		name = "cudnnGetConvolutionBackwardFilterAlgorithm_v7"
		r = call(pBwdFilterGet, uintptr(h), uintptr(p.X), uintptr(p.Y), uintptr(p.Conv), uintptr(p.W),
			uintptr(len(perf)), uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])))
	}
	if err := check(name, r); err != nil {
		return nil, err
	}
	return perf[:min(int(got), len(perf))], nil
}

// Find runs every algorithm of direction dir on p's buffers (it
// overwrites the computed tensor) with the workspace ws of wsBytes bytes
// and returns them fastest first (cudnnFindConvolution*AlgorithmEx). It
// synchronizes the device, so it must not run while a stream is being
// captured into a graph.
func (p Problem) Find(h Handle, dir Direction, buf Buffers, ws, wsBytes uint64) ([]AlgoPerf, error) {
	n, err := MaxAlgorithms(h, dir)
	if err != nil {
		return nil, err
	}
	perf := make([]AlgoPerf, max(n, 1))
	var got int32
	var r int32
	name := ""
	switch dir {
	case Forward:
		name = "cudnnFindConvolutionForwardAlgorithmEx"
		r = call(pFwdFind, uintptr(h), uintptr(p.X), uintptr(buf.X), uintptr(p.W), uintptr(buf.W),
			uintptr(p.Conv), uintptr(p.Y), uintptr(buf.Y), uintptr(len(perf)),
			uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])), uintptr(ws), uintptr(wsBytes))
	case BackwardData:
		name = "cudnnFindConvolutionBackwardDataAlgorithmEx"
		r = call(pBwdDataFind, uintptr(h), uintptr(p.W), uintptr(buf.W), uintptr(p.Y), uintptr(buf.Y),
			uintptr(p.Conv), uintptr(p.X), uintptr(buf.X), uintptr(len(perf)),
			uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])), uintptr(ws), uintptr(wsBytes))
	default:
		name = "cudnnFindConvolutionBackwardFilterAlgorithmEx"
		r = call(pBwdFilterFind, uintptr(h), uintptr(p.X), uintptr(buf.X), uintptr(p.Y), uintptr(buf.Y),
			uintptr(p.Conv), uintptr(p.W), uintptr(buf.W), uintptr(len(perf)),
			uintptr(unsafe.Pointer(&got)), uintptr(unsafe.Pointer(&perf[0])), uintptr(ws), uintptr(wsBytes))
	}
	if err := check(name, r); err != nil {
		return nil, err
	}
	return perf[:min(int(got), len(perf))], nil
}

// WorkspaceSize returns the workspace bytes algorithm algo of direction
// dir needs for p with p.Conv's current math type
// (cudnnGetConvolution*WorkspaceSize).
func (p Problem) WorkspaceSize(h Handle, dir Direction, algo int32) (uint64, error) {
	var n uint64
	var r int32
	name := ""
	switch dir {
	case Forward:
		name = "cudnnGetConvolutionForwardWorkspaceSize"
		r = call(pFwdWorkspace, uintptr(h), uintptr(p.X), uintptr(p.W), uintptr(p.Conv), uintptr(p.Y),
			uintptr(algo), uintptr(unsafe.Pointer(&n)))
	case BackwardData:
		name = "cudnnGetConvolutionBackwardDataWorkspaceSize"
		r = call(pBwdDataWorkspace, uintptr(h), uintptr(p.W), uintptr(p.Y), uintptr(p.Conv), uintptr(p.X),
			uintptr(algo), uintptr(unsafe.Pointer(&n)))
	default:
		name = "cudnnGetConvolutionBackwardFilterWorkspaceSize"
		r = call(pBwdFilterWorkspace, uintptr(h), uintptr(p.X), uintptr(p.Y), uintptr(p.Conv), uintptr(p.W),
			uintptr(algo), uintptr(unsafe.Pointer(&n)))
	}
	return n, check(name, r)
}

// The scaling factors Run passes by address: package variables, which
// never move and which cuDNN only reads.
var (
	one32, zero32 = float32(1), float32(0)
	one64, zero64 = float64(1), float64(0)
)

// Run queues direction dir of p with algorithm algo on the handle's
// stream: Forward writes buf.Y from buf.X and buf.W
// (cudnnConvolutionForward), BackwardData buf.X from buf.Y and buf.W
// (cudnnConvolutionBackwardData), BackwardFilter buf.W from buf.X and
// buf.Y (cudnnConvolutionBackwardFilter), overwriting the result
// (alpha 1, beta 0; float64 scalars when double, the convolution's
// compute type being Double, else float32). ws is a device workspace of
// wsBytes bytes. The calls are legal while the stream is captured into a
// CUDA graph.
func (p Problem) Run(h Handle, dir Direction, algo int32, buf Buffers, ws, wsBytes uint64, double bool) error {
	alpha, beta := unsafe.Pointer(&one32), unsafe.Pointer(&zero32)
	if double {
		alpha, beta = unsafe.Pointer(&one64), unsafe.Pointer(&zero64)
	}
	switch dir {
	case Forward:
		return check("cudnnConvolutionForward", call(pFwd, uintptr(h), uintptr(alpha),
			uintptr(p.X), uintptr(buf.X), uintptr(p.W), uintptr(buf.W), uintptr(p.Conv), uintptr(algo),
			uintptr(ws), uintptr(wsBytes), uintptr(beta), uintptr(p.Y), uintptr(buf.Y)))
	case BackwardData:
		return check("cudnnConvolutionBackwardData", call(pBwdData, uintptr(h), uintptr(alpha),
			uintptr(p.W), uintptr(buf.W), uintptr(p.Y), uintptr(buf.Y), uintptr(p.Conv), uintptr(algo),
			uintptr(ws), uintptr(wsBytes), uintptr(beta), uintptr(p.X), uintptr(buf.X)))
	default:
		return check("cudnnConvolutionBackwardFilter", call(pBwdFilter, uintptr(h), uintptr(alpha),
			uintptr(p.X), uintptr(buf.X), uintptr(p.Y), uintptr(buf.Y), uintptr(p.Conv), uintptr(algo),
			uintptr(ws), uintptr(wsBytes), uintptr(beta), uintptr(p.W), uintptr(buf.W)))
	}
}
