package ember

import (
	"encoding/binary"
	"math"
	"strconv"
)

// InterpolationMode selects Interpolate's filter, as PyTorch's
// torch.nn.functional.interpolate mode argument.
type InterpolationMode int

const (
	// InterpNearest copies the source pixel floor(dst·in/out) (PyTorch's
	// "nearest").
	InterpNearest InterpolationMode = iota
	// InterpBilinear interpolates linearly between the two nearest source
	// pixels along each axis ("bilinear").
	InterpBilinear
	// InterpBicubic uses cubic convolution over four source pixels per
	// axis with a = −0.75 and clamped borders ("bicubic"; Keys, "Cubic
	// convolution interpolation for digital image processing", 1981).
	InterpBicubic
)

// String returns PyTorch's name of the mode.
func (m InterpolationMode) String() string {
	switch m {
	case InterpNearest:
		return "nearest"
	case InterpBilinear:
		return "bilinear"
	case InterpBicubic:
		return "bicubic"
	}
	return "InterpolationMode(" + strconv.Itoa(int(m)) + ")"
}

// resampleMatrix returns the [out, in] matrix that maps an axis of in
// samples to out samples with mode, row i holding the weights of output i
// (PyTorch's source-index rules: with alignCorners the corner samples
// align, src = i·(in−1)/(out−1); otherwise src = (i + ½)·in/out − ½, which
// bilinear clamps at 0).
func resampleMatrix(in, out int, mode InterpolationMode, alignCorners bool) []float64 {
	m := make([]float64, out*in)
	scale := float64(in) / float64(out)
	src := func(i int) float64 {
		if alignCorners {
			if out == 1 {
				return 0
			}
			return float64(i) * float64(in-1) / float64(out-1)
		}
		return (float64(i)+0.5)*scale - 0.5
	}
	clamp := func(j int) int { return min(max(j, 0), in-1) }
	for i := range out {
		row := m[i*in : (i+1)*in]
		switch mode {
		case InterpNearest:
			row[min(int(math.Floor(float64(i)*scale)), in-1)] = 1
		case InterpBilinear:
			s := src(i)
			if !alignCorners {
				s = math.Max(s, 0)
			}
			j := int(math.Floor(s))
			l := s - float64(j)
			row[clamp(j)] += 1 - l
			row[clamp(j+1)] += l
		case InterpBicubic:
			s := src(i)
			j := int(math.Floor(s))
			t := s - float64(j)
			const a = -0.75
			w := [4]float64{
				((a*(t+1)-5*a)*(t+1)+8*a)*(t+1) - 4*a,
				((a+2)*t-(a+3))*t*t + 1,
				((a+2)*(1-t)-(a+3))*(1-t)*(1-t) + 1,
				((a*(2-t)-5*a)*(2-t)+8*a)*(2-t) - 4*a,
			}
			for k := range 4 {
				row[clamp(j-1+k)] += w[k]
			}
		}
	}
	return m
}

// Interpolate resizes the spatial axes of x [N, C, H, W] to size [H', W']
// with mode (PyTorch's interpolate with size given; alignCorners is
// ignored for nearest, as PyTorch requires it unset there). Each axis is
// resampled by a [out, in] weight matrix (one Matmul per axis), so every
// mode is differentiable in x. Float tensors of any dtype; bicubic may
// overshoot the input's range, as PyTorch's does. It panics with an
// *Error when x is not rank 4, a size is not positive, or an input axis is
// empty.
func (x *Tensor) Interpolate(size [2]int, mode InterpolationMode, alignCorners bool) *Tensor {
	x.need("interpolate", "x")
	if x.Rank() != 4 || !x.DType().IsFloat() {
		fail("interpolate", []string{describe("x", x)}, "needs a float tensor [N, C, H, W]")
	}
	if size[0] <= 0 || size[1] <= 0 {
		fail("interpolate", []string{describe("x", x)}, "output size %v must be positive", size)
	}
	if mode < InterpNearest || mode > InterpBicubic {
		fail("interpolate", []string{describe("x", x)}, "unknown mode %v", mode)
	}
	h, w := x.Dim(2), x.Dim(3)
	if h == 0 || w == 0 {
		fail("interpolate", []string{describe("x", x)}, "input spatial axes must not be empty")
	}
	checkResample("interpolate", x, h, size[0])
	checkResample("interpolate", x, w, size[1])
	mh := constantOn(x, resampleMatrix(h, size[0], mode, alignCorners), []int{size[0], h})
	mw := constantOn(x, resampleMatrix(w, size[1], mode, alignCorners), []int{size[1], w})
	return mh.Matmul(x.Matmul(mw.Transpose()))
}

// maxResampleMatrix bounds the elements of one dense resampling matrix
// (out × in per axis) that Interpolate and AdaptiveAvgPool2d build on the
// host: 2^26 float64s, 512 MiB.
const maxResampleMatrix = 1 << 26

// checkResample panics with an *Error naming op when an axis of in
// samples resampled to out would need a larger matrix.
func checkResample(op string, x *Tensor, in, out int) {
	if out > maxResampleMatrix/max(in, 1) {
		fail(op, []string{describe("x", x)}, "resampling an axis of %d to %d needs a %d x %d weight matrix, more than %d elements", in, out, out, in, maxResampleMatrix)
	}
}

// constantOn puts float64 values of shape on x's device in x's dtype,
// rounded once, untracked.
func constantOn(x *Tensor, vals []float64, shape []int) *Tensor {
	d := &TensorData{Shape: shape, DType: F64, Bytes: make([]byte, 8*len(vals))}
	for i, v := range vals {
		binary.LittleEndian.PutUint64(d.Bytes[8*i:], math.Float64bits(v))
	}
	t := FromData(d, x.dev.Inner()).Cast(x.DType())
	if x.dev.autodiff {
		t = t.ToDevice(x.dev)
	}
	return t
}

// adaptiveBins returns PyTorch's adaptive pooling bin of output i over an
// axis of in samples pooled to out: [⌊i·in/out⌋, ⌈(i+1)·in/out⌉).
func adaptiveBins(in, out int) [][2]int {
	bins := make([][2]int, out)
	for i := range out {
		bins[i] = [2]int{i * in / out, ((i+1)*in + out - 1) / out}
	}
	return bins
}

// AdaptiveAvgPool2d averages x [N, C, H, W] (or [C, H, W]) over the bins
// of PyTorch's adaptive_avg_pool2d, making [..., outH, outW]: output (i,
// j) averages rows [⌊i·H/outH⌋, ⌈(i+1)·H/outH⌉) and the matching columns.
// Each axis is one Matmul by its averaging matrix, so it is differentiable.
// It panics with an *Error for another rank, a non-float tensor or a size
// that is not positive.
func (x *Tensor) AdaptiveAvgPool2d(outH, outW int) *Tensor {
	x.need("adaptive_avg_pool2d", "x")
	if (x.Rank() != 4 && x.Rank() != 3) || !x.DType().IsFloat() || outH <= 0 || outW <= 0 {
		fail("adaptive_avg_pool2d", []string{describe("x", x)}, "needs a float tensor [N, C, H, W] or [C, H, W] and positive output sizes, got %d x %d", outH, outW)
	}
	h, w := x.Dim(-2), x.Dim(-1)
	if h == 0 || w == 0 {
		fail("adaptive_avg_pool2d", []string{describe("x", x)}, "input spatial axes must not be empty")
	}
	checkResample("adaptive_avg_pool2d", x, h, outH)
	checkResample("adaptive_avg_pool2d", x, w, outW)
	mat := func(in, out int) *Tensor {
		m := make([]float64, out*in)
		for i, b := range adaptiveBins(in, out) {
			for j := b[0]; j < b[1]; j++ {
				m[i*in+j] = 1 / float64(b[1]-b[0])
			}
		}
		return constantOn(x, m, []int{out, in})
	}
	return mat(h, outH).Matmul(x.Matmul(mat(w, outW).Transpose()))
}

// AdaptiveMaxPool2d takes the maximum of x [N, C, H, W] (or [C, H, W])
// over the bins of AdaptiveAvgPool2d (PyTorch's adaptive_max_pool2d), as
// a maximum over rows of each bin's column maxima; NaN propagates, and the
// gradient goes to a maximal element of each bin (as MaxAxis routes it).
// It panics as AdaptiveAvgPool2d, and for an empty spatial axis.
func (x *Tensor) AdaptiveMaxPool2d(outH, outW int) *Tensor {
	x.need("adaptive_max_pool2d", "x")
	if (x.Rank() != 4 && x.Rank() != 3) || !x.DType().IsFloat() || outH <= 0 || outW <= 0 || x.Dim(-1) == 0 || x.Dim(-2) == 0 {
		fail("adaptive_max_pool2d", []string{describe("x", x)}, "needs a float tensor [N, C, H, W] or [C, H, W] with non-empty spatial axes and positive output sizes, got %d x %d", outH, outW)
	}
	r := x.Rank()
	pool := func(t *Tensor, axis, out int) *Tensor {
		parts := make([]*Tensor, out)
		for i, b := range adaptiveBins(t.Dim(axis), out) {
			parts[i] = t.Narrow(axis, b[0], b[1]-b[0]).MaxAxis(axis, true)
		}
		return Cat(parts, axis)
	}
	return pool(pool(x, r-1, outW), r-2, outH)
}
