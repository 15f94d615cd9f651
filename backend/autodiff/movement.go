package autodiff

import (
	"github.com/emberml/ember/backend"
)

// Reshape records the gradient reshaped back to x's shape.
func (b *Backend) Reshape(x backend.Tensor, shape []int) backend.Tensor {
	shape = append([]int(nil), shape...)
	return b.record(op{prim: PrimReshape,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Reshape(in[0], shape) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.inner.Reshape(g, s.inShape(0))}
		},
	}, x)
}

// Permute records the gradient permuted by the inverse permutation.
func (b *Backend) Permute(x backend.Tensor, axes []int) backend.Tensor {
	axes = append([]int(nil), axes...)
	inv := make([]int, len(axes))
	for i, a := range axes {
		inv[a] = i
	}
	return b.record(op{prim: PrimPermute,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Permute(in[0], axes) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.inner.Permute(g, inv)}
		},
	}, x)
}

// Expand records the gradient summed over the expanded (and new leading)
// axes, reshaped to x's shape.
func (b *Backend) Expand(x backend.Tensor, shape []int) backend.Tensor {
	shape = append([]int(nil), shape...)
	return b.record(op{prim: PrimExpand,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Expand(in[0], shape) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.sumTo(g, s.inShape(0))}
		},
	}, x)
}

// Slice records the gradient placed back at the selected (strided)
// positions of a zero tensor of x's shape: the inner backend's SliceScatter
// when it implements backend.SliceScatterer, else built from Reshape, Pad
// and Slice (per stepped axis the gradient is interleaved with step-1
// zeros).
func (b *Backend) Slice(x backend.Tensor, ranges []backend.Range) backend.Tensor {
	ranges = append([]backend.Range(nil), ranges...)
	return b.record(op{prim: PrimSlice,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Slice(in[0], ranges) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.unslice(g, s.inShape(0), ranges)}
		},
	}, x)
}

// unslice is the adjoint of Slice: zeros of shape with g at the positions
// ranges select.
func (b *Backend) unslice(g backend.Tensor, shape []int, ranges []backend.Range) backend.Tensor {
	for _, r := range ranges {
		if r.Len() == 0 {
			return b.zeros(shape, g.DType())
		}
	}
	if ss, ok := b.inner.(backend.SliceScatterer); ok && g.DType().IsFloat() {
		for ax, r := range ranges {
			if r.Start != 0 || r.Len() != shape[ax] {
				return ss.SliceScatter(g, shape, ranges)
			}
		}
		return g
	}
	for ax, r := range ranges {
		n := r.Len()
		if r.Start == 0 && n == shape[ax] {
			continue // whole axis, step irrelevant
		}
		cur := g.Shape()
		span := n // positions covered from Start
		if r.Step > 1 && n > 1 {
			// [.., n, ..] -> [.., n, 1, ..] -> pad to [.., n, step, ..]
			// -> [.., n*step, ..] -> keep the first (n-1)*step+1.
			split := make([]int, 0, len(cur)+1)
			split = append(split, cur[:ax+1]...)
			split = append(split, 1)
			split = append(split, cur[ax+1:]...)
			g = b.inner.Reshape(g, split)
			pads := make([][2]int, len(split))
			pads[ax+1][1] = r.Step - 1
			g = b.inner.Pad(g, pads, 0)
			merged := append([]int(nil), cur...)
			merged[ax] = n * r.Step
			g = b.inner.Reshape(g, merged)
			span = (n-1)*r.Step + 1
			rs := fullRanges(merged)
			rs[ax].End = span
			g = b.inner.Slice(g, rs)
		}
		pads := make([][2]int, len(cur))
		pads[ax] = [2]int{r.Start, shape[ax] - r.Start - span}
		g = b.inner.Pad(g, pads, 0)
	}
	return g
}

// Pad records the gradient sliced back to x's extent (the pad value is a
// constant and gets no gradient).
func (b *Backend) Pad(x backend.Tensor, pads [][2]int, value float64) backend.Tensor {
	pads = append([][2]int(nil), pads...)
	return b.record(op{prim: PrimPad,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Pad(in[0], pads, value) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			shape := s.inShape(0)
			rs := make([]backend.Range, len(shape))
			for i, n := range shape {
				rs[i] = backend.Range{Start: pads[i][0], End: pads[i][0] + n, Step: 1}
			}
			return []backend.Tensor{b.inner.Slice(g, rs)}
		},
	}, x)
}

// Flip records the gradient flipped along the same axes.
func (b *Backend) Flip(x backend.Tensor, axes []int) backend.Tensor {
	axes = append([]int(nil), axes...)
	return b.record(op{prim: PrimFlip,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Flip(in[0], axes) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			return []backend.Tensor{b.inner.Flip(g, axes)}
		},
	}, x)
}

// Cat records, for each input, the slice of the gradient it occupies along
// axis.
func (b *Backend) Cat(xs []backend.Tensor, axis int) backend.Tensor {
	return b.record(op{prim: PrimCat,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Cat(in, axis) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			gs := g.Shape()
			out := make([]backend.Tensor, len(s.n.parents))
			off := 0
			for i := range out {
				n := s.inShape(i)[axis]
				if s.wants(i) {
					rs := fullRanges(gs)
					rs[axis] = backend.Range{Start: off, End: off + n, Step: 1}
					out[i] = b.inner.Slice(g, rs)
				}
				off += n
			}
			return out
		},
	}, xs...)
}

// Gather records the gradient scatter-added into zeros of x's shape at
// index (index, I64, is never tracked).
func (b *Backend) Gather(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	return b.record(op{prim: PrimGather, needIn: 2,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.Gather(in[0], axis, in[1]) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			z := b.zeros(s.inShape(0), g.DType())
			return []backend.Tensor{b.inner.ScatterAdd(z, axis, s.in(1), g), nil}
		},
	}, x, index)
}

// ScatterAdd records the gradients g for x and Gather(g, axis, index) for
// src (index is never tracked).
func (b *Backend) ScatterAdd(x backend.Tensor, axis int, index, src backend.Tensor) backend.Tensor {
	return b.record(op{prim: PrimScatterAdd, needIn: 2,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.ScatterAdd(in[0], axis, in[1], in[2]) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			out := make([]backend.Tensor, 3)
			if s.wants(0) {
				out[0] = g
			}
			if s.wants(2) {
				out[2] = b.inner.Gather(g, axis, s.in(1))
			}
			return out
		},
	}, x, index, src)
}

// IndexSelect records the gradient scatter-added into zeros of x's shape
// along axis, with the rank-1 index expanded to the gradient's shape.
func (b *Backend) IndexSelect(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	return b.record(op{prim: PrimIndexSelect, needIn: 2,
		fwd: func(in []backend.Tensor) backend.Tensor { return b.inner.IndexSelect(in[0], axis, in[1]) },
		bwd: func(s *state, g backend.Tensor) []backend.Tensor {
			gs := g.Shape()
			is := make([]int, len(gs))
			for i := range is {
				is[i] = 1
			}
			is[axis] = gs[axis]
			idx := b.inner.Expand(b.inner.Reshape(s.in(1), is), gs)
			z := b.zeros(s.inShape(0), g.DType())
			return []backend.Tensor{b.inner.ScatterAdd(z, axis, idx, g), nil}
		},
	}, x, index)
}
