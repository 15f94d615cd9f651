package ir

import (
	"math"
	"math/bits"
	"slices"
)

// Shape arithmetic, stated once for every backend: element counts with
// overflow checks, NumPy broadcasting, convolution and pooling output
// sizes.

// BroadcastShapes returns the shape two shapes broadcast to (NumPy rules:
// align trailing axes; sizes must be equal or 1), or ok=false. When the
// shapes are equal it returns a itself (no allocation).
func BroadcastShapes(a, b []int) (out []int, ok bool) {
	if slices.Equal(a, b) {
		return a, true
	}
	n := max(len(a), len(b))
	out = make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db:
			out[i] = da
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			return nil, false
		}
	}
	return out, true
}

// CheckShape returns an error for a shape with a negative size, or whose
// sizes other than 0 multiply to more than an int can count. An empty
// shape (a size 0) is held to the same bound as any other, so that every
// stride and every product of a run of axes (a flattened size) of a valid
// shape fits an int.
func CheckShape(shape []int) error {
	for _, s := range shape {
		if s < 0 {
			return errorf("negative size in shape %v", shape)
		}
	}
	n := 1
	for _, s := range shape {
		if s == 0 {
			continue
		}
		hi, lo := bits.Mul64(uint64(n), uint64(s))
		if hi != 0 || lo > math.MaxInt {
			if slices.Contains(shape, 0) {
				return errorf("shape %v has more elements than an int can count, not counting its empty axes", shape)
			}
			return errorf("shape %v has more elements than an int can count", shape)
		}
		n = int(lo)
	}
	return nil
}

// NumBytes returns the number of bytes of a tensor of shape and dtype dt,
// or an error when the shape is invalid (CheckShape) or the count exceeds
// what an int can count.
func NumBytes(shape []int, dt DType) (int, error) {
	if err := CheckShape(shape); err != nil {
		return 0, err
	}
	n, sz := NumElements(shape), dt.Size()
	if sz > 0 && n > math.MaxInt/sz {
		return 0, errorf("shape %v of %v needs more bytes than an int can count", shape, dt)
	}
	return n * sz, nil
}

// ConvOutputSize returns the spatial output size [Ho, Wo] of a convolution
// of an input of spatial size in with a kernel of spatial size k under o
// (defaults filled in): PyTorch's conv2d formula
// Ho = (H + 2·pad − dil·(k−1) − 1)/stride + 1, or for the transposed
// convolution Ho = (H−1)·stride − 2·pad + dil·(k−1) + outputPad + 1. A
// result may be zero or negative; callers check.
func ConvOutputSize(in, k [2]int, o ConvOptions, transpose bool) [2]int {
	var out [2]int
	for i := range 2 {
		if transpose {
			out[i] = (in[i]-1)*o.Stride[i] - 2*o.Padding[i] + o.Dilation[i]*(k[i]-1) + o.OutputPadding[i] + 1
		} else {
			out[i] = (in[i]+2*o.Padding[i]-o.Dilation[i]*(k[i]-1)-1)/o.Stride[i] + 1
		}
	}
	return out
}

// PoolOutputSize returns the pooled spatial size [Ho, Wo] of an input of
// spatial size [h, w] under o (PyTorch's floor formula
// Ho = (H + 2·padH − dilH·(kH−1) − 1)/strideH + 1). It may be zero or
// negative when the dilated window is larger than the padded input.
func PoolOutputSize(h, w int, o PoolOptions) [2]int {
	in := [2]int{h, w}
	var out [2]int
	for i := range 2 {
		eff := o.Dilation[i]*(o.Kernel[i]-1) + 1
		out[i] = (in[i]+2*o.Padding[i]-eff)/o.Stride[i] + 1
	}
	return out
}

// KeepDimShape is shape with axis kept as size 1 (a copy): the shape of a
// reduction along axis with keepDim.
func KeepDimShape(shape []int, axis int) []int {
	s := slices.Clone(shape)
	s[axis] = 1
	return s
}

// sameSlice reports whether a and b are the same slice (same start and
// length), so that a result known to be an input's shape needs no check.
func sameSlice(a, b []int) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
