package cpu

import (
	"math"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindUnary, (*Backend).unary, nil)
	kernels.Set(ir.KindWhere, (*Backend).where, nil)
}

// unary applies op.Sub elementwise to In[0] (see ir.UnaryOp). For
// contiguous F32/Flex32 input, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Recip, Tanh,
// Sigmoid and Erf run here in parallel cache-sized chunks into recycled
// buffers, computing in float64 and rounding once to float32 exactly as
// flex does; every other case runs on flex.
func (be *Backend) unary(op ir.Op) ir.Outputs {
	u := ir.UnaryOp(op.Sub)
	if isF32(op.DType) && fastUnary(u) {
		if v, ok := host.Float32(op.In[0]); ok {
			if src, ok := v.Contiguous(); ok && len(src) > 0 {
				out := be.f32(len(src))
				if len(src) < serialElems {
					unaryF32(u, out, src)
				} else {
					unaryChunks(u, out, src)
				}
				return ir.One(host.NewFloat32(op.DType, op.Shape, out))
			}
		}
	}
	return be.flex.Exec(op)
}

// unaryChunks runs unaryF32 over all of out in parallel chunks.
func unaryChunks(op backend.UnaryOp, out, src []float32) {
	forChunks(len(src), func(lo, hi int) { unaryF32(op, out[lo:hi], src[lo:hi]) })
}

func fastUnary(op backend.UnaryOp) bool {
	switch op {
	case backend.OpNeg, backend.OpAbs, backend.OpExp, backend.OpLog, backend.OpSqrt,
		backend.OpRsqrt, backend.OpRecip, backend.OpTanh, backend.OpSigmoid, backend.OpErf:
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
	case backend.OpErf:
		erfF32(o, a) // float32(math.Erf(float64(x))), bit for bit
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

// where selects In[1]'s element where In[0] is true, else In[2]'s
// (PyTorch's where). Contiguous F32/Flex32 operands with a contiguous Bool
// condition, each full, a trailing row, a leading column, a middle block
// or a scalar (as Relu's Where(x <= 0, 0, x)), run here in parallel; the
// rest on flex.
func (be *Backend) where(op ir.Op) ir.Outputs {
	if isF32(op.DType) {
		if out := be.whereF32(&op); out != nil {
			return ir.One(out)
		}
	}
	return be.flex.Exec(op)
}

func (be *Backend) whereF32(op *ir.Op) ir.Tensor {
	c, ok0 := host.Bool(op.In[0])
	x, ok1 := host.Float32(op.In[1])
	y, ok2 := host.Float32(op.In[2])
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	cd, ok0 := c.Contiguous()
	xd, ok1 := x.Contiguous()
	yd, ok2 := y.Contiguous()
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	shape := op.Shape
	n := numel(shape)
	if n == 0 {
		return nil
	}
	vc, ok0 := classify(cd, c.Shape, shape)
	va, ok1 := classify(xd, x.Shape, shape)
	vb, ok2 := classify(yd, y.Shape, shape)
	if !ok0 || !ok1 || !ok2 {
		return nil
	}
	out := be.f32(n)
	if n < serialElems {
		whereRange(out, &vc, &va, &vb, 0, n)
	} else {
		whereChunks(out, vc, va, vb)
	}
	return host.NewFloat32(op.DType, shape, out)
}

// whereChunks runs whereRange over all of out in parallel chunks.
func whereChunks(out []float32, c bview[bool], a, b bview[float32]) {
	forChunks(len(out), func(lo, hi int) { whereRange(out, &c, &a, &b, lo, hi) })
}

// whereRange computes output elements [lo, hi) run by run.
func whereRange(out []float32, vc *bview[bool], va, vb *bview[float32], lo, hi int) {
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
}

// selectF32 writes o[k] = a[k] where c[k], else b[k] (a or b a repeated
// scalar when its flag is set), without branching on c: the selection is a
// bit mask, so random masks (as Relu's) cost no mispredictions.
func selectF32(o []float32, c []bool, as []float32, ax float32, aScalar bool, bs []float32, bx float32, bScalar bool) {
	if m := selectF32Vec(o, c, as, ax, aScalar, bs, bx, bScalar); m > 0 {
		o, c = o[m:], c[m:]
		if !aScalar {
			as = as[m:]
		}
		if !bScalar {
			bs = bs[m:]
		}
	}
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
