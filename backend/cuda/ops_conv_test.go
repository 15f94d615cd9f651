package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

func TestKernelConv(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(19, 20))
	type convCase struct {
		x, w []int // conv2d shapes; conv-transpose swaps w's first two axes' roles
		opts backend.ConvOptions
	}
	cases := []convCase{
		{[]int{2, 3, 9, 8}, []int{4, 3, 3, 3}, backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}},
		{[]int{2, 4, 11, 10}, []int{6, 2, 3, 2}, backend.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{2, 1}, Groups: 2}},
		{[]int{3, 5, 6, 7}, []int{4, 5, 1, 1}, backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}},
		{[]int{1, 2, 5, 5}, []int{2, 2, 3, 3}, backend.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, OutputPadding: [2]int{1, 0}}},
		{[]int{0, 2, 5, 5}, []int{2, 2, 3, 3}, backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}},
	}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16, backend.I32, backend.I16, backend.Bool} {
		for ci, c := range cases {
			what := name("conv2d ", dt, " case ", ci)
			try(t, what, func() {
				x, fx := randomPair(b, rng, c.x, dt, layouts[ci%2])
				w, fw := randomPair(b, rng, c.w, dt, layouts[0])
				sameNorm(t, b, convOn(b, false, x, w, c.opts), convOn(flexRef, false, fx, fw, c.opts), what)
			})
			what = name("conv_transpose2d ", dt, " case ", ci)
			try(t, what, func() {
				// x [N, Cin, H, W], w [Cin, Cout/groups, kH, kW]
				xs := []int{c.x[0], c.w[0], c.x[2], c.x[3]}
				ws := c.w
				x, fx := randomPair(b, rng, xs, dt, layouts[ci%2])
				w, fw := randomPair(b, rng, ws, dt, layouts[0])
				sameNorm(t, b, convOn(b, true, x, w, c.opts), convOn(flexRef, true, fx, fw, c.opts), what)
			})
		}
	}
}
