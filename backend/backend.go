package backend

// Tensor is a backend's handle to one tensor's storage and layout. Only the
// backend that made it may interpret it; the root package treats it as
// opaque apart from Shape and DType.
type Tensor interface {
	// Shape is the tensor's logical shape (row-major; a nil or empty slice
	// for a rank-0 tensor). Callers must not modify it.
	Shape() []int
	// DType is the element type.
	DType() DType
}

// Backend runs the primitive op set on one device. Every method may assume
// its arguments were validated by the caller (the root package checks shapes,
// dtypes, axes and devices and panics with an *ember.Error before calling):
// binary ops receive operands of equal dtype whose shapes broadcast, axes are
// non-negative and in range, and so on. A backend panics (with an error
// wrapping a sentinel of this package) only for run-time failures such as
// running out of memory.
//
// All methods must be safe for concurrent use.
type Backend interface {
	// ID identifies the device this backend instance runs on.
	ID() DeviceID

	// Sync waits for all queued work and returns an error wrapping
	// ErrExecution for any asynchronous failure since the last Sync.
	Sync() error
	// Flush hands queued work to execution without waiting (no-op for eager backends).
	Flush()
	// Seed re-seeds the device's random generator: after Seed(s) the same
	// sequence of random ops yields the same values.
	Seed(seed uint64)
	// SupportsDType reports whether storage, conversion and arithmetic in dt work.
	SupportsDType(dt DType) bool

	// FromData copies host data onto the device.
	FromData(data *TensorData) Tensor
	// ToData copies a tensor to the host (contiguous, row-major).
	ToData(t Tensor) (*TensorData, error)
	// Full makes a tensor of the shape filled with value converted to dt
	// (floats round to nearest even, ints truncate toward zero, bool: value != 0).
	Full(shape []int, dt DType, value float64) Tensor
	// Arange makes the rank-1 tensor [start, start+step, ...] with n elements.
	Arange(start, step float64, n int, dt DType) Tensor
	// Random samples a tensor from dist using the device's generator.
	Random(shape []int, dt DType, dist Distribution) Tensor

	// Unary applies op elementwise; the result has x's dtype except where
	// UnaryOp's doc says otherwise.
	Unary(op UnaryOp, x Tensor) Tensor
	// Binary applies op elementwise to a and b (equal dtypes, broadcast
	// shapes); comparisons return Bool.
	Binary(op BinaryOp, a, b Tensor) Tensor
	// Where selects a where cond (Bool) is true, else b; all three broadcast,
	// a and b have equal dtypes.
	Where(cond, a, b Tensor) Tensor
	// Cast converts x to dt (float->int truncates toward zero; to F16/BF16
	// rounds to nearest even; to Bool: x != 0).
	Cast(x Tensor, dt DType) Tensor
	// Reduce reduces along axis. Sum/Prod/Max/Min keep the dtype; ArgMax and
	// ArgMin return I64. keepDim keeps the axis with size 1.
	Reduce(op ReduceOp, x Tensor, axis int, keepDim bool) Tensor

	// Reshape returns x with a new shape of equal element count (a view when
	// the layout allows).
	Reshape(x Tensor, shape []int) Tensor
	// Permute reorders axes: result axis i is x's axis axes[i] (a view).
	Permute(x Tensor, axes []int) Tensor
	// Expand broadcasts size-1 axes (and new leading axes) to shape (a view).
	Expand(x Tensor, shape []int) Tensor
	// Slice takes ranges[i] along axis i (one range per axis; Step >= 1, Start
	// and End already clamped to [0, size]) (a view).
	Slice(x Tensor, ranges []Range) Tensor
	// Pad pads axis i with pads[i][0] elements before and pads[i][1] after,
	// filled with value. One pair per axis, each >= 0.
	Pad(x Tensor, pads [][2]int, value float64) Tensor
	// Flip reverses the listed axes.
	Flip(x Tensor, axes []int) Tensor
	// Cat concatenates tensors of equal dtype along axis; the other axes agree.
	Cat(xs []Tensor, axis int) Tensor
	// Gather: out[i][j][k] = x[i][index[i][j][k]][k] for axis 1 (PyTorch's
	// gather); index is I64 with x's rank, out has index's shape.
	Gather(x Tensor, axis int, index Tensor) Tensor
	// ScatterAdd returns a copy of x with src[i][j][k] added at
	// [i][index[i][j][k]][k] for axis 1 (PyTorch's scatter_add); index (I64)
	// and src have equal shapes.
	ScatterAdd(x Tensor, axis int, index, src Tensor) Tensor
	// IndexSelect picks the entries of x along axis named by index (rank-1 I64).
	IndexSelect(x Tensor, axis int, index Tensor) Tensor

	// Matmul multiplies the last two axes ([..., m, k] x [..., k, n] ->
	// [..., m, n]); leading batch axes broadcast. Equal float or int dtypes.
	Matmul(a, b Tensor) Tensor
	// Conv2d convolves x [N, Cin, H, W] with w [Cout, Cin/groups, kH, kW]
	// (cross-correlation, as PyTorch's conv2d, no bias) -> [N, Cout, Ho, Wo].
	Conv2d(x, w Tensor, opts ConvOptions) Tensor
	// ConvTranspose2d is the adjoint of Conv2d with the same options:
	// x [N, Cin, H, W], w [Cin, Cout/groups, kH, kW] -> [N, Cout, Ho, Wo] with
	// Ho = (H-1)*stride - 2*pad + dilation*(kH-1) + outputPadding + 1
	// (PyTorch's conv_transpose2d).
	ConvTranspose2d(x, w Tensor, opts ConvOptions) Tensor
}

// Range selects Start, Start+Step, ... < End along one axis.
type Range struct{ Start, End, Step int }

// Len is the number of elements the range selects.
func (r Range) Len() int {
	if r.End <= r.Start {
		return 0
	}
	return (r.End - r.Start + r.Step - 1) / r.Step
}

// ConvOptions are the attributes of a 2-d convolution, PyTorch's names:
// Stride, Padding, Dilation per spatial axis (height, width), Groups >= 1, and
// OutputPadding (conv-transpose only).
type ConvOptions struct {
	Stride        [2]int
	Padding       [2]int
	Dilation      [2]int
	Groups        int
	OutputPadding [2]int
}

// WithDefaults returns o with zero strides, dilations and groups replaced
// by 1, their defaults; other values are kept (the root package rejects
// negative ones before a backend sees them).
func (o ConvOptions) WithDefaults() ConvOptions {
	for i := range 2 {
		if o.Stride[i] == 0 {
			o.Stride[i] = 1
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
	}
	if o.Groups == 0 {
		o.Groups = 1
	}
	return o
}

// DistributionKind names a random distribution.
type DistributionKind uint8

// The distributions of Random.
const (
	// DistDefault is uniform on [0, 1).
	DistDefault DistributionKind = iota
	// DistUniform is uniform on [A, B).
	DistUniform
	// DistNormal is normal with mean A and standard deviation B.
	DistNormal
	// DistBernoulli is 1 with probability A, else 0.
	DistBernoulli
)

// Distribution is a random distribution with its parameters A and B (see the kinds).
type Distribution struct {
	Kind DistributionKind
	A, B float64
}

// UnaryOp names an elementwise unary primitive.
type UnaryOp uint8

// The unary ops. Float-only ops (Exp ... Erf) are applied to float dtypes
// only; the root package casts or rejects other dtypes before calling.
const (
	OpNeg     UnaryOp = iota + 1 // -x (ints wrap)
	OpAbs                        // |x|
	OpSign                       // -1, 0 or 1 (NaN stays NaN)
	OpExp                        // e^x
	OpLog                        // natural log
	OpLog1p                      // log(1+x)
	OpExpm1                      // e^x - 1
	OpSqrt                       // square root
	OpRsqrt                      // 1/sqrt(x)
	OpRecip                      // 1/x
	OpSin                        // sine
	OpCos                        // cosine
	OpTanh                       // hyperbolic tangent
	OpSigmoid                    // 1/(1+e^-x), computed stably
	OpErf                        // error function
	OpFloor                      // round toward -Inf
	OpCeil                       // round toward +Inf
	OpRound                      // round half to even
	OpNot                        // logical not (Bool only)
)

var unaryNames = [...]string{"", "neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "recip", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "not"}

// String returns the op's lower-case name.
func (o UnaryOp) String() string {
	if int(o) < len(unaryNames) {
		return unaryNames[o]
	}
	return "unary?"
}

// BinaryOp names an elementwise binary primitive.
type BinaryOp uint8

// The binary ops. Integer Div truncates (Go's /), FloorDiv floors (Python's
// //), Rem takes the dividend's sign (Go's %), Mod the divisor's (Python's %).
// Integer division by zero is checked by the root package before calling.
// Max and Min propagate NaN. And, Or and Xor take Bool operands.
// Comparisons (Eq ... Ge) return Bool.
const (
	OpAdd BinaryOp = iota + 1
	OpSub
	OpMul
	OpDiv
	OpFloorDiv
	OpRem
	OpMod
	OpPow
	OpMax
	OpMin
	OpAtan2
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAnd
	OpOr
	OpXor
)

var binaryNames = [...]string{"", "add", "sub", "mul", "div", "floor_div", "rem", "mod", "pow", "max", "min", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor"}

// String returns the op's lower-case name.
func (o BinaryOp) String() string {
	if int(o) < len(binaryNames) {
		return binaryNames[o]
	}
	return "binary?"
}

// IsComparison reports whether the op returns Bool.
func (o BinaryOp) IsComparison() bool { return o >= OpEq && o <= OpGe }

// IsLogical reports whether the op takes and returns Bool.
func (o BinaryOp) IsLogical() bool { return o >= OpAnd && o <= OpXor }

// ReduceOp names a reduction along one axis.
type ReduceOp uint8

// The reductions. Max/Min/ArgMax/ArgMin propagate NaN (the first NaN wins);
// ties pick the lowest index.
const (
	ReduceSum ReduceOp = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
	ReduceArgMax
	ReduceArgMin
)

var reduceNames = [...]string{"", "sum", "prod", "max", "min", "argmax", "argmin"}

// String returns the reduction's lower-case name.
func (o ReduceOp) String() string {
	if int(o) < len(reduceNames) {
		return reduceNames[o]
	}
	return "reduce?"
}

// DeviceIndexChecker is implemented by backends that check the indices of
// Gather, ScatterAdd and IndexSelect on the device and report a bad index
// from the next Sync or ToData (an error wrapping ErrExecution). The root
// package then skips its host-side bounds check, which would cost a device
// round trip per op.
type DeviceIndexChecker interface {
	ChecksIndicesOnDevice() bool
}
