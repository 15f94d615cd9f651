package ir

import (
	"fmt"
	"strconv"
)

// Kind names one primitive operation. Every kind has one Spec (SpecOf),
// registered by the file of this package that defines the kind; the zero
// Kind is invalid.
type Kind uint16

// The primitive kinds. The base kinds (creation through convolution) are
// executed by every backend; the others have a decomposition into base
// kinds (Spec.Decompose) that Run uses on a backend without a kernel.
// Values are part of the serialized format: new kinds are appended, never
// renumbered.
const (
	KindInvalid Kind = 0

	// Creation (no inputs; Shape and DType are given).
	KindFull   Kind = 1 // Scalars[0]: the value, converted to DType
	KindArange Kind = 2 // Shape [n]; Scalars: start, step (float64); or Ints: [start, step] (exact, integer DType)
	KindRandom Kind = 3 // Sub: a DistributionKind; Scalars: its A, B

	// Elementwise.
	KindUnary  Kind = 4 // Sub: a UnaryOp; In[0]
	KindBinary Kind = 5 // Sub: a BinaryOp; In[0], In[1] of one dtype, broadcast
	KindWhere  Kind = 6 // In[0] (Bool) ? In[1] : In[2], broadcast
	KindCast   Kind = 7 // In[0] converted to DType

	// Reductions.
	KindReduce Kind = 8 // Sub: a ReduceOp; In[0]; Axis; KeepDim

	// Movement (views where the layout allows).
	KindReshape Kind = 9  // In[0] to Shape (equal element count)
	KindPermute Kind = 10 // In[0]; Ints: the permutation (result axis i is input axis Ints[i])
	KindExpand  Kind = 11 // In[0] broadcast to Shape
	KindSlice   Kind = 12 // In[0]; Attrs.Ranges: one clamped range per axis
	KindPad     Kind = 13 // In[0]; Ints: before, after per axis; Scalars[0]: the value
	KindFlip    Kind = 14 // In[0]; Ints: the reversed axes
	KindCat     Kind = 15 // Xs (one dtype) joined along Axis

	// Indexing.
	KindGather      Kind = 16 // In[0] x, In[1] index (I64, x's rank); Axis
	KindScatterAdd  Kind = 17 // In[0] x, In[1] index, In[2] src; Axis
	KindIndexSelect Kind = 18 // In[0] x, In[1] index (rank-1 I64); Axis

	// Linear algebra.
	KindMatmul          Kind = 19 // In[0] [..., m, k] × In[1] [..., k, n]
	KindConv2d          Kind = 20 // In[0] x, In[1] w; Attrs.Conv
	KindConvTranspose2d Kind = 21 // In[0] x, In[1] w; Attrs.Conv

	// Fast paths with decompositions.
	KindMaxPool2d        Kind = 22 // In[0] x; Attrs.Pool
	KindMaxPool2dGrad    Kind = 23 // In[0] x, In[1] y, In[2] g; Attrs.Pool
	KindConv2dWeightGrad Kind = 24 // In[0] x, In[1] gradOut; Shape: the weight's; Attrs.Conv
	KindSliceScatter     Kind = 25 // In[0] src; Shape; Attrs.Ranges
	KindExtremumGrad     Kind = 26 // In[0] x, In[1] y, In[2] g; Axis
	KindAdamStep         Kind = 27 // Xs: param, grad, m, v; Attrs.Optim; three outputs
	KindSGDStep          Kind = 28 // In[0] param, In[1] grad, In[2] momentum buffer or nil; Attrs.Optim; two outputs

	// Normalizations, fast paths with decompositions (ir/fastpath_norm.go).
	// KindCumSum (ir/scan.go) is 29.
	KindSoftmax        Kind = 30 // In[0] x (float); Axis
	KindLogSoftmax     Kind = 31 // In[0] x (float); Axis
	KindSoftmaxGrad    Kind = 32 // In[0] y = Softmax(x), In[1] g; Axis
	KindLogSoftmaxGrad Kind = 33 // In[0] y = LogSoftmax(x), In[1] g; Axis
	KindLogSumExp      Kind = 34 // In[0] x (float); Axis; KeepDim
	KindLayerNorm      Kind = 35 // In[0] x, In[1] weight or nil, In[2] bias or nil; Axis: first normalized axis; Scalars[0]: eps
	KindLayerNormGrad  Kind = 36 // In[0] x, In[1] weight or nil, In[2] g; Axis; Scalars[0]: eps
	KindRMSNorm        Kind = 37 // In[0] x, In[1] weight or nil; Axis: first normalized axis; Scalars[0]: eps
	KindRMSNormGrad    Kind = 38 // In[0] x, In[1] weight or nil, In[2] g; Axis; Scalars[0]: eps

	// numKinds bounds the kind tables (Spec, kernel and rule tables are
	// arrays indexed by Kind). A kind declared in another file of this
	// package (KindCumSum, ir/scan.go) takes the next free value below it.
	numKinds = 64
)

// NumKinds is the size of tables indexed by Kind: every Kind value is
// below it.
const NumKinds = numKinds

// String returns the kind's spec name ("binary", "max_pool2d", ...).
func (k Kind) String() string {
	if k.Valid() {
		return specs[k].Name
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is a registered kind.
func (k Kind) Valid() bool { return k > 0 && int(k) < numKinds && specs[k].Name != "" }

// Kinds returns every registered kind in increasing order.
func Kinds() []Kind {
	var ks []Kind
	for k := Kind(1); k < numKinds; k++ {
		if k.Valid() {
			ks = append(ks, k)
		}
	}
	return ks
}

// Group says what kind of work an op does; fusion and tooling ask it
// ("is it elementwise?") instead of listing kinds.
type Group uint8

// The groups.
const (
	GroupCreation Group = iota + 1
	GroupElementwise
	GroupReduce
	GroupMovement
	GroupIndex
	GroupLinalg
	GroupPool
	GroupScan
	GroupOptimizer
)

var groupNames = [...]string{"", "creation", "elementwise", "reduce", "movement", "index", "linalg", "pool", "scan", "optimizer"}

// String returns the group's lower-case name.
func (g Group) String() string {
	if int(g) < len(groupNames) && g > 0 {
		return groupNames[g]
	}
	return "group(" + strconv.Itoa(int(g)) + ")"
}

// Cost classifies a kind for the Balanced gradient-checkpointing strategy
// (burn-autodiff's): memory-bound ops are recomputed during backward,
// compute-bound ones keep their outputs.
type Cost uint8

const (
	// MemoryBound ops cost about one read and one write per element.
	MemoryBound Cost = iota + 1
	// ComputeBound ops cost more than their memory traffic (or, as
	// reductions, gathers and casts, are not worth re-running).
	ComputeBound
)

// String returns "memory-bound" or "compute-bound".
func (c Cost) String() string {
	if c == MemoryBound {
		return "memory-bound"
	}
	return "compute-bound"
}

// MaxOutputs is the most outputs one op has (AdamStep's three).
const MaxOutputs = 3

// Outputs are an op's results: entry i is output i, nil past the op's
// Spec.NumOutputs. It is a value so that returning it allocates nothing.
type Outputs [MaxOutputs]Tensor

// One returns Outputs holding the single output t.
func One(t Tensor) Outputs { return Outputs{t} }

// Spec describes one kind: everything about it that is not a kernel.
type Spec struct {
	// Name is the kind's lower-case name ("conv2d").
	Name string
	// Group is the kind's group.
	Group Group
	// Cost is its checkpointing class.
	Cost Cost
	// NumInputs is the number of tensor inputs: up to 3 are held in
	// Op.In, more in Op.Xs; -1 means variadic (Op.Xs, at least one).
	NumInputs int
	// NumOutputs is the number of results (1 for most kinds).
	NumOutputs int
	// Operands name the inputs in error messages ("lhs", "rhs").
	Operands []string
	// View says the output is a view of input 0 (Reshape, Permute,
	// Expand, Slice, Flip): it needs no new buffer where the layout
	// allows, so memory checks skip it.
	View bool
	// Subs is the number of valid Op.Sub values of a kind that selects
	// a sub-op (the unary, binary or reduce op, the distribution): they
	// are FirstSub, FirstSub+1, ..., FirstSub+Subs-1. 0 means the kind
	// has no sub-op and Sub must be 0. Decoding checks Sub against it
	// (the kind's Infer checks the sub-op it reads).
	Subs uint8
	// FirstSub is the smallest valid Sub value when Subs > 0: 1 for
	// enums whose zero value is invalid (UnaryOp, BinaryOp, ReduceOp), 0
	// for DistributionKind (DistDefault).
	FirstSub uint8
	// Infer validates op (inputs, attributes) and returns its output
	// shape and dtype (for kinds where they are given, op's own), or an
	// error that says what is wrong (the caller adds the op's name and
	// operands). It never panics. It takes the op by value so that
	// inferring an op on the stack does not move it to the heap.
	Infer func(op Op) (shape []int, dt DType, err error)
	// Decompose lowers op, already inferred, into other kinds run on e
	// (through Run, so unsupported sub-kinds are lowered in turn). It is
	// nil for base kinds, which every backend executes.
	Decompose func(op Op, e Executor) Outputs
}

var specs [numKinds]Spec

// register installs the spec of k; each kind's file calls it from init.
func register(k Kind, s Spec) {
	if int(k) <= 0 || int(k) >= numKinds || specs[k].Name != "" {
		panic(fmt.Sprintf("ir: bad or duplicate kind %d (%s)", k, s.Name))
	}
	if s.NumOutputs == 0 {
		s.NumOutputs = 1
	}
	if s.NumOutputs > MaxOutputs {
		panic(fmt.Sprintf("ir: kind %s: %d outputs, more than MaxOutputs", s.Name, s.NumOutputs))
	}
	if (s.Subs == 0 && s.FirstSub != 0) || int(s.FirstSub)+int(s.Subs) > 256 {
		panic(fmt.Sprintf("ir: kind %s: bad sub-op range %d+%d", s.Name, s.FirstSub, s.Subs))
	}
	specs[k] = s
}

// SpecOf returns the spec of k. It panics for an invalid kind.
func SpecOf(k Kind) *Spec {
	if !k.Valid() {
		panic("ir: SpecOf: invalid kind " + k.String())
	}
	return &specs[k]
}

// UnaryOp names an elementwise unary primitive (KindUnary's Sub).
type UnaryOp uint8

// The unary ops. Float-only ops (Exp ... Erf) take float dtypes only; Not
// takes Bool only.
const (
	OpNeg     UnaryOp = iota + 1 // -x (ints wrap)
	OpAbs                        // |x|
	OpSign                       // -1, 0 or 1 (+0 for ±0 and NaN, as PyTorch)
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
	OpNot                        // logical not of Bool, bitwise not (^x) of integers
	numUnary
)

var unaryNames = [...]string{"", "neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "recip", "sin", "cos", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "not"}

// String returns the op's lower-case name.
func (o UnaryOp) String() string {
	if o.Valid() {
		return unaryNames[o]
	}
	return "unary?"
}

// Valid reports whether o is a declared unary op.
func (o UnaryOp) Valid() bool { return o > 0 && o < numUnary }

// FloatOnly reports whether o is defined on float dtypes only (Exp ... Erf).
func (o UnaryOp) FloatOnly() bool { return o >= OpExp && o <= OpErf }

// BinaryOp names an elementwise binary primitive (KindBinary's Sub).
type BinaryOp uint8

// The binary ops. Integer Div truncates (Go's /), FloorDiv floors (Python's
// //), Rem takes the dividend's sign (Go's %), Mod the divisor's (Python's
// %). Integer division by zero is checked by the caller. Max and Min
// propagate NaN. And, Or and Xor take Bool operands. Comparisons (Eq ...
// Ge) return Bool.
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
	OpShl // left shift of integers; amounts outside [0, bits) give 0
	OpShr // arithmetic right shift of integers; amounts outside [0, bits) give the sign fill
	numBinary
)

var binaryNames = [...]string{"", "add", "sub", "mul", "div", "floor_div", "rem", "mod", "pow", "max", "min", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "shl", "shr"}

// String returns the op's lower-case name.
func (o BinaryOp) String() string {
	if o.Valid() {
		return binaryNames[o]
	}
	return "binary?"
}

// Valid reports whether o is a declared binary op.
func (o BinaryOp) Valid() bool { return o > 0 && o < numBinary }

// IsComparison reports whether the op returns Bool.
func (o BinaryOp) IsComparison() bool { return o >= OpEq && o <= OpGe }

// IsLogical reports whether the op is And, Or or Xor: logical on Bool,
// bitwise on integers, undefined on floats.
func (o BinaryOp) IsLogical() bool { return o >= OpAnd && o <= OpXor }

// IsShift reports whether the op is a bit shift (integers only).
func (o BinaryOp) IsShift() bool { return o == OpShl || o == OpShr }

// ReduceOp names a reduction along one axis (KindReduce's Sub).
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
	numReduce
)

var reduceNames = [...]string{"", "sum", "prod", "max", "min", "argmax", "argmin"}

// String returns the reduction's lower-case name.
func (o ReduceOp) String() string {
	if o.Valid() {
		return reduceNames[o]
	}
	return "reduce?"
}

// Valid reports whether o is a declared reduction.
func (o ReduceOp) Valid() bool { return o > 0 && o < numReduce }

// DistributionKind names a random distribution (KindRandom's Sub).
type DistributionKind uint8

// The distributions of KindRandom.
const (
	// DistDefault is uniform on [0, 1).
	DistDefault DistributionKind = iota
	// DistUniform is uniform on [A, B).
	DistUniform
	// DistNormal is normal with mean A and standard deviation B.
	DistNormal
	// DistBernoulli is 1 with probability A, else 0.
	DistBernoulli
	numDist
)

// Valid reports whether k is a declared distribution.
func (k DistributionKind) Valid() bool { return k < numDist }

// Distribution is a random distribution with its parameters A and B (see
// the kinds).
type Distribution struct {
	Kind DistributionKind
	A, B float64
}
