package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	register(ir.KindCumSum, rule{backward: cumSumBackward})
}

// cumSumBackward: output k of an inclusive prefix sum along the axis
// depends on inputs 0..k, so the gradient of input k is the sum of the
// output gradients k..n-1, the reverse cumulative sum
// Flip(CumSum(Flip(g, axis)), axis).
func cumSumBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e := s.e
	axis := s.op().Axis
	axes := []int{axis}
	c := ir.Apply(e, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{ir.Flip(e, gs[0], axes)}})
	dx[0] = ir.Flip(e, c, axes)
}
