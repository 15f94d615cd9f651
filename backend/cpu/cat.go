package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindCat, (*Backend).cat, nil) }

// cat concatenates op.Xs (one dtype) along op.Axis (PyTorch's cat); the
// other axes agree. F32, Flex32 and F64 inputs (any strided views, as the
// windows a max-pool decomposition stacks) are copied here into a recycled
// buffer, the inputs' outer rows spread over the workers; other dtypes run
// on flex.
func (be *Backend) cat(op ir.Op) ir.Outputs {
	switch op.DType {
	case backend.F32, backend.Flex32:
		if out := catT(op, be.f32); out != nil {
			return ir.One(out)
		}
	case backend.F64:
		if out := catT(op, be.f64); out != nil {
			return ir.One(out)
		}
	}
	return be.flex.Exec(op)
}

// catT is the float kernel of cat, or nil when an input is not a host
// tensor of element type T.
func catT[T float](op ir.Op, alloc func(int) []T) ir.Tensor {
	ts := make([]host.View[T], len(op.Xs))
	for i, x := range op.Xs {
		v, ok := view[T](x)
		if !ok {
			return nil
		}
		ts[i] = v
	}
	axis, shape := op.Axis, op.Shape
	total := numel(shape)
	out := alloc(total)
	if total == 0 {
		return wrap(op.DType, shape, out)
	}
	st := layout.RowMajorStrides(shape)
	offs := make([]int, len(ts))
	off := 0
	for i, t := range ts {
		offs[i] = off
		off += t.Shape[axis] * st[axis]
	}
	// copyRows copies rows [lo, hi) of axis 0 of every input (for axis > 0
	// all inputs share axis 0, and a task then fills a contiguous block of
	// the output while it is in cache); input i's element at index idx
	// lands at offs[i] + Σ idx[d]·st[d].
	copyRows := func(i, lo, hi int) {
		t := ts[i]
		if numel(t.Shape) == 0 || lo >= hi {
			return
		}
		ss := append([]int(nil), t.Shape...)
		ss[0] = hi - lo
		scatterND(out, offs[i]+lo*st[0], st, t.Data, t.Offset+lo*t.Strides[0], t.Strides, ss)
	}
	if axis == 0 || total < serialElems {
		for i, t := range ts {
			if axis == 0 && total >= serialElems {
				rows := t.Shape[0]
				per := max(1, chunkElems/max(st[0], 1))
				workers.ParallelFor((rows+per-1)/per, func(k int) { copyRows(i, k*per, min(rows, (k+1)*per)) })
				continue
			}
			copyRows(i, 0, t.Shape[0])
		}
		return wrap(op.DType, shape, out)
	}
	rows := shape[0]
	per := max(1, chunkElems/4/max(st[0], 1))
	workers.ParallelFor((rows+per-1)/per, func(k int) {
		for i := range ts {
			copyRows(i, k*per, min(rows, (k+1)*per))
		}
	})
	return wrap(op.DType, shape, out)
}
