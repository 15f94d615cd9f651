//go:build libtorch && cgo

package libtorch

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindReduce, (*Backend).reduce, nil)
	kernels.Set(ir.KindCumSum, (*Backend).cumsum, func(dt backend.DType) bool { return dt != backend.Bool })
	kernels.Set(ir.KindReshape, (*Backend).reshape, nil)
	kernels.Set(ir.KindPermute, (*Backend).permute, nil)
	kernels.Set(ir.KindExpand, (*Backend).expand, nil)
	kernels.Set(ir.KindSlice, (*Backend).slice, nil)
	kernels.Set(ir.KindPad, (*Backend).pad, nil)
	kernels.Set(ir.KindFlip, (*Backend).flip, nil)
	kernels.Set(ir.KindCat, (*Backend).cat, nil)
	kernels.Set(ir.KindSliceScatter, (*Backend).sliceScatter, nil)
	kernels.Set(ir.KindGather, (*Backend).gather, nil)
	kernels.Set(ir.KindScatterAdd, (*Backend).scatterAdd, nil)
	kernels.Set(ir.KindIndexSelect, (*Backend).indexSelect, nil)
}

// oneInput runs a shim entry point on op's first input.
func oneInput(op ir.Op, name string, f func(x *C.lt_tensor, out *C.lt_out) C.lt_status) ir.Outputs {
	x := asTensor(op.In[0])
	var out C.lt_out
	st := f(x.h, &out)
	runtime.KeepAlive(x)
	check(name, st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// reduce reduces In[0] along op.Axis (ATen's sum/prod/amax/amin/argmax/
// argmin with dim and keepdim): float32 (and F16, BF16, Flex32) sums and
// products accumulate in float64; integer sums wrap; Max/Min propagate
// NaN, ArgMax/ArgMin give the first NaN's index and ties the lowest; on
// Bool, Max and Min are any and all.
func (b *Backend) reduce(op ir.Op) ir.Outputs {
	return oneInput(op, ir.ReduceOp(op.Sub).String(), func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_reduce(C.int(op.Sub), x, C.int64_t(op.Axis), boolInt(op.KeepDim), out)
	})
}

func boolInt(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// cumsum is ATen's cumsum along op.Axis in x's dtype: float32 accumulates
// in float64 (as package flex), F16 and BF16 go through float32 and so also
// accumulate in float64; integers wrap.
func (b *Backend) cumsum(op ir.Op) ir.Outputs {
	return oneInput(op, "cumsum", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_cumsum(x, C.int64_t(op.Axis), out)
	})
}

// reshape is ATen's reshape: a view where the layout allows.
func (b *Backend) reshape(op ir.Op) ir.Outputs {
	s := int64s(op.Shape)
	return oneInput(op, "reshape", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_reshape(x, ptr(s), C.int(len(s)), out)
	})
}

// permute is a view with permuted axes.
func (b *Backend) permute(op ir.Op) ir.Outputs {
	p := int64s(op.Ints)
	return oneInput(op, "permute", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_permute(x, ptr(p), C.int(len(p)), out)
	})
}

// expand is a broadcast view (stride 0 on new and expanded axes).
func (b *Backend) expand(op ir.Op) ir.Outputs {
	s := int64s(op.Shape)
	return oneInput(op, "expand", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_expand(x, ptr(s), C.int(len(s)), out)
	})
}

// rangeInts flattens ranges to start, end, step triples.
func rangeInts(rs []ir.Range) []C.int64_t {
	out := make([]C.int64_t, 0, 3*len(rs))
	for _, r := range rs {
		out = append(out, C.int64_t(r.Start), C.int64_t(r.End), C.int64_t(r.Step))
	}
	return out
}

// slice is a strided view of the clamped ranges.
func (b *Backend) slice(op ir.Op) ir.Outputs {
	r := rangeInts(op.Attrs.Ranges)
	return oneInput(op, "slice", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_slice(x, ptr(r), C.int(len(op.Attrs.Ranges)), out)
	})
}

// pad is ATen's constant_pad_nd, the widths given in axis order and the
// value converted to x's dtype as Full converts it.
func (b *Backend) pad(op ir.Op) ir.Outputs {
	p := int64s(op.Ints)
	f, i := converted(op.Scalars[0], op.DType)
	return oneInput(op, "pad", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_pad(x, ptr(p), C.int(len(op.Shape)), C.double(f), C.int64_t(i), out)
	})
}

// flip reverses the axes op.Ints (a copy, as ATen's flip).
func (b *Backend) flip(op ir.Op) ir.Outputs {
	d := int64s(op.Ints)
	return oneInput(op, "flip", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_flip(x, ptr(d), C.int(len(d)), out)
	})
}

// cat joins op.Xs along op.Axis.
func (b *Backend) cat(op ir.Op) ir.Outputs {
	ts := make([]*Tensor, len(op.Xs))
	hs := make([]*C.lt_tensor, len(op.Xs))
	for i, x := range op.Xs {
		ts[i] = asTensor(x)
		hs[i] = ts[i].h
	}
	// The handles are C pointers: the slice holding them may be passed.
	var out C.lt_out
	st := C.lt_cat(&hs[0], C.int(len(hs)), C.int64_t(op.Axis), &out)
	runtime.KeepAlive(ts)
	check("cat", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// sliceScatter is zeros of op.Shape with In[0] copied into the positions
// the ranges select (exactly the decomposition's values).
func (b *Backend) sliceScatter(op ir.Op) ir.Outputs {
	s := int64s(op.Shape)
	r := rangeInts(op.Attrs.Ranges)
	return oneInput(op, "slice_scatter", func(x *C.lt_tensor, out *C.lt_out) C.lt_status {
		return C.lt_slice_scatter(x, ptr(s), C.int(len(s)), ptr(r), out)
	})
}

// gather is ATen's gather along op.Axis; an index out of range panics
// with an *Error.
func (b *Backend) gather(op ir.Op) ir.Outputs {
	x, i := asTensor(op.In[0]), asTensor(op.In[1])
	var out C.lt_out
	st := C.lt_gather(x.h, C.int64_t(op.Axis), i.h, &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(i)
	check("gather", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// scatterAdd is ATen's scatter_add along op.Axis (F16 and BF16 accumulate
// in float32 and round once; integers wrap; Bool ors).
func (b *Backend) scatterAdd(op ir.Op) ir.Outputs {
	x, i, s := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	var out C.lt_out
	st := C.lt_scatter_add(x.h, C.int64_t(op.Axis), i.h, s.h, &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(i)
	runtime.KeepAlive(s)
	check("scatter_add", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// indexSelect is ATen's index_select along op.Axis.
func (b *Backend) indexSelect(op ir.Op) ir.Outputs {
	x, i := asTensor(op.In[0]), asTensor(op.In[1])
	var out C.lt_out
	st := C.lt_index_select(x.h, C.int64_t(op.Axis), i.h, &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(i)
	check("index_select", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}
