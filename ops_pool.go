package ember

import (
	"math"

	"github.com/emberml/ember/ir"
)

// PoolOptions are the window attributes of a 2-d pooling, PyTorch's names,
// per spatial axis (height, width): Kernel (each >= 1), Stride (zero means
// equal to Kernel, PyTorch's default), Padding (>= 0, at most half the
// dilated kernel size, as PyTorch requires) and Dilation (zero means 1). The
// output size is PyTorch's floor formula
// Ho = (H + 2·padH − dilH·(kH−1) − 1)/strideH + 1 (no ceil mode).
type PoolOptions struct {
	Kernel, Stride, Padding, Dilation [2]int
}

// norm fills in the defaults (a zero stride is the kernel, a zero
// dilation 1) and checks the options, panicking with an *Error for op that
// names x.
func (o PoolOptions) norm(op string, x *Tensor) PoolOptions {
	for i := range 2 {
		if o.Stride[i] == 0 {
			o.Stride[i] = o.Kernel[i]
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
	}
	shape := []int{1, 1, 1 << 30, 1 << 30} // any input: options only
	if _, err := ir.PoolShape(shape, ir.PoolOptions(o)); err != nil {
		fail(op, []string{describe("x", x)}, "%v", err)
	}
	return o
}

// poolOut checks that x is [N, C, H, W] and that the dilated window fits
// the padded input (ir.PoolShape), panicking with an *Error for op
// otherwise, and returns the output's spatial size [Ho, Wo].
func (x *Tensor) poolOut(op string, o PoolOptions) [2]int {
	out, err := ir.PoolShape(x.shape(), ir.PoolOptions(o))
	if err != nil {
		fail(op, []string{describe("x", x)}, "%v", err)
	}
	return [2]int{out[2], out[3]}
}

// windows pads x [N, C, H, W] with value and returns the kH·kW strided views
// [N, C, Ho, Wo], one per kernel offset, so that the pooled value at (ho, wo)
// combines element (ho, wo) of every view.
func (x *Tensor) windows(op string, o PoolOptions, value float64) []*Tensor {
	x.poolOut(op, o)
	p := x.Pad([]int{o.Padding[1], o.Padding[1], o.Padding[0], o.Padding[0]}, value)
	ranges := ir.PoolWindowRanges(x.shape(), ir.PoolOptions(o))
	views := make([]*Tensor, len(ranges))
	for k, rs := range ranges {
		views[k] = p.Slice(rs...)
	}
	return views
}

// pool4 runs f on x viewed as rank 4 (a rank-3 [C, H, W] input gains and
// then loses a batch axis, as PyTorch accepts unbatched input).
func (x *Tensor) pool4(f func(*Tensor) *Tensor) *Tensor {
	if x.Rank() == 3 {
		return f(x.Unsqueeze(0)).Squeeze(0)
	}
	return f(x)
}

// MaxPool2d returns the maximum over each window of x [N, C, H, W] (or
// [C, H, W]) -> [N, C, Ho, Wo] (PyTorch's max_pool2d without ceil mode):
// padding counts as -Inf, NaN propagates. It is the ir kind MaxPool2d,
// whose definition (its decomposition, which backends without a kernel
// run) is the maximum over a window axis of the stack of the kH·kW
// strided views of the padded input; its gradient goes, as PyTorch's,
// whole to each window's selected tap — the first (in kernel row-major
// order) equal to the maximum, or the first NaN — through the
// MaxPool2dGrad kind; backends with a kernel (cpu for F32 and F64)
// compute the same values and gradients bit for bit. A one-tap window is the strided view
// itself. Int inputs are first cast to the device's float dtype. It panics
// with an *Error on a wrong rank, bad options or a window larger than the
// padded input.
func (x *Tensor) MaxPool2d(opts PoolOptions) *Tensor {
	x.notBool("max_pool2d")
	x = x.asFloat("max_pool2d")
	o := opts.norm("max_pool2d", x)
	return x.pool4(func(x *Tensor) *Tensor {
		if o.Kernel[0]*o.Kernel[1] < 2 {
			// A plain strided view, whose gradient passes NaN through.
			return x.windows("max_pool2d", o, math.Inf(-1))[0]
		}
		return x.dev.run(&ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: ir.PoolOptions(o)}, In: [3]ir.Tensor{x.t}}, x)
	})
}

// AvgPool2d returns the mean over each window of x [N, C, H, W] (or
// [C, H, W]) -> [N, C, Ho, Wo] (PyTorch's avg_pool2d without ceil mode; its
// Dilation, which PyTorch lacks, spaces the window's taps as in MaxPool2d).
// Padding counts as 0; the divisor is the window size kH·kW when
// countIncludePad, else the number of non-padding elements in the window.
// Int inputs are first cast to the device's float dtype. It panics with an
// *Error on a wrong rank, bad options or a window larger than the padded
// input.
func (x *Tensor) AvgPool2d(opts PoolOptions, countIncludePad bool) *Tensor {
	x.notBool("avg_pool2d")
	x = x.asFloat("avg_pool2d")
	o := opts.norm("avg_pool2d", x)
	return x.pool4(func(x *Tensor) *Tensor {
		vs := x.windows("avg_pool2d", o, 0)
		sum := vs[0]
		for _, v := range vs[1:] {
			sum = sum.Add(v)
		}
		if countIncludePad || o.Padding == [2]int{} {
			return sum.DivScalar(float64(o.Kernel[0] * o.Kernel[1]))
		}
		// Count the real elements of each window by pooling ones (untracked).
		s := x.shape()
		ones := FullDType([]int{1, 1, s[2], s[3]}, 1, x.DType(), x.dev.Inner())
		cs := ones.windows("avg_pool2d", o, 0)
		count := cs[0]
		for _, c := range cs[1:] {
			count = count.Add(c)
		}
		return sum.Div(count)
	})
}
