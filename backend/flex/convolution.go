package flex

import "github.com/emberml/ember/backend"

// Conv2d convolves x [N, Cin, H, W] with w [Cout, Cin/groups, kH, kW]
// (PyTorch's conv2d: a cross-correlation with zero padding, no bias),
// giving [N, Cout, Ho, Wo] with Ho = (H + 2·pad − dilation·(kH−1) − 1)/stride + 1
// (likewise Wo). F32, Flex32 and F64 run the im2col+GEMM kernels; F16 and
// BF16 compute in float32 and round once; integers use a plain loop in
// their own type (wrapping); Bool is computed in I64 and tested for != 0.
func (be *Backend) Conv2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return be.convolve(asTensor(x), asTensor(w), opts, false)
}

// ConvTranspose2d is the adjoint of Conv2d with the same options
// (PyTorch's conv_transpose2d, no bias): x [N, Cin, H, W] and
// w [Cin, Cout/groups, kH, kW] give [N, Cout, Ho, Wo] with
// Ho = (H−1)·stride − 2·pad + dilation·(kH−1) + outputPadding + 1. Dtypes
// are handled as in Conv2d.
func (be *Backend) ConvTranspose2d(x, w backend.Tensor, opts backend.ConvOptions) backend.Tensor {
	return be.convolve(asTensor(x), asTensor(w), opts, true)
}

// convShape returns the output shape of a convolution.
func convShape(xs, ws [4]int, o backend.ConvOptions, transpose bool) [4]int {
	g := max(o.Groups, 1)
	out := [4]int{xs[0], ws[0], 0, 0}
	if transpose {
		out[1] = ws[1] * g
	}
	for i := 0; i < 2; i++ {
		k := o.Dilation[i]*(ws[2+i]-1) + 1
		if transpose {
			out[2+i] = (xs[2+i]-1)*o.Stride[i] - 2*o.Padding[i] + k + o.OutputPadding[i]
		} else {
			out[2+i] = (xs[2+i]+2*o.Padding[i]-k)/o.Stride[i] + 1
		}
	}
	return out
}

func shape4(s []int) [4]int { return [4]int{s[0], s[1], s[2], s[3]} }

func (be *Backend) convolve(x, w *Tensor, o backend.ConvOptions, transpose bool) *Tensor {
	o = o.WithDefaults()
	dt := x.dtype
	switch {
	case isHalf(dt):
		out := be.convolve(toF32(x), toF32(w), o, transpose)
		return fromCompute(dt, out.shape, out.data)
	case dt == backend.Bool:
		out := be.convolve(be.Cast(x, backend.I64).(*Tensor), be.Cast(w, backend.I64).(*Tensor), o, transpose)
		return be.Cast(out, backend.Bool).(*Tensor)
	}
	xs, ws := shape4(x.shape), shape4(w.shape)
	os := convShape(xs, ws, o, transpose)
	out := x.data.alloc(numel(os[:]))
	if numel(os[:]) > 0 {
		out.(convolver).convInto(x.dense(), xs, w.dense(), ws, o, os, transpose)
	}
	return newTensor(dt, os[:], out)
}

// convolver is storage that computes a convolution into itself.
type convolver interface {
	convInto(x storage, xs [4]int, w storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool)
}

func (s fvec[T]) convInto(xd storage, xs [4]int, wd storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) {
	switch out := any([]T(s)).(type) {
	case []float32:
		x, w := any([]T(xd.(fvec[T]))).([]float32), any([]T(wd.(fvec[T]))).([]float32)
		if transpose {
			convTranspose2dF32(x, xs, w, ws, o, out, os)
		} else {
			conv2dF32(x, xs, w, ws, o, out, os)
		}
	case []float64:
		x, w := any([]T(xd.(fvec[T]))).([]float64), any([]T(wd.(fvec[T]))).([]float64)
		if transpose {
			convTranspose2dF64(x, xs, w, ws, o, out, os)
		} else {
			conv2dF64(x, xs, w, ws, o, out, os)
		}
	}
}

func (s ivec[T]) convInto(xd storage, xs [4]int, wd storage, ws [4]int, o backend.ConvOptions, os [4]int, transpose bool) {
	intConv(s, xd.(ivec[T]), xs, wd.(ivec[T]), ws, o, os, transpose)
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
