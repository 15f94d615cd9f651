package ir

import (
	"math"
	"slices"
)

// The base kinds: every backend executes them, so they have no
// decomposition. Their Infer functions are the one place where Ember
// validates a primitive's operands and computes its output shape.

func init() {
	register(KindFull, Spec{Name: "full", Group: GroupCreation, Cost: MemoryBound, Infer: inferFull})
	register(KindArange, Spec{Name: "arange", Group: GroupCreation, Cost: MemoryBound, Infer: inferArange})
	register(KindRandom, Spec{Name: "random", Group: GroupCreation, Cost: MemoryBound, Subs: uint8(numDist), Infer: inferRandom})

	register(KindUnary, Spec{Name: "unary", Group: GroupElementwise, Cost: MemoryBound, NumInputs: 1, Subs: uint8(numUnary - 1), FirstSub: 1, Operands: []string{"x"}, Infer: inferUnary})
	register(KindBinary, Spec{Name: "binary", Group: GroupElementwise, Cost: MemoryBound, NumInputs: 2, Subs: uint8(numBinary - 1), FirstSub: 1, Operands: []string{"lhs", "rhs"}, Infer: inferBinary})
	register(KindWhere, Spec{Name: "where", Group: GroupElementwise, Cost: MemoryBound, NumInputs: 3, Operands: []string{"cond", "a", "b"}, Infer: inferWhere})
	register(KindCast, Spec{Name: "cast", Group: GroupElementwise, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"}, Infer: inferCast})

	register(KindReduce, Spec{Name: "reduce", Group: GroupReduce, Cost: ComputeBound, NumInputs: 1, Subs: uint8(numReduce - 1), FirstSub: 1, Operands: []string{"x"}, Infer: inferReduce})

	register(KindReshape, Spec{Name: "reshape", Group: GroupMovement, Cost: MemoryBound, View: true, NumInputs: 1, Operands: []string{"x"}, Infer: inferReshape})
	register(KindPermute, Spec{Name: "permute", Group: GroupMovement, Cost: MemoryBound, View: true, NumInputs: 1, Operands: []string{"x"}, Infer: inferPermute})
	register(KindExpand, Spec{Name: "expand", Group: GroupMovement, Cost: MemoryBound, View: true, NumInputs: 1, Operands: []string{"x"}, Infer: inferExpand})
	register(KindSlice, Spec{Name: "slice", Group: GroupMovement, Cost: MemoryBound, View: true, NumInputs: 1, Operands: []string{"x"}, Infer: inferSlice})
	register(KindPad, Spec{Name: "pad", Group: GroupMovement, Cost: MemoryBound, NumInputs: 1, Operands: []string{"x"}, Infer: inferPad})
	register(KindFlip, Spec{Name: "flip", Group: GroupMovement, Cost: MemoryBound, View: true, NumInputs: 1, Operands: []string{"x"}, Infer: inferFlip})
	register(KindCat, Spec{Name: "cat", Group: GroupMovement, Cost: MemoryBound, NumInputs: -1, Infer: inferCat})

	register(KindGather, Spec{Name: "gather", Group: GroupIndex, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "index"}, Infer: inferGather})
	register(KindScatterAdd, Spec{Name: "scatter_add", Group: GroupIndex, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "index", "src"}, Infer: inferScatterAdd})
	register(KindIndexSelect, Spec{Name: "index_select", Group: GroupIndex, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "index"}, Infer: inferIndexSelect})

	register(KindMatmul, Spec{Name: "matmul", Group: GroupLinalg, Cost: ComputeBound, NumInputs: 2, Operands: []string{"lhs", "rhs"}, Infer: inferMatmul})
	register(KindConv2d, Spec{Name: "conv2d", Group: GroupLinalg, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "weight"}, Infer: inferConv(false)})
	register(KindConvTranspose2d, Spec{Name: "conv_transpose2d", Group: GroupLinalg, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "weight"}, Infer: inferConv(true)})
}

// checkInputs checks that the first n inputs of op are present.
func checkInputs(op *Op, n int) error {
	if op.UsesXs() {
		if len(op.Xs) < n {
			return errorf("needs %d inputs, got %d", n, len(op.Xs))
		}
		for i := range n {
			if op.Xs[i] == nil {
				return errorf("input %d is missing", i)
			}
		}
		return nil
	}
	for i := range n {
		if op.In[i] == nil {
			return errorf("input %d is missing", i)
		}
	}
	return nil
}

func inferCreation(op Op) ([]int, DType, error) {
	if !op.DType.Valid() {
		return nil, 0, errorf("invalid dtype %v", op.DType)
	}
	return op.Shape, op.DType, CheckShape(op.Shape)
}

// inferFull is inferCreation with a value that DType can hold.
func inferFull(op Op) ([]int, DType, error) {
	if _, _, err := inferCreation(op); err != nil {
		return nil, 0, err
	}
	if err := ScalarFits(op.Scalars[0], op.DType); err != nil {
		return nil, 0, err
	}
	return op.Shape, op.DType, nil
}

func inferArange(op Op) ([]int, DType, error) {
	if len(op.Shape) != 1 {
		return nil, 0, errorf("needs a rank-1 shape, got %v", op.Shape)
	}
	if _, _, err := inferCreation(op); err != nil {
		return nil, 0, err
	}
	if op.Ints != nil {
		start, step, ok := ArangeInts(&op)
		if !ok {
			return nil, 0, errorf("needs Ints [start, step], got %v", op.Ints)
		}
		if err := checkArangeInts(op.DType, op.Shape[0], start, step); err != nil {
			return nil, 0, err
		}
	}
	return op.Shape, op.DType, nil
}

func inferRandom(op Op) ([]int, DType, error) {
	if _, _, err := inferCreation(op); err != nil {
		return nil, 0, err
	}
	a, b := op.Scalars[0], op.Scalars[1]
	if math.IsNaN(a) || math.IsNaN(b) {
		return nil, 0, errorf("distribution parameters %v, %v include NaN", a, b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return nil, 0, errorf("distribution parameters %v, %v must be finite", a, b)
	}
	switch DistributionKind(op.Sub) {
	case DistDefault:
	case DistNormal:
		if b < 0 {
			return nil, 0, errorf("normal standard deviation %v is negative", b)
		}
	case DistBernoulli:
		if a < 0 || a > 1 {
			return nil, 0, errorf("bernoulli probability %v is outside [0, 1]", a)
		}
	case DistUniform:
		if a > b {
			return nil, 0, errorf("uniform low %v is above high %v", a, b)
		}
		if math.IsInf(b-a, 0) {
			return nil, 0, errorf("uniform width %v - %v overflows float64", b, a)
		}
		if op.DType.IsInt() && a < b {
			// Integer samples are floors of values in [a, b).
			if ScalarFits(math.Floor(a), op.DType) != nil || ScalarFits(math.Ceil(b)-1, op.DType) != nil {
				return nil, 0, errorf("uniform [%v, %v) holds integers outside %v", a, b, op.DType)
			}
		}
	default:
		return nil, 0, errorf("unknown distribution %d", op.Sub)
	}
	return op.Shape, op.DType, nil
}

func inferUnary(op Op) ([]int, DType, error) { return unaryShape(&op) }

// unaryShape is inferUnary on the op itself (Op.Infer calls it without a
// copy of the op).
func unaryShape(op *Op) ([]int, DType, error) {
	x := op.In[0]
	if x == nil {
		return nil, 0, checkInputs(op, 1)
	}
	u := UnaryOp(op.Sub)
	dt := x.DType()
	switch {
	case !u.Valid():
		return nil, 0, errorf("unknown unary op %d", op.Sub)
	case u == OpNot && dt.IsFloat():
		return nil, 0, errorf("needs a Bool or integer tensor")
	case u != OpNot && dt == Bool:
		return nil, 0, errorf("not defined for Bool tensors")
	case u.FloatOnly() && !dt.IsFloat():
		return nil, 0, errorf("needs a float tensor, got %v", dt)
	}
	return x.Shape(), dt, nil
}

func inferBinary(op Op) ([]int, DType, error) { return binaryShape(&op) }

// binaryShape is inferBinary on the op itself (see unaryShape).
func binaryShape(op *Op) ([]int, DType, error) {
	a, b := op.In[0], op.In[1]
	if a == nil || b == nil {
		return nil, 0, checkInputs(op, 2)
	}
	bop := BinaryOp(op.Sub)
	dt := a.DType()
	if !bop.Valid() {
		return nil, 0, errorf("unknown binary op %d", op.Sub)
	}
	if bt := b.DType(); dt != bt {
		return nil, 0, errorf("operand dtypes differ (%v, %v)", dt, bt)
	}
	switch {
	case bop.IsLogical() && dt.IsFloat():
		return nil, 0, errorf("needs Bool or integer operands")
	case bop.IsShift() && !dt.IsInt():
		return nil, 0, errorf("needs integer operands")
	case dt == Bool && !bop.IsLogical() && !bop.IsComparison() && bop != OpMax && bop != OpMin:
		return nil, 0, errorf("not defined for Bool operands")
	}
	if bop == OpAtan2 && !dt.IsFloat() {
		return nil, 0, errorf("needs float operands")
	}
	as, bs := a.Shape(), b.Shape()
	if sameSlice(as, bs) || slices.Equal(as, bs) {
		// The common case: one shape, an input's, valid already.
		if bop.IsComparison() {
			dt = Bool
		}
		return as, dt, nil
	}
	out, ok := BroadcastShapes(as, bs)
	if !ok {
		return nil, 0, errorf("shapes do not broadcast")
	}
	if !sameSlice(out, as) { // an input's shape is valid already
		if err := CheckShape(out); err != nil {
			return nil, 0, err
		}
	}
	if bop.IsComparison() {
		dt = Bool
	}
	return out, dt, nil
}

func inferWhere(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 3); err != nil {
		return nil, 0, err
	}
	c, a, b := op.In[0], op.In[1], op.In[2]
	if c.DType() != Bool {
		return nil, 0, errorf("condition must be Bool")
	}
	if a.DType() != b.DType() {
		return nil, 0, errorf("operand dtypes differ (%v, %v)", a.DType(), b.DType())
	}
	s, ok := BroadcastShapes(c.Shape(), a.Shape())
	if ok {
		s, ok = BroadcastShapes(s, b.Shape())
	}
	if !ok {
		return nil, 0, errorf("shapes do not broadcast")
	}
	if err := CheckShape(s); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = s, a.DType()
	return op.Shape, op.DType, nil
}

func inferCast(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if !op.DType.Valid() {
		return nil, 0, errorf("invalid dtype %v", op.DType)
	}
	op.Shape = op.In[0].Shape()
	return op.Shape, op.DType, nil
}

// checkAxis checks a non-negative axis against rank.
func checkAxis(axis, rank int) error {
	if axis < 0 || axis >= rank {
		return errorf("axis %d is out of range for rank %d", axis, rank)
	}
	return nil
}

func inferReduce(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	r := ReduceOp(op.Sub)
	x := op.In[0]
	xs := x.Shape()
	switch {
	case !r.Valid():
		return nil, 0, errorf("unknown reduction %d", op.Sub)
	case x.DType() == Bool && (r == ReduceSum || r == ReduceProd):
		return nil, 0, errorf("cannot %v a Bool tensor (cast it first)", r)
	}
	if err := checkAxis(op.Axis, len(xs)); err != nil {
		return nil, 0, err
	}
	if xs[op.Axis] == 0 && r != ReduceSum && r != ReduceProd {
		return nil, 0, errorf("cannot reduce an empty axis %d", op.Axis)
	}
	if op.KeepDim {
		op.Shape = KeepDimShape(xs, op.Axis)
	} else {
		op.Shape = slices.Delete(slices.Clone(xs), op.Axis, op.Axis+1)
	}
	op.DType = x.DType()
	if r == ReduceArgMax || r == ReduceArgMin {
		op.DType = I64
	}
	return op.Shape, op.DType, nil
}

func inferReshape(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if err := CheckShape(op.Shape); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	if n, m := NumElements(op.Shape), NumElements(x.Shape()); n != m {
		return nil, 0, errorf("shape %v has %d elements, the tensor has %d", op.Shape, n, m)
	}
	op.DType = x.DType()
	return op.Shape, op.DType, nil
}

func inferPermute(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	xs := x.Shape()
	if len(op.Ints) != len(xs) {
		return nil, 0, errorf("got %d axes %v for rank %d", len(op.Ints), op.Ints, len(xs))
	}
	var seen uint64
	out := make([]int, len(xs))
	for i, a := range op.Ints {
		if a < 0 || a >= len(xs) || a >= 64 {
			return nil, 0, errorf("axis %d is out of range for rank %d", a, len(xs))
		}
		if seen&(1<<uint(a)) != 0 {
			return nil, 0, errorf("axis %d repeated in %v", a, op.Ints)
		}
		seen |= 1 << uint(a)
		out[i] = xs[a]
	}
	op.Shape, op.DType = out, x.DType()
	return op.Shape, op.DType, nil
}

func inferExpand(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	xs := x.Shape()
	if len(op.Shape) < len(xs) {
		return nil, 0, errorf("target %v has lower rank", op.Shape)
	}
	if err := CheckShape(op.Shape); err != nil {
		return nil, 0, err
	}
	off := len(op.Shape) - len(xs)
	for j, s := range xs {
		if s != op.Shape[off+j] && s != 1 {
			return nil, 0, errorf("cannot expand axis %d of size %d to %d", j, s, op.Shape[off+j])
		}
	}
	op.DType = x.DType()
	return op.Shape, op.DType, nil
}

// checkRanges checks one clamped range per axis of shape and returns the
// sliced shape.
func checkRanges(rs []Range, shape []int) ([]int, error) {
	if len(rs) != len(shape) {
		return nil, errorf("%d ranges for rank %d", len(rs), len(shape))
	}
	out := make([]int, len(shape))
	for i, r := range rs {
		if r.Step < 1 || r.Start < 0 || r.End < r.Start || r.End > shape[i] {
			return nil, errorf("range %+v is not a clamped range of axis %d of size %d", r, i, shape[i])
		}
		out[i] = r.Len()
	}
	return out, nil
}

func inferSlice(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if op.Attrs == nil {
		return nil, 0, errorf("missing ranges")
	}
	x := op.In[0]
	out, err := checkRanges(op.Attrs.Ranges, x.Shape())
	if err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = out, x.DType()
	return op.Shape, op.DType, nil
}

func inferPad(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	xs := x.Shape()
	if len(op.Ints) != 2*len(xs) {
		return nil, 0, errorf("pads %v must be one (before, after) pair per axis of rank %d", op.Ints, len(xs))
	}
	out := make([]int, len(xs))
	for i, s := range xs {
		b, a := op.Ints[2*i], op.Ints[2*i+1]
		if b < 0 || a < 0 {
			return nil, 0, errorf("negative padding in %v", op.Ints)
		}
		if b > math.MaxInt-s || a > math.MaxInt-s-b {
			return nil, 0, errorf("padding %v overflows axis %d", op.Ints, i)
		}
		out[i] = s + b + a
	}
	if err := CheckShape(out); err != nil {
		return nil, 0, err
	}
	if err := ScalarFits(op.Scalars[0], x.DType()); err != nil {
		return nil, 0, errorf("padding value: %v", err)
	}
	op.Shape, op.DType = out, x.DType()
	return op.Shape, op.DType, nil
}

func inferFlip(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	r := len(x.Shape())
	for i, a := range op.Ints {
		if err := checkAxis(a, r); err != nil {
			return nil, 0, err
		}
		if slices.Contains(op.Ints[:i], a) {
			return nil, 0, errorf("axis %d repeated", a)
		}
	}
	op.Shape, op.DType = x.Shape(), x.DType()
	return op.Shape, op.DType, nil
}

func inferCat(op Op) ([]int, DType, error) {
	if len(op.Xs) == 0 {
		return nil, 0, errorf("no tensors")
	}
	if err := checkInputs(&op, len(op.Xs)); err != nil {
		return nil, 0, err
	}
	x0 := op.Xs[0]
	s0 := x0.Shape()
	if err := checkAxis(op.Axis, len(s0)); err != nil {
		return nil, 0, err
	}
	total := 0
	for _, x := range op.Xs {
		s := x.Shape()
		if x.DType() != x0.DType() {
			return nil, 0, errorf("dtypes differ")
		}
		if len(s) != len(s0) {
			return nil, 0, errorf("ranks differ")
		}
		for i := range s {
			if i != op.Axis && s[i] != s0[i] {
				return nil, 0, errorf("sizes differ on axis %d", i)
			}
		}
		if s[op.Axis] > math.MaxInt-total {
			return nil, 0, errorf("the joined axis overflows")
		}
		total += s[op.Axis]
	}
	out := slices.Clone(s0)
	out[op.Axis] = total
	if err := CheckShape(out); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = out, x0.DType()
	return op.Shape, op.DType, nil
}

// checkIndexLike checks an index tensor of x's rank whose sizes off axis
// are at most x's.
func checkIndexLike(x, index Tensor, axis int) error {
	if index.DType() != I64 {
		return errorf("index must be I64, got %v", index.DType())
	}
	xs, is := x.Shape(), index.Shape()
	if len(is) != len(xs) {
		return errorf("index rank must equal x's rank")
	}
	if err := checkAxis(axis, len(xs)); err != nil {
		return err
	}
	for i, s := range is {
		if i != axis && s > xs[i] {
			return errorf("index size %d exceeds x's size %d on axis %d", s, xs[i], i)
		}
	}
	return nil
}

func inferGather(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 2); err != nil {
		return nil, 0, err
	}
	x, index := op.In[0], op.In[1]
	if err := checkIndexLike(x, index, op.Axis); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = index.Shape(), x.DType()
	return op.Shape, op.DType, nil
}

func inferScatterAdd(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 3); err != nil {
		return nil, 0, err
	}
	x, index, src := op.In[0], op.In[1], op.In[2]
	if !slices.Equal(index.Shape(), src.Shape()) {
		return nil, 0, errorf("index and src must have equal shapes of x's rank")
	}
	if src.DType() != x.DType() {
		return nil, 0, errorf("src dtype %v differs from x's %v", src.DType(), x.DType())
	}
	if err := checkIndexLike(x, index, op.Axis); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = x.Shape(), x.DType()
	return op.Shape, op.DType, nil
}

func inferIndexSelect(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 2); err != nil {
		return nil, 0, err
	}
	x, index := op.In[0], op.In[1]
	if index.DType() != I64 {
		return nil, 0, errorf("index must be I64, got %v", index.DType())
	}
	is := index.Shape()
	if len(is) != 1 {
		return nil, 0, errorf("index must be rank 1")
	}
	xs := x.Shape()
	if err := checkAxis(op.Axis, len(xs)); err != nil {
		return nil, 0, err
	}
	out := slices.Clone(xs)
	out[op.Axis] = is[0]
	if err := CheckShape(out); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = out, x.DType()
	return op.Shape, op.DType, nil
}

func inferMatmul(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 2); err != nil {
		return nil, 0, err
	}
	a, b := op.In[0], op.In[1]
	as, bs := a.Shape(), b.Shape()
	if len(as) < 2 || len(bs) < 2 {
		return nil, 0, errorf("operands must have rank >= 2")
	}
	if a.DType() != b.DType() {
		return nil, 0, errorf("operand dtypes differ (%v, %v)", a.DType(), b.DType())
	}
	if a.DType() == Bool {
		return nil, 0, errorf("Bool operands are not supported")
	}
	if as[len(as)-1] != bs[len(bs)-2] {
		return nil, 0, errorf("inner dimensions differ: lhs has %d columns, rhs has %d rows", as[len(as)-1], bs[len(bs)-2])
	}
	batch, ok := BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if !ok {
		return nil, 0, errorf("batch dimensions %v and %v do not broadcast", as[:len(as)-2], bs[:len(bs)-2])
	}
	out := make([]int, len(batch)+2)
	copy(out, batch)
	out[len(batch)], out[len(batch)+1] = as[len(as)-2], bs[len(bs)-1]
	if err := CheckShape(out); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = out, a.DType()
	return op.Shape, op.DType, nil
}

// convOptions checks that op has its two inputs and valid convolution
// options (Attrs.Conv) and returns the options.
func convOptions(op *Op) (ConvOptions, error) {
	if err := checkInputs(op, 2); err != nil {
		return ConvOptions{}, err
	}
	if op.Attrs == nil {
		return ConvOptions{}, errorf("missing options")
	}
	o := op.Attrs.Conv
	return o, checkConvOptions(o)
}

// checkConvOptions checks options whose defaults are filled in.
func checkConvOptions(o ConvOptions) error {
	for i := range 2 {
		if o.Stride[i] < 1 || o.Dilation[i] < 1 || o.Padding[i] < 0 || o.OutputPadding[i] < 0 {
			return errorf("bad options %+v (stride, dilation >= 1; padding, output padding >= 0)", o)
		}
		if o.Stride[i] > 1<<30 || o.Dilation[i] > 1<<30 || o.Padding[i] > 1<<30 || o.OutputPadding[i] > 1<<30 {
			return errorf("options %+v are out of range", o)
		}
	}
	if o.Groups < 1 || o.Groups > maxGroups {
		return errorf("groups %d must be in [1, %d]", o.Groups, maxGroups)
	}
	return nil
}

// maxGroups bounds ConvOptions.Groups.
const maxGroups = 1 << 20

// convSizeFits reports whether ConvOutputSize's arithmetic on spatial
// axis i, for an input of size in and a kernel of size k >= 1 under o
// (checked options), stays within an int.
func convSizeFits(in, k int, o ConvOptions, i int, transpose bool) bool {
	const m = math.MaxInt
	if in > m-2*o.Padding[i] || k-1 > (m-1)/o.Dilation[i] {
		return false
	}
	if !transpose {
		return true
	}
	span := o.Dilation[i]*(k-1) + 1
	if span > m-o.OutputPadding[i] {
		return false
	}
	return in-1 <= (m-span-o.OutputPadding[i])/o.Stride[i]
}

// inferConv returns the Infer of Conv2d (transpose false) or
// ConvTranspose2d.
func inferConv(transpose bool) func(Op) ([]int, DType, error) {
	return func(op Op) ([]int, DType, error) {
		o, err := convOptions(&op)
		if err != nil {
			return nil, 0, err
		}
		x, w := op.In[0], op.In[1]
		xs, ws := x.Shape(), w.Shape()
		if len(xs) != 4 || len(ws) != 4 {
			if transpose {
				return nil, 0, errorf("needs x [N, Cin, H, W] and weight [Cin, Cout/groups, kH, kW]")
			}
			return nil, 0, errorf("needs x [N, Cin, H, W] and weight [Cout, Cin/groups, kH, kW]")
		}
		if !x.DType().IsFloat() || x.DType() != w.DType() {
			return nil, 0, errorf("needs float operands of one dtype")
		}
		for i := range 2 {
			if ws[2+i] < 1 {
				return nil, 0, errorf("kernel size %d on spatial axis %d must be >= 1", ws[2+i], i)
			}
			if !convSizeFits(xs[2+i], ws[2+i], o, i, transpose) {
				return nil, 0, errorf("input size %d and kernel size %d overflow on spatial axis %d", xs[2+i], ws[2+i], i)
			}
		}
		g := o.Groups
		if ws[1] > math.MaxInt/g {
			return nil, 0, errorf("weight axis 1 of size %d times %d groups overflows", ws[1], g)
		}
		var cout int
		if transpose {
			if xs[1] != ws[0] || ws[0]%g != 0 {
				return nil, 0, errorf("channels: x has %d, weight has %d (divisible by %d groups)", xs[1], ws[0], g)
			}
			for i := range 2 {
				if o.OutputPadding[i] >= max(o.Stride[i], o.Dilation[i]) {
					return nil, 0, errorf("output padding %v must be smaller than stride or dilation", o.OutputPadding)
				}
			}
			cout = ws[1] * g
		} else {
			if xs[1] != ws[1]*g || ws[0]%g != 0 {
				return nil, 0, errorf("channels: x has %d, weight expects %d×%d groups (and Cout %d divisible by groups)", xs[1], ws[1], g, ws[0])
			}
			for i := range 2 {
				eff := o.Dilation[i]*(ws[2+i]-1) + 1
				if xs[2+i]+2*o.Padding[i] < eff {
					return nil, 0, errorf("kernel (dilated size %d) is larger than the padded input %d on spatial axis %d", eff, xs[2+i]+2*o.Padding[i], i)
				}
			}
			cout = ws[0]
		}
		sp := ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, transpose)
		for i := range 2 {
			if sp[i] <= 0 {
				return nil, 0, errorf("output would be empty on spatial axis %d", i)
			}
		}
		out := []int{xs[0], cout, sp[0], sp[1]}
		if err := CheckShape(out); err != nil {
			return nil, 0, err
		}
		op.Shape, op.DType = out, x.DType()
		return op.Shape, op.DType, nil
	}
}
