package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindReduce, (*Backend).reduce, nil) }

// reduce is the kernel of KindReduce: op.In[0] reduced by op.Sub along
// op.Axis (PyTorch's sum/prod/amax/amin/argmax/argmin with dim and
// keepdim), giving a contiguous tensor of op.Shape and op.DType. Sum, Prod,
// Max and Min keep x's dtype; float sums and products accumulate in double
// and round once (as backend/flex); integer sums and products wrap. Max,
// Min, ArgMax and ArgMin propagate NaN (the Arg ops give the first NaN's
// index) and ties pick the lowest index; ArgMax and ArgMin return I64. On
// Bool, Sum and Max are "any", Prod and Min "all". An empty axis gives Sum
// 0, Prod 1, Max -Inf (the smallest integer, false), Min +Inf (the largest
// integer, true) and index 0. A non-contiguous x is copied first.
func (b *Backend) reduce(op ir.Op) ir.Outputs {
	rop, axis := ir.ReduceOp(op.Sub), op.Axis
	t := b.Contiguous(tensorOf(op.In[0]))
	outer := backend.NumElements(t.shape[:axis])
	r := t.shape[axis]
	inner := backend.NumElements(t.shape[axis+1:])
	out := b.emptyOf(op.Shape, op.DType)
	if outer*inner == 0 {
		return ir.One(out)
	}
	if t.dtype == backend.Bool {
		switch rop {
		case backend.ReduceSum:
			rop = backend.ReduceMax
		case backend.ReduceProd:
			rop = backend.ReduceMin
		}
	}
	var pv, pi uint64
	if rop == backend.ReduceArgMax || rop == backend.ReduceArgMin {
		pi = out.Ptr()
	} else {
		pv = out.Ptr()
	}
	name, fixed := reduceName(t.dtype, rop)
	if p := planReduce(outer, r, inner, b.smCount); p.chunks > 1 {
		b.reduceSplit(name, fixed, p, rop, t, outer, r, inner, pv, pi)
		return ir.One(out)
	}
	if inner == 1 {
		name += "_rows"
		k := b.kernel(name, func() string { return reduceOpSource(t.dtype, name, "rows", fixed) })
		wpr, rpb := 1, blockSize/32
		if r > 256 {
			wpr, rpb = blockSize/32, 1
		}
		b.Launch(k, grid1(outer, rpb), block1, 0, int32(rop), int64(outer), int64(r), t.Ptr(), pv, pi, int32(wpr))
		return ir.One(out)
	}
	name += "_cols"
	k := b.kernel(name, func() string { return reduceOpSource(t.dtype, name, "cols", fixed) })
	nb := outer * ((inner + 31) / 32)
	b.Launch(k, [3]uint32{uint32(max(1, min(nb, maxBlocks))), 1, 1}, [3]uint32{32, 8, 1}, 0,
		int32(rop), int64(outer), int64(r), int64(inner), t.Ptr(), pv, pi)
	return ir.One(out)
}

// reduceName returns the base name of the reduce kernels of dt and rop,
// and the op they fix at compile time: Sum and Max of floats have their
// own kernels ("ember_reduce_f32_sum"), the others share the kernels
// that choose the op at run time (fixed 0).
func reduceName(dt backend.DType, rop backend.ReduceOp) (string, backend.ReduceOp) {
	name := "ember_reduce_" + ctypeOf(dt).Name
	if !dt.IsFloat() {
		return name, 0
	}
	switch rop {
	case backend.ReduceSum:
		return name + "_sum", rop
	case backend.ReduceMax:
		return name + "_max", rop
	}
	return name, 0
}

// splitBlocksPerSM is the number of blocks per SM the split reductions aim
// for (with 256 threads a block, about two waves of resident blocks).
var splitBlocksPerSM = 8

// splitMinPerThread is the fewest elements of the axis each thread of a
// split reduction's block reads: a chunk is at least 256 of them.
const splitMinPerThread = 16

// reducePlan is how Backend.reduce runs an [outer, r, inner] reduction:
// chunks == 1 is the single-pass rows or cols kernel; chunks > 1 splits r
// into chunks of length elements (the last one shorter), each reduced by
// its own block to a partial result that a second kernel combines.
type reducePlan struct {
	chunks, length int
	// cw is the number of columns one block of the cols split kernel
	// walks: the power of two covering inner, at most 32 (0 for rows).
	cw int
}

// planReduce chooses the kernels for reducing [outer, r, inner] on a GPU
// of sms multiprocessors. The single-pass kernels give one block to each
// row (inner == 1 and r > 256), to 8 short rows, or to 32 columns of one
// outer index; when they would launch fewer than splitBlocksPerSM·sms
// blocks and r holds at least two chunks of splitMinPerThread elements a
// thread, r is split into enough chunks (at most r / minimum chunk) for
// about splitBlocksPerSM·sms blocks. The plan depends only on the shape
// and sms, so the results are reproducible on one device.
func planReduce(outer, r, inner, sms int) reducePlan {
	single := reducePlan{chunks: 1, length: r}
	if outer*inner == 0 || r == 0 {
		return single
	}
	target := splitBlocksPerSM * max(sms, 1)
	var blocks, minLen, cw int
	if inner == 1 {
		blocks = outer
		if r <= 256 {
			blocks = (outer + 7) / 8
		}
		minLen = blockSize * splitMinPerThread
	} else {
		cw = 32
		for cw/2 >= inner {
			cw /= 2
		}
		blocks = outer * ((inner + cw - 1) / cw)
		minLen = blockSize / cw * splitMinPerThread
	}
	if blocks >= target || r < 2*minLen {
		return single
	}
	chunks := min((target+blocks-1)/blocks, r/minLen)
	if chunks < 2 {
		return single
	}
	length := (r + chunks - 1) / chunks
	return reducePlan{chunks: (r + length - 1) / length, length: length, cw: cw}
}

// reduceSplit runs the plan p (p.chunks > 1) of reducing t, viewed as
// [outer, r, inner], by rop: the rows or cols split kernel writes one
// partial result (the device's struct Acc) per output and chunk to a
// scratch buffer, laid out [outer·inner, p.chunks], and the combine kernel
// reduces each output's partials in a fixed order and stores the value at
// pv or the index at pi as the single-pass kernels do.
func (b *Backend) reduceSplit(name string, fixed backend.ReduceOp, p reducePlan, rop backend.ReduceOp, t *Tensor, outer, r, inner int, pv, pi uint64) {
	nout := outer * inner
	part := b.emptyOf([]int{nout * p.chunks * reduceAccBytes}, backend.U8)
	if inner == 1 {
		kn := name + "_rows_split"
		k := b.kernel(kn, func() string { return reduceOpSource(t.dtype, kn, "rows_split", fixed) })
		b.Launch(k, grid1(outer*p.chunks, 1), block1, 0, int32(rop), int64(outer), int64(r),
			int64(p.length), int64(p.chunks), t.Ptr(), part.Ptr())
	} else {
		kn := name + "_cols_split"
		k := b.kernel(kn, func() string { return reduceOpSource(t.dtype, kn, "cols_split", fixed) })
		groups := (inner + p.cw - 1) / p.cw
		b.Launch(k, grid1(outer*groups*p.chunks, 1), block1, 0, int32(rop), int64(outer), int64(r), int64(inner),
			int64(p.length), int64(p.chunks), int32(p.cw), t.Ptr(), part.Ptr())
	}
	kn := name + "_combine"
	k := b.kernel(kn, func() string { return reduceOpSource(t.dtype, kn, "combine", fixed) })
	wpr, rpb := 1, blockSize/32
	if p.chunks > 64 {
		wpr, rpb = blockSize/32, 1
	}
	b.Launch(k, grid1(nout, rpb), block1, 0, int32(rop), int64(nout), int64(p.chunks), int64(r),
		part.Ptr(), pv, pi, int32(wpr))
	b.Release(part)
}
