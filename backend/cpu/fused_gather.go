package cpu

// bcastGather reads a contiguous input broadcast to a fused program's
// iteration shape, block by block. The broadcast is described by the
// iteration's axes with the input's strides (0 along broadcast axes),
// size-1 axes dropped and neighbouring axes merged where the input's
// layout allows, so a trailing row is two axes (rows, stride 0; columns,
// stride 1) and a column is (rows, 1; columns, 0).
type bcastGather[T any] struct {
	data    []T
	base    int   // the element at iteration index 0
	dims    []int // sizes, outermost first
	strides []int // the input's stride along each
}

// newGather describes data, of shape, broadcast to out.
func newGather[T any](data []T, shape, out []int) bcastGather[T] {
	rm := make([]int, len(shape))
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		rm[k] = s
		s *= shape[k]
	}
	return newStridedGather(data, 0, shape, rm, out)
}

// newStridedGather describes a strided view (element i of axis k at
// data[base + Σ i·strides[k]], any strides, negative ones included) of
// shape, broadcast to out.
func newStridedGather[T any](data []T, base int, shape, viewStrides, out []int) bcastGather[T] {
	r := len(out)
	st := make([]int, r)
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] != 1 {
			st[r-len(shape)+k] = viewStrides[k]
		}
	}
	var dims, strides []int
	for k, d := range out {
		if d == 1 {
			continue
		}
		if j := len(dims) - 1; j >= 0 && strides[j] == st[k]*d {
			dims[j] *= d
			strides[j] = st[k]
			continue
		}
		dims = append(dims, d)
		strides = append(strides, st[k])
	}
	return bcastGather[T]{data: data, base: base, dims: dims, strides: strides}
}

// at writes the input's elements at iteration indices [lo, lo+len(o))
// into o, one run along the innermost axis at a time (a copy, or a fill
// where that axis is broadcast).
func (g *bcastGather[T]) at(o []T, lo int) {
	var buf [8]int
	var idx []int
	if len(g.dims) <= len(buf) {
		idx = buf[:len(g.dims)]
	} else {
		idx = make([]int, len(g.dims))
	}
	if len(g.dims) == 0 {
		// Every axis has size 1: one element.
		v := g.data[g.base]
		for j := range o {
			o[j] = v
		}
		return
	}
	off := g.position(idx, lo)
	in := len(g.dims) - 1
	n, s := g.dims[in], g.strides[in]
	for pos := 0; pos < len(o); {
		run := min(n-idx[in], len(o)-pos)
		dst := o[pos : pos+run]
		switch s {
		case 0:
			fillRun(dst, g.data[off])
		case 1:
			copy(dst, g.data[off:off+run])
		default:
			for j := range dst {
				dst[j] = g.data[off+j*s]
			}
		}
		pos += run
		idx[in] += run
		off += run * s
		if idx[in] < n {
			continue
		}
		idx[in] = 0
		off -= n * s
		off = g.nextRow(idx, off)
	}
}

// fillRun sets every element of dst to v: a few stores, then doubling
// copies (memmove's wide loads and stores) for long runs.
func fillRun[T any](dst []T, v T) {
	n := min(len(dst), 16)
	for j := range n {
		dst[j] = v
	}
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}

// transposeInto copies the rows×cols strided matrix whose element (i, j)
// is src[base + i·rs + j·cs] into dst in row-major order, in 32×32 tiles
// so that both sides stay in cache whatever the strides.
func transposeInto[T any](dst, src []T, base, rows, cols, rs, cs int) {
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for i := i0; i < i1; i++ {
				row := dst[i*cols : i*cols+cols]
				off := base + i*rs
				for j := j0; j < j1; j++ {
					row[j] = src[off+j*cs]
				}
			}
		}
	}
}

// position sets idx to the index of iteration element lo of g and returns
// its offset in g.data.
func (g *bcastGather[T]) position(idx []int, lo int) int {
	off, rest := g.base, lo
	for k := len(g.dims) - 1; k >= 0; k-- {
		idx[k] = rest % g.dims[k]
		rest /= g.dims[k]
		off += idx[k] * g.strides[k]
	}
	return off
}

// nextRow moves idx, whose innermost index has just been reset to 0, and
// off to the start of the next run of the innermost axis: the outer
// indices advance as an odometer. It returns the new offset.
func (g *bcastGather[T]) nextRow(idx []int, off int) int {
	for k := len(g.dims) - 2; k >= 0; k-- {
		idx[k]++
		off += g.strides[k]
		if idx[k] < g.dims[k] {
			break
		}
		off -= g.dims[k] * g.strides[k]
		idx[k] = 0
	}
	return off
}
