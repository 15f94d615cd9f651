package gemm

import (
	"fmt"
	"unsafe"
)

// Offsets is an offset table of an Stile operand: element p is where row
// p of the product's depth starts in the operand's slice. It records its
// largest entry so that Stile can check its reads once per call.
type Offsets struct {
	off []int32
	max int
}

// NewOffsets wraps off (not copied; it must not change afterwards). It
// panics on a negative offset.
func NewOffsets(off []int32) Offsets {
	m := -1
	for _, v := range off {
		if v < 0 {
			panic(fmt.Sprintf("gemm: negative offset %d", v))
		}
		m = max(m, int(v))
	}
	return Offsets{off: off, max: m}
}

// Len returns the number of entries.
func (o Offsets) Len() int { return len(o.off) }

// Slice returns entries [lo, hi) (the recorded maximum stays that of the
// whole table, a bound for the part).
func (o Offsets) Slice(lo, hi int) Offsets { return Offsets{off: o.off[lo:hi], max: o.max} }

// tileFunc is an assembly tile kernel (see gen_tiles.go).
type tileFunc func(k int, a *float32, aoff *int32, b *float32, boff *int32, c *float32, ldc int, acc bool, pos *int32, npos int)

// TilePos places one tile of StileBatch: its A at a[A:], its C at c[C:].
type TilePos struct{ A, C int32 }

// tileSet is the tile kernels of one instruction set.
type tileSet struct {
	name    string
	lanes   int             // float32 lanes of a vector
	funcs   [2][14]tileFunc // [vectors-1][rows-1]; nil past the register budget
	maxRows [2]int          // rows of the last non-nil kernel, by vectors-1
	dots    [5][5]dotFunc   // Sdot kernels, [ri-1][rj-1]
	dotI    int             // rows of A and of B the dot kernels take
	dotJ    int
}

// newTileSet returns the set of funcs and dots with its row limits filled
// in.
func newTileSet(name string, lanes int, funcs [2][14]tileFunc, dots [5][5]dotFunc) *tileSet {
	t := &tileSet{name: name, lanes: lanes, funcs: funcs, dots: dots}
	for t.dotI < 5 && dots[t.dotI][0] != nil {
		t.dotI++
	}
	for t.dotJ < 5 && dots[0][t.dotJ] != nil {
		t.dotJ++
	}
	for v := range funcs {
		for t.maxRows[v] < len(funcs[v]) && funcs[v][t.maxRows[v]] != nil {
			t.maxRows[v]++
		}
	}
	return t
}

// tiles is the set in use; nil where this machine has none (then Stile
// runs the portable loop).
var tiles *tileSet

// TileLanes returns the float32 lanes of one vector of the tile kernels
// selected on this machine: 16 with AVX-512F, 8 with AVX2+FMA, and 8 for
// the portable loop Stile runs without them (see TileAccelerated). A
// tile's columns are 1 or 2 vectors.
func TileLanes() int {
	if tiles == nil {
		return 8
	}
	return tiles.lanes
}

// TileAccelerated reports whether Stile runs assembly kernels (false: a
// portable loop, far slower than Sgemm).
func TileAccelerated() bool { return tiles != nil }

// TileMaxRows returns the most rows of a tile with vecs vectors a row (1
// or 2): 14 and 14 with AVX-512F, 12 and 6 with AVX2, 14 without kernels.
func TileMaxRows(vecs int) int {
	if tiles == nil {
		return 14
	}
	return tiles.maxRows[vecs-1]
}

// TileKernel names the tile kernels in use ("avx512", "avx2" or
// "generic").
func TileKernel() string {
	if tiles == nil {
		return "generic"
	}
	return tiles.name
}

// UseTileKernel selects the tile kernels by name ("avx512", "avx2" where
// the CPU has them, "generic" always) and returns a function restoring the
// previous choice, or an error for an unknown or unsupported name. It is
// meant for tests and must not run concurrently with Stile.
func UseTileKernel(name string) (restore func(), err error) {
	prev := tiles
	switch name {
	case "generic":
		tiles = nil
	default:
		t := tileSetByName(name)
		if t == nil {
			return nil, fmt.Errorf("gemm: tile kernel %q not available on this machine", name)
		}
		tiles = t
	}
	return func() { tiles = prev }, nil
}

// Stile computes the float32 tile
//
//	C[r][j] = Σ_{p<k} a[aoff[p] + r] · b[boff[p] + j]   (r < rows, j < vecs·TileLanes())
//
// into c[r·ldc + j], adding to the old value when acc (else overwriting
// it). It is the register tile of Sgemm with its packed panels replaced by
// offset tables: the rows of A are read as consecutive elements from
// where the table points (broadcast one at a time), a row of B as
// vecs·TileLanes() consecutive elements, so convolutions multiply image
// rows and channel vectors where they lie. The sum runs over p in
// increasing order with one fused multiply-add per term, the same order
// for every element of the tile. rows must be in [1, TileMaxRows(vecs)],
// vecs 1 or 2, k ≤ both tables' lengths; reads and writes past the slices
// panic before any work. Without tile kernels (TileAccelerated false) the
// loop is plain Go.
func Stile(rows, vecs, k int, a []float32, aoff Offsets, b []float32, boff Offsets, c []float32, ldc int, acc bool) {
	pos := [1]TilePos{}
	StileBatch(rows, vecs, k, a, aoff, b, boff, c, ldc, acc, pos[:])
}

// StileBatch runs Stile once per element of pos, with A at a[pos[i].A:]
// and C at c[pos[i].C:] (the same tables, B and store mode), in order, in
// one kernel call.
func StileBatch(rows, vecs, k int, a []float32, aoff Offsets, b []float32, boff Offsets, c []float32, ldc int, acc bool, pos []TilePos) {
	cols := vecs * TileLanes()
	if vecs < 1 || vecs > 2 || rows < 1 || rows > TileMaxRows(vecs) || k < 0 || k > aoff.Len() || k > boff.Len() {
		panic(fmt.Sprintf("gemm: Stile rows %d vecs %d k %d (tables %d, %d)", rows, vecs, k, aoff.Len(), boff.Len()))
	}
	if len(pos) == 0 {
		return
	}
	maxA, maxC := int32(0), int32(0)
	for _, q := range pos {
		if q.A < 0 || q.C < 0 {
			panic(fmt.Sprintf("gemm: Stile negative position %+v", q))
		}
		maxA, maxC = max(maxA, q.A), max(maxC, q.C)
	}
	_ = c[int(maxC)+(rows-1)*ldc+cols-1]
	if k == 0 {
		if !acc {
			for _, q := range pos {
				for r := range rows {
					clear(c[int(q.C)+r*ldc:][:cols])
				}
			}
		}
		return
	}
	_ = a[int(maxA)+aoff.max+rows-1]
	_ = b[boff.max+cols-1]
	if tiles == nil {
		for _, q := range pos {
			stileGo(rows, cols, k, a[q.A:], aoff.off, b, boff.off, c[q.C:], ldc, acc)
		}
		return
	}
	tiles.funcs[vecs-1][rows-1](k, &a[0], &aoff.off[0], &b[0], &boff.off[0], &c[0], ldc, acc, (*int32)(unsafe.Pointer(&pos[0])), len(pos))
}

// stileGo is the portable Stile: the same sums in the same order, each
// term rounded after the multiply-add as the fused instruction does (Go
// may fuse x*y+z on platforms with FMA; results can then differ from the
// assembly in the last bit, as the generic GEMM kernels do).
func stileGo(rows, cols, k int, a []float32, aoff []int32, b []float32, boff []int32, c []float32, ldc int, acc bool) {
	var t [14 * 32]float32
	tile := t[:rows*cols]
	for p := range k {
		ar := a[aoff[p]:][:rows]
		br := b[boff[p]:][:cols]
		for r, av := range ar {
			row := tile[r*cols : (r+1)*cols]
			for j, bv := range br {
				row[j] += av * bv
			}
		}
	}
	for r := range rows {
		dst := c[r*ldc : r*ldc+cols]
		src := tile[r*cols : (r+1)*cols]
		if acc {
			for j, v := range src {
				dst[j] += v
			}
		} else {
			copy(dst, src)
		}
	}
}
