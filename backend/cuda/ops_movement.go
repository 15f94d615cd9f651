package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindPad, (*Backend).pad, nil)
	kernels.Set(ir.KindCat, (*Backend).cat, nil)
	kernels.Set(ir.KindGather, (*Backend).gather, nil)
	kernels.Set(ir.KindIndexSelect, (*Backend).indexSelect, nil)
	kernels.Set(ir.KindScatterAdd, (*Backend).scatterAddKernel, nil)
}

// pad is the kernel of KindPad: axis i of op.In[0] padded with op.Ints[2i]
// elements before and op.Ints[2i+1] after, all equal to op.Scalars[0]
// converted to x's dtype as Full does (PyTorch's constant pad, one pair
// per axis in axis order), giving op.Shape: a fill of the output and a
// strided copy of x into its interior.
func (b *Backend) pad(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	out := b.full(op.Shape, op.DType, op.Scalars[0])
	if backend.NumElements(t.shape) == 0 {
		return ir.One(out)
	}
	off := out.offset
	for i := range t.shape {
		before, _ := op.Pad(i)
		off += before * out.strides[i]
	}
	copyStrided(b, out.view(t.shape, out.strides, off), t)
	return ir.One(out)
}

// cat is the kernel of KindCat: op.Xs (one dtype) concatenated along
// op.Axis into a contiguous tensor of op.Shape (PyTorch's cat; the other
// axes agree): one strided copy per input into its slab.
func (b *Backend) cat(op ir.Op) ir.Outputs {
	axis := op.Axis
	out := b.emptyOf(op.Shape, op.DType)
	off := 0
	for _, x := range op.Xs {
		t := tensorOf(x)
		if backend.NumElements(t.shape) > 0 {
			copyStrided(b, out.view(t.shape, out.strides, off), t)
		}
		off += t.shape[axis] * out.strides[axis]
	}
	return ir.One(out)
}

// idxBlob encodes the C struct Idx { i64 n, rank, axis, asize, istride,
// shape[8], ist[8], xst[8], ost[8]; } of the indexing kernels.
func idxBlob(shape []int, axis, asize, istride int, ist, xst, ost []int) []byte {
	buf := make([]byte, 8*(5+4*maxRank))
	put := func(i, v int) { binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(v))) }
	put(0, backend.NumElements(shape))
	put(1, len(shape))
	put(2, axis)
	put(3, asize)
	put(4, istride)
	for k, arr := range [][]int{shape, ist, xst, ost} {
		for d, v := range arr {
			put(5+k*maxRank+d, v)
		}
	}
	return buf
}

// checkIndexRank panics when an indexing op gets more axes than its kernel
// indexes.
func checkIndexRank(op string, rank int) {
	if rank > maxRank {
		panic(fmt.Errorf("cuda: %s: rank %d exceeds the supported %d: %w", op, rank, maxRank, backend.ErrInvalidDevice))
	}
}

// gather is the kernel of KindGather: out of op.Shape (index's),
// out[i][j][k] = x[i][index[i][j][k]][k] for op.Axis 1 and likewise for
// other axes (PyTorch's gather), x = op.In[0], index = op.In[1] (I64 of
// x's rank, at most 8). An index outside [0, x.shape[axis]) gives 0 and
// makes the next Sync or read fail (see statusError).
func (b *Backend) gather(op ir.Op) ir.Outputs {
	t, ix, axis := tensorOf(op.In[0]), tensorOf(op.In[1]), op.Axis
	checkIndexRank("gather", len(ix.shape))
	out := b.emptyOf(op.Shape, op.DType)
	n := backend.NumElements(ix.shape)
	if n == 0 {
		return ir.One(out)
	}
	name := "ember_gather_" + bitsType(t.dtype.Size())
	k := b.kernel(name, func() string {
		return render(gatherTmpl, indexSpec{Name: name, T: bitsType(t.dtype.Size())})
	})
	blob := idxBlob(ix.shape, axis, t.shape[axis], 0, ix.strides, t.strides, nil)
	b.Launch(k, grid1(n, blockSize), block1, 0, blob, out.Ptr(), t.Ptr(), ix.Ptr(), b.statusWord())
	return ir.One(out)
}

// indexSelect is the kernel of KindIndexSelect: the entries of x = op.In[0]
// along op.Axis named by index = op.In[1] (rank-1 I64), PyTorch's
// index_select: the result has op.Shape, x's shape with shape[axis] =
// len(index). Inputs of rank above 8 are made contiguous and viewed as
// [outer, size, inner]. An index outside [0, x.shape[axis]) gives 0 and
// makes the next Sync or read fail (see statusError).
func (b *Backend) indexSelect(op ir.Op) ir.Outputs {
	t, ix, axis := tensorOf(op.In[0]), tensorOf(op.In[1]), op.Axis
	shape := op.Shape
	out := b.emptyOf(shape, op.DType)
	n := backend.NumElements(shape)
	if n == 0 {
		return ir.One(out)
	}
	kshape, kst, kaxis := shape, t.strides, axis
	if len(shape) > maxRank {
		t = b.Contiguous(t)
		outer, inner := backend.NumElements(t.shape[:axis]), backend.NumElements(t.shape[axis+1:])
		kshape, kaxis = []int{outer, ix.shape[0], inner}, 1
		kst = []int{t.shape[axis] * inner, inner, 1}
	}
	name := "ember_index_select_" + bitsType(t.dtype.Size())
	k := b.kernel(name, func() string {
		return render(indexSelectTmpl, indexSpec{Name: name, T: bitsType(t.dtype.Size())})
	})
	blob := idxBlob(kshape, kaxis, t.shape[axis], ix.strides[0], nil, kst, nil)
	b.Launch(k, grid1(n, blockSize), block1, 0, blob, out.Ptr(), t.Ptr(), ix.Ptr(), b.statusWord())
	return ir.One(out)
}

// scatterAddKernel is the kernel of KindScatterAdd: scatterAddTo of x =
// op.In[0], index = op.In[1] and src = op.In[2] along op.Axis. F16 and
// BF16 accumulate in an F32 copy and round once (as backend/flex).
func (b *Backend) scatterAddKernel(op ir.Op) ir.Outputs {
	t, ix, sr := tensorOf(op.In[0]), tensorOf(op.In[1]), tensorOf(op.In[2])
	if t.dtype == backend.F16 || t.dtype == backend.BF16 {
		acc := b.scatterAddTo(b.cast(t, backend.F32), op.Axis, ix, b.cast(sr, backend.F32))
		return ir.One(b.cast(acc, t.dtype))
	}
	return ir.One(b.scatterAddTo(t, op.Axis, ix, sr))
}

// scatterAddTo returns a contiguous copy of t with sr[i][j][k] added at
// [i][ix[i][j][k]][k] for axis 1 and likewise for other axes (PyTorch's
// scatter_add); ix (I64) and sr have equal shapes, of t's rank (at most
// 8), and t is not F16 or BF16. Additions are atomic: integer and Bool
// results are deterministic, float ones may differ between runs in the
// last bits. Integers wrap; Bool ors. An index outside [0, t.shape[axis])
// is skipped and makes the next Sync or read fail (see statusError).
func (b *Backend) scatterAddTo(t *Tensor, axis int, ix, sr *Tensor) *Tensor {
	checkIndexRank("scatter_add", len(ix.shape))
	out := b.emptyOf(t.shape, t.dtype)
	copyStrided(b, out, t)
	n := backend.NumElements(ix.shape)
	if n == 0 {
		return out
	}
	c := ctypeOf(t.dtype)
	name := "ember_scatter_add_" + c.Name
	k := b.kernel(name, func() string {
		return render(scatterTmpl, indexSpec{Name: name, T: c.S, Add: scatterAdd(t.dtype)})
	})
	blob := idxBlob(ix.shape, axis, t.shape[axis], 0, ix.strides, sr.strides, out.strides)
	b.Launch(k, grid1(n, blockSize), block1, 0, blob, out.Ptr(), sr.Ptr(), ix.Ptr(), b.statusWord())
	return out
}
