package cuda

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cudnn"
	"github.com/emberml/ember/ir"
)

// Convolutions on cuDNN. When libcudnn (9 or later) loads, Conv2d runs
// cudnnConvolutionForward, ConvTranspose2d cudnnConvolutionBackwardData
// (the transposed convolution is the input gradient of the convolution
// with the same options) and Conv2dWeightGrad
// cudnnConvolutionBackwardFilter, for F32, Flex32, F64, F16 and BF16; every
// other case, and every case cuDNN declines, runs on the backend's own
// kernels (ops_conv.go; the weight gradient through its decomposition).
//
// Precision: F32 and Flex32 run with CUDNN_FMA_MATH, float32 arithmetic
// throughout, unless SetTF32(true) allows TF32 tensor cores as it does for
// matmuls; F16 and BF16 use tensor cores with float32 accumulation; F64
// runs in float64. Only deterministic algorithms are used, so a
// convolution gives the same bits every time (no atomic sums).
//
// The handle is the backend's, bound to its stream, and made on first use
// outside a graph recording. Each problem (direction, dtype, shapes,
// options, TF32 setting, search mode) is planned once: descriptors, an
// algorithm and its workspace size, cached. While the backend records a
// graph, only problems planned before run on cuDNN (the convolution calls
// are capturable, the planning may not be: a search synchronizes the
// device); the others run on the backend's own kernels. Workspaces come
// from the backend's allocator and return to it once the call is queued.

func init() {
	kernels.Set(ir.KindConv2dWeightGrad, (*Backend).conv2dWeightGradKernel, backend.DType.IsFloat)
}

// dnnWorkspaceLimit is the largest workspace an algorithm may ask for.
const dnnWorkspaceLimit = 1 << 30

// dnnMaxPlans bounds the plan cache: beyond it the cache starts over.
const dnnMaxPlans = 1024

// dnnState is the backend's cuDNN state. mu serializes the handle's use
// and guards the other fields but the atomics.
type dnnState struct {
	mu     sync.Mutex
	tried  bool
	handle cudnn.Handle
	err    error
	plans  map[dnnKey]*dnnPlan
	// find selects algorithms by timing them (SetCuDNNBenchmark).
	find atomic.Bool
	// off sends every convolution to the backend's own kernels (tests
	// and benchmarks compare the two).
	off atomic.Bool
	// calls counts the convolutions run on cuDNN; declined is why the
	// last problem cuDNN does not run was declined.
	calls    atomic.Int64
	declined error
}

// errDNNNotMade: the handle was not made before the recording.
var errDNNNotMade = errors.New("the cuDNN handle is made on first use outside a graph recording")

// dnnKey identifies a planned problem, in forward terms: x the input, w
// the filter, y the output.
type dnnKey struct {
	dir              cudnn.Direction
	dt               backend.DType
	tf32, find       bool
	x, w, y          [4]int
	pad, stride, dil [2]int
	groups           int
}

// dnnPlan is a planned problem: its descriptors, algorithm and workspace
// bytes, or (ok false) why cuDNN does not run it.
type dnnPlan struct {
	p      cudnn.Problem
	algo   int32
	ws     uint64
	double bool
	ok     bool
	why    error
}

// CuDNNVersion reports whether the backend's convolutions run on cuDNN.
// It returns the version of the library they use (cudnnGetVersion: 91400
// for 9.14.0), loading it and creating the backend's handle on first
// call, or the error that keeps them on the backend's own kernels: cuDNN
// missing (wrapping backend.ErrBackendUnavailable; the search is
// cudnn.Libraries: $EMBER_CUDNN_PATH, then libcudnn.so.9 and libcudnn.so),
// older than 9, turned off by EMBER_CUDNN=0, or a failed cudnnCreate.
// While the backend records a graph and no handle was made before, it
// returns an error wrapping ErrRecording.
func (b *Backend) CuDNNVersion() (int, error) {
	d := &b.dnn
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := b.dnnHandleLocked(b.rec.Load() == nil); err != nil {
		if errors.Is(err, errDNNNotMade) {
			return 0, fmt.Errorf("%v: CuDNNVersion: %w (%v)", b.id, ErrRecording, err)
		}
		return 0, err
	}
	return cudnn.Version(), nil
}

// SetCuDNNBenchmark chooses how cuDNN convolution algorithms are picked
// for the problems planned from now on: off (the default) by cuDNN's
// heuristics, which run nothing; on by running every algorithm once per
// problem and keeping the fastest (cudnnFind*AlgorithmEx, as PyTorch's
// torch.backends.cudnn.benchmark), which synchronizes the device at each
// new problem. Either way only deterministic algorithms are kept.
func (b *Backend) SetCuDNNBenchmark(on bool) { b.dnn.find.Store(on) }

// dnnHandleLocked returns the cuDNN handle, making it when create is set
// and no attempt was made before; without create and without a handle it
// returns errDNNNotMade. The caller holds b.dnn.mu.
func (b *Backend) dnnHandleLocked(create bool) (cudnn.Handle, error) {
	d := &b.dnn
	if !d.tried {
		if !create {
			return 0, errDNNNotMade
		}
		d.tried = true
		d.handle, d.err = b.openDNN()
	}
	return d.handle, d.err
}

// openDNN loads cuDNN and makes a handle bound to the backend's stream.
func (b *Backend) openDNN() (cudnn.Handle, error) {
	if os.Getenv("EMBER_CUDNN") == "0" {
		return 0, fmt.Errorf("%v: cuDNN: turned off by EMBER_CUDNN=0", b.id)
	}
	if err := cudnn.Load(); err != nil {
		return 0, fmt.Errorf("%v: cuDNN: %w: %w", b.id, backend.ErrBackendUnavailable, err)
	}
	exit, err := b.enterErr()
	if err != nil {
		return 0, err
	}
	defer exit()
	h, err := cudnn.Create()
	if err == nil {
		if err = cudnn.SetStream(h, uintptr(b.stream)); err != nil {
			_ = cudnn.Destroy(h)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%v: cuDNN %s (%s): %w", b.id, cudnn.VersionString(), cudnn.LibraryName(), err)
	}
	return h, nil
}

// dnnTypes returns the cuDNN data type of dt, the compute type and the
// math type its convolutions start from; ok is false for dtypes cuDNN
// does not take here.
func dnnTypes(dt backend.DType, tf32 bool) (data, compute cudnn.DataType, m cudnn.MathType, ok bool) {
	switch dt {
	case backend.F32, backend.Flex32:
		m = cudnn.FMAMath
		if tf32 {
			m = cudnn.DefaultMath
		}
		return cudnn.Float, cudnn.Float, m, true
	case backend.F64:
		return cudnn.Double, cudnn.Double, cudnn.DefaultMath, true
	case backend.F16:
		return cudnn.Half, cudnn.Float, cudnn.TensorOpMath, true
	case backend.BF16:
		return cudnn.BFloat16, cudnn.Float, cudnn.TensorOpMath, true
	}
	return 0, 0, 0, false
}

// mathAllowed reports whether an algorithm running with math type m keeps
// k's precision: float32 without TF32 takes FMA algorithms only.
func mathAllowed(k dnnKey, m cudnn.MathType) bool {
	if (k.dt == backend.F32 || k.dt == backend.Flex32) && !k.tf32 {
		return m == cudnn.FMAMath
	}
	return true
}

// conv2dWeightGradKernel is the kernel of KindConv2dWeightGrad: the
// gradient [Cout, Cin/groups, kH, kW] (op.Shape) of conv2d's weight from
// its input op.In[0] [N, Cin, H, W] and output gradient op.In[1] [N, Cout,
// Ho, Wo] under op.Attrs.Conv, on cuDNN when it takes the problem, else
// through the kind's decomposition (convolutions of the backend's own).
func (b *Backend) conv2dWeightGradKernel(op ir.Op) ir.Outputs {
	if out := b.dnnWeightGrad(tensorOf(op.In[0]), tensorOf(op.In[1]), op.Attrs.Conv, op.Shape); out != nil {
		return ir.One(out)
	}
	return ir.SpecOf(ir.KindConv2dWeightGrad).Decompose(op, b)
}

// dnnConv2d is conv2d (x [N, Cin, H, W], w [Cout, Cin/groups, kH, kW],
// output shape [N, Cout, Ho, Wo]) on cuDNN, or nil when cuDNN does not
// take it (see dnnExec).
func (b *Backend) dnnConv2d(x, w *Tensor, o backend.ConvOptions, shape []int) *Tensor {
	return b.dnnExec(cudnn.Forward, o, x, w, shape)
}

// dnnConvTranspose2d is convTranspose2d (x [N, Cin, H, W], w [Cin,
// Cout/groups, kH, kW], output shape [N, Cout, Ho, Wo]) on cuDNN as the
// input gradient of the convolution of an [N, Cout, Ho, Wo] image by w, or
// nil when cuDNN does not take it: also when that convolution's output is
// not [H, W] (an output padding of at least the stride, which PyTorch
// accepts when it is below the dilation).
func (b *Backend) dnnConvTranspose2d(x, w *Tensor, o backend.ConvOptions, shape []int) *Tensor {
	return b.dnnExec(cudnn.BackwardData, o, x, w, shape)
}

// dnnWeightGrad is the weight gradient [Cout, Cin/groups, kH, kW] (shape)
// of conv2d from its input x [N, Cin, H, W] and output gradient g [N,
// Cout, Ho, Wo] on cuDNN, or nil when cuDNN does not take it.
func (b *Backend) dnnWeightGrad(x, g *Tensor, o backend.ConvOptions, shape []int) *Tensor {
	return b.dnnExec(cudnn.BackwardFilter, o, x, g, shape)
}

// dnnExec runs direction dir of a convolution under o on cuDNN and
// returns its result, a new contiguous tensor of shape, or nil when cuDNN
// does not take the problem: cuDNN off, missing or declining it, a dtype
// other than F32, Flex32, F64, F16 and BF16, an empty tensor, a size
// beyond cuDNN's int32 range, or a problem not planned before the graph
// being recorded. a and c are the operands: x and w (Forward), the output
// gradient and w (BackwardData), x and the output gradient
// (BackwardFilter). Inputs that are not contiguous or not 16-byte aligned
// are copied first. It panics with an error naming the call when cuDNN
// fails to run a planned problem.
func (b *Backend) dnnExec(dir cudnn.Direction, o backend.ConvOptions, a, c *Tensor, shape []int) *Tensor {
	d := &b.dnn
	if d.off.Load() || len(a.shape) != 4 || len(c.shape) != 4 || len(shape) != 4 || a.dtype != c.dtype {
		return nil
	}
	if _, _, _, ok := dnnTypes(a.dtype, false); !ok {
		return nil
	}
	for _, s := range [][]int{a.shape, c.shape, shape} {
		if n := backend.NumElements(s); n == 0 || n > math.MaxInt32 {
			return nil
		}
	}
	k := dnnKeyOf(dir, o, a.shape, c.shape, shape)
	if !k.consistent() {
		return nil
	}
	k.dt, k.tf32, k.find = a.dtype, b.tf32.Load(), d.find.Load()
	recording := b.rec.Load() != nil
	d.mu.Lock()
	defer d.mu.Unlock()
	h, err := b.dnnHandleLocked(!recording)
	if err != nil {
		return nil
	}
	pl := d.plans[k]
	if pl == nil && recording {
		return nil
	}
	if pl != nil && !pl.ok {
		return nil
	}
	a, c = b.dnnOperand(a), b.dnnOperand(c)
	out := b.emptyOf(shape, a.dtype)
	var buf cudnn.Buffers
	switch dir {
	case cudnn.Forward:
		buf = cudnn.Buffers{X: a.Ptr(), W: c.Ptr(), Y: out.Ptr()}
	case cudnn.BackwardData:
		buf = cudnn.Buffers{X: out.Ptr(), W: c.Ptr(), Y: a.Ptr()}
	default:
		buf = cudnn.Buffers{X: a.Ptr(), W: out.Ptr(), Y: c.Ptr()}
	}
	if pl == nil {
		pl = b.dnnPlan(h, k, buf)
		if d.plans == nil || len(d.plans) >= dnnMaxPlans {
			for _, old := range d.plans {
				_ = old.p.Destroy()
			}
			d.plans = map[dnnKey]*dnnPlan{}
		}
		d.plans[k] = pl
		if !pl.ok {
			d.declined = pl.why
			b.Release(out)
			return nil
		}
	}
	var ws *Tensor
	var wsPtr uint64
	if pl.ws > 0 {
		ws = b.emptyOf([]int{int(pl.ws)}, backend.U8)
		wsPtr = ws.Ptr()
	}
	exit := b.enter()
	err = pl.p.Run(h, dir, pl.algo, buf, wsPtr, pl.ws, pl.double)
	exit()
	b.Release(ws)
	runtime.KeepAlive(a)
	runtime.KeepAlive(c)
	if err != nil {
		var ce *cudnn.Error
		if errors.As(err, &ce) && ce.Unsupported() {
			pl.ok, pl.why, d.declined = false, err, err
			b.Release(out)
			return nil
		}
		panic(b.failf(err, "%s %v with %v (%v, %+v): cuDNN %s algorithm %d", dnnOpName(dir), a.shape, c.shape, a.dtype, o, dir, pl.algo))
	}
	d.calls.Add(1)
	return out
}

// dnnKeyOf is the problem of direction dir under o with operand shapes a
// and c and result shape (rank 4), in forward terms (see dnnExec), its
// dtype, TF32 and search fields unset.
func dnnKeyOf(dir cudnn.Direction, o backend.ConvOptions, a, c, shape []int) dnnKey {
	k := dnnKey{dir: dir, pad: o.Padding, stride: [2]int{max(o.Stride[0], 1), max(o.Stride[1], 1)},
		dil: [2]int{max(o.Dilation[0], 1), max(o.Dilation[1], 1)}, groups: max(o.Groups, 1)}
	switch dir {
	case cudnn.Forward:
		k.x, k.w, k.y = dims4(a), dims4(c), dims4(shape)
	case cudnn.BackwardData:
		k.x, k.w, k.y = dims4(shape), dims4(c), dims4(a)
	default:
		k.x, k.w, k.y = dims4(a), dims4(shape), dims4(c)
	}
	return k
}

// dnnOpName names the op that direction dir computes.
func dnnOpName(dir cudnn.Direction) string {
	switch dir {
	case cudnn.Forward:
		return "conv2d"
	case cudnn.BackwardData:
		return "conv_transpose2d"
	}
	return "conv2d_weight_grad"
}

// dims4 copies a rank-4 shape.
func dims4(s []int) [4]int { return [4]int{s[0], s[1], s[2], s[3]} }

// rowMajor4 is the contiguous strides of dims.
func rowMajor4(d [4]int) [4]int { return [4]int{d[1] * d[2] * d[3], d[2] * d[3], d[3], 1} }

// consistent reports whether k is a convolution cuDNN can describe: the
// channels match the filter and groups, and y is the forward output of x
// (for BackwardData, not so when the transposed convolution's output
// padding reaches the stride).
func (k dnnKey) consistent() bool {
	g := k.groups
	if k.x[0] != k.y[0] || k.x[1] != k.w[1]*g || k.y[1] != k.w[0] || k.w[0]%g != 0 {
		return false
	}
	for i := range 2 {
		eff := k.dil[i]*(k.w[2+i]-1) + 1
		in := k.x[2+i] + 2*k.pad[i]
		if in < eff || (in-eff)/k.stride[i]+1 != k.y[2+i] {
			return false
		}
	}
	return true
}

// dnnOperand returns t when it is contiguous and 16-byte aligned, else a
// contiguous copy (a new buffer: 256-byte aligned).
func (b *Backend) dnnOperand(t *Tensor) *Tensor {
	if t.IsContiguous() && t.Ptr()%16 == 0 {
		return t
	}
	return b.stridedCopy(t)
}

// dnnPlan plans k: its descriptors, then the first algorithm of cuDNN's
// ranking (heuristics, or a timed search when k.find, on buf) that
// succeeded, is deterministic, keeps k's precision and whose workspace
// fits dnnWorkspaceLimit. A plan that cuDNN cannot make is returned with ok
// false and the reason.
func (b *Backend) dnnPlan(h cudnn.Handle, k dnnKey, buf cudnn.Buffers) *dnnPlan {
	pl := &dnnPlan{double: k.dt == backend.F64}
	fail := func(err error) *dnnPlan {
		_ = pl.p.Destroy()
		pl.p, pl.why = cudnn.Problem{}, err
		return pl
	}
	data, compute, m, _ := dnnTypes(k.dt, k.tf32)
	var err error
	if pl.p.X, err = cudnn.NewTensor(data, k.x, rowMajor4(k.x)); err != nil {
		return fail(err)
	}
	if pl.p.W, err = cudnn.NewFilter(data, k.w); err != nil {
		return fail(err)
	}
	if pl.p.Y, err = cudnn.NewTensor(data, k.y, rowMajor4(k.y)); err != nil {
		return fail(err)
	}
	if pl.p.Conv, err = cudnn.NewConv(k.pad, k.stride, k.dil, k.groups, compute, m); err != nil {
		return fail(err)
	}
	defer b.enter()()
	var ranked []cudnn.AlgoPerf
	if k.find {
		ranked, err = b.dnnFind(h, k, pl.p, buf)
	} else {
		ranked, err = pl.p.Heuristics(h, k.dir)
	}
	if err != nil {
		return fail(err)
	}
	for _, r := range ranked {
		if r.Status != 0 || r.Determinism != cudnn.Deterministic || !mathAllowed(k, r.MathType) {
			continue
		}
		if pl.p.Conv.SetMathType(r.MathType) != nil {
			continue
		}
		ws, err := pl.p.WorkspaceSize(h, k.dir, r.Algo)
		if err != nil || ws > dnnWorkspaceLimit {
			continue
		}
		pl.algo, pl.ws, pl.ok = r.Algo, ws, true
		return pl
	}
	return fail(fmt.Errorf("cuDNN %s: none of %d ranked algorithms is deterministic, keeps the precision and fits a %d-byte workspace", k.dir, len(ranked), dnnWorkspaceLimit))
}

// dnnFind times every algorithm of k on buf with a workspace of the
// largest size one of them asks for (within dnnWorkspaceLimit). The
// caller is in the context and not recording.
func (b *Backend) dnnFind(h cudnn.Handle, k dnnKey, p cudnn.Problem, buf cudnn.Buffers) ([]cudnn.AlgoPerf, error) {
	n, err := cudnn.MaxAlgorithms(h, k.dir)
	if err != nil {
		return nil, err
	}
	var most uint64
	for a := range n {
		if s, err := p.WorkspaceSize(h, k.dir, int32(a)); err == nil && s <= dnnWorkspaceLimit {
			most = max(most, s)
		}
	}
	var ws *Tensor
	var wsPtr uint64
	if most > 0 {
		ws = b.emptyOf([]int{int(most)}, backend.U8)
		wsPtr = ws.Ptr()
	}
	defer b.Release(ws)
	return p.Find(h, k.dir, buf, wsPtr, most)
}
