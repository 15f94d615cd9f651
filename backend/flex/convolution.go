package flex

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindConv2d, (*Backend).conv2d, nil)
	kernels.Set(ir.KindConvTranspose2d, (*Backend).convTranspose2d, nil)
}

// conv2d convolves In[0] x [N, Cin, H, W] with In[1] w [Cout, Cin/groups,
// kH, kW] under op.Attrs.Conv (PyTorch's conv2d: a cross-correlation with
// zero padding, no bias), giving op.Shape [N, Cout, Ho, Wo]. F32, Flex32
// and F64 run the im2col+GEMM kernels; F16 and BF16 compute in float32 and
// round once; integers use a plain loop in their own type (wrapping); Bool
// is computed in I64 and tested for != 0.
func (be *Backend) conv2d(op ir.Op) ir.Outputs {
	return ir.One(convolve(asTensor(op.In[0]), asTensor(op.In[1]), op.Attrs.Conv, op.Shape, false))
}

// convTranspose2d is the adjoint of conv2d with the same options
// (PyTorch's conv_transpose2d, no bias): x [N, Cin, H, W] and
// w [Cin, Cout/groups, kH, kW] give op.Shape [N, Cout, Ho, Wo]. Dtypes are
// handled as in conv2d.
func (be *Backend) convTranspose2d(op ir.Op) ir.Outputs {
	return ir.One(convolve(asTensor(op.In[0]), asTensor(op.In[1]), op.Attrs.Conv, op.Shape, true))
}

func shape4(s []int) [4]int { return [4]int{s[0], s[1], s[2], s[3]} }

// convolve computes the convolution (or its adjoint) of output shape
// shape.
func convolve(x, w *Tensor, o backend.ConvOptions, shape []int, transpose bool) *Tensor {
	dt := x.dtype
	switch {
	case isHalf(dt):
		out := convolve(toF32(x), toF32(w), o, shape, transpose)
		return fromCompute(dt, shape, out.data)
	case dt == backend.Bool:
		out := convolve(castTensor(x, backend.I64), castTensor(w, backend.I64), o, shape, transpose)
		return castTensor(out, backend.Bool)
	}
	xs, ws, os := shape4(x.shape), shape4(w.shape), shape4(shape)
	out := x.data.alloc(numel(shape))
	if numel(shape) > 0 {
		out.(convolver).convInto(x.dense(), xs, w.dense(), ws, o, os, transpose)
	}
	return newTensor(dt, shape, out)
}

// convolver is storage that computes a convolution into itself.
type convolver interface {
	convInto(x storage, xs [4]int, w storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool)
}

func (p *fvec[T]) convInto(xd storage, xs [4]int, wd storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) {
	s := *p
	switch out := any([]T(s)).(type) {
	case []float32:
		x, w := any([]T(floats[T](xd))).([]float32), any([]T(floats[T](wd))).([]float32)
		if transpose {
			convTranspose2dF32(x, xs, w, ws, o, out, os)
		} else {
			conv2dF32(x, xs, w, ws, o, out, os)
		}
	case []float64:
		x, w := any([]T(floats[T](xd))).([]float64), any([]T(floats[T](wd))).([]float64)
		if transpose {
			convTranspose2dF64(x, xs, w, ws, o, out, os)
		} else {
			conv2dF64(x, xs, w, ws, o, out, os)
		}
	}
}

func (p *ivec[T]) convInto(xd storage, xs [4]int, wd storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) {
	s := *p
	intConv(s, ints[T](xd), xs, ints[T](wd), ws, o, os, transpose)
}

// intConv is the direct convolution loop (or its adjoint, scattering into
// out, when transpose) over contiguous integer data.
func intConv[T integer](out, x []T, xs [4]int, w []T, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) {
	g := o.Groups
	cinG := xs[1] / g // input channels per group
	coutG := os[1] / g
	kh, kw := ws[2], ws[3]
	for n := 0; n < xs[0]; n++ {
		for ci := 0; ci < xs[1]; ci++ {
			grp := ci / cinG
			for co := grp * coutG; co < (grp+1)*coutG; co++ {
				for ky := 0; ky < kh; ky++ {
					for kx := 0; kx < kw; kx++ {
						var wv T
						if transpose { // w [Cin, Cout/g, kH, kW]
							wv = w[((ci*coutG+co-grp*coutG)*kh+ky)*kw+kx]
						} else { // w [Cout, Cin/g, kH, kW]
							wv = w[((co*cinG+ci-grp*cinG)*kh+ky)*kw+kx]
						}
						if wv == 0 {
							continue
						}
						intConvTap(out, x, xs, os, o, n, ci, co, ky, kx, wv, transpose)
					}
				}
			}
		}
	}
}

// intConvTap adds one kernel tap's contribution for image n, input channel
// ci and output channel co.
func intConvTap[T integer](out, x []T, xs, os [4]int, o backend.ConvOptions, n, ci, co, ky, kx int, wv T, transpose bool) {
	xPlane := x[(n*xs[1]+ci)*xs[2]*xs[3]:]
	oPlane := out[(n*os[1]+co)*os[2]*os[3]:]
	if transpose {
		for iy := 0; iy < xs[2]; iy++ {
			oy := iy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
			if oy < 0 || oy >= os[2] {
				continue
			}
			for ix := 0; ix < xs[3]; ix++ {
				ox := ix*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
				if ox < 0 || ox >= os[3] {
					continue
				}
				oPlane[oy*os[3]+ox] += wv * xPlane[iy*xs[3]+ix]
			}
		}
		return
	}
	for oy := 0; oy < os[2]; oy++ {
		iy := oy*o.Stride[0] - o.Padding[0] + ky*o.Dilation[0]
		if iy < 0 || iy >= xs[2] {
			continue
		}
		for ox := 0; ox < os[3]; ox++ {
			ix := ox*o.Stride[1] - o.Padding[1] + kx*o.Dilation[1]
			if ix < 0 || ix >= xs[3] {
				continue
			}
			oPlane[oy*os[3]+ox] += wv * xPlane[iy*xs[3]+ix]
		}
	}
}
