package ndarray

import (
	"fmt"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Tensor is the ndarray backend's tensor: a dtype, a shape and the
// elements in one slice, chosen by the dtype's class: F, for every float
// dtype (F64, F32, Flex32, F16, BF16), holds float64 values each exactly
// representable in the dtype; I, for the signed integers, int64 values
// within the dtype's range; U, for the unsigned integers, uint64 values
// within the dtype's range; B, for Bool, bools. The other three slices are
// nil. Ops produce contiguous row-major tensors; Permute, Expand, Slice and
// Flip produce strided views of their input's slice, which every other op
// materializes (dense) before reading it, so that a view costs nothing
// until it is computed with. A tensor is never modified after the op that
// made it returns, so views and Reshape share their input's slice.
type Tensor struct {
	dtype backend.DType
	shape []int
	// st, when not nil, makes the tensor a strided view: element
	// (i_0, i_1, ...) is at off + Σ i_k·st[k] of the slice. nil means
	// contiguous row-major from 0.
	st  []int
	off int
	f   []float64
	i   []int64
	u   []uint64
	b   []bool
}

var _ backend.Tensor = (*Tensor)(nil)

// Shape is the logical shape (row-major; nil or empty for rank 0). Callers
// must not modify it.
func (t *Tensor) Shape() []int { return t.shape }

// DType is the element type.
func (t *Tensor) DType() backend.DType { return t.dtype }

// String describes the tensor's dtype and shape, for debugging.
func (t *Tensor) String() string { return fmt.Sprintf("ndarray.Tensor(%v %v)", t.dtype, t.shape) }

// class is the storage a dtype uses.
type class uint8

const (
	floatClass class = iota
	intClass
	uintClass
	boolClass
)

func classOf(dt backend.DType) class {
	switch {
	case dt.IsFloat():
		return floatClass
	case dt == backend.Bool:
		return boolClass
	case dt.IsSigned():
		return intClass
	}
	return uintClass
}

// asView converts a backend.Tensor made by this package; anything else
// is a programming error of the caller.
func asView(x ir.Tensor) *Tensor {
	t, ok := x.(*Tensor)
	if !ok {
		panic(fmt.Errorf("ndarray: tensor of type %T was not made by the ndarray backend: %w", x, backend.ErrInvalidDevice))
	}
	return t
}

// asTensor is asView made contiguous (dense): the form every op that
// computes reads.
func asTensor(x ir.Tensor) *Tensor { return asView(x).dense() }

// dense returns t itself when contiguous, else its elements copied in
// row-major order.
func (t *Tensor) dense() *Tensor {
	if t.st == nil {
		return t
	}
	return t.remap(t.shape, strided(t.shape, t.st, t.off))
}

// layout returns t's strides (a copy) and offset.
func (t *Tensor) layout() ([]int, int) {
	if t.st == nil {
		return rowMajor(t.shape), 0
	}
	return slices.Clone(t.st), t.off
}

// view returns the strided view (shape, st, off) of t's slice.
func (t *Tensor) view(shape, st []int, off int) *Tensor {
	return &Tensor{dtype: t.dtype, shape: shape, st: st, off: off, f: t.f, i: t.i, u: t.u, b: t.b}
}

// normalize rounds t's floats to its dtype and wraps its integers to the
// dtype's width (two's complement), in place, and returns t. Every op that
// computes new values (rather than moving them) ends with it. F16 and BF16
// round through float32, as flex computes them; F32 and Flex32 round once.
func (t *Tensor) normalize() *Tensor {
	bits := uint(8 * t.dtype.Size())
	switch classOf(t.dtype) {
	case floatClass:
		if round := rounders[t.dtype]; round != nil {
			for j, v := range t.f {
				t.f[j] = round(v)
			}
		}
	case intClass:
		s := 64 - bits // sign-extend the low bits
		for j, v := range t.i {
			t.i[j] = v << s >> s
		}
	case uintClass:
		s := 64 - bits
		for j, v := range t.u {
			t.u[j] = v << s >> s
		}
	}
	return t
}

// rounders round a float64 result to the float dtypes narrower than F64.
var rounders = map[backend.DType]func(float64) float64{
	backend.F32:    func(v float64) float64 { return float64(float32(v)) },
	backend.Flex32: func(v float64) float64 { return float64(float32(v)) },
	backend.F16:    func(v float64) float64 { return float64(ir.F16ToFloat32(ir.F16FromFloat32(float32(v)))) },
	backend.BF16:   func(v float64) float64 { return float64(ir.BF16ToFloat32(ir.BF16FromFloat32(float32(v)))) },
}

// remap returns a tensor of dtype t.dtype and shape whose element j is
// t's element idx[j]: every movement and indexing op is one.
func (t *Tensor) remap(shape, idx []int) *Tensor {
	return &Tensor{dtype: t.dtype, shape: shape, f: take(t.f, idx), i: take(t.i, idx), u: take(t.u, idx), b: take(t.b, idx)}
}

// take returns src[idx[j]] for every j (nil for a nil src: the slice of
// another class).
func take[E any](src []E, idx []int) []E {
	if src == nil {
		return nil
	}
	out := make([]E, len(idx))
	for j, p := range idx {
		out[j] = src[p]
	}
	return out
}

// put writes src[j] to dst[pos[j]] for every j (nothing for a nil src:
// the slice of another class).
func put[E any](dst []E, pos []int, src []E) {
	if src == nil {
		return
	}
	for j, p := range pos {
		dst[p] = src[j]
	}
}

// repeat returns n copies of v[0] (nil for a nil v).
func repeat[E any](v []E, n int) []E {
	if v == nil {
		return nil
	}
	out := make([]E, n)
	for j := range out {
		out[j] = v[0]
	}
	return out
}

// rowMajor returns the contiguous row-major strides of shape.
func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = s
		s *= shape[k]
	}
	return st
}

// strided returns, for every element of shape in row-major order, the
// position off + Σ i_k·st[k] of its multi-index (i_0, i_1, ...): the
// index map of a strided view.
func strided(shape, st []int, off int) []int {
	idx := make([]int, ir.NumElements(shape))
	pos := make([]int, len(shape))
	cur := off
	for j := range idx {
		idx[j] = cur
		for k := len(shape) - 1; k >= 0; k-- {
			pos[k]++
			cur += st[k]
			if pos[k] < shape[k] {
				break
			}
			cur -= st[k] * shape[k]
			pos[k] = 0
		}
	}
	return idx
}

// broadcastStrides returns the strides that read a contiguous tensor of
// shape in as the larger shape out (NumPy broadcasting: 0 on new axes and
// on axes of size 1).
func broadcastStrides(in, out []int) []int { return expandStrides(in, rowMajor(in), out) }

// expandStrides returns the strides that read a tensor of shape in and
// strides st as the larger shape out (see broadcastStrides).
func expandStrides(in, st, out []int) []int {
	est := make([]int, len(out))
	lead := len(out) - len(in)
	for k, s := range st {
		if in[k] == out[lead+k] {
			est[lead+k] = s
		}
	}
	return est
}

// broadcastIndex returns the index map that reads a contiguous tensor of
// shape in as shape out: nil (the identity) when the shapes are equal,
// toFirst when in has one element, else the full map.
func broadcastIndex(in, out []int) []int {
	switch {
	case slices.Equal(in, out):
		return nil
	case ir.NumElements(in) == 1:
		return toFirst
	}
	return strided(out, broadcastStrides(in, out), 0)
}

// toFirst is the index map that reads element 0 for every j (an empty,
// non-nil slice; see at).
var toFirst = []int{}

// at returns the position the index map idx gives element j: j itself for
// a nil map, 0 for toFirst.
func at(idx []int, j int) int {
	switch {
	case idx == nil:
		return j
	case len(idx) == 0:
		return 0
	}
	return idx[j]
}
