package flex

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// This file holds the test reference: tensors as float64 values over a
// row-major shape, conversions to and from TensorData written without the
// backend's own code, view builders and tolerance checks.

// ref is a tensor value: a shape and its elements in row-major order.
type ref struct {
	shape []int
	v     []float64
}

var tb = New(backend.DeviceID{Type: "flex"})

// floatDTypes, intDTypes list the dtype families the tests sweep.
var (
	floatDTypes = []backend.DType{backend.F64, backend.F32, backend.Flex32, backend.F16, backend.BF16}
	intDTypes   = []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8, backend.U64, backend.U32, backend.U16, backend.U8}
)

// unflat returns the multi-index of flat position i in shape.
func unflat(shape []int, i int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
	return idx
}

// flat returns the row-major position of idx in shape.
func flat(shape, idx []int) int {
	p := 0
	for d := range shape {
		p = p*shape[d] + idx[d]
	}
	return p
}

func size(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// encodeVals writes float64 values as TensorData bytes of dt (ints must be
// integral and in range).
func encodeVals(vals []float64, dt backend.DType) []byte {
	b := make([]byte, 0, len(vals)*dt.Size())
	le := binary.LittleEndian
	for _, v := range vals {
		switch dt {
		case backend.F64:
			b = le.AppendUint64(b, math.Float64bits(v))
		case backend.F32, backend.Flex32:
			b = le.AppendUint32(b, math.Float32bits(float32(v)))
		case backend.F16:
			b = le.AppendUint16(b, backend.F16FromFloat64(v))
		case backend.BF16:
			b = le.AppendUint16(b, backend.BF16FromFloat64(v))
		case backend.I64, backend.U64:
			b = le.AppendUint64(b, uint64(int64(v)))
		case backend.I32, backend.U32:
			b = le.AppendUint32(b, uint32(int64(v)))
		case backend.I16, backend.U16:
			b = le.AppendUint16(b, uint16(int64(v)))
		case backend.I8, backend.U8:
			b = append(b, uint8(int64(v)))
		case backend.Bool:
			if v != 0 {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

// decodeVals reads TensorData bytes of dt as float64 values.
func decodeVals(b []byte, dt backend.DType) []float64 {
	n := len(b) / dt.Size()
	out := make([]float64, n)
	le := binary.LittleEndian
	for i := range out {
		p := b[i*dt.Size():]
		switch dt {
		case backend.F64:
			out[i] = math.Float64frombits(le.Uint64(p))
		case backend.F32, backend.Flex32:
			out[i] = float64(math.Float32frombits(le.Uint32(p)))
		case backend.F16:
			out[i] = float64(backend.F16ToFloat32(le.Uint16(p)))
		case backend.BF16:
			out[i] = float64(backend.BF16ToFloat32(le.Uint16(p)))
		case backend.I64:
			out[i] = float64(int64(le.Uint64(p)))
		case backend.I32:
			out[i] = float64(int32(le.Uint32(p)))
		case backend.I16:
			out[i] = float64(int16(le.Uint16(p)))
		case backend.I8:
			out[i] = float64(int8(p[0]))
		case backend.U64:
			out[i] = float64(le.Uint64(p))
		case backend.U32:
			out[i] = float64(le.Uint32(p))
		case backend.U16:
			out[i] = float64(le.Uint16(p))
		case backend.U8, backend.Bool:
			out[i] = float64(p[0])
		}
	}
	return out
}

// mk makes a contiguous tensor of dt holding r's values.
func mk(r ref, dt backend.DType) *Tensor {
	return tb.FromData(&backend.TensorData{Shape: r.shape, DType: dt, Bytes: encodeVals(r.v, dt)}).(*Tensor)
}

// read returns a tensor's value.
func read(t *testing.T, x backend.Tensor) ref {
	t.Helper()
	d, err := tb.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Bytes) != size(d.Shape)*d.DType.Size() {
		t.Fatalf("ToData: %d bytes for shape %v of %v", len(d.Bytes), d.Shape, d.DType)
	}
	return ref{shape: d.Shape, v: decodeVals(d.Bytes, d.DType)}
}

// randRef draws non-zero values fitting dt: floats of magnitude in
// [0.1, 2] with a random sign, integers in [-9, 9] \ {0} (unsigned: [1, 18]),
// Bool at random.
func randRef(rng *rand.Rand, shape []int, dt backend.DType) ref {
	v := make([]float64, size(shape))
	for i := range v {
		switch {
		case dt.IsFloat():
			v[i] = 0.1 + 1.9*rng.Float64()
			if rng.IntN(2) == 0 {
				v[i] = -v[i]
			}
		case dt.IsBool():
			v[i] = float64(rng.IntN(2))
		case dt.IsSigned():
			v[i] = float64(rng.IntN(9) + 1)
			if rng.IntN(2) == 0 {
				v[i] = -v[i]
			}
		default:
			v[i] = float64(rng.IntN(18) + 1)
		}
	}
	return ref{shape: append([]int{}, shape...), v: v}
}

// memLayout builds a tensor holding r's values with a particular memory layout.
type memLayout struct {
	name string
	make func(r ref, dt backend.DType) *Tensor
}

// layouts are the ways the tests lay out an operand: contiguous, a
// permutation of a transposed buffer, a step-2 slice of a larger buffer
// filled with junk, and a flip of a reversed buffer.
var layouts = []memLayout{
	{"contiguous", mk},
	{"permuted", func(r ref, dt backend.DType) *Tensor {
		n := len(r.shape)
		rev := make([]int, n)
		axes := make([]int, n)
		for i := range rev {
			rev[i] = r.shape[n-1-i]
			axes[i] = n - 1 - i
		}
		v := make([]float64, len(r.v))
		for i := range r.v {
			idx := unflat(r.shape, i)
			ridx := make([]int, n)
			for d := range idx {
				ridx[d] = idx[n-1-d]
			}
			v[flat(rev, ridx)] = r.v[i]
		}
		return ir.Permute(tb, mk(ref{rev, v}, dt), axes).(*Tensor)
	}},
	{"strided", func(r ref, dt backend.DType) *Tensor {
		big := make([]int, len(r.shape))
		ranges := make([]backend.Range, len(r.shape))
		for d, s := range r.shape {
			big[d] = 2*s + 1
			ranges[d] = backend.Range{Start: 1, End: 2*s + 1, Step: 2}
		}
		v := make([]float64, size(big))
		for i := range v {
			v[i] = 7 // junk that must not show through
		}
		for i := range r.v {
			idx := unflat(r.shape, i)
			for d := range idx {
				idx[d] = 2*idx[d] + 1
			}
			v[flat(big, idx)] = r.v[i]
		}
		return ir.Slice(tb, mk(ref{big, v}, dt), ranges).(*Tensor)
	}},
	{"flipped", func(r ref, dt backend.DType) *Tensor {
		v := make([]float64, len(r.v))
		axes := make([]int, len(r.shape))
		for d := range axes {
			axes[d] = d
		}
		for i := range r.v {
			idx := unflat(r.shape, i)
			for d := range idx {
				idx[d] = r.shape[d] - 1 - idx[d]
			}
			v[flat(r.shape, idx)] = r.v[i]
		}
		return ir.Flip(tb, mk(ref{r.shape, v}, dt), axes).(*Tensor)
	}},
}

// tolerance is the relative tolerance of dt: |got-want| <= tol*max(1, |want|).
func tolerance(dt backend.DType) float64 {
	switch dt {
	case backend.F64:
		return 1e-12
	case backend.F32, backend.Flex32:
		return 1e-5
	case backend.F16, backend.BF16:
		return 1e-2
	}
	return 0
}

// closeEnough reports whether got matches want within tol (NaN matches NaN,
// infinities must be equal).
func closeEnough(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) || tol == 0 {
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// check compares a tensor with the expected value, element by element.
func check(t *testing.T, what string, got backend.Tensor, want ref, dt backend.DType) {
	t.Helper()
	g := read(t, got)
	if got.DType() != dt {
		t.Fatalf("%s: dtype %v, want %v", what, got.DType(), dt)
	}
	if !sameShape(g.shape, want.shape) {
		t.Fatalf("%s: shape %v, want %v", what, g.shape, want.shape)
	}
	tol := tolerance(dt)
	bad := 0
	for i := range want.v {
		if !closeEnough(g.v[i], want.v[i], tol) {
			if bad < 5 {
				t.Errorf("%s: element %v = %v, want %v (tolerance %g)", what, unflat(want.shape, i), g.v[i], want.v[i], tol)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ", what, bad)
	}
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// broadcastRef returns the broadcast shape and, for each output position,
// the positions in a and b.
func broadcastRef(as, bs []int) (out []int, ia, ib []int) {
	n := max(len(as), len(bs))
	out = make([]int, n)
	get := func(s []int, d int) int {
		if j := d - (n - len(s)); j >= 0 {
			return s[j]
		}
		return 1
	}
	for d := range out {
		out[d] = max(get(as, d), get(bs, d))
		if get(as, d) == 0 || get(bs, d) == 0 {
			out[d] = 0
		}
	}
	pos := func(s []int, idx []int) int {
		p := 0
		for j := range s {
			k := idx[j+n-len(s)]
			if s[j] == 1 {
				k = 0
			}
			p = p*s[j] + k
		}
		return p
	}
	for i := 0; i < size(out); i++ {
		idx := unflat(out, i)
		ia = append(ia, pos(as, idx))
		ib = append(ib, pos(bs, idx))
	}
	return out, ia, ib
}

// pad is ir.Pad with one (before, after) pair per axis.
func pad(e ir.Executor, x ir.Tensor, pads [][2]int, v float64) ir.Tensor {
	flat := make([]int, 0, 2*len(pads))
	for _, p := range pads {
		flat = append(flat, p[0], p[1])
	}
	return ir.Pad(e, x, flat, v)
}

// arange builds, infers and runs an Arange op.
func arange(e ir.Executor, start, step float64, n int, dt backend.DType) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: dt, Scalars: [2]float64{start, step}})
}

// random builds, infers and runs a Random op.
func random(e ir.Executor, shape []int, dt backend.DType, d backend.Distribution) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindRandom, Sub: uint8(d.Kind), Shape: shape, DType: dt, Scalars: [2]float64{d.A, d.B}})
}

// execRaw runs op on tb with the given output shape and dtype, without
// inference. The kernels also compute some operands that ir's inference
// rejects (integer convolutions and Atan2, float-only unary ops on
// integers, Bool sums, products and matrix products); the tests reach
// those through Exec directly.
func execRaw(op ir.Op, shape []int, dt backend.DType) ir.Tensor {
	op.Shape, op.DType = shape, dt
	return tb.Exec(op)[0]
}
