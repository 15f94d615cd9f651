package ir

import "math"

// Tensor is a backend's handle to one tensor's storage and layout. Only the
// backend that made it may interpret it; everyone else uses Shape and
// DType only.
type Tensor interface {
	// Shape is the tensor's logical shape (row-major; a nil or empty
	// slice for a rank-0 tensor). Callers must not modify it.
	Shape() []int
	// DType is the element type.
	DType() DType
}

// Op is one primitive operation as a value: its kind, attributes, inputs
// and (after Infer) its output shape and dtype. It is small and passed by
// value, so building and dispatching an op allocates nothing beyond its
// output shape. Which fields a kind reads is documented at its constant;
// unused fields are zero.
//
// Multi-output kinds (AdamStep, SGDStep) describe output 0 in Shape and
// DType; their other outputs are documented with the kind.
type Op struct {
	// Kind selects the primitive.
	Kind Kind
	// Sub selects the unary, binary or reduce op or the distribution
	// (Spec.Subs and Spec.FirstSub give the valid values); 0 for kinds
	// without sub-ops.
	Sub uint8
	// DType is the output dtype (given for creation ops and Cast,
	// inferred otherwise).
	DType DType
	// KeepDim keeps a reduced axis with size 1.
	KeepDim bool
	// Axis is the (non-negative) axis of reductions, scans, Cat and the
	// indexing kinds.
	Axis int
	// Shape is the output shape (given for creation ops, Reshape, Expand,
	// SliceScatter and Conv2dWeightGrad; inferred otherwise). Backends
	// may keep it in the tensor they return and must not modify it.
	Shape []int
	// Scalars hold numeric attributes (Full's value, Arange's start and
	// step, a distribution's parameters, Pad's value).
	Scalars [2]float64
	// Ints hold integer lists (Permute's and Flip's axes, Pad's widths,
	// an integer Arange's exact start and step).
	Ints []int
	// Attrs holds the rarer attributes (convolution, pooling, slicing,
	// optimizer), nil when the kind has none.
	Attrs *Attrs
	// In holds up to three inputs.
	In [3]Tensor
	// Xs holds the inputs of variadic kinds (Cat) and of kinds with more
	// than three inputs (AdamStep).
	Xs []Tensor
}

// Attrs are the attributes too large or too rare to hold in Op inline.
type Attrs struct {
	// Conv: Conv2d, ConvTranspose2d and Conv2dWeightGrad (defaults filled in).
	Conv ConvOptions
	// Pool: MaxPool2d and MaxPool2dGrad (every field set).
	Pool PoolOptions
	// Ranges: Slice and SliceScatter, one clamped range per axis.
	Ranges []Range
	// Optim: AdamStep and SGDStep.
	Optim OptimUpdate
}

// Name returns the op's name for messages: the unary, binary or reduce
// op's name ("add", "argmax") for those kinds, the spec's name otherwise.
func (op *Op) Name() string {
	switch op.Kind {
	case KindUnary:
		return UnaryOp(op.Sub).String()
	case KindBinary:
		return BinaryOp(op.Sub).String()
	case KindReduce:
		return ReduceOp(op.Sub).String()
	}
	return op.Kind.String()
}

// NumInputs is the number of inputs op has (len(Xs) for variadic kinds).
// It panics for an invalid kind.
func (op *Op) NumInputs() int {
	n := SpecOf(op.Kind).NumInputs
	if n < 0 || n > len(op.In) {
		return len(op.Xs)
	}
	return n
}

// Input returns input i (in Xs for variadic kinds and kinds with more than
// three inputs, else in In). An optional input may be nil.
func (op *Op) Input(i int) Tensor {
	n := specs[op.Kind].NumInputs
	if n < 0 || n > len(op.In) {
		return op.Xs[i]
	}
	return op.In[i]
}

// SetInput replaces input i (see Input). For kinds that hold inputs in Xs
// the slice is copied first, so the caller's slice is not modified.
func (op *Op) SetInput(i int, t Tensor) {
	n := specs[op.Kind].NumInputs
	if n < 0 || n > len(op.In) {
		xs := make([]Tensor, len(op.Xs))
		copy(xs, op.Xs)
		xs[i] = t
		op.Xs = xs
		return
	}
	op.In[i] = t
}

// UsesXs reports whether op's kind holds its inputs in Xs.
func (op *Op) UsesXs() bool {
	n := specs[op.Kind].NumInputs
	return n < 0 || n > len(op.In)
}

// Infer validates op and fills in its output shape and dtype (Spec.Infer).
func (op *Op) Infer() error {
	var shape []int
	var dt DType
	var err error
	switch op.Kind {
	case KindBinary: // the most frequent kinds, inferred without a copy of op
		shape, dt, err = binaryShape(op)
	case KindUnary:
		shape, dt, err = unaryShape(op)
	default:
		if !op.Kind.Valid() {
			return errorf("invalid op kind %d", op.Kind)
		}
		shape, dt, err = specs[op.Kind].Infer(*op)
	}
	if err != nil {
		return err
	}
	op.Shape, op.DType = shape, dt
	return nil
}

// Pad returns the (before, after) widths of axis i of a Pad op.
func (op *Op) Pad(i int) (before, after int) { return op.Ints[2*i], op.Ints[2*i+1] }

// Range selects Start, Start+Step, ... < End along one axis.
type Range struct{ Start, End, Step int }

// Len is the number of elements the range selects, computed without
// overflow for any bounds and step: ⌈(End − Start)/Step⌉, or 0 when
// End <= Start or Step <= 0. A count above math.MaxInt (only bounds more
// than math.MaxInt apart, which no axis has, select that many) is
// reported as math.MaxInt.
func (r Range) Len() int {
	if r.End <= r.Start || r.Step <= 0 {
		return 0
	}
	// The distance in uint64 is exact for every pair of ints (wrapping
	// subtraction of two's-complement values).
	n := (uint64(r.End)-uint64(r.Start)-1)/uint64(r.Step) + 1
	return int(min(n, math.MaxInt))
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
// by 1, their defaults; other values are kept.
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

// PoolOptions are the window attributes of a 2-d pooling, PyTorch's names,
// per spatial axis (height, width): Kernel >= 1, Stride >= 1, Padding >= 0
// (at most half the dilated kernel size) and Dilation >= 1. The output size
// is PyTorch's floor formula (PoolOutputSize; no ceil mode).
type PoolOptions struct {
	Kernel, Stride, Padding, Dilation [2]int
}

// OptimUpdate holds the hyperparameters of one fused optimizer update:
// Adam/AdamW for AdamStep (PyTorch's torch.optim.Adam and AdamW, amsgrad
// off) and SGD for SGDStep (torch.optim.SGD, dampening 0).
type OptimUpdate struct {
	// LR is the learning rate.
	LR float64
	// Beta1 and Beta2 are Adam's moment decay rates, in [0, 1).
	Beta1, Beta2 float64
	// Eps is added to Adam's denominator.
	Eps float64
	// WeightDecay is the L2 penalty (added to the gradient) or, when
	// Decoupled, AdamW's decoupled decay rate; 0 disables it.
	WeightDecay float64
	// Step is Adam's step count t >= 1, this update included (for the
	// bias corrections 1 − β₁ᵗ and 1 − β₂ᵗ).
	Step int
	// Decoupled selects AdamW's decay θ ← θ·(1 − lr·λ).
	Decoupled bool
	// Momentum is SGD's momentum factor μ (0: none).
	Momentum float64
	// Nesterov selects SGD's Nesterov momentum.
	Nesterov bool
}
