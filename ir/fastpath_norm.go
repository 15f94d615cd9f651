package ir

import (
	"math"
	"slices"
)

// The normalization kinds: softmax, log-softmax and logsumexp along an
// axis, layer normalization and RMS normalization over trailing axes, and
// the gradients of the softmaxes and the normalizations. Each is defined
// by its decomposition into base kinds, which a backend without a kernel
// runs op by op. A kernel computes the same function to within a few
// float rounding errors of its dtype (its doc comment states its bound),
// not necessarily bit for bit, and agrees with the decomposition exactly
// at the edges: a NaN in a lane gives NaN in the lane's results, a lane
// holding +Inf or only -Inf gives NaN for the softmaxes, an empty lane
// gives an empty result (and -Inf for logsumexp).
func init() {
	register(KindSoftmax, Spec{Name: "softmax", Group: GroupReduce, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"},
		Infer: inferSoftmax, Decompose: decomposeSoftmax})
	register(KindLogSoftmax, Spec{Name: "log_softmax", Group: GroupReduce, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"},
		Infer: inferSoftmax, Decompose: decomposeLogSoftmax})
	register(KindSoftmaxGrad, Spec{Name: "softmax_grad", Group: GroupReduce, Cost: ComputeBound, NumInputs: 2, Operands: []string{"y", "g"},
		Infer: inferSoftmaxGrad, Decompose: decomposeSoftmaxGrad})
	register(KindLogSoftmaxGrad, Spec{Name: "log_softmax_grad", Group: GroupReduce, Cost: ComputeBound, NumInputs: 2, Operands: []string{"y", "g"},
		Infer: inferSoftmaxGrad, Decompose: decomposeLogSoftmaxGrad})
	register(KindLogSumExp, Spec{Name: "logsumexp", Group: GroupReduce, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"},
		Infer: inferLogSumExp, Decompose: decomposeLogSumExp})
	register(KindLayerNorm, Spec{Name: "layer_norm", Group: GroupReduce, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "weight", "bias"},
		Infer: inferLayerNorm, Decompose: decomposeLayerNorm})
	register(KindLayerNormGrad, Spec{Name: "layer_norm_grad", Group: GroupReduce, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "weight", "g"},
		Infer: inferNormGrad, Decompose: decomposeLayerNormGrad})
	register(KindRMSNorm, Spec{Name: "rms_norm", Group: GroupReduce, Cost: ComputeBound, NumInputs: 2, Operands: []string{"x", "weight"},
		Infer: inferRMSNorm, Decompose: decomposeRMSNorm})
	register(KindRMSNormGrad, Spec{Name: "rms_norm_grad", Group: GroupReduce, Cost: ComputeBound, NumInputs: 3, Operands: []string{"x", "weight", "g"},
		Infer: inferNormGrad, Decompose: decomposeRMSNormGrad})
}

// ---- softmax, log-softmax, logsumexp ----

// floatAxis checks that x is a float tensor with an axis op.Axis.
func floatAxis(x Tensor, axis int) error {
	if !x.DType().IsFloat() {
		return errorf("needs a float tensor, got %v", x.DType())
	}
	return checkAxis(axis, len(x.Shape()))
}

func inferSoftmax(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	if err := floatAxis(x, op.Axis); err != nil {
		return nil, 0, err
	}
	return x.Shape(), x.DType(), nil
}

func inferSoftmaxGrad(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 2); err != nil {
		return nil, 0, err
	}
	y, g := op.In[0], op.In[1]
	if err := floatAxis(y, op.Axis); err != nil {
		return nil, 0, err
	}
	if !slices.Equal(g.Shape(), y.Shape()) || g.DType() != y.DType() {
		return nil, 0, errorf("g %v %v must have y's shape %v and dtype %v", g.Shape(), g.DType(), y.Shape(), y.DType())
	}
	return y.Shape(), y.DType(), nil
}

func inferLogSumExp(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	if err := floatAxis(x, op.Axis); err != nil {
		return nil, 0, err
	}
	return reducedShape(x.Shape(), op.Axis, op.KeepDim), x.DType(), nil
}

// reducedShape is shape with axis kept as 1 (keepDim) or removed.
func reducedShape(shape []int, axis int, keepDim bool) []int {
	if keepDim {
		return KeepDimShape(shape, axis)
	}
	return slices.Delete(slices.Clone(shape), axis, axis+1)
}

// shifted returns x minus its maximum along axis (kept with size 1), or x
// itself when the axis is empty.
func shifted(e Executor, x Tensor, axis int) Tensor {
	if x.Shape()[axis] == 0 {
		return x
	}
	return Sub(e, x, Reduce(e, ReduceMax, x, axis, true))
}

// decomposeSoftmax: with s = x − max(x) along Axis (x itself for an empty
// axis), Exp(s) / Sum(Exp(s)). A lane holding NaN, +Inf or only -Inf
// gives NaN throughout (s holds NaN there).
func decomposeSoftmax(op Op, e Executor) Outputs {
	ex := Unary(e, OpExp, shifted(e, op.In[0], op.Axis))
	return One(Div(e, ex, Reduce(e, ReduceSum, ex, op.Axis, true)))
}

// decomposeLogSoftmax: with s as in Softmax, s − Log(Sum(Exp(s))).
func decomposeLogSoftmax(op Op, e Executor) Outputs {
	s := shifted(e, op.In[0], op.Axis)
	return One(Sub(e, s, Unary(e, OpLog, Reduce(e, ReduceSum, Unary(e, OpExp, s), op.Axis, true))))
}

// decomposeSoftmaxGrad is the gradient of y = Softmax(x) for the output
// gradient g: y·(g − Sum(g·y)) (PyTorch's softmax backward).
func decomposeSoftmaxGrad(op Op, e Executor) Outputs {
	y, g := op.In[0], op.In[1]
	return One(Mul(e, y, Sub(e, g, Reduce(e, ReduceSum, Mul(e, g, y), op.Axis, true))))
}

// decomposeLogSoftmaxGrad is the gradient of y = LogSoftmax(x) for the
// output gradient g: g − Exp(y)·Sum(g) (PyTorch's log_softmax backward).
func decomposeLogSoftmaxGrad(op Op, e Executor) Outputs {
	y, g := op.In[0], op.In[1]
	return One(Sub(e, g, Mul(e, Unary(e, OpExp, y), Reduce(e, ReduceSum, g, op.Axis, true))))
}

// decomposeLogSumExp: Log(Sum(Exp(x − m))) + m along Axis, with m the
// maximum where it is finite and 0 where it is infinite, so that a lane of
// only -Inf gives -Inf and a lane holding +Inf gives +Inf (PyTorch's
// logsumexp); a lane holding NaN gives NaN, an empty axis -Inf
// (Log(Sum(Exp(x)))). The axis is kept with size 1 when KeepDim, else
// removed (Reshape).
func decomposeLogSumExp(op Op, e Executor) Outputs {
	x, ax := op.In[0], op.Axis
	if x.Shape()[ax] == 0 {
		return One(Unary(e, OpLog, Reduce(e, ReduceSum, Unary(e, OpExp, x), ax, op.KeepDim)))
	}
	dt := x.DType()
	m := Reduce(e, ReduceMax, x, ax, true)
	inf := CompareScalar(e, OpEq, Unary(e, OpAbs, m), math.Inf(1))
	m = Where(e, inf, Scalar(e, dt, 0), m)
	out := Add(e, Unary(e, OpLog, Reduce(e, ReduceSum, Unary(e, OpExp, Sub(e, x, m)), ax, true)), m)
	if !op.KeepDim {
		out = Reshape(e, out, op.Shape)
	}
	return One(out)
}

// ---- layer and RMS normalization ----

// normOperands checks x (float, with the first normalized axis op.Axis)
// and the optional inputs named by ops (of the normalized shape
// x.Shape()[Axis:] and x's dtype).
func normOperands(op *Op, names []string, ins []Tensor) error {
	x := op.In[0]
	if err := floatAxis(x, op.Axis); err != nil {
		return err
	}
	ns := x.Shape()[op.Axis:]
	for i, t := range ins {
		if t != nil && (!slices.Equal(t.Shape(), ns) || t.DType() != x.DType()) {
			return errorf("%s %v %v must have the normalized shape %v and x's dtype %v", names[i], t.Shape(), t.DType(), ns, x.DType())
		}
	}
	return nil
}

func inferLayerNorm(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if err := normOperands(&op, []string{"weight", "bias"}, op.In[1:3]); err != nil {
		return nil, 0, err
	}
	return op.In[0].Shape(), op.In[0].DType(), nil
}

func inferRMSNorm(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	if err := normOperands(&op, []string{"weight"}, op.In[1:2]); err != nil {
		return nil, 0, err
	}
	return op.In[0].Shape(), op.In[0].DType(), nil
}

// inferNormGrad infers LayerNormGrad and RMSNormGrad: x, an optional
// weight, and g of x's shape and dtype.
func inferNormGrad(op Op) ([]int, DType, error) {
	if op.In[0] == nil || op.In[2] == nil {
		return nil, 0, errorf("needs x and g")
	}
	if err := normOperands(&op, []string{"weight"}, op.In[1:2]); err != nil {
		return nil, 0, err
	}
	x, g := op.In[0], op.In[2]
	if !slices.Equal(g.Shape(), x.Shape()) || g.DType() != x.DType() {
		return nil, 0, errorf("g %v %v must have x's shape %v and dtype %v", g.Shape(), g.DType(), x.Shape(), x.DType())
	}
	return x.Shape(), x.DType(), nil
}

// meanTrailing is the mean of t over its axes from axis on, kept with size
// 1: the sums over each axis in increasing order, divided by their
// element count n (converted to t's dtype).
func meanTrailing(e Executor, t Tensor, axis, n int) Tensor {
	for a := axis; a < len(t.Shape()); a++ {
		t = Reduce(e, ReduceSum, t, a, true)
	}
	return DivScalar(e, t, float64(n))
}

// normCount is the number of normalized elements of op's x.
func normCount(op *Op) int { return NumElements(op.In[0].Shape()[op.Axis:]) }

// layerNormParts returns x − mean(x) and 1/√(var(x) + eps) (the biased
// variance, the mean of the squared differences) over the normalized axes.
func layerNormParts(e Executor, op *Op) (diff, rstd Tensor) {
	x, ax, n := op.In[0], op.Axis, normCount(op)
	diff = Sub(e, x, meanTrailing(e, x, ax, n))
	variance := meanTrailing(e, Mul(e, diff, diff), ax, n)
	return diff, Unary(e, OpRsqrt, AddScalar(e, variance, op.Scalars[0]))
}

// rmsNormScale returns 1/√(mean(x²) + eps) over the normalized axes.
func rmsNormScale(e Executor, op *Op) Tensor {
	x := op.In[0]
	ms := meanTrailing(e, Mul(e, x, x), op.Axis, normCount(op))
	return Unary(e, OpRsqrt, AddScalar(e, ms, op.Scalars[0]))
}

// decomposeLayerNorm normalizes x over its axes from Axis on (PyTorch's
// layer_norm, normalized_shape = x.Shape()[Axis:]):
//
//	d = x − Sum(x)/n,  v = Sum(d·d)/n,  y = d·Rsqrt(v + eps) [·weight] [+ bias]
//
// with the sums over each normalized axis in increasing order (keeping
// them), n their element count and eps (Scalars[0]) converted to x's
// dtype; weight and bias broadcast over the leading axes.
func decomposeLayerNorm(op Op, e Executor) Outputs {
	diff, rstd := layerNormParts(e, &op)
	y := Mul(e, diff, rstd)
	if w := op.In[1]; w != nil {
		y = Mul(e, y, w)
	}
	if b := op.In[2]; b != nil {
		y = Add(e, y, b)
	}
	return One(y)
}

// decomposeRMSNorm normalizes x over its axes from Axis on by its root
// mean square (PyTorch's rms_norm): y = x·Rsqrt(Sum(x·x)/n + eps)
// [·weight], the sums as in LayerNorm.
func decomposeRMSNorm(op Op, e Executor) Outputs {
	y := Mul(e, op.In[0], rmsNormScale(e, &op))
	if w := op.In[1]; w != nil {
		y = Mul(e, y, w)
	}
	return One(y)
}

// decomposeLayerNormGrad is the gradient with respect to x of
// y = LayerNorm(x, weight, bias) for the output gradient g (the
// gradients of weight and bias are sums of g·x̂ and g over the leading
// axes, which gradient rules compose): with d and r = Rsqrt(v + eps) as in
// LayerNorm, x̂ = d·r and ĝ = g·weight (g without a weight),
//
//	dx = r·((ĝ − mean(ĝ)) − x̂·mean(ĝ·x̂))
//
// the means over the normalized axes (PyTorch's layer_norm backward).
func decomposeLayerNormGrad(op Op, e Executor) Outputs {
	diff, rstd := layerNormParts(e, &op)
	xh := Mul(e, diff, rstd)
	gh := op.In[2]
	if w := op.In[1]; w != nil {
		gh = Mul(e, gh, w)
	}
	n := normCount(&op)
	a := meanTrailing(e, gh, op.Axis, n)
	b := meanTrailing(e, Mul(e, gh, xh), op.Axis, n)
	return One(Mul(e, rstd, Sub(e, Sub(e, gh, a), Mul(e, xh, b))))
}

// decomposeRMSNormGrad is the gradient with respect to x of
// y = RMSNorm(x, weight) for the output gradient g: with r as in RMSNorm,
// x̂ = x·r and ĝ = g·weight (g without a weight),
//
//	dx = r·(ĝ − x̂·mean(ĝ·x̂))
func decomposeRMSNormGrad(op Op, e Executor) Outputs {
	rstd := rmsNormScale(e, &op)
	xh := Mul(e, op.In[0], rstd)
	gh := op.In[2]
	if w := op.In[1]; w != nil {
		gh = Mul(e, gh, w)
	}
	b := meanTrailing(e, Mul(e, gh, xh), op.Axis, normCount(&op))
	return One(Mul(e, rstd, Sub(e, gh, Mul(e, xh, b))))
}
