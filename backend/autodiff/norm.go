package autodiff

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The normalization kinds are recorded whole on every inner backend (their
// decompositions run below autodiff, untracked, where the inner backend
// has no kernel), so their gradients are the formulas below everywhere:
// the softmaxes read their output, logsumexp its input and output, the
// normalizations their input and weight. The gradient kinds appear only
// in backward functions.
func init() {
	register(ir.KindSoftmax, rule{out: 1, backward: softmaxBackward, whole: true})
	register(ir.KindLogSoftmax, rule{out: 1, backward: softmaxBackward, whole: true})
	register(ir.KindLogSumExp, rule{in: 1, out: 1, backward: logSumExpBackward, whole: true})
	register(ir.KindLayerNorm, rule{saves: normSaves, backward: normBackward, whole: true})
	register(ir.KindRMSNorm, rule{saves: normSaves, backward: normBackward, whole: true})
	nondifferentiable(ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad, ir.KindLayerNormGrad, ir.KindRMSNormGrad)
}

// softmaxBackward is ir.KindSoftmaxGrad (y·(g − Σ g·y)) or
// ir.KindLogSoftmaxGrad (g − exp(y)·Σ g) of the output y and its
// gradient: the inner backend's kernel where it has one, else the kind's
// decomposition.
func softmaxBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	op := s.op()
	k := ir.KindSoftmaxGrad
	if op.Kind == ir.KindLogSoftmax {
		k = ir.KindLogSoftmaxGrad
	}
	dx[0] = ir.Apply(s.e, ir.Op{Kind: k, Axis: op.Axis, In: [3]ir.Tensor{s.out(0), gs[0]}})
}

// logSumExpBackward: g·exp(x − y) with g and y broadcast back along the
// axis (PyTorch's logsumexp backward; a lane of only -Inf gets NaN, and
// a lane holding +Inf NaN at the infinities and 0 elsewhere).
func logSumExpBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, op := s.e, s.op()
	x, y, g := s.in(0), s.out(0), gs[0]
	ks := ir.KeepDimShape(x.Shape(), op.Axis)
	if !slices.Equal(y.Shape(), ks) {
		y, g = ir.Reshape(e, y, ks), ir.Reshape(e, g, ks)
	}
	dx[0] = ir.Mul(e, g, ir.Unary(e, ir.OpExp, ir.Sub(e, x, y)))
}

// normSaves: the gradient of x reads x and the weight, that of the weight
// reads x (through x̂), that of the bias nothing.
func normSaves(_ *ir.Op, tracked uint64) (uint64, uint8) {
	var in uint64
	if tracked&1 != 0 {
		in |= 0b11
	}
	if tracked&2 != 0 {
		in |= 0b01
	}
	return in, 0
}

// normBackward is the gradient of LayerNorm or RMSNorm: for x the kind's
// gradient kind (LayerNormGrad, RMSNormGrad) of x, the weight and g; for
// the weight the sum over the leading axes of g·x̂, x̂ the normalization
// of x without weight and bias (the kind itself); for the bias the sum of
// g over the leading axes.
func normBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, op, g := s.e, s.op(), gs[0]
	grad := ir.KindLayerNormGrad
	if op.Kind == ir.KindRMSNorm {
		grad = ir.KindRMSNormGrad
	}
	if s.wants(0) {
		var w ir.Tensor
		if op.In[1] != nil || s.wants(1) {
			w = s.in(1)
		}
		dx[0] = ir.Apply(e, ir.Op{Kind: grad, Axis: op.Axis, Scalars: op.Scalars, In: [3]ir.Tensor{s.in(0), w, g}})
	}
	if s.wants(1) {
		xh := ir.Apply(e, ir.Op{Kind: op.Kind, Axis: op.Axis, Scalars: op.Scalars, In: [3]ir.Tensor{s.in(0)}})
		dx[1] = ir.SumTo(e, ir.Mul(e, g, xh), s.inShape(1))
	}
	if op.Kind == ir.KindLayerNorm && s.wants(2) {
		dx[2] = ir.SumTo(e, g, s.inShape(2))
	}
}
