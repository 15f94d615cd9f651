package cuda

import (
	"encoding/binary"
	"math"

	"github.com/emberml/ember/backend"
)

// This file turns tensor layouts into kernel launches: broadcasting
// strides, collapsing dimensions, the by-value layout struct of the
// strided kernels, the choice between the contiguous and the strided
// kernel, and grid sizes.

// maxRank is the largest rank the strided kernels index directly; launches
// of higher rank (after collapsing) are split on the host along their
// leading axes.
const maxRank = 8

// blockSize is the thread count of the 1-d kernels.
const blockSize = 256

// maxBlocks caps 1-d grids; the kernels loop with a grid stride.
var maxBlocks = 1 << 16

// broadcastStrides returns t's strides for viewing it as shape: new
// leading axes and size-1 axes that are broadcast get stride 0.
func broadcastStrides(t *Tensor, shape []int) []int {
	st := make([]int, len(shape))
	k := len(shape) - len(t.shape)
	for i, s := range t.shape {
		if s != 1 || shape[k+i] == 1 {
			st[k+i] = t.strides[i]
		}
	}
	return st
}

// collapse drops size-1 axes and merges neighbouring axes that every
// operand walks contiguously (stride[d] == stride[d+1]*shape[d+1]). The
// element order is unchanged.
func collapse(shape []int, strides [][]int) ([]int, [][]int) {
	var sh []int
	st := make([][]int, len(strides))
	for d, s := range shape {
		if s == 1 {
			continue
		}
		if k := len(sh) - 1; k >= 0 {
			merge := true
			for i := range strides {
				if st[i][k] != strides[i][d]*s {
					merge = false
					break
				}
			}
			if merge {
				sh[k] *= s
				for i := range strides {
					st[i][k] = strides[i][d]
				}
				continue
			}
		}
		sh = append(sh, s)
		for i := range strides {
			st[i] = append(st[i], strides[i][d])
		}
	}
	return sh, st
}

// layoutBlob encodes the C struct Lay { i64 n, rank, shape[8], st[4][8]; }
// for shape and up to four operands' strides.
func layoutBlob(shape []int, strides [][]int) []byte {
	buf := make([]byte, 8*(2+maxRank+4*maxRank))
	put := func(i int, v int) { binary.LittleEndian.PutUint64(buf[8*i:], uint64(int64(v))) }
	put(0, backend.NumElements(shape))
	put(1, len(shape))
	for d, s := range shape {
		put(2+d, s)
	}
	for k, st := range strides {
		for d, s := range st {
			put(2+maxRank+k*maxRank+d, s)
		}
	}
	return buf
}

// fits32 reports whether every offset an operand reaches over shape, and
// the element count, fit in an int32.
func fits32(shape []int, strides [][]int) bool {
	if backend.NumElements(shape) > math.MaxInt32 {
		return false
	}
	for _, st := range strides {
		span := 0
		for d, s := range shape {
			span += (s - 1) * abs(st[d])
		}
		if span > math.MaxInt32 {
			return false
		}
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// grid1 is the 1-d grid for n work items of perBlock items per block.
func grid1(n, perBlock int) [3]uint32 {
	g := (n + perBlock - 1) / perBlock
	g = max(1, min(g, maxBlocks))
	return [3]uint32{uint32(g), 1, 1}
}

var block1 = [3]uint32{blockSize, 1, 1}

// splitLeading calls f for every index of the leading axes of shape until
// at most maxRank axes remain, advancing each operand's pointer (element
// sizes in sizes) by the index times its stride.
func splitLeading(shape []int, strides [][]int, ptrs []uint64, sizes []int, f func(shape []int, strides [][]int, ptrs []uint64)) {
	if len(shape) <= maxRank {
		f(shape, strides, ptrs)
		return
	}
	sub := make([][]int, len(strides))
	for k := range strides {
		sub[k] = strides[k][1:]
	}
	p := make([]uint64, len(ptrs))
	for i := 0; i < shape[0]; i++ {
		for k := range ptrs {
			p[k] = ptrs[k] + uint64(int64(i*strides[k][0]*sizes[k]))
		}
		splitLeading(shape[1:], sub, p, sizes, f)
	}
}
