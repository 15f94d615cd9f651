package nn

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/emberml/ember"
)

// Reduction says how a loss combines its per-element values, as PyTorch's
// reduction argument.
type Reduction int

const (
	// ReductionMean averages the per-element losses (PyTorch's default,
	// "mean"; for weighted class losses, the weighted mean).
	ReductionMean Reduction = iota
	// ReductionSum sums them ("sum").
	ReductionSum
	// ReductionNone returns them unreduced ("none"), in the shape the
	// loss documents.
	ReductionNone
	// ReductionBatchMean sums them and divides by the batch size (the
	// first axis); KLDiv only (PyTorch's "batchmean").
	ReductionBatchMean
)

// String returns PyTorch's name of the reduction.
func (r Reduction) String() string {
	switch r {
	case ReductionMean:
		return "mean"
	case ReductionSum:
		return "sum"
	case ReductionNone:
		return "none"
	case ReductionBatchMean:
		return "batchmean"
	}
	return "Reduction(" + strconv.Itoa(int(r)) + ")"
}

// reduce applies r to per-element losses l (Mean divides by the element
// count; an empty l gives NaN for Mean, as PyTorch, and 0 for Sum).
func reduce(op string, l *ember.Tensor, r Reduction) *ember.Tensor {
	switch r {
	case ReductionMean:
		return l.Sum().DivScalar(float64(l.NumElements()))
	case ReductionSum:
		return l.Sum()
	case ReductionNone:
		return l
	}
	fail(op, l, "reduction %v is not one of mean, sum, none", r)
	return nil
}

// Index returns a pointer to i, for the optional IgnoreIndex fields.
func Index(i int) *int { return &i }

// CrossEntropyOptions are the options of CrossEntropyWith, as PyTorch's
// cross_entropy arguments; the zero value is PyTorch's defaults except
// that no target is ignored unless IgnoreIndex is set (PyTorch ignores
// -100, which is never a valid class anyway).
type CrossEntropyOptions struct {
	// Reduction of the per-sample losses (mean: weighted by the target
	// classes' weights, over the samples not ignored).
	Reduction Reduction
	// Weight is an optional float tensor [C] of per-class weights.
	Weight *ember.Tensor
	// IgnoreIndex, when set, is a target class whose samples contribute
	// zero loss and do not count in the mean (class-index targets only).
	IgnoreIndex *int
	// LabelSmoothing ε in [0, 1] mixes the target distribution with the
	// uniform one: (1 − ε)·target + ε/C.
	LabelSmoothing float64
}

// CrossEntropyWith is PyTorch's cross_entropy with its options. logits
// is a float tensor [N, C, d...] (or [C] for one sample) with the classes
// on axis 1; targets are either class indices, an integer tensor [N,
// d...] (or rank 0), or class probabilities, a float tensor of logits'
// shape. Per sample (and position) the loss is
//
//	ℓ = −Σ_c w_c·q_c·log_softmax(logits)_c
//
// with q the target distribution smoothed as (1 − ε)·target + ε/C (one-hot
// for class indices) and w the class weights (all 1 when Weight is nil).
// For class indices PyTorch's weighting is kept exactly: the target term
// is weighted by w_target and the smoothing term by each w_c, and the
// mean divides by Σ w_target over the samples not ignored; for
// probabilities the mean divides by the number of samples. ReductionNone
// returns [N, d...]. The log-softmax subtracts the row maximum, so large
// logits stay finite. It panics with an *ember.Error on shape or dtype
// mismatches, a class index out of range, a Weight that is not [C], or ε
// outside [0, 1].
func CrossEntropyWith(logits, targets *ember.Tensor, o CrossEntropyOptions) *ember.Tensor {
	const op = "cross_entropy"
	need(op, []string{"logits", "targets"}, logits, targets)
	if !logits.DType().IsFloat() || logits.Rank() == 0 {
		fail(op, logits, "logits must be a float tensor [N, C, ...] or [C]")
	}
	if o.LabelSmoothing < 0 || o.LabelSmoothing > 1 || math.IsNaN(o.LabelSmoothing) {
		fail(op, logits, "label smoothing %v must be in [0, 1]", o.LabelSmoothing)
	}
	probs := targets.DType().IsFloat()
	if logits.Rank() == 1 { // one sample
		t := targets.Unsqueeze(0)
		l := CrossEntropyWith(logits.Unsqueeze(0), t, o)
		if o.Reduction == ReductionNone {
			return l.Reshape()
		}
		return l
	}
	c := logits.Dim(1)
	// Move the classes last and flatten: lp [M, C], out shape [N, d...].
	perm := []int{0}
	for i := 2; i < logits.Rank(); i++ {
		perm = append(perm, i)
	}
	perm = append(perm, 1)
	outShape := make([]int, 0, logits.Rank()-1)
	for _, a := range perm[:len(perm)-1] {
		outShape = append(outShape, logits.Dim(a))
	}
	lp := logits.Permute(perm...).LogSoftmax(-1).Reshape(-1, c)
	m := lp.Dim(0)
	var w *ember.Tensor
	if o.Weight != nil {
		if o.Weight.Rank() != 1 || o.Weight.Dim(0) != c || !o.Weight.DType().IsFloat() {
			fail(op, o.Weight, "weight must be a float tensor [%d]", c)
		}
		w = o.Weight.Cast(lp.DType())
	}
	eps := o.LabelSmoothing
	if probs {
		if !slices.Equal(targets.Shape(), logits.Shape()) {
			fail(op, targets, "probability targets must have logits' shape %v", logits.Shape())
		}
		q := targets.Permute(perm...).Reshape(-1, c).Cast(lp.DType())
		if eps > 0 {
			q = q.MulScalar(1 - eps).AddScalar(eps / float64(c))
		}
		terms := lp.Mul(q)
		if w != nil {
			terms = terms.Mul(w)
		}
		l := terms.SumAxis(1, false).Neg()
		if o.Reduction == ReductionNone {
			return l.Reshape(outShape...)
		}
		return reduce(op, l, o.Reduction)
	}
	if !targets.DType().IsInt() || !slices.Equal(targets.Shape(), outShape) {
		fail(op, targets, "class-index targets must be an integer tensor %v", outShape)
	}
	t := targets.Reshape(m)
	valid := ember.OnesLike(t).Cast(lp.DType()) // 1 where the sample counts
	if o.IgnoreIndex != nil {
		keep := t.EqScalar(float64(*o.IgnoreIndex)).Not()
		valid = keep.Cast(lp.DType())
		t = ember.Where(keep, t, ember.ZerosLike(t)) // a valid index for the gather
	}
	if m > 0 {
		if bad := t.LtScalar(0).Or(t.GeScalar(float64(c))).Any(); bad.Bools()[0] {
			fail(op, targets, "class indices must be in [0, %d)", c)
		}
	}
	picked := lp.Gather(1, t.Reshape(m, 1)).Reshape(m).Neg() // −log p_target
	wt := valid
	if w != nil {
		wt = w.IndexSelect(0, t).Mul(valid)
	}
	nll := picked.Mul(wt)
	var smooth *ember.Tensor
	if eps > 0 {
		s := lp
		if w != nil {
			s = s.Mul(w)
		}
		smooth = s.SumAxis(1, false).Neg().Mul(valid)
	}
	switch o.Reduction {
	case ReductionNone:
		l := nll
		if smooth != nil {
			l = nll.MulScalar(1 - eps).Add(smooth.MulScalar(eps / float64(c)))
		}
		return l.Reshape(outShape...)
	case ReductionSum, ReductionMean:
		l := nll.Sum()
		var s *ember.Tensor
		if smooth != nil {
			s = smooth.Sum()
		}
		if o.Reduction == ReductionMean {
			den := wt.Sum()
			l = l.Div(den)
			if s != nil {
				if w != nil {
					s = s.Div(den)
				} else {
					s = s.Div(valid.Sum())
				}
			}
		}
		if s != nil {
			l = l.MulScalar(1 - eps).Add(s.MulScalar(eps / float64(c)))
		}
		return l
	}
	fail(op, logits, "reduction %v is not one of mean, sum, none", o.Reduction)
	return nil
}

// NLLOptions are the options of NLL (PyTorch's nll_loss arguments).
type NLLOptions struct {
	// Reduction of the per-sample losses (mean: weighted, over the
	// samples not ignored).
	Reduction Reduction
	// Weight is an optional float tensor [C] of per-class weights.
	Weight *ember.Tensor
	// IgnoreIndex, when set, is a target class whose samples contribute
	// zero loss and do not count in the mean.
	IgnoreIndex *int
}

// NLL is the negative log-likelihood loss of log-probabilities logProbs
// [N, C, d...] (or [C]) and class-index targets [N, d...] (PyTorch's
// nll_loss): ℓ = −w_target·logProbs[target], the mean weighted by
// Σ w_target. It is CrossEntropyWith without the log-softmax (logProbs
// are used as they are) and panics in the same cases.
func NLL(logProbs, targets *ember.Tensor, o NLLOptions) *ember.Tensor {
	need("nll", []string{"log_probs", "targets"}, logProbs, targets)
	if targets.DType().IsFloat() {
		fail("nll", targets, "targets must be class indices (an integer tensor)")
	}
	if logProbs.Rank() == 1 {
		l := NLL(logProbs.Unsqueeze(0), targets.Unsqueeze(0), o)
		if o.Reduction == ReductionNone {
			return l.Reshape()
		}
		return l
	}
	if !logProbs.DType().IsFloat() || logProbs.Rank() < 2 {
		fail("nll", logProbs, "log-probabilities must be a float tensor [N, C, ...]")
	}
	c := logProbs.Dim(1)
	perm := []int{0}
	for i := 2; i < logProbs.Rank(); i++ {
		perm = append(perm, i)
	}
	perm = append(perm, 1)
	outShape := make([]int, 0, logProbs.Rank()-1)
	for _, a := range perm[:len(perm)-1] {
		outShape = append(outShape, logProbs.Dim(a))
	}
	lp := autocastF32(logProbs, targets).Permute(perm...).Reshape(-1, c)
	m := lp.Dim(0)
	if !targets.DType().IsInt() || !slices.Equal(targets.Shape(), outShape) {
		fail("nll", targets, "targets must be an integer tensor %v", outShape)
	}
	t := targets.Reshape(m)
	valid := ember.OnesLike(t).Cast(lp.DType())
	if o.IgnoreIndex != nil {
		keep := t.EqScalar(float64(*o.IgnoreIndex)).Not()
		valid = keep.Cast(lp.DType())
		t = ember.Where(keep, t, ember.ZerosLike(t))
	}
	if m > 0 {
		if bad := t.LtScalar(0).Or(t.GeScalar(float64(c))).Any(); bad.Bools()[0] {
			fail("nll", targets, "class indices must be in [0, %d)", c)
		}
	}
	wt := valid
	if o.Weight != nil {
		if o.Weight.Rank() != 1 || o.Weight.Dim(0) != c || !o.Weight.DType().IsFloat() {
			fail("nll", o.Weight, "weight must be a float tensor [%d]", c)
		}
		wt = o.Weight.Cast(lp.DType()).IndexSelect(0, t).Mul(valid)
	}
	l := lp.Gather(1, t.Reshape(m, 1)).Reshape(m).Neg().Mul(wt)
	switch o.Reduction {
	case ReductionNone:
		return l.Reshape(outShape...)
	case ReductionSum:
		return l.Sum()
	case ReductionMean:
		return l.Sum().Div(wt.Sum())
	}
	fail("nll", logProbs, "reduction %v is not one of mean, sum, none", o.Reduction)
	return nil
}

// autocastF32 returns x cast to F32 when x is F16 or BF16 and x or one of
// peers lives on an autocast device (ember.Device.Autocast), x otherwise:
// the losses compute in F32 under autocast, as PyTorch's autocast runs
// them (its float32 op list).
func autocastF32(x *ember.Tensor, peers ...*ember.Tensor) *ember.Tensor {
	if dt := x.DType(); dt != ember.F16 && dt != ember.BF16 {
		return x
	}
	for _, t := range append(peers, x) {
		if t == nil {
			continue
		}
		if _, ok := t.Device().AutocastDType(); ok {
			return x.Cast(ember.F32)
		}
	}
	return x
}

// pair checks a regression loss's operands (checkPair) and returns
// pred − target (in F32 under autocast).
func pair(op string, pred, target *ember.Tensor) *ember.Tensor {
	checkPair(op, pred, target)
	pred = autocastF32(pred, target)
	return pred.Sub(target.Cast(pred.DType()))
}

// checkPair panics with an *ember.Error naming op unless pred and target
// are non-nil float tensors and target broadcasts to pred's shape: a
// target that would grow the result, such as target [B] against pred
// [B, 1] (a [B, B] difference of every prediction with every target), is
// the classic mistake PyTorch's losses warn of; here it is refused.
func checkPair(op string, pred, target *ember.Tensor) {
	need(op, []string{"pred", "target"}, pred, target)
	if !pred.DType().IsFloat() || !target.DType().IsFloat() {
		fail(op, pred, "needs float tensors")
	}
	fitsShape(op, "pred", "target", pred, target)
}

// fitsShape panics with an *ember.Error naming op when operand y (named
// yName) does not broadcast to the shape of x (named xName), so that
// multiplying or subtracting it would grow the result beyond x's shape.
func fitsShape(op, xName, yName string, x, y *ember.Tensor) {
	xs, ys := x.Shape(), y.Shape()
	ok := len(ys) <= len(xs)
	for i := 1; ok && i <= len(ys); i++ {
		t, p := ys[len(ys)-i], xs[len(xs)-i]
		ok = t == p || t == 1
	}
	if ok {
		return
	}
	msg := fmt.Sprintf("%s %v does not broadcast to %s's shape %v: the loss is taken element by element", yName, ys, xName, xs)
	if y.NumElements() == x.NumElements() {
		msg += fmt.Sprintf(" (reshape %s to %v)", yName, xs)
	}
	panic(&ember.Error{Op: op, Operands: []string{describe(xName, x), describe(yName, y)}, Msg: msg})
}

// MSEWith is the squared error (pred − target)² with a reduction
// (PyTorch's mse_loss); target broadcasts to pred's shape, which
// ReductionNone returns. It panics with an *ember.Error for non-float
// tensors or a target that does not broadcast to pred's shape (see MSE).
func MSEWith(pred, target *ember.Tensor, r Reduction) *ember.Tensor {
	d := pair("mse", pred, target)
	return reduce("mse", d.Mul(d), r)
}

// L1 is the absolute error |pred − target| with a reduction (PyTorch's
// l1_loss); it panics as MSEWith. The gradient at zero error is 0.
func L1(pred, target *ember.Tensor, r Reduction) *ember.Tensor {
	d := pair("l1", pred, target)
	return reduce("l1", d.Abs(), r)
}

// SmoothL1 is PyTorch's smooth_l1_loss: per element 0.5·d²/β where |d| <
// β, |d| − 0.5·β elsewhere (d = pred − target; β = 0 gives L1). It panics
// as MSEWith, and for a negative or NaN β.
func SmoothL1(pred, target *ember.Tensor, beta float64, r Reduction) *ember.Tensor {
	d := pair("smooth_l1", pred, target)
	if !(beta >= 0) {
		fail("smooth_l1", pred, "beta %v must be >= 0", beta)
	}
	a := d.Abs()
	if beta == 0 {
		return reduce("smooth_l1", a, r)
	}
	quad := d.Mul(d).MulScalar(0.5 / beta)
	lin := a.AddScalar(-0.5 * beta)
	return reduce("smooth_l1", ember.Where(a.LtScalar(beta), quad, lin), r)
}

// Huber is PyTorch's huber_loss: per element 0.5·d² where |d| <= δ and
// δ·(|d| − 0.5·δ) elsewhere (δ·SmoothL1 with β = δ). It panics as
// MSEWith, and for δ <= 0 or NaN.
func Huber(pred, target *ember.Tensor, delta float64, r Reduction) *ember.Tensor {
	d := pair("huber", pred, target)
	if !(delta > 0) {
		fail("huber", pred, "delta %v must be > 0", delta)
	}
	a := d.Abs()
	quad := d.Mul(d).MulScalar(0.5)
	lin := a.AddScalar(-0.5 * delta).MulScalar(delta)
	return reduce("huber", ember.Where(a.LeScalar(delta), quad, lin), r)
}

// BCEOptions are the options of the binary cross-entropy losses.
type BCEOptions struct {
	// Reduction of the per-element losses.
	Reduction Reduction
	// Weight optionally rescales each element's loss; it must broadcast
	// to the input's shape (a weight that would grow the result is
	// refused, as PyTorch refuses it).
	Weight *ember.Tensor
	// PosWeight optionally weights the positive term per class
	// (BinaryCrossEntropyWithLogits only; broadcast along the last axis,
	// to the input's shape as Weight).
	PosWeight *ember.Tensor
}

// BinaryCrossEntropy is PyTorch's binary_cross_entropy of probabilities
// probs in [0, 1] and targets of the same shape: −w·(y·log p + (1 −
// y)·log(1 − p)), each log clamped to >= −100 as PyTorch does, so p = 0 or
// 1 gives a finite loss. It panics with an *ember.Error for non-float
// tensors, shapes that differ, a Weight that does not broadcast to
// probs's shape, or a PosWeight (logits only).
func BinaryCrossEntropy(probs, target *ember.Tensor, o BCEOptions) *ember.Tensor {
	const op = "binary_cross_entropy"
	need(op, []string{"probs", "target"}, probs, target)
	if !probs.DType().IsFloat() || !target.DType().IsFloat() || !slices.Equal(probs.Shape(), target.Shape()) {
		fail(op, probs, "probs and target must be float tensors of one shape")
	}
	if o.PosWeight != nil {
		fail(op, probs, "pos_weight needs BinaryCrossEntropyWithLogits")
	}
	if o.Weight != nil {
		fitsShape(op, "probs", "weight", probs, o.Weight)
	}
	probs = autocastF32(probs, target)
	y := target.Cast(probs.DType())
	logP := probs.Log().ClampMin(-100)
	log1mP := probs.Neg().AddScalar(1).Log().ClampMin(-100)
	l := y.Mul(logP).Add(y.Neg().AddScalar(1).Mul(log1mP)).Neg()
	if o.Weight != nil {
		l = l.Mul(o.Weight.Cast(l.DType()))
	}
	return reduce(op, l, o.Reduction)
}

// BinaryCrossEntropyWithLogits is PyTorch's
// binary_cross_entropy_with_logits: the binary cross-entropy of
// sigmoid(logits) computed stably as
//
//	(1 − y)·x + (1 + (pw − 1)·y)·(log(1 + exp(−|x|)) + max(−x, 0))
//
// (pw the PosWeight, 1 when nil), times Weight. It panics with an
// *ember.Error for non-float tensors, shapes that differ, or a Weight or
// PosWeight that does not broadcast to logits's shape.
func BinaryCrossEntropyWithLogits(logits, target *ember.Tensor, o BCEOptions) *ember.Tensor {
	const op = "binary_cross_entropy_with_logits"
	need(op, []string{"logits", "target"}, logits, target)
	if !logits.DType().IsFloat() || !target.DType().IsFloat() || !slices.Equal(logits.Shape(), target.Shape()) {
		fail(op, logits, "logits and target must be float tensors of one shape")
	}
	if o.Weight != nil {
		fitsShape(op, "logits", "weight", logits, o.Weight)
	}
	if o.PosWeight != nil {
		fitsShape(op, "logits", "pos_weight", logits, o.PosWeight)
	}
	x := autocastF32(logits, target)
	y := target.Cast(x.DType())
	soft := x.Abs().Neg().Exp().Log1p().Add(x.Neg().ClampMin(0)) // log(1 + exp(−x)), stable
	coef := ember.OnesLike(y)
	if o.PosWeight != nil {
		coef = o.PosWeight.Cast(x.DType()).AddScalar(-1).Mul(y).AddScalar(1)
	}
	l := y.Neg().AddScalar(1).Mul(x).Add(coef.Mul(soft))
	if o.Weight != nil {
		l = l.Mul(o.Weight.Cast(l.DType()))
	}
	return reduce(op, l, o.Reduction)
}

// KLDiv is PyTorch's kl_div of input log-probabilities and a target
// distribution of the same shape: per element target·(log target − input),
// 0 where target is 0 (x·log x → 0); with logTarget, target holds
// log-probabilities and the element is exp(target)·(target − input).
// ReductionMean averages over all elements (PyTorch's default, which it
// warns is not the KL divergence); ReductionBatchMean, the divergence,
// divides the sum by the first axis's size. It panics with an
// *ember.Error for non-float tensors or shapes that differ.
func KLDiv(input, target *ember.Tensor, logTarget bool, r Reduction) *ember.Tensor {
	const op = "kl_div"
	need(op, []string{"input", "target"}, input, target)
	if !input.DType().IsFloat() || !target.DType().IsFloat() || !slices.Equal(input.Shape(), target.Shape()) {
		fail(op, input, "input and target must be float tensors of one shape")
	}
	input = autocastF32(input, target)
	t := target.Cast(input.DType())
	var l *ember.Tensor
	if logTarget {
		l = t.Exp().Mul(t.Sub(input))
	} else {
		// xlogy: 0 where t is 0, whatever log t is (NaN for t < 0).
		zero := t.EqScalar(0)
		safe := ember.Where(zero, ember.OnesLike(t), t)
		l = ember.Where(zero, ember.ZerosLike(t), t.Mul(safe.Log().Sub(input)))
	}
	if r == ReductionBatchMean {
		if input.Rank() == 0 {
			return l
		}
		return l.Sum().DivScalar(float64(input.Dim(0)))
	}
	return reduce(op, l, r)
}

// CosineEmbedding is PyTorch's cosine_embedding_loss of x1, x2 [N, D] (or
// [D]) and labels y [N] (or rank 0) of 1 or −1: 1 − cos(x1, x2) where y =
// 1 and max(0, cos − margin) where y = −1, with cos = Σ x1·x2 /
// √((Σ x1² + 1e-12)·(Σ x2² + 1e-12)) as PyTorch computes it; ReductionNone
// returns [N]. It panics with an *ember.Error for mismatched shapes.
func CosineEmbedding(x1, x2, y *ember.Tensor, margin float64, r Reduction) *ember.Tensor {
	const op = "cosine_embedding"
	need(op, []string{"x1", "x2", "y"}, x1, x2, y)
	if x1.Rank() == 1 {
		l := CosineEmbedding(x1.Unsqueeze(0), x2.Unsqueeze(0), y.Reshape(1), margin, r)
		if r == ReductionNone {
			return l.Reshape()
		}
		return l
	}
	if x1.Rank() != 2 || !slices.Equal(x1.Shape(), x2.Shape()) || !x1.DType().IsFloat() {
		fail(op, x1, "x1 and x2 must be float tensors of one shape [N, D]")
	}
	if y.Rank() != 1 || y.Dim(0) != x1.Dim(0) {
		fail(op, y, "y must have shape [%d]", x1.Dim(0))
	}
	const eps = 1e-12
	x1 = autocastF32(x1, x2, y)
	x2c := x2.Cast(x1.DType())
	dot := x1.Mul(x2c).SumAxis(1, false)
	n1 := x1.Mul(x1).SumAxis(1, false).AddScalar(eps)
	n2 := x2c.Mul(x2c).SumAxis(1, false).AddScalar(eps)
	cos := dot.Div(n1.Mul(n2).Sqrt())
	yf := y.Cast(x1.DType())
	pos := cos.Neg().AddScalar(1)
	neg := cos.AddScalar(-margin).ClampMin(0)
	l := ember.Where(yf.EqScalar(1), pos, ember.Where(yf.EqScalar(-1), neg, ember.ZerosLike(cos)))
	return reduce(op, l, r)
}
