package cpu

import (
	"sync"

	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// The tile of a transposed operand that the optimizer kernels copy at a
// time: optimTileRows rows of optimTileCols columns (4096 elements). Each
// of its columns is one contiguous run of the column-major storage (a
// cache line of float32), and the copy stays in the L1 cache.
const (
	optimTileRows = 16
	optimTileCols = 256
	optimTile     = optimTileRows * optimTileCols
)

// tiles32 and tiles64 recycle the tile buffers.
var (
	tiles32 = sync.Pool{New: func() any { return new([optimTile]float32) }}
	tiles64 = sync.Pool{New: func() any { return new([optimTile]float64) }}
)

// getTile returns a tile buffer of T from its pool.
func getTile[T float]() *[optimTile]T {
	var z T
	if _, ok := any(z).(float32); ok {
		return tiles32.Get().(*[optimTile]T)
	}
	return tiles64.Get().(*[optimTile]T)
}

// putTile returns b to its pool.
func putTile[T float](b *[optimTile]T) {
	if p, ok := any(b).(*[optimTile]float32); ok {
		tiles32.Put(p)
		return
	}
	tiles64.Put(b)
}

// optimIn is one operand of an optimizer kernel: its row-major elements,
// or, when ld > 0, the column-major storage of a transposed matrix
// (element (i, j) at data[j*ld+i]).
type optimIn[T float] struct {
	data []T
	ld   int
}

// optimIns are the operands of one optimizer kernel (at most four), of
// one shape; rows and cols are that shape when some operand is a
// transposed matrix (trans).
type optimIns[T float] struct {
	x          [4]optimIn[T]
	rows, cols int
	trans      bool
}

// optimInputs returns the operands xs of shape as the kernels read them:
// contiguous ones as they are, transposed matrices (the layout of a
// matmul's weight gradient) in place for run to copy tile by tile, any
// other layout copied to row-major order into a buffer from alloc. It
// returns false when an operand is not a host tensor stored as T.
func optimInputs[T float](xs []ir.Tensor, shape []int, alloc func(int) []T) (in optimIns[T], ok bool) {
	for i, x := range xs {
		v, ok := view[T](x)
		if !ok {
			return in, false
		}
		if d, ok := v.Contiguous(); ok {
			in.x[i].data = d
			continue
		}
		if len(shape) == 2 {
			if trans, ld, ok := layout.MatrixLayout(shape[0], shape[1], v.Strides[0], v.Strides[1]); ok && trans {
				in.x[i] = optimIn[T]{data: v.Data[v.Offset:], ld: ld}
				in.rows, in.cols, in.trans = shape[0], shape[1], true
				continue
			}
		}
		in.x[i].data = dense(v, alloc)
	}
	return in, true
}

// run calls f(lo, hi, x) over the n elements in row-major order, x holding
// the operands' elements lo..hi (nil for the absent ones), so that f sees
// every element once: in cache-sized chunks on the worker pool when every
// operand is row-major; else per row of each tile of optimTileRows ×
// optimTileCols elements, the tiles spread over the worker pool, each
// transposed operand's tile copied to row-major order first.
func (in *optimIns[T]) run(n int, f func(lo, hi int, x *[4][]T)) {
	if !in.trans {
		forChunks(n, func(lo, hi int) {
			var x [4][]T
			for i, o := range in.x {
				if o.data != nil {
					x[i] = o.data[lo:hi]
				}
			}
			f(lo, hi, &x)
		})
		return
	}
	cb := (in.cols + optimTileCols - 1) / optimTileCols
	tasks := (in.rows + optimTileRows - 1) / optimTileRows * cb
	tile := func(t int) {
		r0, c0 := t/cb*optimTileRows, t%cb*optimTileCols
		r1, c1 := min(in.rows, r0+optimTileRows), min(in.cols, c0+optimTileCols)
		w := c1 - c0
		var bufs [4]*[optimTile]T
		for i, o := range in.x {
			if o.ld == 0 {
				continue
			}
			b := getTile[T]()
			bufs[i] = b
			transposeTile(b[:], w, o.data[c0*o.ld+r0:], o.ld, r1-r0, w)
		}
		for r := r0; r < r1; r++ {
			lo := r*in.cols + c0
			var x [4][]T
			for i, o := range in.x {
				switch {
				case o.ld > 0:
					x[i] = bufs[i][(r-r0)*w : (r-r0+1)*w]
				case o.data != nil:
					x[i] = o.data[lo : lo+w]
				}
			}
			f(lo, lo+w, &x)
		}
		for _, b := range bufs {
			if b != nil {
				putTile(b)
			}
		}
	}
	if n < serialElems {
		for t := range tasks {
			tile(t)
		}
		return
	}
	workers.ParallelFor(tasks, tile)
}

// transposeEdges sets dst[i*ds+j] = src[j*ss+i] for i < rows, j < cols
// outside the block i < r8, j < c8 (done already).
func transposeEdges[T float](dst []T, ds int, src []T, ss, rows, cols, r8, c8 int) {
	for j := range cols {
		i0 := 0
		if j < c8 {
			i0 = r8
		}
		for i, v := range src[j*ss+i0 : j*ss+rows] {
			dst[(i0+i)*ds+j] = v
		}
	}
}
