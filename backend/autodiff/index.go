package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The indexing kinds read their index (input 1, I64, never tracked).
func init() {
	register(ir.KindGather, rule{in: 2, backward: gatherBackward})
	register(ir.KindScatterAdd, rule{in: 2, backward: scatterAddBackward})
	register(ir.KindIndexSelect, rule{in: 2, backward: indexSelectBackward})
}

// gatherBackward scatter-adds the gradient into zeros of x's shape at
// index.
func gatherBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	z := ir.Zeros(e, s.inShape(0), g.DType())
	dx[0] = ir.ScatterAdd(e, z, s.op().Axis, s.in(1), g)
}

// scatterAddBackward gives x the gradient itself and src the gradient
// gathered at index.
func scatterAddBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	g := gs[0]
	if s.wants(0) {
		dx[0] = g
	}
	if s.wants(2) {
		dx[2] = ir.Gather(s.e, g, s.op().Axis, s.in(1))
	}
}

// indexSelectBackward scatter-adds the gradient into zeros of x's shape
// along the axis, with the rank-1 index expanded to the gradient's shape.
func indexSelectBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	e, g := s.e, gs[0]
	axis := s.op().Axis
	shape := g.Shape()
	is := make([]int, len(shape))
	for i := range is {
		is[i] = 1
	}
	is[axis] = shape[axis]
	idx := ir.Expand(e, ir.Reshape(e, s.in(1), is), shape)
	z := ir.Zeros(e, s.inShape(0), g.DType())
	dx[0] = ir.ScatterAdd(e, z, axis, idx, g)
}
