//go:build libtorch && cgo

package libtorch

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindMatmul, (*Backend).matmul, nil)
	kernels.Set(ir.KindConv2d, (*Backend).conv2d, nil)
	kernels.Set(ir.KindConvTranspose2d, (*Backend).conv2d, nil)
	kernels.Set(ir.KindConv2dWeightGrad, (*Backend).conv2dWeightGrad, isFloat)
	kernels.Set(ir.KindMaxPool2d, (*Backend).maxPool2d, isFloat)
	kernels.Set(ir.KindAdamStep, (*Backend).adamStep, func(dt backend.DType) bool {
		return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64
	})
}

func isFloat(dt backend.DType) bool { return dt.IsFloat() }

// matmul multiplies [..., m, k] × [..., k, n] with broadcast batch axes:
// float32 (and F16/BF16 through float32) with oneDNN's sgemm where
// libtorch carries it, one product per matrix of the batch (views with a
// unit stride on either of the last two axes are read in place), other
// dtypes with ATen's matmul (integers wrap).
func (b *Backend) matmul(op ir.Op) ir.Outputs {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	var out C.lt_out
	st := C.lt_matmul(x.h, y.h, &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	check("matmul", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// convInts flattens convolution options for the shim: stride, padding,
// dilation, output padding (pairs), groups.
func convInts(o ir.ConvOptions) *[9]C.int64_t {
	o = o.WithDefaults()
	return &[9]C.int64_t{
		C.int64_t(o.Stride[0]), C.int64_t(o.Stride[1]),
		C.int64_t(o.Padding[0]), C.int64_t(o.Padding[1]),
		C.int64_t(o.Dilation[0]), C.int64_t(o.Dilation[1]),
		C.int64_t(o.OutputPadding[0]), C.int64_t(o.OutputPadding[1]),
		C.int64_t(o.Groups),
	}
}

// conv2d is ATen's conv2d or conv_transpose2d without bias (F16 and BF16
// in float32, rounded once).
func (b *Backend) conv2d(op ir.Op) ir.Outputs {
	x, w := asTensor(op.In[0]), asTensor(op.In[1])
	if empty(x) || empty(w) {
		return b.zeros(op) // an empty sum (ATen returns no elements)
	}
	c := convInts(op.Attrs.Conv)
	var out C.lt_out
	st := C.lt_conv2d(x.h, w.h, &c[0], boolInt(op.Kind == ir.KindConvTranspose2d), &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(w)
	check(op.Kind.String(), st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// conv2dWeightGrad is the weight gradient of Conv2d (In[0] x, In[1] the
// output gradient; op.Shape the weight's) through ATen's
// convolution_backward, within float rounding of the decomposition.
func (b *Backend) conv2dWeightGrad(op ir.Op) ir.Outputs {
	x, g := asTensor(op.In[0]), asTensor(op.In[1])
	if empty(x) || empty(g) {
		return b.zeros(op)
	}
	c := convInts(op.Attrs.Conv)
	ws := int64s(op.Shape)
	var out C.lt_out
	st := C.lt_conv2d_weight_grad(x.h, g.h, ptr(ws), &c[0], &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(g)
	check("conv2d_weight_grad", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// maxPool2d is ATen's max_pool2d (F16 and BF16 through float32): the
// window maxima, equal to the decomposition's (NaN propagates, the first
// of equal values wins, padding is -Inf). ATen takes paddings up to half
// the undilated kernel only, and no empty input; a larger padding (allowed
// with dilation) and empty inputs are lowered with the decomposition.
func (b *Backend) maxPool2d(op ir.Op) ir.Outputs {
	o := op.Attrs.Pool
	for i := range 2 {
		if o.Padding[i] > o.Kernel[i]/2 || empty(asTensor(op.In[0])) {
			return ir.SpecOf(op.Kind).Decompose(op, b)
		}
	}
	p := [8]C.int64_t{
		C.int64_t(o.Kernel[0]), C.int64_t(o.Kernel[1]),
		C.int64_t(o.Stride[0]), C.int64_t(o.Stride[1]),
		C.int64_t(o.Padding[0]), C.int64_t(o.Padding[1]),
		C.int64_t(o.Dilation[0]), C.int64_t(o.Dilation[1]),
	}
	return oneInput(op, "max_pool2d", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_max_pool2d(x, &p[0], out)
	})
}

// adamStep runs one Adam/AdamW update with the op sequence of ir's
// decomposition (each op rounding to the dtype, each hyperparameter
// converted to it first), so its results are the decomposition's, bit for
// bit, on this backend. Outputs: the new param, m and v.
func (b *Backend) adamStep(op ir.Op) ir.Outputs {
	u := op.Attrs.Optim
	p, g, m, v := asTensor(op.Xs[0]), asTensor(op.Xs[1]), asTensor(op.Xs[2]), asTensor(op.Xs[3])
	decay, flags := u.WeightDecay, C.int(0)
	switch {
	case u.Decoupled:
		decay, flags = 1-u.LR*u.WeightDecay, 1
	case u.WeightDecay != 0:
		flags = 2
	}
	bc1 := 1 - math.Pow(u.Beta1, float64(u.Step))
	bc2 := 1 - math.Pow(u.Beta2, float64(u.Step))
	h := [8]C.double{C.double(decay), C.double(u.Beta1), C.double(1 - u.Beta1), C.double(u.Beta2), C.double(1 - u.Beta2),
		C.double(math.Sqrt(bc2)), C.double(u.Eps), C.double(u.LR / bc1)}
	var outs [3]C.lt_out
	st := C.lt_adam_step(p.h, g.h, m.h, v.h, &h[0], flags, &outs[0])
	runtime.KeepAlive(p)
	runtime.KeepAlive(g)
	runtime.KeepAlive(m)
	runtime.KeepAlive(v)
	check("adam_step", st)
	shape := op.Shape
	return ir.Outputs{wrap(outs[0], shape, op.DType), wrap(outs[1], shape, op.DType), wrap(outs[2], shape, op.DType)}
}

// empty reports whether t has no elements.
func empty(t *Tensor) bool { return ir.NumElements(t.shape) == 0 }

// zeros is the op's output filled with zeros.
func (b *Backend) zeros(op ir.Op) ir.Outputs {
	return b.full(ir.Op{Kind: ir.KindFull, DType: op.DType, Shape: op.Shape})
}
