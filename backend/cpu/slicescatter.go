package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindSliceScatter, (*Backend).sliceScatter, backend.DType.IsFloat)
}

// sliceScatter returns zeros of op.Shape with In[0] (src) written at the
// positions Slice(·, op.Attrs.Ranges) selects (PyTorch's slice_scatter
// into zeros over every axis; the adjoint of Slice, see
// ir.KindSliceScatter). src may be any strided view. F32, Flex32 and F64
// are written directly (one clear and one strided copy, in parallel for
// large tensors); F16 and BF16 go through float32, which holds their
// values exactly. Other operands are lowered with the decomposition.
func (be *Backend) sliceScatter(op ir.Op) ir.Outputs {
	src := op.In[0]
	switch dt := src.DType(); dt {
	case backend.F32, backend.Flex32:
		if out := sliceScatterT(src, dt, op.Shape, op.Attrs.Ranges, be.f32); out != nil {
			return ir.One(out)
		}
	case backend.F64:
		if out := sliceScatterT(src, dt, op.Shape, op.Attrs.Ranges, be.f64); out != nil {
			return ir.One(out)
		}
	case backend.F16, backend.BF16:
		f := ir.Cast(be.flex, src, backend.F32)
		if out := sliceScatterT(f, backend.F32, op.Shape, op.Attrs.Ranges, be.f32); out != nil {
			return ir.One(ir.Cast(be.flex, out, dt))
		}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// sliceScatterT is the float kernel of sliceScatter with output dtype dt,
// or nil when src is not a host tensor of element type T.
func sliceScatterT[T float](st ir.Tensor, dt ir.DType, shape []int, ranges []backend.Range, alloc func(int) []T) ir.Tensor {
	src, ok := view[T](st)
	if !ok {
		return nil
	}
	total := numel(shape)
	out := alloc(total)
	ss := src.Shape
	if total == 0 || numel(ss) == 0 || len(shape) == 0 {
		clear(out)
		if total > 0 && len(shape) == 0 {
			out[0] = src.Data[src.Offset]
		}
		return wrap(dt, shape, out)
	}
	sd, sst, soff := src.Data, src.Strides, src.Offset
	if len(shape) == 1 {
		forChunks(total, func(lo, hi int) { clear(out[lo:hi]) })
		r := ranges[0]
		for j := range ss[0] {
			out[r.Start+j*r.Step] = sd[soff+j*sst[0]]
		}
		return wrap(dt, shape, out)
	}
	rs := layout.RowMajorStrides(shape)
	dst := make([]int, len(shape))
	doff := 0 // offset of the selected block, axis 0 excluded
	for i, r := range ranges {
		dst[i] = rs[i] * r.Step
		if i > 0 {
			doff += rs[i] * r.Start
		}
	}
	// Output rows along axis 0 in cache-sized tasks: each clears its rows
	// and writes the source rows that land there while they are in cache.
	r0, inner := ranges[0], rs[0]
	per := max(1, chunkElems/4/max(inner, 1))
	task := func(t int) {
		lo, hi := t*per, min(shape[0], (t+1)*per)
		clear(out[lo*inner : hi*inner])
		for i := lo; i < hi; i++ {
			if i < r0.Start || i >= r0.End || (i-r0.Start)%r0.Step != 0 {
				continue
			}
			si := (i - r0.Start) / r0.Step
			scatterND(out, doff+i*inner, dst[1:], sd, soff+si*sst[0], sst[1:], ss[1:])
		}
	}
	tasks := (shape[0] + per - 1) / per
	if total < serialElems {
		for t := range tasks {
			task(t)
		}
	} else {
		workers.ParallelFor(tasks, task)
	}
	return wrap(dt, shape, out)
}

// scatterND is scatter after dropping size-1 axes and merging axes that
// are laid out consecutively in both out and src, so that the innermost
// loop runs over as many elements as possible.
func scatterND[T any](out []T, doff int, dst []int, src []T, soff int, sst []int, shape []int) {
	var ds, ss, sh [8]int
	if len(shape) > len(sh) {
		scatter(out, doff, dst, src, soff, sst, shape)
		return
	}
	r := 0
	for d, n := range shape {
		if n == 0 {
			return
		}
		if n == 1 {
			continue
		}
		if r > 0 && ds[r-1] == dst[d]*n && ss[r-1] == sst[d]*n {
			sh[r-1] *= n
			ds[r-1], ss[r-1] = dst[d], sst[d]
			continue
		}
		ds[r], ss[r], sh[r] = dst[d], sst[d], n
		r++
	}
	if r <= 3 { // pad to rank 3 with leading size-1 axes
		k := 3 - r
		copy(ds[k:], ds[:r])
		copy(ss[k:], ss[:r])
		copy(sh[k:], sh[:r])
		for i := range k {
			ds[i], ss[i], sh[i] = 0, 0, 1
		}
		scatter3(out, doff, ds, src, soff, ss, sh)
		return
	}
	scatter(out, doff, ds[:r], src, soff, ss[:r], sh[:r])
}

// scatter3 is scatter for rank 3 as plain nested loops.
func scatter3[T any](out []T, doff int, ds [8]int, src []T, soff int, ss [8]int, sh [8]int) {
	n0, n1, n2 := sh[0], sh[1], sh[2]
	d2, s2 := ds[2], ss[2]
	for i := range n0 {
		d, s := doff+i*ds[0], soff+i*ss[0]
		for range n1 {
			if d2 > 0 && s2 > 0 {
				dr := out[d : d+(n2-1)*d2+1]
				sr := src[s : s+(n2-1)*s2+1]
				for j := range n2 {
					dr[j*d2] = sr[j*s2]
				}
			} else { // a flipped (negative stride) or expanded (0) source
				for j := range n2 {
					out[d+j*d2] = src[s+j*s2]
				}
			}
			d += ds[1]
			s += ss[1]
		}
	}
}

// scatter copies the strided view (shape, sst, soff) of src into the
// strided positions (dst, doff) of out.
func scatter[T any](out []T, doff int, dst []int, src []T, soff int, sst []int, shape []int) {
	switch len(shape) {
	case 0:
		out[doff] = src[soff]
	case 1:
		n, ds, s := shape[0], dst[0], sst[0]
		if ds == 1 && s == 1 {
			copy(out[doff:doff+n], src[soff:soff+n])
			return
		}
		for j := range n {
			out[doff+j*ds] = src[soff+j*s]
		}
	default:
		for i := range shape[0] {
			scatter(out, doff+i*dst[0], dst[1:], src, soff+i*sst[0], sst[1:], shape[1:])
		}
	}
}
