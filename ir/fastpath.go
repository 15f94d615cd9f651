package ir

import (
	"math"
	"slices"
)

// The fast-path kinds: ops that a backend may run with one kernel and that
// every other backend runs through their decomposition into base kinds.
// A kernel must compute what the decomposition computes; where the
// decomposition's exact rounding matters (the gradients of max pooling and
// of reductions to an extremum, the optimizer steps) kernels reproduce it
// bit for bit, as their doc comments say.

func init() {
	register(KindMaxPool2d, Spec{Name: "max_pool2d", Group: GroupPool, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"},
		Infer: inferMaxPool2d, Decompose: decomposeMaxPool2d})
	register(KindMaxPool2dGrad, Spec{Name: "max_pool2d_grad", Group: GroupPool, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "y", "g"},
		Infer: inferMaxPool2dGrad, Decompose: decomposeMaxPool2dGrad})
	register(KindConv2dWeightGrad, Spec{Name: "conv2d_weight_grad", Group: GroupLinalg, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "grad_out"},
		Infer: inferConv2dWeightGrad, Decompose: decomposeConv2dWeightGrad})
	register(KindSliceScatter, Spec{Name: "slice_scatter", Group: GroupMovement, Cost: MemoryBound, NumInputs: 1, Operands: []string{"src"},
		Infer: inferSliceScatter, Decompose: decomposeSliceScatter})
	register(KindExtremumGrad, Spec{Name: "extremum_grad", Group: GroupReduce, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "y", "g"},
		Infer: inferExtremumGrad, Decompose: decomposeExtremumGrad})
	register(KindAdamStep, Spec{Name: "adam_step", Group: GroupOptimizer, Cost: MemoryBound, NumInputs: 4, NumOutputs: 3, Operands: []string{"param", "grad", "m", "v"},
		Infer: inferAdamStep, Decompose: decomposeAdamStep})
	register(KindSGDStep, Spec{Name: "sgd_step", Group: GroupOptimizer, Cost: MemoryBound, NumInputs: 3, NumOutputs: 2, Operands: []string{"param", "grad", "momentum_buffer"},
		Infer: inferSGDStep, Decompose: decomposeSGDStep})
}

// ---- max pooling ----

// PoolShape validates pooling options o (every field set) against an input
// of shape [N, C, H, W] whose padded extent must hold the dilated window,
// and returns the output shape [N, C, Ho, Wo] (PoolOutputSize), or an
// error saying what is wrong. A window has at most MaxPoolTaps taps
// (kH·kW): pooling is composed from one strided view per tap.
func PoolShape(xs []int, o PoolOptions) ([]int, error) {
	if len(xs) != 4 {
		return nil, errorf("needs x [N, C, H, W] (or [C, H, W])")
	}
	for i := range 2 {
		if o.Kernel[i] < 1 || o.Stride[i] < 1 || o.Dilation[i] < 1 || o.Padding[i] < 0 {
			return nil, errorf("bad options %+v (kernel, stride, dilation >= 1; padding >= 0)", o)
		}
		if o.Kernel[i] > 1<<20 || o.Stride[i] > 1<<30 || o.Dilation[i] > 1<<20 || o.Padding[i] > 1<<30 {
			return nil, errorf("options %+v are out of range", o)
		}
		if i == 1 && o.Kernel[0]*o.Kernel[1] > MaxPoolTaps {
			return nil, errorf("a %d×%d window has more than %d taps", o.Kernel[0], o.Kernel[1], MaxPoolTaps)
		}
		eff := o.Dilation[i]*(o.Kernel[i]-1) + 1
		if 2*o.Padding[i] > eff {
			return nil, errorf("padding %v must be at most half the (dilated) kernel %v", o.Padding, o.Kernel)
		}
		if xs[2+i] > math.MaxInt-2*o.Padding[i] {
			return nil, errorf("input size %d with padding %d overflows on spatial axis %d", xs[2+i], o.Padding[i], i)
		}
		if in := xs[2+i] + 2*o.Padding[i]; in < eff {
			return nil, errorf("window (dilated size %d) is larger than the padded input %d on spatial axis %d", eff, in, i)
		}
	}
	sp := PoolOutputSize(xs[2], xs[3], o)
	return []int{xs[0], xs[1], sp[0], sp[1]}, nil
}

// MaxPoolTaps bounds the number of taps kH·kW of a pooling window.
const MaxPoolTaps = 1 << 20

// checkPool checks pooling options and a float rank-4 input (PoolShape);
// it returns the output shape.
func checkPool(x Tensor, a *Attrs) ([]int, error) {
	if a == nil {
		return nil, errorf("missing options")
	}
	out, err := PoolShape(x.Shape(), a.Pool)
	if err != nil {
		return nil, err
	}
	if !x.DType().IsFloat() {
		return nil, errorf("needs a float tensor, got %v", x.DType())
	}
	return out, nil
}

func inferMaxPool2d(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	out, err := checkPool(op.In[0], op.Attrs)
	if err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = out, op.In[0].DType()
	return op.Shape, op.DType, nil
}

func inferMaxPool2dGrad(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 3); err != nil {
		return nil, 0, err
	}
	x, y, g := op.In[0], op.In[1], op.In[2]
	out, err := checkPool(x, op.Attrs)
	if err != nil {
		return nil, 0, err
	}
	if !slices.Equal(y.Shape(), out) || !slices.Equal(g.Shape(), out) || y.DType() != x.DType() || g.DType() != x.DType() {
		return nil, 0, errorf("y and g must be the pooled shape %v in x's dtype", out)
	}
	op.Shape, op.DType = x.Shape(), x.DType()
	return op.Shape, op.DType, nil
}

// poolWindows pads x with value and returns the kH·kW strided views
// [N, C, Ho, Wo] of the padded input, one per kernel offset in the order
// (0, 0), (0, 1), ..., and the padded tensor's shape.
func poolWindows(e Executor, x Tensor, o PoolOptions, value float64) ([]Tensor, []Range, [][]Range) {
	xs := x.Shape()
	p := x
	if o.Padding != [2]int{} {
		p = Pad(e, x, []int{0, 0, 0, 0, o.Padding[0], o.Padding[0], o.Padding[1], o.Padding[1]}, value)
	}
	ranges := PoolWindowRanges(xs, o)
	views := make([]Tensor, len(ranges))
	for k, rs := range ranges {
		views[k] = Slice(e, p, rs)
	}
	return views, padRanges(xs, o), ranges
}

// PoolWindowRanges returns, for a pooling of an input of shape
// [N, C, H, W] under o (valid, see PoolShape), the ranges of the kH·kW
// strided views of the padded input, one per kernel offset in the order
// (0, 0), (0, 1), ...: element (ho, wo) of view k is tap k of window
// (ho, wo).
func PoolWindowRanges(xs []int, o PoolOptions) [][]Range {
	out := PoolOutputSize(xs[2], xs[3], o)
	ranges := make([][]Range, 0, o.Kernel[0]*o.Kernel[1])
	for i := range o.Kernel[0] {
		h0 := i * o.Dilation[0]
		for j := range o.Kernel[1] {
			w0 := j * o.Dilation[1]
			ranges = append(ranges, []Range{{0, xs[0], 1}, {0, xs[1], 1},
				{h0, h0 + o.Stride[0]*(out[0]-1) + 1, o.Stride[0]},
				{w0, w0 + o.Stride[1]*(out[1]-1) + 1, o.Stride[1]}})
		}
	}
	return ranges
}

// padRanges selects x's extent inside its padded tensor.
func padRanges(xs []int, o PoolOptions) []Range {
	return []Range{{0, xs[0], 1}, {0, xs[1], 1}, {o.Padding[0], o.Padding[0] + xs[2], 1}, {o.Padding[1], o.Padding[1] + xs[3], 1}}
}

// stackLast stacks views of one shape along a new last axis.
func stackLast(e Executor, views []Tensor) Tensor {
	us := make([]Tensor, len(views))
	for i, v := range views {
		us[i] = Reshape(e, v, append(slices.Clone(v.Shape()), 1))
	}
	return Cat(e, us, len(views[0].Shape()))
}

// decomposeMaxPool2d: the maximum over a window axis of the stacked
// kH·kW strided views of the input padded with -Inf (one reduction).
func decomposeMaxPool2d(op Op, e Executor) Outputs {
	o := op.Attrs.Pool
	views, _, _ := poolWindows(e, op.In[0], o, math.Inf(-1))
	if len(views) == 1 {
		return One(views[0])
	}
	return One(Reduce(e, ReduceMax, stackLast(e, views), 4, false))
}

// decomposeMaxPool2dGrad is the gradient of MaxPool2d with respect to its
// input, routed as PyTorch's max_pool2d routes it: each window's g goes
// whole to the window's selected tap, the first (in kernel row-major
// order) equal to its maximum, or the first NaN of a window whose maximum
// is NaN; the other taps get +0, so a NaN or infinite g reaches only the
// selected tap. Over the stacked windows the selection is
// first = eq ∧ (CumSum(eq) = 1) for eq = (x = y) ∨ (x ≠ x ∧ y ≠ y); each
// window's terms Where(first, g, 0) are scattered back to their strided
// positions of the padded input, the kH·kW full-size terms summed from the
// last kernel offset down to the first, and the padding sliced away.
func decomposeMaxPool2dGrad(op Op, e Executor) Outputs {
	o := op.Attrs.Pool
	x, y, g := op.In[0], op.In[1], op.In[2]
	views, inner, ranges := poolWindows(e, x, o, math.Inf(-1))
	if len(views) == 1 {
		ps := paddedShape(x.Shape(), o)
		gp := SliceScatter(e, g, ps, ranges[0])
		return One(sliceIfNeeded(e, gp, inner))
	}
	s := stackLast(e, views)
	ks := append(slices.Clone(y.Shape()), 1)
	yk := Reshape(e, y, ks)
	nan := Binary(e, OpAnd, Binary(e, OpNe, s, s), Binary(e, OpNe, yk, yk))
	eq := Binary(e, OpOr, Binary(e, OpEq, s, yk), nan)
	count := Apply(e, Op{Kind: KindCumSum, Axis: 4, In: [3]Tensor{Cast(e, eq, x.DType())}})
	first := Binary(e, OpAnd, eq, CompareScalar(e, OpEq, count, 1))
	gs := Where(e, first, Reshape(e, g, ks), Scalar(e, g.DType(), 0))
	ps := paddedShape(x.Shape(), o)
	var acc Tensor
	last := len(views) - 1
	for k := last; k >= 0; k-- {
		rs := FullRanges(gs.Shape())
		rs[4] = Range{Start: k, End: k + 1, Step: 1}
		gk := Reshape(e, Slice(e, gs, rs), views[k].Shape())
		full := SliceScatter(e, gk, ps, ranges[k])
		if acc == nil {
			acc = full
		} else {
			acc = Add(e, acc, full)
		}
	}
	return One(sliceIfNeeded(e, acc, inner))
}

func paddedShape(xs []int, o PoolOptions) []int {
	return []int{xs[0], xs[1], xs[2] + 2*o.Padding[0], xs[3] + 2*o.Padding[1]}
}

// sliceIfNeeded slices t to ranges unless they select all of it.
func sliceIfNeeded(e Executor, t Tensor, ranges []Range) Tensor {
	for i, r := range ranges {
		if r.Start != 0 || r.Len() != t.Shape()[i] {
			return Slice(e, t, ranges)
		}
	}
	return t
}

// ---- convolution weight gradient ----

func inferConv2dWeightGrad(op Op) ([]int, DType, error) {
	o, err := convOptions(&op)
	if err != nil {
		return nil, 0, err
	}
	x, g := op.In[0], op.In[1]
	xs, gs := x.Shape(), g.Shape()
	if len(xs) != 4 || len(gs) != 4 || len(op.Shape) != 4 {
		return nil, 0, errorf("needs x [N, Cin, H, W], grad_out [N, Cout, Ho, Wo] and a rank-4 weight shape")
	}
	if !x.DType().IsFloat() || x.DType() != g.DType() {
		return nil, 0, errorf("needs float operands of one dtype")
	}
	if err := CheckShape(op.Shape); err != nil {
		return nil, 0, err
	}
	ws := op.Shape
	if ws[1] > math.MaxInt/o.Groups {
		return nil, 0, errorf("weight axis 1 of size %d times %d groups overflows", ws[1], o.Groups)
	}
	if xs[0] != gs[0] || ws[0] != gs[1] || xs[1] != ws[1]*o.Groups || gs[1]%o.Groups != 0 {
		return nil, 0, errorf("shapes x %v, grad_out %v and weight %v do not match for %d groups", xs, gs, ws, o.Groups)
	}
	for i := range 2 {
		if ws[2+i] < 1 {
			return nil, 0, errorf("empty kernel %v", ws)
		}
		if !convSizeFits(xs[2+i], ws[2+i], o, i, false) {
			return nil, 0, errorf("input size %d and kernel size %d overflow on spatial axis %d", xs[2+i], ws[2+i], i)
		}
	}
	if sp := ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, false); sp != [2]int{gs[2], gs[3]} {
		return nil, 0, errorf("grad_out %v is not the output shape of x %v and weight %v (spatial %v)", gs, xs, ws, sp)
	}
	op.DType = x.DType()
	return op.Shape, op.DType, nil
}

// decomposeConv2dWeightGrad computes the weight gradient group by group:
// per group a convolution of the input with the batch axis as channels,
// whose kernel is the output gradient, with stride and dilation swapped,
// narrowed to the kernel size and permuted to [Cout/G, Cin/G, kH, kW];
// the groups are joined along axis 0.
func decomposeConv2dWeightGrad(op Op, e Executor) Outputs {
	x, g := op.In[0], op.In[1]
	o := op.Attrs.Conv
	kernel := op.Shape[2:]
	groups := max(o.Groups, 1)
	if groups == 1 {
		return One(weightGrad(e, x, g, o, kernel))
	}
	xc, gc := x.Shape()[1]/groups, g.Shape()[1]/groups
	parts := make([]Tensor, groups)
	for j := range parts {
		parts[j] = weightGrad(e, channels(e, x, j*xc, (j+1)*xc), channels(e, g, j*gc, (j+1)*gc), o, kernel)
	}
	return One(Cat(e, parts, 0))
}

var swap01 = []int{1, 0, 2, 3}

// weightGrad is the single-group weight gradient.
func weightGrad(e Executor, x, g Tensor, o ConvOptions, kernel []int) Tensor {
	xt := Permute(e, x, swap01) // [Cx, N, H, W]
	gt := Permute(e, g, swap01) // [Cg, N, Ho, Wo]
	t := ConvOptions{Stride: o.Dilation, Padding: o.Padding, Dilation: o.Stride, Groups: 1}
	r := Conv2d(e, xt, gt, t) // [Cx, Cg, kH', kW']
	rs := r.Shape()
	r = Narrow(e, r, []int{rs[0], rs[1], kernel[0], kernel[1]})
	return Permute(e, r, swap01)
}

// channels slices axis 1 of a rank-4 tensor to [lo, hi).
func channels(e Executor, t Tensor, lo, hi int) Tensor {
	rs := FullRanges(t.Shape())
	rs[1] = Range{Start: lo, End: hi, Step: 1}
	return Slice(e, t, rs)
}

// ---- slice scatter ----

func inferSliceScatter(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if op.Attrs == nil {
		return nil, 0, errorf("missing ranges")
	}
	if err := CheckShape(op.Shape); err != nil {
		return nil, 0, err
	}
	src := op.In[0]
	want, err := checkRanges(op.Attrs.Ranges, op.Shape)
	if err != nil {
		return nil, 0, err
	}
	if !slices.Equal(want, src.Shape()) {
		return nil, 0, errorf("src shape %v is not the sliced shape %v", src.Shape(), want)
	}
	op.DType = src.DType()
	return op.Shape, op.DType, nil
}

// decomposeSliceScatter: zeros of Shape with src at the positions the
// ranges select, built per axis from Reshape, Pad and Slice (a stepped
// axis interleaves src with step-1 zeros).
func decomposeSliceScatter(op Op, e Executor) Outputs {
	g := op.In[0]
	shape := op.Shape
	ranges := op.Attrs.Ranges
	for _, r := range ranges {
		if r.Len() == 0 {
			return One(Zeros(e, shape, g.DType()))
		}
	}
	for ax, r := range ranges {
		n := r.Len()
		if r.Start == 0 && n == shape[ax] {
			continue // whole axis, step irrelevant
		}
		cur := g.Shape()
		span := n
		if r.Step > 1 && n > 1 {
			// [.., n, ..] -> [.., n, 1, ..] -> pad to [.., n, step, ..]
			// -> [.., n*step, ..] -> keep the first (n-1)*step+1.
			split := make([]int, 0, len(cur)+1)
			split = append(split, cur[:ax+1]...)
			split = append(split, 1)
			split = append(split, cur[ax+1:]...)
			g = Reshape(e, g, split)
			pads := make([]int, 2*len(split))
			pads[2*(ax+1)+1] = r.Step - 1
			g = Pad(e, g, pads, 0)
			merged := slices.Clone(cur)
			merged[ax] = n * r.Step
			g = Reshape(e, g, merged)
			span = (n-1)*r.Step + 1
			rs := FullRanges(merged)
			rs[ax].End = span
			g = Slice(e, g, rs)
		}
		pads := make([]int, 2*len(cur))
		pads[2*ax], pads[2*ax+1] = r.Start, shape[ax]-r.Start-span
		g = Pad(e, g, pads, 0)
	}
	return One(g)
}

// ---- extremum gradient ----

func inferExtremumGrad(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 3); err != nil {
		return nil, 0, err
	}
	x, y, g := op.In[0], op.In[1], op.In[2]
	xs := x.Shape()
	if err := checkAxis(op.Axis, len(xs)); err != nil {
		return nil, 0, err
	}
	if !x.DType().IsFloat() {
		return nil, 0, errorf("needs a float tensor, got %v", x.DType())
	}
	ks := KeepDimShape(xs, op.Axis)
	if !slices.Equal(y.Shape(), ks) || !slices.Equal(g.Shape(), ks) || y.DType() != x.DType() || g.DType() != x.DType() {
		return nil, 0, errorf("y and g must have the keep-dim shape %v in x's dtype", ks)
	}
	op.Shape, op.DType = xs, x.DType()
	return op.Shape, op.DType, nil
}

// decomposeExtremumGrad: Mul(Div(g, Sum(mask)), mask) with
// mask = Cast(Eq(x, y)), in x's dtype (tied maxima share g evenly,
// PyTorch's amax/amin backward; a NaN lane, which no element equals, gets
// NaN everywhere).
func decomposeExtremumGrad(op Op, e Executor) Outputs {
	x, y, g := op.In[0], op.In[1], op.In[2]
	mask := Cast(e, Binary(e, OpEq, x, y), x.DType())
	cnt := Reduce(e, ReduceSum, mask, op.Axis, true)
	return One(Mul(e, Div(e, g, cnt), mask))
}

// ---- optimizer steps ----

func inferAdamStep(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 4); err != nil {
		return nil, 0, err
	}
	if op.Attrs == nil {
		return nil, 0, errorf("missing hyperparameters")
	}
	p := op.Xs[0]
	for _, t := range op.Xs[1:4] {
		if !slices.Equal(t.Shape(), p.Shape()) || t.DType() != p.DType() {
			return nil, 0, errorf("param, grad, m and v must have one shape and dtype")
		}
	}
	if !p.DType().IsFloat() {
		return nil, 0, errorf("needs float tensors, got %v", p.DType())
	}
	if op.Attrs.Optim.Step < 1 {
		return nil, 0, errorf("step %d must be >= 1", op.Attrs.Optim.Step)
	}
	u := &op.Attrs.Optim
	if err := finiteHyper([]string{"lr", "beta1", "beta2", "eps", "weight_decay"}, u.LR, u.Beta1, u.Beta2, u.Eps, u.WeightDecay); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = p.Shape(), p.DType()
	return op.Shape, op.DType, nil
}

// decomposeAdamStep computes one Adam or AdamW update of param with
// gradient grad and moments m and v as this sequence of elementwise ops,
// each rounding to the dtype and each scalar first converted to it:
//
//	θ ← θ·(1 − lr·λ)                 (Decoupled)
//	g ← g + θ·λ                      (not Decoupled, λ ≠ 0)
//	m ← m·β₁ + g·(1 − β₁)
//	v ← v·β₂ + (g·g)·(1 − β₂)
//	θ ← θ − (m / (√v / √(1 − β₂ᵗ) + ε))·(lr / (1 − β₁ᵗ))
//
// where 1 − lr·λ, 1 − β₁, 1 − β₂, √(1 − β₂ᵗ) and lr / (1 − β₁ᵗ) are computed
// in float64. The outputs are the new param, m and v.
func decomposeAdamStep(op Op, e Executor) Outputs {
	u := op.Attrs.Optim
	theta, g, m, v := op.Xs[0], op.Xs[1], op.Xs[2], op.Xs[3]
	if u.Decoupled {
		theta = MulScalar(e, theta, 1-u.LR*u.WeightDecay)
	} else if u.WeightDecay != 0 {
		g = Add(e, g, MulScalar(e, theta, u.WeightDecay))
	}
	m = Add(e, MulScalar(e, m, u.Beta1), MulScalar(e, g, 1-u.Beta1))
	v = Add(e, MulScalar(e, v, u.Beta2), MulScalar(e, Mul(e, g, g), 1-u.Beta2))
	bc1 := 1 - math.Pow(u.Beta1, float64(u.Step))
	bc2 := 1 - math.Pow(u.Beta2, float64(u.Step))
	denom := AddScalar(e, DivScalar(e, Unary(e, OpSqrt, v), math.Sqrt(bc2)), u.Eps)
	theta = Sub(e, theta, MulScalar(e, Div(e, m, denom), u.LR/bc1))
	return Outputs{theta, m, v}
}

// finiteHyper returns an error naming the first of the hyperparameters
// vs (named by names) that is NaN or infinite: such an update would turn
// every parameter into NaN.
func finiteHyper(names []string, vs ...float64) error {
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errorf("hyperparameter %s is %v; it must be finite", names[i], v)
		}
	}
	return nil
}

func inferSGDStep(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 2); err != nil {
		return nil, 0, err
	}
	if op.Attrs == nil {
		return nil, 0, errorf("missing hyperparameters")
	}
	p, g, b := op.In[0], op.In[1], op.In[2]
	if !slices.Equal(g.Shape(), p.Shape()) || g.DType() != p.DType() ||
		(b != nil && (!slices.Equal(b.Shape(), p.Shape()) || b.DType() != p.DType())) {
		return nil, 0, errorf("param, grad and momentum buffer must have one shape and dtype")
	}
	if !p.DType().IsFloat() {
		return nil, 0, errorf("needs float tensors, got %v", p.DType())
	}
	if op.Attrs.Optim.Nesterov && op.Attrs.Optim.Momentum == 0 {
		return nil, 0, errorf("Nesterov momentum needs a non-zero momentum")
	}
	u := &op.Attrs.Optim
	if err := finiteHyper([]string{"lr", "momentum", "weight_decay"}, u.LR, u.Momentum, u.WeightDecay); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = p.Shape(), p.DType()
	return op.Shape, op.DType, nil
}

// decomposeSGDStep computes one SGD update (PyTorch's torch.optim.SGD with
// dampening 0) as this sequence of elementwise ops:
//
//	g ← g + θ·λ              (λ ≠ 0)
//	b ← g                    (μ ≠ 0, no buffer yet)
//	b ← b·μ + g              (μ ≠ 0, buffer)
//	g ← g + b·μ (Nesterov) or g ← b      (μ ≠ 0)
//	θ ← θ − g·lr
//
// The outputs are the new param and the momentum buffer (nil when μ = 0).
func decomposeSGDStep(op Op, e Executor) Outputs {
	u := op.Attrs.Optim
	theta, g, b := op.In[0], op.In[1], op.In[2]
	if u.WeightDecay != 0 {
		g = Add(e, g, MulScalar(e, theta, u.WeightDecay))
	}
	if u.Momentum != 0 {
		if b == nil {
			b = g
		} else {
			b = Add(e, MulScalar(e, b, u.Momentum), g)
		}
		if u.Nesterov {
			g = Add(e, g, MulScalar(e, b, u.Momentum))
		} else {
			g = b
		}
	} else {
		b = nil
	}
	return Outputs{Sub(e, theta, MulScalar(e, g, u.LR)), b}
}
