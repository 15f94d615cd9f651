package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestMatmulGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		name string
		a, b []int
		tr   bool // multiply by the transpose of a stored [n, k] b
	}{
		{"2d", []int{3, 4}, []int{4, 2}, false},
		{"batched", []int{2, 3, 4}, []int{2, 4, 5}, false},
		{"broadcast-b", []int{2, 3, 4}, []int{4, 5}, false},
		{"broadcast-both", []int{2, 1, 3, 4}, []int{3, 4, 2}, false},
		{"transposed-b", []int{2, 3, 4}, []int{5, 4}, true},
	}
	for _, c := range cases {
		tr := c.tr
		gradCheck(t, "matmul/"+c.name, []input{randIn(r, c.a, 0.2, 2, true), randIn(r, c.b, 0.2, 2, true)},
			func(b *Backend, xs []backend.Tensor) backend.Tensor {
				y := xs[1]
				if tr {
					y = ir.Permute(b, y, []int{1, 0})
				}
				return ir.Matmul(b, xs[0], y)
			})
	}
}

func TestConvGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	opts := func(s0, s1, p0, p1, d0, d1, g int) backend.ConvOptions {
		return backend.ConvOptions{Stride: [2]int{s0, s1}, Padding: [2]int{p0, p1}, Dilation: [2]int{d0, d1}, Groups: g}
	}
	convs := []struct {
		name string
		x, w []int
		o    backend.ConvOptions
	}{
		{"plain", []int{2, 2, 5, 4}, []int{3, 2, 3, 2}, opts(1, 1, 0, 0, 1, 1, 1)},
		{"stride-pad", []int{1, 2, 6, 7}, []int{2, 2, 3, 3}, opts(2, 3, 1, 2, 1, 1, 1)},
		{"dilation", []int{2, 1, 7, 6}, []int{2, 1, 2, 3}, opts(1, 2, 2, 0, 2, 2, 1)},
		{"groups", []int{1, 4, 5, 5}, []int{6, 2, 3, 2}, opts(2, 1, 1, 1, 1, 2, 2)},
		{"depthwise", []int{2, 3, 5, 6}, []int{3, 1, 2, 2}, opts(2, 2, 0, 1, 2, 1, 3)},
	}
	for _, c := range convs {
		o := c.o
		gradCheck(t, "conv2d/"+c.name, []input{randIn(r, c.x, 0.2, 2, true), randIn(r, c.w, 0.2, 2, true)},
			func(b *Backend, xs []backend.Tensor) backend.Tensor { return ir.Conv2d(b, xs[0], xs[1], o) })
	}
	// conv2d of a permuted (non-contiguous) input
	gradCheck(t, "conv2d/permuted", []input{randIn(r, []int{2, 5, 4, 2}, 0.2, 2, true), randIn(r, []int{2, 2, 2, 2}, 0.2, 2, true)},
		func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Conv2d(b, ir.Permute(b, xs[0], []int{0, 3, 1, 2}), xs[1], opts(1, 2, 1, 0, 1, 1, 1))
		})

	transposed := []struct {
		name string
		x, w []int
		o    backend.ConvOptions
		op0  int
		op1  int
	}{
		{"plain", []int{2, 2, 3, 4}, []int{2, 3, 2, 3}, opts(1, 1, 0, 0, 1, 1, 1), 0, 0},
		{"stride-pad-outpad", []int{1, 2, 3, 3}, []int{2, 2, 3, 3}, opts(2, 3, 1, 1, 1, 1, 1), 1, 2},
		{"dilation", []int{2, 1, 3, 4}, []int{1, 2, 2, 2}, opts(1, 2, 1, 0, 2, 3, 1), 0, 1},
		{"groups", []int{1, 4, 3, 3}, []int{4, 3, 2, 3}, opts(2, 1, 1, 0, 1, 2, 2), 1, 0},
	}
	for _, c := range transposed {
		o := c.o
		o.OutputPadding = [2]int{c.op0, c.op1}
		gradCheck(t, "conv_transpose2d/"+c.name, []input{randIn(r, c.x, 0.2, 2, true), randIn(r, c.w, 0.2, 2, true)},
			func(b *Backend, xs []backend.Tensor) backend.Tensor { return ir.ConvTranspose2d(b, xs[0], xs[1], o) })
	}
}
