package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindBinary, (*Backend).binary, nil) }

// binary applies op.Sub elementwise to In[0] and In[1] (equal dtypes,
// NumPy broadcasting to op.Shape; see ir.BinaryOp). For contiguous
// F32/Flex32 operands whose broadcast is full, a trailing row, a leading
// column, a middle block or a scalar, Add, Sub, Mul, Div, Max, Min (NaN
// propagates, as Go's max/min) and the comparisons (Bool result) run here
// in parallel cache-sized chunks into recycled buffers; everything else
// runs on flex. Results are bit-identical to flex's.
func (be *Backend) binary(op ir.Op) ir.Outputs { return ir.One(be.binaryOp(&op)) }

// binaryOp is binary for an op Exec holds, returning its one output.
func (be *Backend) binaryOp(op *ir.Op) ir.Tensor {
	bop := ir.BinaryOp(op.Sub)
	if isF32(op.In[0].DType()) && (fastArith(bop) || bop.IsComparison()) {
		if out := be.binaryF32(op, bop); out != nil {
			return out
		}
	}
	return be.flex.Exec(*op)[0]
}

// fastArith reports whether op has a float32 fast path.
func fastArith(op backend.BinaryOp) bool {
	switch op {
	case backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpMax, backend.OpMin:
		return true
	}
	return false
}

// binaryF32 is the fast path, or nil when the operands' layouts do not fit.
func (be *Backend) binaryF32(op *ir.Op, bop ir.BinaryOp) ir.Tensor {
	if n := numel(op.Shape); n < serialElems && !bop.IsComparison() {
		// Equal shapes, small: one run, no broadcast to classify.
		xd, ok1 := host.ContiguousFloat32(op.In[0])
		yd, ok2 := host.ContiguousFloat32(op.In[1])
		if ok1 && ok2 && len(xd) == n && len(yd) == n && n > 0 {
			t, out := be.newF32(op.DType, op.Shape, n)
			if bop == backend.OpAdd {
				addF32(out, xd, yd, n)
			} else {
				binVV(bop, out, xd, yd)
			}
			return t
		}
	}
	x, ok1 := host.Float32(op.In[0])
	y, ok2 := host.Float32(op.In[1])
	if !ok1 || !ok2 {
		return nil
	}
	xd, ok1 := x.Contiguous()
	yd, ok2 := y.Contiguous()
	if !ok1 || !ok2 {
		return nil
	}
	shape := op.Shape
	n := numel(shape)
	if n == 0 {
		return nil
	}
	va, ok1 := classify(xd, x.Shape, shape)
	vb, ok2 := classify(yd, y.Shape, shape)
	if !ok1 || !ok2 {
		return nil
	}
	if bop.IsComparison() {
		out := make([]bool, n)
		if n < serialElems {
			compareRange(bop, out, &va, &vb, 0, n)
		} else {
			compareChunks(bop, out, va, vb)
		}
		return host.NewBool(shape, out)
	}
	out := be.f32(n)
	if n < serialElems {
		binaryRange(bop, out, &va, &vb, 0, n)
	} else {
		binaryChunks(bop, out, va, vb)
	}
	return host.NewFloat32(op.DType, shape, out)
}

// binaryChunks runs binaryRange over all of out in parallel chunks (a
// function of its own, so that the closure's captures are allocated only
// for outputs this large).
func binaryChunks(op backend.BinaryOp, out []float32, a, b bview[float32]) {
	forChunks(len(out), func(lo, hi int) { binaryRange(op, out, &a, &b, lo, hi) })
}

// compareChunks is binaryChunks for the comparisons.
func compareChunks(op backend.BinaryOp, out []bool, a, b bview[float32]) {
	forChunks(len(out), func(lo, hi int) { compareRange(op, out, &a, &b, lo, hi) })
}

// binaryRange computes output elements [lo, hi) run by run.
func binaryRange(op backend.BinaryOp, out []float32, a, b *bview[float32], lo, hi int) {
	for i := lo; i < hi; {
		j := min(a.end(i, hi), b.end(i, hi))
		as, ax, aScalar := a.at(i, j)
		bs, bx, bScalar := b.at(i, j)
		o := out[i:j]
		switch {
		case !aScalar && !bScalar && op == backend.OpAdd:
			addF32(o, as, bs, len(out))
		case !aScalar && !bScalar:
			binVV(op, o, as, bs)
		case !aScalar:
			binVS(op, o, as, bx)
		case !bScalar:
			binSV(op, o, ax, bs)
		default:
			v := binScalar(op, ax, bx)
			for k := range o {
				o[k] = v
			}
		}
		i = j
	}
}

func binScalar(op backend.BinaryOp, a, b float32) float32 {
	switch op {
	case backend.OpAdd:
		return a + b
	case backend.OpSub:
		return a - b
	case backend.OpMul:
		return a * b
	case backend.OpDiv:
		return a / b
	case backend.OpMax:
		return max(a, b)
	}
	return min(a, b)
}

// binVV: o = a op b, all of len(o) (binVVT's float32 loops).
func binVV(op backend.BinaryOp, o, a, b []float32) { binVVT(op, o, a, b) }

// addGo: o = a + b in plain Go.
func addGo(o, a, b []float32) {
	a, b = a[:len(o)], b[:len(o)]
	for i := range o {
		o[i] = a[i] + b[i]
	}
}

// binVS: o = a op s (binVST's float32 loops).
func binVS(op backend.BinaryOp, o, a []float32, s float32) { binVST(op, o, a, s) }

// binSV: o = s op b (binSVT's float32 loops).
func binSV(op backend.BinaryOp, o []float32, s float32, b []float32) { binSVT(op, o, s, b) }

// compareRange computes Bool output elements [lo, hi) of a comparison.
func compareRange(op backend.BinaryOp, out []bool, a, b *bview[float32], lo, hi int) {
	for i := lo; i < hi; {
		j := min(a.end(i, hi), b.end(i, hi))
		as, ax, aScalar := a.at(i, j)
		bs, bx, bScalar := b.at(i, j)
		o := out[i:j]
		if bScalar {
			if aScalar {
				v := cmp(op, ax, bx)
				for k := range o {
					o[k] = v
				}
			} else {
				cmpVS(op, o, as, bx)
			}
		} else {
			for k := range o {
				av := ax
				if !aScalar {
					av = as[k]
				}
				o[k] = cmp(op, av, bs[k])
			}
		}
		i = j
	}
}

// cmp is a op b for the float32 comparisons.
func cmp(op backend.BinaryOp, a, b float32) bool {
	switch op {
	case backend.OpEq:
		return a == b
	case backend.OpNe:
		return a != b
	case backend.OpLt:
		return a < b
	case backend.OpLe:
		return a <= b
	case backend.OpGt:
		return a > b
	}
	return a >= b
}

// cmpVS: o = a op s for the comparisons (cmpVST's float32 loops).
func cmpVS(op backend.BinaryOp, o []bool, a []float32, s float32) { cmpVST(op, o, a, s) }
