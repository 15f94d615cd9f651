package ember

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/emberml/ember/backend"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// This file holds the host-side machinery of the cross-backend table:
// reference arrays computed with plain float64 loops, encoders that build
// TensorData without Ember ops, layouts that present the same logical values
// through non-contiguous views, and the tolerance check.

// tolerances is the relative tolerance per dtype (|got - want| <= tol ·
// max(|want|, scale, 1)); ints and Bool compare exactly.
var tolerances = map[DType]float64{
	F64:  1e-12,
	F32:  1e-5,
	F16:  1e-2,
	BF16: 1e-2,
}

// floatDTypes and intDTypes are the dtypes the table runs ops in.
var (
	floatDTypes = []DType{F32, F64, F16, BF16}
	intDTypes   = []DType{I64, I32}
)

// testDevices returns every local device that initializes: Enumerate's plus
// Flex and CPU, then the remote devices (remoteTestDevices: a cpu server on
// loopback and those of EMBER_TEST_REMOTE), de-duplicated by name. Devices
// that fail Init are logged.
func testDevices(t *testing.T) []Device {
	t.Helper()
	var out []Device
	seen := map[string]bool{}
	for _, d := range append(append(Enumerate(), Flex(), CPU()), remoteTestDevices(t)...) {
		if seen[d.String()] {
			continue
		}
		seen[d.String()] = true
		if id := d.ID(); id.Type == "wgpu" && seen["vulkan:"+id.Kind+":"+fmt.Sprint(id.Index)] {
			// On Linux a wgpu device is the vulkan backend on the same
			// adapter: it runs the tables once, as the vulkan device.
			continue
		}
		if err := d.Init(); err != nil {
			t.Logf("skipping device %v: %v", d, err)
			continue
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		t.Skip("no device initializes")
	}
	if CPU().Fusion() {
		// The cpu device again with fusion off (subtests "cpu#01"): every
		// case runs fused and unfused.
		out = append(out, unfusedCPU())
	}
	return out
}

// forDevices runs f as one subtest per test device.
func forDevices(t *testing.T, f func(t *testing.T, dev Device)) {
	t.Helper()
	for _, dev := range testDevices(t) {
		t.Run(dev.String(), func(t *testing.T) { f(t, dev) })
	}
}

// ref is a host reference array: a row-major shape and float64 values.
type ref struct {
	shape []int
	v     []float64
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func stridesOf(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// unravelInto writes the multi-index of flat position i into idx.
func unravelInto(i int, shape, idx []int) {
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = i % shape[a]
			i /= shape[a]
		}
	}
}

func ravel(idx, shape []int) int {
	f := 0
	for a, s := range shape {
		f = f*s + idx[a]
	}
	return f
}

// at returns the element at a multi-index.
func (r ref) at(idx ...int) float64 { return r.v[ravel(idx, r.shape)] }

// bcastAt returns the element of r that broadcasting maps output index idx
// (of a shape of rank >= r's) to.
func (r ref) bcastAt(idx []int) float64 {
	off := len(idx) - len(r.shape)
	f := 0
	for a, s := range r.shape {
		i := idx[off+a]
		if s == 1 {
			i = 0
		}
		f = f*s + i
	}
	return r.v[f]
}

// build makes the ref of a shape whose element at idx is f(idx).
func build(shape []int, f func(idx []int) float64) ref {
	n := numel(shape)
	r := ref{shape: slices.Clone(shape), v: make([]float64, n)}
	idx := make([]int, len(shape))
	for i := range n {
		unravelInto(i, shape, idx)
		r.v[i] = f(idx)
	}
	return r
}

// mapRef applies f elementwise.
func mapRef(r ref, f func(float64) float64) ref {
	out := ref{shape: r.shape, v: make([]float64, len(r.v))}
	for i, x := range r.v {
		out.v[i] = f(x)
	}
	return out
}

// bcast2 computes f(a, b) elementwise with NumPy broadcasting.
func bcast2(a, b ref, f func(x, y float64) float64) ref {
	shape, ok := BroadcastShapes(a.shape, b.shape)
	if !ok {
		panic("test: shapes do not broadcast")
	}
	return build(shape, func(idx []int) float64 { return f(a.bcastAt(idx), b.bcastAt(idx)) })
}

// newRNG returns a deterministic generator for one test.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randRef fills shape with gen's values quantized to dt.
func randRef(shape []int, dt DType, gen func() float64) ref {
	return build(shape, func([]int) float64 { return quantize(gen(), dt) })
}

// nonZero draws uniformly from ±[lo, hi].
func nonZero(rng *rand.Rand, lo, hi float64) func() float64 {
	return func() float64 {
		v := lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		return v
	}
}

// uniform draws uniformly from [lo, hi).
func uniform(rng *rand.Rand, lo, hi float64) func() float64 {
	return func() float64 { return lo + (hi-lo)*rng.Float64() }
}

// ints draws integers uniformly from [lo, hi].
func ints(rng *rand.Rand, lo, hi int) func() float64 {
	return func() float64 { return float64(lo + rng.IntN(hi-lo+1)) }
}

// bf16Bits rounds a float32 to bfloat16 bits, nearest even.
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func bf16Value(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// quantize returns v rounded to a value dt can hold (floats: nearest even
// through float32; ints: truncated; Bool: v != 0).
func quantize(v float64, dt DType) float64 {
	switch dt {
	case F64:
		return v
	case F32, Flex32:
		return float64(float32(v))
	case F16:
		return float64(float16.Fromfloat32(float32(v)).Float32())
	case BF16:
		return bf16Value(bf16Bits(float32(v)))
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	return math.Trunc(v)
}

// encode builds TensorData of dt holding r's values (already representable).
func encode(r ref, dt DType) *TensorData {
	sz := dt.Size()
	b := make([]byte, len(r.v)*sz)
	le := binary.LittleEndian
	for i, v := range r.v {
		switch dt {
		case F64:
			le.PutUint64(b[8*i:], math.Float64bits(v))
		case F32, Flex32:
			le.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case F16:
			le.PutUint16(b[2*i:], float16.Fromfloat32(float32(v)).Bits())
		case BF16:
			le.PutUint16(b[2*i:], bf16Bits(float32(v)))
		case I64, U64:
			le.PutUint64(b[8*i:], uint64(int64(v)))
		case I32, U32:
			le.PutUint32(b[4*i:], uint32(int32(v)))
		case I16, U16:
			le.PutUint16(b[2*i:], uint16(int16(v)))
		case I8, U8:
			b[i] = byte(int8(v))
		case Bool:
			if v != 0 {
				b[i] = 1
			}
		}
	}
	return &TensorData{Shape: slices.Clone(r.shape), DType: dt, Bytes: b}
}

// mk puts r on dev as a contiguous tensor of dt.
func mk(dev Device, r ref, dt DType) *Tensor { return FromData(encode(r, dt), dev) }

// layoutStep is one view op of a layout: fwd applies it to a stored tensor;
// inv maps the wanted logical ref to the ref that must be stored.
type layoutStep struct {
	fwd func(*Tensor) *Tensor
	inv func(ref) ref
}

// permStep stores the axes reversed and permutes them back.
func permStep(rank int) layoutStep {
	rev := make([]int, rank)
	for i := range rev {
		rev[i] = rank - 1 - i
	}
	return layoutStep{
		fwd: func(x *Tensor) *Tensor { return x.Permute(rev...) },
		inv: func(r ref) ref {
			s := make([]int, rank)
			for i := range s {
				s[i] = r.shape[rev[i]]
			}
			src := make([]int, rank)
			return build(s, func(idx []int) float64 {
				for i := range idx {
					src[rev[i]] = idx[i]
				}
				return r.at(src...)
			})
		},
	}
}

// stepStep stores axis a with 2n+1 entries (the values at odd positions,
// a filler elsewhere) and slices them out with step 2.
func stepStep(a int) layoutStep {
	return layoutStep{
		fwd: func(x *Tensor) *Tensor {
			rs := make([]Range, a+1)
			for i := range a {
				rs[i] = All()
			}
			rs[a] = Range{Start: 1, End: x.Dim(a), Step: 2}
			return x.Slice(rs...)
		},
		inv: func(r ref) ref {
			s := slices.Clone(r.shape)
			s[a] = 2*s[a] + 1
			src := make([]int, len(s))
			return build(s, func(idx []int) float64 {
				if idx[a]%2 == 0 {
					return 7 // filler that must not show through
				}
				copy(src, idx)
				src[a] = idx[a] / 2
				return r.at(src...)
			})
		},
	}
}

// flipStep stores axis a reversed and flips it back.
func flipStep(a int) layoutStep {
	return layoutStep{
		fwd: func(x *Tensor) *Tensor { return x.Flip(a) },
		inv: func(r ref) ref {
			src := make([]int, len(r.shape))
			return build(r.shape, func(idx []int) float64 {
				copy(src, idx)
				src[a] = r.shape[a] - 1 - idx[a]
				return r.at(src...)
			})
		},
	}
}

// layout is a named sequence of view ops.
type layout struct {
	name  string
	steps []layoutStep
}

// layoutsFor lists the layouts that apply to a rank: contiguous, permuted
// (rank >= 2), strided slice, flipped, and all three combined.
func layoutsFor(rank int) []layout {
	ls := []layout{{name: "contiguous"}}
	if rank >= 2 {
		ls = append(ls, layout{"permuted", []layoutStep{permStep(rank)}})
	}
	if rank >= 1 {
		ls = append(ls, layout{"stepped", []layoutStep{stepStep(0)}},
			layout{"flipped", []layoutStep{flipStep(rank - 1)}})
	}
	if rank >= 2 {
		ls = append(ls, layout{"permuted+stepped+flipped", []layoutStep{permStep(rank), stepStep(rank - 1), flipStep(0)}})
	}
	return ls
}

// view builds a tensor holding r's values through layout l.
func (l layout) view(dev Device, r ref, dt DType) *Tensor {
	stored := r
	for i := len(l.steps) - 1; i >= 0; i-- {
		stored = l.steps[i].inv(stored)
	}
	x := mk(dev, stored, dt)
	for _, s := range l.steps {
		x = s.fwd(x)
	}
	return x
}

// close reports whether got matches want within tol relative to
// max(|want|, scale, 1); NaNs match NaNs and infinities must be equal.
func closeTo(got, want, tol, scale float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol*max(math.Abs(want), scale, 1)
}

// check compares got with want: dtype dt, want's shape, and values within
// the dtype's tolerance times loosen (exact for ints and Bool). scale, when
// non-nil, gives per element the magnitude errors are relative to (for
// sums: the sum of |terms|).
func check(t *testing.T, what string, got *Tensor, want ref, dt DType, loosen float64, scale []float64) {
	t.Helper()
	if got.DType() != dt {
		t.Errorf("%s: dtype %v, want %v", what, got.DType(), dt)
		return
	}
	if !slices.Equal(got.Shape(), want.shape) && !(len(got.Shape()) == 0 && len(want.shape) == 0) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), want.shape)
		return
	}
	vals := got.Float64s()
	tol := tolerances[dt] * loosen
	bad := 0
	for i, w := range want.v {
		s := 0.0
		if scale != nil {
			s = scale[i]
		}
		ok := false
		if dt.IsFloat() {
			ok = closeTo(vals[i], w, tol, s)
		} else {
			ok = vals[i] == w
		}
		if !ok {
			if bad < 4 {
				idx := make([]int, len(want.shape))
				unravelInto(i, want.shape, idx)
				t.Errorf("%s: at %v got %v, want %v (tol %g)", what, idx, vals[i], w, tol)
			}
			bad++
		}
	}
	if bad > 4 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want.v))
	}
}

// checkEq is check with the dtype's plain tolerance.
func checkEq(t *testing.T, what string, got *Tensor, want ref, dt DType) {
	t.Helper()
	check(t, what, got, want, dt, 1, nil)
}

// shapeName formats a shape for subtest names.
func shapeName(s []int) string { return fmt.Sprint(s) }

// expectIndexError checks that a bad index is reported: as a panic from the
// op on devices that check indices on the host, or as an error wrapping
// ErrExecution from the next Sync on devices that check them on the device
// (backend.IndexChecker).
func expectIndexError(t *testing.T, what string, dev Device, f func() *Tensor, fragments ...string) {
	t.Helper()
	dc, ok := backend.As[backend.IndexChecker](dev.Backend())
	expectDataError(t, what, dev, ok && dc.ChecksIndicesOnDevice(), f, fragments...)
}

// expectDivisorError checks that a zero integer divisor is reported: as a
// panic from the op on devices that check divisors on the host, or as an
// error wrapping ErrExecution from the next Sync on devices that check
// them on the device (backend.DivisorChecker).
func expectDivisorError(t *testing.T, what string, dev Device, f func() *Tensor, fragments ...string) {
	t.Helper()
	dc, ok := backend.As[backend.DivisorChecker](dev.Backend())
	expectDataError(t, what, dev, ok && dc.ChecksDivisorsOnDevice(), f, fragments...)
}

// expectDataError checks that f's bad data is reported: as a panic with an
// *Error from f when onDevice is false, else as an error wrapping
// ErrExecution from the next Sync and from that one alone, f itself
// returning without a panic; every message contains every fragment.
func expectDataError(t *testing.T, what string, dev Device, onDevice bool, f func() *Tensor, fragments ...string) {
	t.Helper()
	if !onDevice {
		expectPanic(t, what, func() { f() }, fragments...)
		return
	}
	if err := Try(func() { f() }); err != nil {
		t.Errorf("%s: op panicked on a device that checks its data itself: %v", what, err)
		return
	}
	err := dev.Sync()
	if err == nil || !errors.Is(err, ErrExecution) {
		t.Errorf("%s: Sync returned %v, want an error wrapping ErrExecution", what, err)
		return
	}
	for _, fr := range fragments {
		if !strings.Contains(err.Error(), fr) {
			t.Errorf("%s: message %q lacks %q", what, err.Error(), fr)
		}
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("%s: the device stays failed after the index error was reported: %v", what, err)
	}
}

// expectPanic runs f and fails unless it panics with an *Error whose
// message contains every fragment.
func expectPanic(t *testing.T, what string, f func(), fragments ...string) {
	t.Helper()
	err := Try(f)
	if err == nil {
		t.Errorf("%s: no panic", what)
		return
	}
	msg := err.Error()
	for _, fr := range fragments {
		if !strings.Contains(msg, fr) {
			t.Errorf("%s: message %q lacks %q", what, msg, fr)
		}
	}
}
