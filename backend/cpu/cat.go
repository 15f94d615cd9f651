package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/backend/internal/layout"
)

// Cat concatenates tensors of equal dtype along axis (PyTorch's cat); the
// other axes agree. F32, Flex32 and F64 inputs (any strided views, as the
// windows Stack gathers for pooling) are copied here into a recycled
// buffer, the inputs' outer rows spread over the workers; other dtypes
// run on flex.
func (be *Backend) Cat(xs []backend.Tensor, axis int) backend.Tensor {
	first := flex.AsTensor(xs[0])
	switch dt := first.DType(); dt {
	case backend.F32, backend.Flex32:
		return catT(xs, axis, be.f32, newF32(dt))
	case backend.F64:
		return catT(xs, axis, be.f64, flex.NewFloat64)
	}
	return be.Backend.Cat(xs, axis)
}

func catT[T float32 | float64](xs []backend.Tensor, axis int, alloc func(int) []T, wrap func([]int, []T) *flex.Tensor) *flex.Tensor {
	ts := make([]*flex.Tensor, len(xs))
	shape := append([]int(nil), flex.AsTensor(xs[0]).Shape()...)
	shape[axis] = 0
	for i, x := range xs {
		ts[i] = flex.AsTensor(x)
		shape[axis] += ts[i].Shape()[axis]
	}
	total := numel(shape)
	out := alloc(total)
	if total == 0 {
		return wrap(shape, out)
	}
	st := layout.RowMajorStrides(shape)
	offs := make([]int, len(ts))
	off := 0
	for i, t := range ts {
		offs[i] = off
		off += t.Shape()[axis] * st[axis]
	}
	// copyRows copies rows [lo, hi) of axis 0 of every input (for axis > 0
	// all inputs share axis 0, and a task then fills a contiguous block of
	// the output while it is in cache); input i's element at index idx
	// lands at offs[i] + Σ idx[d]·st[d].
	copyRows := func(i, lo, hi int) {
		t := ts[i]
		if numel(t.Shape()) == 0 || lo >= hi {
			return
		}
		sd, sst, soff := strided[T](t)
		ss := append([]int(nil), t.Shape()...)
		ss[0] = hi - lo
		scatterND(out, offs[i]+lo*st[0], st, sd, soff+lo*sst[0], sst, ss)
	}
	if axis == 0 || total < serialElems {
		for i, t := range ts {
			if axis == 0 && total >= serialElems {
				rows := t.Shape()[0]
				per := max(1, chunkElems/max(st[0], 1))
				workers.ParallelFor((rows+per-1)/per, func(k int) { copyRows(i, k*per, min(rows, (k+1)*per)) })
				continue
			}
			copyRows(i, 0, t.Shape()[0])
		}
		return wrap(shape, out)
	}
	rows := shape[0]
	per := max(1, chunkElems/4/max(st[0], 1))
	workers.ParallelFor((rows+per-1)/per, func(k int) {
		for i := range ts {
			copyRows(i, k*per, min(rows, (k+1)*per))
		}
	})
	return wrap(shape, out)
}
