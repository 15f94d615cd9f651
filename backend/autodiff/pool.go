package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Max pooling reads its input and output (the maxima). Its kind is
// compute-bound, so under the Balanced strategy the output is kept and a
// tracked input comes back from its parent. It is recorded whole on every
// inner backend, so its gradient routes to the selected taps everywhere.
func init() {
	register(ir.KindMaxPool2d, rule{in: 1, out: 1, backward: maxPool2dBackward, whole: true})
	// The pooling gradient appears only in backward functions.
	nondifferentiable(ir.KindMaxPool2dGrad)
}

// maxPool2dBackward is ir.KindMaxPool2dGrad of the input, the output and
// the output gradient (each window's gradient goes whole to its first
// maximal tap, as PyTorch's max_pool2d): the inner backend's kernel where
// it has one, else its decomposition.
func maxPool2dBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	x := s.in(0)
	dx[0] = ir.Apply(s.e, ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: s.op().Attrs, In: [3]ir.Tensor{x, s.out(0), gs[0]}})
}
