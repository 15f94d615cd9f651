package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	register(ir.KindReshape, rule{backward: reshapeBackward})
	register(ir.KindPermute, rule{backward: permuteBackward})
	register(ir.KindExpand, rule{backward: expandBackward})
	register(ir.KindSlice, rule{backward: sliceBackward})
	register(ir.KindPad, rule{backward: padBackward})
	register(ir.KindFlip, rule{backward: flipBackward})
	register(ir.KindCat, rule{backward: catBackward})
	// The adjoint of Slice appears only in backward functions.
	nondifferentiable(ir.KindSliceScatter)
}

// reshapeBackward reshapes the gradient back to x's shape.
func reshapeBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	dx[0] = ir.Reshape(s.e, gs[0], s.inShape(0))
}

// permuteBackward permutes the gradient by the inverse permutation.
func permuteBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	axes := s.op().Ints
	inv := make([]int, len(axes))
	for i, a := range axes {
		inv[a] = i
	}
	dx[0] = ir.Permute(s.e, gs[0], inv)
}

// expandBackward sums the gradient over the expanded (and new leading)
// axes, reshaped to x's shape.
func expandBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	dx[0] = ir.SumTo(s.e, gs[0], s.inShape(0))
}

// sliceBackward places the gradient back at the selected (strided)
// positions of a zero tensor of x's shape.
func sliceBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	dx[0] = ir.SliceScatter(s.e, gs[0], s.inShape(0), s.op().Attrs.Ranges)
}

// padBackward slices the gradient back to x's extent (the pad value is a
// constant and gets no gradient).
func padBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	op := s.op()
	shape := s.inShape(0)
	rs := make([]backend.Range, len(shape))
	for i, n := range shape {
		before, _ := op.Pad(i)
		rs[i] = backend.Range{Start: before, End: before + n, Step: 1}
	}
	dx[0] = ir.Slice(s.e, gs[0], rs)
}

// flipBackward flips the gradient along the same axes.
func flipBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	dx[0] = ir.Flip(s.e, gs[0], s.op().Ints)
}

// catBackward gives each input the slice of the gradient it occupies
// along the axis.
func catBackward(s *state, gs *ir.Outputs, dx []backend.Tensor) {
	g := gs[0]
	axis := s.op().Axis
	shape := g.Shape()
	off := 0
	for i := range dx {
		n := s.inShape(i)[axis]
		if s.wants(i) {
			rs := ir.FullRanges(shape)
			rs[axis] = backend.Range{Start: off, End: off + n, Step: 1}
			dx[i] = ir.Slice(s.e, g, rs)
		}
		off += n
	}
}
