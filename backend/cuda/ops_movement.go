package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/emberml/ember/backend"
)

// Pad pads axis i of x with pads[i][0] elements before and pads[i][1]
// after, all equal to value converted to x's dtype as Full does (PyTorch's
// constant pad, one pair per axis in axis order): a fill of the output and
// a strided copy of x into its interior.
func (b *Backend) Pad(x backend.Tensor, pads [][2]int, value float64) backend.Tensor {
	t := tensorOf(x)
	shape := make([]int, len(t.shape))
	for i, s := range t.shape {
		shape[i] = s + pads[i][0] + pads[i][1]
	}
	out := tensorOf(b.Full(shape, t.dtype, value))
	if numel(t.shape) == 0 {
		return out
	}
	off := out.offset
	for i, p := range pads {
		off += p[0] * out.strides[i]
	}
	copyStrided(b, out.view(t.shape, out.strides, off), t)
	return out
}

// Cat concatenates tensors of equal dtype along axis (PyTorch's cat; the
// other axes agree): one strided copy per input into its slab of the
// contiguous output.
func (b *Backend) Cat(xs []backend.Tensor, axis int) backend.Tensor {
	first := tensorOf(xs[0])
	shape := append([]int{}, first.shape...)
	shape[axis] = 0
	for _, x := range xs {
		shape[axis] += tensorOf(x).shape[axis]
	}
	out := b.Empty(shape, first.dtype)
	off := 0
	for _, x := range xs {
		t := tensorOf(x)
		if numel(t.shape) > 0 {
			copyStrided(b, out.view(t.shape, out.strides, off), t)
		}
		off += t.shape[axis] * out.strides[axis]
	}
	return out
}

// idxBlob encodes the C struct Idx { i64 n, rank, axis, asize, istride,
// shape[8], ist[8], xst[8], ost[8]; } of the indexing kernels.
func idxBlob(shape []int, axis, asize, istride int, ist, xst, ost []int) []byte {
	buf := make([]byte, 8*(5+4*maxRank))
	put := func(i, v int) { binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(v))) }
	put(0, numel(shape))
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

// Gather returns out with index's shape, out[i][j][k] = x[i][index[i][j][k]][k]
// for axis 1 and likewise for other axes (PyTorch's gather); index is I64
// of x's rank (at most 8). An index outside [0, x.shape[axis]) gives 0 and
// makes the next Sync or read fail (see indexError).
func (b *Backend) Gather(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	t, ix := tensorOf(x), tensorOf(index)
	checkIndexRank("gather", len(ix.shape))
	out := b.Empty(ix.shape, t.dtype)
	n := numel(ix.shape)
	if n == 0 {
		return out
	}
	name := "ember_gather_" + bitsType(t.dtype.Size())
	k := b.kernel(name, func() string {
		return render(gatherTmpl, indexSpec{Name: name, T: bitsType(t.dtype.Size())})
	})
	blob := idxBlob(ix.shape, axis, t.shape[axis], 0, ix.strides, t.strides, nil)
	b.Launch(k, grid1(n, blockSize), block1, 0, blob, out.Ptr(), t.Ptr(), ix.Ptr(), b.statusWord())
	return out
}

// IndexSelect picks the entries of x along axis named by index (rank-1
// I64), PyTorch's index_select: the result has x's shape with
// shape[axis] = len(index). Inputs of rank above 8 are made contiguous and
// viewed as [outer, size, inner]. An index outside [0, x.shape[axis])
// gives 0 and makes the next Sync or read fail (see indexError).
func (b *Backend) IndexSelect(x backend.Tensor, axis int, index backend.Tensor) backend.Tensor {
	t, ix := tensorOf(x), tensorOf(index)
	shape := append([]int{}, t.shape...)
	shape[axis] = ix.shape[0]
	out := b.Empty(shape, t.dtype)
	n := numel(shape)
	if n == 0 {
		return out
	}
	kshape, kst, kaxis := shape, t.strides, axis
	if len(shape) > maxRank {
		t = b.Contiguous(t)
		outer, inner := numel(t.shape[:axis]), numel(t.shape[axis+1:])
		kshape, kaxis = []int{outer, ix.shape[0], inner}, 1
		kst = []int{t.shape[axis] * inner, inner, 1}
	}
	name := "ember_index_select_" + bitsType(t.dtype.Size())
	k := b.kernel(name, func() string {
		return render(indexSelectTmpl, indexSpec{Name: name, T: bitsType(t.dtype.Size())})
	})
	blob := idxBlob(kshape, kaxis, t.shape[axis], ix.strides[0], nil, kst, nil)
	b.Launch(k, grid1(n, blockSize), block1, 0, blob, out.Ptr(), t.Ptr(), ix.Ptr(), b.statusWord())
	return out
}

// ScatterAdd returns a contiguous copy of x with src[i][j][k] added at
// [i][index[i][j][k]][k] for axis 1 and likewise for other axes
// (PyTorch's scatter_add); index (I64) and src have equal shapes, of x's
// rank (at most 8). Additions are atomic: integer and Bool results are
// deterministic, float ones may differ between runs in the last bits. F16
// and BF16 accumulate in float32 and round once (as backend/flex);
// integers wrap; Bool ors. An index outside [0, x.shape[axis]) is skipped
// and makes the next Sync or read fail (see indexError).
func (b *Backend) ScatterAdd(x backend.Tensor, axis int, index, src backend.Tensor) backend.Tensor {
	t, ix, sr := tensorOf(x), tensorOf(index), tensorOf(src)
	if t.dtype == backend.F16 || t.dtype == backend.BF16 {
		acc := b.ScatterAdd(b.Cast(t, backend.F32), axis, ix, b.Cast(sr, backend.F32))
		return b.Cast(acc, t.dtype)
	}
	checkIndexRank("scatter_add", len(ix.shape))
	out := b.Empty(t.shape, t.dtype)
	copyStrided(b, out, t)
	n := numel(ix.shape)
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
