package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestMovementGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	x := func(shape ...int) []input { return []input{randIn(r, shape, 0.2, 2, true)} }
	cases := []struct {
		name string
		ins  []input
		f    graphFn
	}{
		{"reshape", x(2, 3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Reshape(b, xs[0], []int{4, 6})
		}},
		{"reshape/permuted", x(2, 3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Reshape(b, ir.Permute(b, xs[0], []int{2, 0, 1}), []int{24})
		}},
		{"permute", x(2, 3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Permute(b, xs[0], []int{1, 2, 0})
		}},
		{"expand", x(3, 1), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Expand(b, xs[0], []int{2, 3, 4})
		}},
		{"slice/steps", x(7, 5), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Slice(b, xs[0], []backend.Range{{Start: 1, End: 7, Step: 2}, {Start: 0, End: 5, Step: 3}})
		}},
		{"slice/step-end", x(6, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Slice(b, xs[0], []backend.Range{{Start: 1, End: 6, Step: 4}, {Start: 1, End: 3, Step: 1}})
		}},
		{"slice/of-slice", x(6, 5), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			s := ir.Slice(b, xs[0], []backend.Range{{Start: 0, End: 6, Step: 2}, {Start: 1, End: 5, Step: 1}})
			return ir.Slice(b, ir.Permute(b, s, []int{1, 0}), []backend.Range{{Start: 1, End: 4, Step: 2}, {Start: 0, End: 3, Step: 1}})
		}},
		{"pad", x(2, 3), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Pad(b, xs[0], []int{1, 0, 2, 3}, 1.5)
		}},
		{"flip", x(2, 3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Flip(b, xs[0], []int{0, 2})
		}},
		{"cat", []input{randIn(r, []int{2, 1, 3}, 0.2, 2, true), constIn(randIn(r, []int{2, 2, 3}, 0.2, 2, true)), randIn(r, []int{2, 3, 3}, 0.2, 2, true)},
			func(b *Backend, xs []backend.Tensor) backend.Tensor {
				return ir.Cat(b, xs, 1)
			}},
		{"gather", x(3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			idx := b.FromData(i64Data([]int{3, 5}, []int64{0, 3, 3, 1, 0, 2, 2, 1, 0, 3, 1, 1, 1, 1, 2}))
			return ir.Gather(b, xs[0], 1, idx)
		}},
		{"scatter_add", []input{randIn(r, []int{4, 3}, 0.2, 2, true), randIn(r, []int{2, 3}, 0.2, 2, true)},
			func(b *Backend, xs []backend.Tensor) backend.Tensor {
				idx := b.FromData(i64Data([]int{2, 3}, []int64{0, 3, 3, 0, 1, 3}))
				return ir.ScatterAdd(b, xs[0], 0, idx, xs[1])
			}},
		{"index_select", x(3, 4), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			idx := b.FromData(i64Data([]int{5}, []int64{3, 0, 3, 3, 1}))
			return ir.IndexSelect(b, xs[0], 1, idx)
		}},
		{"index_select/axis0", x(3, 2, 2), func(b *Backend, xs []backend.Tensor) backend.Tensor {
			idx := b.FromData(i64Data([]int{4}, []int64{2, 2, 0, 1}))
			return ir.IndexSelect(b, xs[0], 0, idx)
		}},
	}
	for _, c := range cases {
		gradCheck(t, c.name, c.ins, c.f)
	}
}
