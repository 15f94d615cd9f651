package ember

import (
	"math"
	"slices"

	"github.com/emberml/ember/ir"
)

// Pooling beyond MaxPool2d and AvgPool2d, composed from them and from
// existing kinds: indices and unpooling, ceil mode and asymmetric padding,
// 1-d and 3-d pooling.

// PoolExtras are the pooling options PoolOptions lacks (PyTorch's
// ceil_mode, and asymmetric padding, which PyTorch expresses with an
// explicit pad before pooling).
type PoolExtras struct {
	// CeilMode rounds the output size up, as PyTorch's ceil_mode: Ho =
	// ⌈(H + padding − dilH·(kH−1) − 1)/strideH⌉ + 1, less one when the last
	// window would start in the bottom (right) padding.
	CeilMode bool
	// Padding, when not nil, is [top, bottom, left, right] and replaces
	// PoolOptions.Padding (which must then be zero). Each side is at
	// most half the dilated kernel size, as PyTorch's limit.
	Padding *[4]int
}

// extPads resolves o and e to the four paddings [top, bottom, left,
// right] including the extra bottom/right rows of ceil mode, the pads
// that belong to the input's declared padding (for the avg divisor), and
// the output size.
func extPads(op string, x *Tensor, o PoolOptions, e PoolExtras) (pads, declared [4]int) {
	declared = [4]int{o.Padding[0], o.Padding[0], o.Padding[1], o.Padding[1]}
	if e.Padding != nil {
		if o.Padding != [2]int{} {
			fail(op, []string{describe("x", x)}, "set either PoolOptions.Padding or PoolExtras.Padding, not both")
		}
		declared = *e.Padding
		for i, p := range declared {
			k := o.Dilation[i/2]*(o.Kernel[i/2]-1) + 1
			if p < 0 || 2*p > k {
				fail(op, []string{describe("x", x)}, "padding %v must be non-negative and at most half the dilated kernel size", declared)
			}
		}
	}
	pads = declared
	if !e.CeilMode {
		return pads, declared
	}
	s := x.shape()
	for axis := range 2 {
		in := s[len(s)-2+axis] + declared[2*axis] + declared[2*axis+1]
		span := o.Dilation[axis]*(o.Kernel[axis]-1) + 1
		if in < span {
			continue // the pooling reports the error
		}
		st := o.Stride[axis]
		out := (in-span+st-1)/st + 1
		if (out-1)*st >= s[len(s)-2+axis]+declared[2*axis] { // last window starts in the padding
			out--
		}
		if extra := (out-1)*st + span - in; extra > 0 {
			pads[2*axis+1] += extra
		}
	}
	return pads, declared
}

// MaxPool2dWith is MaxPool2d with PyTorch's ceil mode and asymmetric
// padding (see PoolExtras); padding and the ceil-mode extension count as
// -Inf. Values, NaN rule and gradient are MaxPool2d's. It panics as
// MaxPool2d, and for invalid extras.
func (x *Tensor) MaxPool2dWith(opts PoolOptions, e PoolExtras) *Tensor {
	x.notBool("max_pool2d")
	x = x.asFloat("max_pool2d")
	o := opts.norm("max_pool2d", x)
	if !e.CeilMode && e.Padding == nil {
		return x.MaxPool2d(o)
	}
	return x.pool4(func(x *Tensor) *Tensor {
		pads, _ := extPads("max_pool2d", x, o, e)
		p := x.Pad([]int{pads[2], pads[3], pads[0], pads[1]}, math.Inf(-1))
		o.Padding = [2]int{}
		return p.MaxPool2d(o)
	})
}

// AvgPool2dWith is AvgPool2d with PyTorch's ceil mode and asymmetric
// padding (see PoolExtras). As PyTorch, the divisor counts the window's
// positions inside the padded input (countIncludePad) or inside the input
// (otherwise); the ceil-mode extension never counts. It panics as
// AvgPool2d, and for invalid extras.
func (x *Tensor) AvgPool2dWith(opts PoolOptions, countIncludePad bool, e PoolExtras) *Tensor {
	x.notBool("avg_pool2d")
	x = x.asFloat("avg_pool2d")
	o := opts.norm("avg_pool2d", x)
	if !e.CeilMode && e.Padding == nil {
		return x.AvgPool2d(o, countIncludePad)
	}
	return x.pool4(func(x *Tensor) *Tensor {
		pads, declared := extPads("avg_pool2d", x, o, e)
		p := x.Pad([]int{pads[2], pads[3], pads[0], pads[1]}, 0)
		o.Padding = [2]int{}
		k := float64(o.Kernel[0] * o.Kernel[1])
		sum := p.AvgPool2d(o, true).MulScalar(k)
		// The divisor: pool a mask of the counted positions (untracked).
		s := x.shape()
		h, w := s[2], s[3]
		mask := FullDType([]int{1, 1, h, w}, 1, x.DType(), x.dev.Inner())
		if countIncludePad {
			mask = mask.Pad([]int{declared[2], declared[3], declared[0], declared[1]}, 1)
			mask = mask.Pad([]int{0, pads[3] - declared[3], 0, pads[1] - declared[1]}, 0)
		} else {
			mask = mask.Pad([]int{pads[2], pads[3], pads[0], pads[1]}, 0)
		}
		count := mask.AvgPool2d(o, true).MulScalar(k)
		if x.dev.autodiff {
			count = count.ToDevice(x.dev)
		}
		return sum.Div(count)
	})
}

// MaxPool2dWithIndices returns MaxPool2d's values and, for each, the
// index of the selected input element within its [H, W] plane, flattened
// as h·W + w, in I64 (PyTorch's max_pool2d with return_indices): the
// first maximal tap of the window in kernel row-major order, or its first
// NaN — the element the gradient goes to. It panics as MaxPool2d.
func (x *Tensor) MaxPool2dWithIndices(opts PoolOptions) (values, indices *Tensor) {
	x.notBool("max_pool2d")
	x = x.asFloat("max_pool2d")
	o := opts.norm("max_pool2d", x)
	values = x.MaxPool2d(o)
	plain := x.Inner()
	rank3 := plain.Rank() == 3
	if rank3 {
		plain = plain.Unsqueeze(0)
	}
	views := plain.windows("max_pool2d", o, math.Inf(-1))
	y := plain.MaxPool2d(o)
	s := plain.shape()
	out := y.shape()
	ho, wo := out[2], out[3]
	yNaN := y.IsNaN()
	var idx, found *Tensor
	k := 0
	for a := range o.Kernel[0] {
		for b := range o.Kernel[1] {
			pos := make([]int64, ho*wo)
			for i := range ho {
				for j := range wo {
					r := i*o.Stride[0] - o.Padding[0] + a*o.Dilation[0]
					c := j*o.Stride[1] - o.Padding[1] + b*o.Dilation[1]
					pos[i*wo+j] = int64(r*s[3] + c)
				}
			}
			pt := FromInts(pos, []int{1, 1, ho, wo}, plain.dev).castTo(I64)
			v := views[k]
			hit := v.Eq(y).Or(v.IsNaN().And(yNaN))
			if found == nil {
				idx = Where(hit, pt, FullDType([]int{1, 1, ho, wo}, 0, I64, plain.dev))
				found = hit
			} else {
				idx = Where(hit.And(found.Not()), pt, idx)
				found = found.Or(hit)
			}
			k++
		}
	}
	idx = idx.Expand(out...)
	if rank3 {
		idx = idx.Squeeze(0)
	}
	if x.dev.autodiff {
		idx = idx.ToDevice(x.dev)
	}
	return values, idx
}

// MaxUnpool2d places each element of x [N, C, Ho, Wo] (or [C, Ho, Wo])
// at its index from MaxPool2dWithIndices in a zero tensor [N, C, H, W]
// (PyTorch's max_unpool2d): size is [H, W], or [0, 0] for PyTorch's
// default (Ho−1)·stride − 2·padding + kernel per axis. An index that
// several windows selected (overlapping windows) holds its value once, as
// in PyTorch (the copies are averaged, each getting its share of the
// gradient). It is differentiable in x. It panics with an *Error when the
// shapes disagree or an index is out of range (devices that check indices
// themselves report it from the next Sync or read).
func (x *Tensor) MaxUnpool2d(indices *Tensor, opts PoolOptions, size [2]int) *Tensor {
	x.need("max_unpool2d", "x")
	indices.need("max_unpool2d", "indices")
	o := opts.norm("max_unpool2d", x)
	if x.Rank() == 3 {
		return x.Unsqueeze(0).MaxUnpool2d(indices.Unsqueeze(0), o, size).Squeeze(0)
	}
	if x.Rank() != 4 || !slices.Equal(x.shape(), indices.shape()) || !indices.DType().IsInt() {
		fail("max_unpool2d", []string{describe("x", x), describe("indices", indices)}, "needs x [N, C, Ho, Wo] and integer indices of its shape")
	}
	s := x.shape()
	if size == [2]int{} {
		for i := range 2 {
			size[i] = (s[2+i]-1)*o.Stride[i] - 2*o.Padding[i] + o.Kernel[i]
		}
	}
	if size[0] <= 0 || size[1] <= 0 || ir.CheckShape([]int{s[0], s[1], size[0], size[1]}) != nil {
		fail("max_unpool2d", []string{describe("x", x)}, "output size %v must be positive and countable", size)
	}
	plane := size[0] * size[1]
	idx := indices.Reshape(s[0], s[1], -1).castTo(I64)
	if !checksIndicesOnDevice(x.dev) {
		for _, v := range idx.Int64s() {
			if v < 0 || v >= int64(plane) {
				fail("max_unpool2d", []string{describe("x", x), describe("indices", indices)}, "index %d is outside the output plane of %d x %d", v, size[0], size[1])
			}
		}
	}
	vals := x.Reshape(s[0], s[1], -1)
	sum := Zeros([]int{s[0], s[1], plane}, x.dev).castTo(x.DType()).ScatterAdd(2, idx, vals)
	// An element several windows selected appears once, as PyTorch's
	// unpooling writes it once: divide by how often each index occurs.
	count := Zeros([]int{s[0], s[1], plane}, x.dev.Inner()).castTo(x.DType()).ScatterAdd(2, idx.Inner(), OnesLike(vals.Inner()))
	count = Where(count.EqScalar(0), OnesLike(count), count)
	if x.dev.autodiff {
		count = count.ToDevice(x.dev)
	}
	return sum.Div(count).Reshape(s[0], s[1], size[0], size[1])
}

// pool1 runs a 2-d pooling over x [N, C, L] (or [C, L]) viewed with a
// height of 1.
func (x *Tensor) pool1(op string, f func(*Tensor) *Tensor) *Tensor {
	x.need(op, "x")
	if x.Rank() != 2 && x.Rank() != 3 {
		fail(op, []string{describe("x", x)}, "needs x [N, C, L] or [C, L]")
	}
	return f(x.Unsqueeze(-2)).Squeeze(-2)
}

// MaxPool1d is the 1-d max pooling of x [N, C, L] (or [C, L]) with
// PyTorch's max_pool1d options (stride 0 means kernel, dilation 0 means
// 1): MaxPool2d over a height of 1, with its NaN rule and gradient.
func (x *Tensor) MaxPool1d(kernel, stride, padding, dilation int) *Tensor {
	return x.pool1("max_pool1d", func(v *Tensor) *Tensor {
		return v.MaxPool2d(PoolOptions{Kernel: [2]int{1, kernel}, Stride: [2]int{1, stride}, Padding: [2]int{0, padding}, Dilation: [2]int{1, dilation}})
	})
}

// AvgPool1d is the 1-d average pooling of x [N, C, L] (or [C, L]) with
// PyTorch's avg_pool1d options: AvgPool2d over a height of 1.
func (x *Tensor) AvgPool1d(kernel, stride, padding int, countIncludePad bool) *Tensor {
	return x.pool1("avg_pool1d", func(v *Tensor) *Tensor {
		return v.AvgPool2d(PoolOptions{Kernel: [2]int{1, kernel}, Stride: [2]int{1, stride}, Padding: [2]int{0, padding}}, countIncludePad)
	})
}

// Pool3dOptions are a 3-d pooling's window attributes per axis (depth,
// height, width), as PoolOptions: a zero stride means the kernel, a zero
// dilation 1.
type Pool3dOptions struct {
	Kernel, Stride, Padding, Dilation [3]int
}

// depthTaps pads x [N, C, D, H, W] along depth with value and returns its
// depth windows as [N, C·Do·kD, H, W] with Do and kD.
func depthTaps(op string, x *Tensor, o Pool3dOptions, value float64) (*Tensor, int, int) {
	if x.Rank() != 5 {
		fail(op, []string{describe("x", x)}, "needs x [N, C, D, H, W]")
	}
	if o.Kernel[0] <= 0 || o.Stride[0] <= 0 || o.Dilation[0] <= 0 || o.Padding[0] < 0 || 2*o.Padding[0] > o.Dilation[0]*(o.Kernel[0]-1)+1 {
		fail(op, []string{describe("x", x)}, "invalid depth options %+v", o)
	}
	t := depthWindows(op, x, o.Kernel[0], o.Stride[0], o.Padding[0], o.Dilation[0], value)
	n, c, do, h, w := t.Dim(0), t.Dim(1), t.Dim(2), t.Dim(3), t.Dim(4)
	return t.Permute(0, 1, 2, 5, 3, 4).Reshape(n, c*do*o.Kernel[0], h, w), do, o.Kernel[0]
}

// depthWindows pads x [N, C, D, H, W] by pad along depth with value and
// returns its depth windows of k taps (stride, dilation) as [N, C, Do, H,
// W, k], through Unfold; it panics with an *Error naming op when the
// padded depth is shorter than the dilated window.
func depthWindows(op string, x *Tensor, k, stride, pad, dil int, value float64) *Tensor {
	if pad > 0 {
		x = x.Pad([]int{0, 0, 0, 0, pad, pad}, value)
	}
	span := dil*(k-1) + 1
	if x.Dim(2) < span {
		fail(op, []string{describe("x", x)}, "the padded depth %d is smaller than the dilated window depth %d", x.Dim(2), span)
	}
	t := x.Unfold(2, span, stride) // [N, C, Do, H, W, span]
	if dil > 1 {
		t = t.Slice(All(), All(), All(), All(), All(), Range{Start: 0, End: span, Step: dil})
	}
	return t
}

func (o Pool3dOptions) defaults() Pool3dOptions {
	for i := range 3 {
		if o.Stride[i] == 0 {
			o.Stride[i] = o.Kernel[i]
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
	}
	return o
}

func (o Pool3dOptions) plane() PoolOptions {
	return PoolOptions{Kernel: [2]int{o.Kernel[1], o.Kernel[2]}, Stride: [2]int{o.Stride[1], o.Stride[2]},
		Padding: [2]int{o.Padding[1], o.Padding[2]}, Dilation: [2]int{o.Dilation[1], o.Dilation[2]}}
}

// MaxPool3d is the 3-d max pooling of x [N, C, D, H, W] (PyTorch's
// max_pool3d without ceil mode): the depth taps are unfolded, pooled in
// 2-d with MaxPool2d and reduced with MaxAxis. Padding counts as -Inf and
// NaN propagates; the gradient goes to the first maximal tap of each 2-d
// window and, across depth, is split evenly between tied taps (MaxAxis's
// rule, where PyTorch gives it all to the first). It panics with an
// *Error on a wrong rank or invalid options.
func (x *Tensor) MaxPool3d(opts Pool3dOptions) *Tensor {
	x.notBool("max_pool3d")
	x = x.asFloat("max_pool3d")
	o := opts.defaults()
	t, do, kd := depthTaps("max_pool3d", x, o, math.Inf(-1))
	y := t.MaxPool2d(o.plane())
	return y.Reshape(x.Dim(0), x.Dim(1), do, kd, y.Dim(2), y.Dim(3)).MaxAxis(3, false)
}

// AvgPool3d is the 3-d average pooling of x [N, C, D, H, W] (PyTorch's
// avg_pool3d without ceil mode): the sum over each window divided by the
// window size kD·kH·kW (countIncludePad) or by its number of non-padding
// elements. It panics with an *Error on a wrong rank or invalid options.
func (x *Tensor) AvgPool3d(opts Pool3dOptions, countIncludePad bool) *Tensor {
	x.notBool("avg_pool3d")
	x = x.asFloat("avg_pool3d")
	o := opts.defaults()
	k := float64(o.Kernel[0] * o.Kernel[1] * o.Kernel[2])
	sumOf := func(v *Tensor) *Tensor {
		t, do, kd := depthTaps("avg_pool3d", v, o, 0)
		y := t.AvgPool2d(o.plane(), true).MulScalar(float64(o.Kernel[1] * o.Kernel[2]))
		return y.Reshape(v.Dim(0), v.Dim(1), do, kd, y.Dim(2), y.Dim(3)).SumAxis(3, false)
	}
	sum := sumOf(x)
	if countIncludePad || o.Padding == [3]int{} {
		return sum.DivScalar(k)
	}
	s := x.shape()
	ones := FullDType([]int{1, 1, s[2], s[3], s[4]}, 1, x.DType(), x.dev.Inner())
	count := sumOf(ones)
	if x.dev.autodiff {
		count = count.ToDevice(x.dev)
	}
	return sum.Div(count)
}
