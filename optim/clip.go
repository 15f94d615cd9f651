package optim

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// clipEps is added to the total norm before dividing by it, as PyTorch's
// clip_grad_norm_ does (1e-6), so that an all-zero gradient gives a finite
// coefficient.
const clipEps = 1e-6

// GradNorm returns the norm of the gradients of params in grads taken
// together, as one vector: (Σᵢ ‖gᵢ‖ₚᵖ)^(1/p) over the parameters' own
// p-norms ‖gᵢ‖ₚ (PyTorch's torch.nn.utils.get_total_norm). normType is p,
// a number > 0, or math.Inf(1) for the largest magnitude; 2, the
// Euclidean norm, is the usual choice. Parameters without a gradient in
// grads, and empty ones, are left out; with none left GradNorm returns
// nil.
//
// The result is a rank-0 tensor on the inner device of the first
// parameter with a gradient, F64 when a gradient is F64 and F32 otherwise
// (F16 and BF16 gradients are summed in F32, where PyTorch sums in the
// gradient's dtype); reading it (Item) waits for the device, leaving it
// unread does not, and on a capture device it is recorded like any op.
// It panics with an *ember.Error of op "grad_norm" for a normType that is
// not > 0 (NaN included), and for gradients of a non-float dtype.
func GradNorm(grads *ember.Gradients, params []nn.NamedParam, normType float64) *ember.Tensor {
	checkNormType("grad_norm", normType)
	total, _ := gradNorm("grad_norm", grads, params, normType)
	return total
}

// ClipGradNorm scales the gradients of params in grads, in place (through
// Gradients.Set), so that their total norm (GradNorm with normType) is at
// most maxNorm, and returns the total norm before clipping: PyTorch's
// torch.nn.utils.clip_grad_norm_. Every gradient is multiplied by
//
//	min(1, maxNorm / (total + 1e-6))
//
// cast to the gradient's dtype, so the direction of the update is kept
// and gradients whose norm is below maxNorm are left as they are (times
// exactly 1). A NaN or infinite total makes every gradient NaN (PyTorch's
// behaviour with error_if_nonfinite=False); a training loop that checks
// its loss reports that step. Call it between Backward and the
// optimizer's Step:
//
//	grads := loss.Backward()
//	optim.ClipGradNorm(grads, model.NamedParameters(), 1.0, 2)
//	opt.Step(grads)
//
// It reads nothing back to the host, so a captured training step may
// include it. Parameters without a gradient are skipped; with none,
// ClipGradNorm does nothing and returns nil. It panics with an
// *ember.Error of op "clip_grad_norm" unless maxNorm is a finite number
// > 0 and normType a number > 0 or +Inf, and for gradients of a non-float
// dtype.
func ClipGradNorm(grads *ember.Gradients, params []nn.NamedParam, maxNorm, normType float64) *ember.Tensor {
	checkHypers("clip_grad_norm", positive("maxNorm", maxNorm))
	checkNormType("clip_grad_norm", normType)
	total, gs := gradNorm("clip_grad_norm", grads, params, normType)
	if total == nil {
		return nil
	}
	// coef = min(max / (total + eps), 1), in total's dtype: a scalar
	// tensor, so that nothing waits for the norm.
	coef := ember.FullLike(total, maxNorm).Div(total.AddScalar(clipEps)).ClampMax(1)
	byDT := map[ember.DType]*ember.Tensor{}
	for _, g := range gs {
		dt := g.grad.DType()
		c := byDT[dt]
		if c == nil {
			c = coef.Cast(dt)
			byDT[dt] = c
		}
		grads.Set(g.param, g.grad.Mul(c.ToDevice(g.grad.Device())))
	}
	return total
}

// ClipGradValue limits every gradient element of params in grads to
// [−clipValue, clipValue], in place (through Gradients.Set): PyTorch's
// torch.nn.utils.clip_grad_value_. NaN elements stay NaN. Parameters
// without a gradient are skipped. It panics with an *ember.Error of op
// "clip_grad_value" unless clipValue is a finite number > 0, and for
// gradients of a non-float dtype.
func ClipGradValue(grads *ember.Gradients, params []nn.NamedParam, clipValue float64) {
	checkHypers("clip_grad_value", positive("clipValue", clipValue))
	for _, g := range paramGrads("clip_grad_value", grads, params) {
		grads.Set(g.param, g.grad.Clamp(-clipValue, clipValue))
	}
}

// checkNormType panics with an *ember.Error of op unless p > 0 (+Inf
// included).
func checkNormType(op string, p float64) {
	checkHypers(op, hyper{"normType", p, p > 0, "a number > 0 or +Inf"})
}

// paramGrad is a parameter's tracked value and its gradient.
type paramGrad struct {
	param, grad *ember.Tensor
}

// paramGrads returns the gradients in grads of params (each cell once, in
// order), skipping parameters without one; it panics with an
// *ember.Error of op for a non-float gradient.
func paramGrads(op string, grads *ember.Gradients, params []nn.NamedParam) []paramGrad {
	var out []paramGrad
	seen := map[*nn.Param]bool{}
	for i, np := range params {
		if np.Param == nil || np.Param.Value == nil || seen[np.Param] {
			continue
		}
		seen[np.Param] = true
		g := grads.Of(np.Param.Value)
		if g == nil {
			continue
		}
		if !g.DType().IsFloat() {
			panic(&ember.Error{Op: op, Operands: []string{describeParam(i, np)}, Msg: fmt.Sprintf("the gradient is %v; clipping needs float gradients", g.DType())})
		}
		out = append(out, paramGrad{np.Param.Value, g})
	}
	return out
}

// gradNorm returns the total p-norm of the gradients of params (nil when
// none has a non-empty gradient) and the gradients.
func gradNorm(op string, grads *ember.Gradients, params []nn.NamedParam, p float64) (*ember.Tensor, []paramGrad) {
	gs := paramGrads(op, grads, params)
	acc := ember.F32
	for _, g := range gs {
		if g.grad.DType() == ember.F64 {
			acc = ember.F64
		}
	}
	var norms []*ember.Tensor
	var dev ember.Device
	for _, g := range gs {
		if g.grad.NumElements() == 0 {
			continue
		}
		x := g.grad
		if x.DType() != ember.F64 {
			x = x.Cast(ember.F32) // F32 itself is returned as is
		}
		x = x.Abs()
		var n *ember.Tensor
		switch {
		case math.IsInf(p, 1):
			n = x.Max()
		case p == 1:
			n = x.Sum()
		case p == 2:
			n = x.Mul(x).Sum().Sqrt()
		default:
			n = x.PowScalar(p).Sum().PowScalar(1 / p)
		}
		n = n.Cast(acc)
		if dev.IsZero() {
			dev = n.Device()
		} else {
			n = n.ToDevice(dev)
		}
		norms = append(norms, n.Reshape(1))
	}
	if len(norms) == 0 {
		return nil, gs
	}
	all := ember.Cat(norms, 0)
	switch {
	case math.IsInf(p, 1):
		return all.Max(), gs
	case p == 1:
		return all.Sum(), gs
	case p == 2:
		return all.Mul(all).Sum().Sqrt(), gs
	}
	return all.PowScalar(p).Sum().PowScalar(1 / p), gs
}
