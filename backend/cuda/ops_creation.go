package cuda

import "github.com/emberml/ember/ir"

func init() {
	kernels.Set(ir.KindFull, execFull, nil)
	kernels.Set(ir.KindArange, execArange, nil)
	kernels.Set(ir.KindRandom, execRandom, nil)
}

// execFull is the kernel of KindFull: op.Shape of op.DType filled with
// op.Scalars[0] (see full).
func execFull(b *Backend, op ir.Op) ir.Outputs {
	return ir.One(b.full(op.Shape, op.DType, op.Scalars[0]))
}

// execArange is the kernel of KindArange: op.Shape[0] elements of op.DType
// from start in steps of step, exactly in int64 for the integer form
// (op.Ints, see arangeInts), else from op.Scalars in float64 (see arange).
func execArange(b *Backend, op ir.Op) ir.Outputs {
	if start, step, ok := ir.ArangeInts(&op); ok {
		return ir.One(b.arangeInts(start, step, op.Shape[0], op.DType))
	}
	return ir.One(b.arange(op.Scalars[0], op.Scalars[1], op.Shape[0], op.DType))
}

// execRandom is the kernel of KindRandom: op.Shape of op.DType sampled
// from the distribution op.Sub with parameters op.Scalars (see random).
func execRandom(b *Backend, op ir.Op) ir.Outputs {
	dist := ir.Distribution{Kind: ir.DistributionKind(op.Sub), A: op.Scalars[0], B: op.Scalars[1]}
	return ir.One(b.random(op.Shape, op.DType, dist))
}
