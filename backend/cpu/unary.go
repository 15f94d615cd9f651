package cpu

import (
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// Unary applies op elementwise (see backend.UnaryOp). For contiguous
// F32/Flex32 input, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Recip, Tanh and
// Sigmoid run here in parallel cache-sized chunks into recycled buffers,
// computing in float64 and rounding once to float32 exactly as flex does;
// every other case runs on the flex kernels.
func (be *Backend) Unary(op backend.UnaryOp, x backend.Tensor) backend.Tensor {
	t := flex.AsTensor(x)
	if isF32(t.DType()) && fastUnary(op) {
		if src, ok := t.ContiguousFloat32(); ok && len(src) > 0 {
			out := be.f32(len(src))
			forChunks(len(src), func(lo, hi int) { unaryF32(op, out[lo:hi], src[lo:hi]) })
			return flex.NewFloat32(t.DType(), t.Shape(), out)
		}
	}
	return be.Backend.Unary(op, x)
}

func fastUnary(op backend.UnaryOp) bool {
	switch op {
	case backend.OpNeg, backend.OpAbs, backend.OpExp, backend.OpLog, backend.OpSqrt,
		backend.OpRsqrt, backend.OpRecip, backend.OpTanh, backend.OpSigmoid:
		return true
	}
	return false
}

// unaryF32 computes o = op(a) for one chunk.
func unaryF32(op backend.UnaryOp, o, a []float32) {
	a = a[:len(o)]
	switch op {
	case backend.OpNeg:
		for i := range o {
			o[i] = -a[i]
		}
	case backend.OpAbs:
		for i := range o {
			o[i] = float32(math.Abs(float64(a[i])))
		}
	case backend.OpExp:
		for i := range o {
			o[i] = float32(math.Exp(float64(a[i])))
		}
	case backend.OpLog:
		for i := range o {
			o[i] = float32(math.Log(float64(a[i])))
		}
	case backend.OpSqrt:
		for i := range o {
			o[i] = float32(math.Sqrt(float64(a[i])))
		}
	case backend.OpRsqrt:
		for i := range o {
			o[i] = float32(1 / math.Sqrt(float64(a[i])))
		}
	case backend.OpRecip:
		for i := range o {
			o[i] = float32(1 / float64(a[i]))
		}
	case backend.OpTanh:
		for i := range o {
			o[i] = float32(math.Tanh(float64(a[i])))
		}
	case backend.OpSigmoid:
		for i := range o {
			o[i] = float32(sigmoid(float64(a[i])))
		}
	}
}

// sigmoid is 1/(1+e^-x) without overflow for large |x| (flex's formula).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Where selects a's element where cond is true, else b's (PyTorch's
// where). Contiguous F32/Flex32 a and b with a contiguous Bool cond, each
// full, a trailing row, a leading column or a scalar (as Relu's
// Where(x <= 0, 0, x)), run here in parallel; the rest on flex.
func (be *Backend) Where(cond, a, b backend.Tensor) backend.Tensor {
	c, x, y := flex.AsTensor(cond), flex.AsTensor(a), flex.AsTensor(b)
	if isF32(x.DType()) {
		if out := be.whereF32(c, x, y); out != nil {
			return out
		}
	}
	return be.Backend.Where(cond, a, b)
}

func (be *Backend) whereF32(c, x, y *flex.Tensor) backend.Tensor {
	cd, ok0 := c.ContiguousBool()
	xd, ok1 := x.ContiguousFloat32()
	yd, ok2 := y.ContiguousFloat32()
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	shape := broadcastShape(broadcastShape(c.Shape(), x.Shape()), y.Shape())
	n := numel(shape)
	if n == 0 {
		return nil
	}
	vc, ok0 := classify(cd, c.Shape(), shape)
	va, ok1 := classify(xd, x.Shape(), shape)
	vb, ok2 := classify(yd, y.Shape(), shape)
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	out := be.f32(n)
	forChunks(n, func(lo, hi int) {
		for i := lo; i < hi; {
			j := min(vc.end(i, hi), va.end(i, hi), vb.end(i, hi))
			cs, cx, cScalar := vc.at(i, j)
			as, ax, aScalar := va.at(i, j)
			bs, bx, bScalar := vb.at(i, j)
			o := out[i:j]
			switch {
			case cScalar:
				src, s, scalar := as, ax, aScalar
				if !cx {
					src, s, scalar = bs, bx, bScalar
				}
				if scalar {
					for k := range o {
						o[k] = s
					}
				} else {
					copy(o, src)
				}
			default:
				selectF32(o, cs, as, ax, aScalar, bs, bx, bScalar)
			}
			i = j
		}
	})
	return flex.NewFloat32(x.DType(), shape, out)
}

// selectF32 writes o[k] = a[k] where c[k], else b[k] (a or b a repeated
// scalar when its flag is set), without branching on c: the selection is a
// bit mask, so random masks (as Relu's) cost no mispredictions.
func selectF32(o []float32, c []bool, as []float32, ax float32, aScalar bool, bs []float32, bx float32, bScalar bool) {
	cb := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(c))), len(c))[:len(o)]
	switch {
	case aScalar && bScalar:
		a, b := math.Float32bits(ax), math.Float32bits(bx)
		for k, t := range cb {
			m := -uint32(t)
			o[k] = math.Float32frombits(a&m | b&^m)
		}
	case aScalar:
		a := math.Float32bits(ax)
		bs = bs[:len(o)]
		for k, t := range cb {
			m := -uint32(t)
			o[k] = math.Float32frombits(a&m | math.Float32bits(bs[k])&^m)
		}
	case bScalar:
		b := math.Float32bits(bx)
		as = as[:len(o)]
		for k, t := range cb {
			m := -uint32(t)
			o[k] = math.Float32frombits(math.Float32bits(as[k])&m | b&^m)
		}
	default:
		as, bs = as[:len(o)], bs[:len(o)]
		for k, t := range cb {
			m := -uint32(t)
			o[k] = math.Float32frombits(math.Float32bits(as[k])&m | math.Float32bits(bs[k])&^m)
		}
	}
}
