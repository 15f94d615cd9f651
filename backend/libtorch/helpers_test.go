//go:build libtorch && cgo

package libtorch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// This file holds the tests' references and helpers: values as float64
// over a row-major shape, TensorData encoders written with encoding/binary
// (not the backend's code), and the flex backend as a second reference.

var (
	tb = mustNew(backend.DeviceID{Type: "libtorch"})
	fb = flex.New(backend.DeviceID{Type: "flex"})
)

func mustNew(id backend.DeviceID) *Backend {
	b, err := New(id)
	if err != nil {
		panic(err)
	}
	return b
}

// The dtypes ATen stores, by family.
var (
	floatDTypes = []backend.DType{backend.F64, backend.F32, backend.Flex32, backend.F16, backend.BF16}
	intDTypes   = []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8, backend.U8}
)

// quantize rounds v to a value of dt (integers: truncated and wrapped as
// the tests draw them in range).
func quantize(v float64, dt backend.DType) float64 {
	switch dt {
	case backend.F32, backend.Flex32:
		return float64(float32(v))
	case backend.F16:
		return float64(ir.F16ToFloat32(ir.F16FromFloat64(v)))
	case backend.BF16:
		return float64(ir.BF16ToFloat32(ir.BF16FromFloat64(v)))
	case backend.Bool:
		if v != 0 {
			return 1
		}
		return 0
	case backend.F64:
		return v
	}
	return math.Trunc(v)
}

// encode writes values as TensorData of dt (integers must fit).
func encode(vals []float64, shape []int, dt backend.DType) *backend.TensorData {
	b := make([]byte, len(vals)*dt.Size())
	for i, v := range vals {
		p := b[i*dt.Size():]
		switch dt {
		case backend.F64:
			binary.LittleEndian.PutUint64(p, math.Float64bits(v))
		case backend.F32, backend.Flex32:
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
		case backend.F16:
			binary.LittleEndian.PutUint16(p, ir.F16FromFloat64(v))
		case backend.BF16:
			binary.LittleEndian.PutUint16(p, ir.BF16FromFloat64(v))
		case backend.I64:
			binary.LittleEndian.PutUint64(p, uint64(int64(v)))
		case backend.I32:
			binary.LittleEndian.PutUint32(p, uint32(int32(v)))
		case backend.I16:
			binary.LittleEndian.PutUint16(p, uint16(int16(v)))
		case backend.I8:
			p[0] = byte(int8(v))
		case backend.U8:
			p[0] = byte(uint8(v))
		case backend.Bool:
			if v != 0 {
				p[0] = 1
			}
		default:
			panic("encode: dtype " + dt.String())
		}
	}
	return &backend.TensorData{Shape: slices.Clone(shape), DType: dt, Bytes: b}
}

// decode reads TensorData as float64 values (I64 above 2^53 rounds: use
// decodeInts for exact integers).
func decode(d *backend.TensorData) []float64 {
	n := ir.NumElements(d.Shape)
	out := make([]float64, n)
	for i := range out {
		p := d.Bytes[i*d.DType.Size():]
		switch d.DType {
		case backend.F64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		case backend.F32, backend.Flex32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		case backend.F16:
			out[i] = float64(ir.F16ToFloat32(binary.LittleEndian.Uint16(p)))
		case backend.BF16:
			out[i] = float64(ir.BF16ToFloat32(binary.LittleEndian.Uint16(p)))
		case backend.I64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(p)))
		case backend.I32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(p)))
		case backend.I16:
			out[i] = float64(int16(binary.LittleEndian.Uint16(p)))
		case backend.I8:
			out[i] = float64(int8(p[0]))
		case backend.U8, backend.Bool:
			out[i] = float64(p[0])
		default:
			panic("decode: dtype " + d.DType.String())
		}
	}
	return out
}

// decodeInts reads integer TensorData exactly, as int64.
func decodeInts(d *backend.TensorData) []int64 {
	out := make([]int64, ir.NumElements(d.Shape))
	for i := range out {
		p := d.Bytes[i*d.DType.Size():]
		switch d.DType {
		case backend.I64:
			out[i] = int64(binary.LittleEndian.Uint64(p))
		case backend.I32:
			out[i] = int64(int32(binary.LittleEndian.Uint32(p)))
		case backend.I16:
			out[i] = int64(int16(binary.LittleEndian.Uint16(p)))
		case backend.I8:
			out[i] = int64(int8(p[0]))
		case backend.U8, backend.Bool:
			out[i] = int64(p[0])
		default:
			panic("decodeInts: dtype " + d.DType.String())
		}
	}
	return out
}

// lt makes a libtorch tensor of values.
func lt(vals []float64, shape []int, dt backend.DType) ir.Tensor {
	return tb.FromData(encode(vals, shape, dt))
}

// values reads a tensor of either backend as float64 values.
func values(t *testing.T, b backend.Backend, x ir.Tensor) []float64 {
	t.Helper()
	d, err := b.ToData(x)
	if err != nil {
		t.Fatalf("ToData: %v", err)
	}
	return decode(d)
}

// exec infers op and runs it on the libtorch backend, checking that the
// handles' ATen shapes and dtypes agree with the op's outputs.
func exec(t *testing.T, op ir.Op) ir.Outputs {
	t.Helper()
	if err := op.Infer(); err != nil {
		t.Fatalf("%s: infer: %v", op.Name(), err)
	}
	outs := tb.Exec(op)
	for i, o := range outs {
		if o == nil {
			continue
		}
		x := o.(*Tensor)
		dt, shape, err := describe(x)
		if err != nil {
			t.Fatalf("%s: output %d: %v", op.Name(), i, err)
		}
		want := x.dtype
		if want == backend.Flex32 {
			want = backend.F32
		}
		if dt != want || !slices.Equal(shape, x.shape) {
			t.Fatalf("%s: output %d is ATen %v %v, the Tensor says %v %v", op.Name(), i, dt, shape, x.dtype, x.shape)
		}
	}
	return outs
}

// run1 is exec's first output's values.
func run1(t *testing.T, op ir.Op) []float64 {
	t.Helper()
	return values(t, tb, exec(t, op)[0])
}

// tol is the relative tolerance of float dtypes (|got - want| <= tol ·
// max(|want|, 1)); integers and Bool compare exactly.
func tol(dt backend.DType) float64 {
	switch dt {
	case backend.F64:
		return 1e-12
	case backend.F32, backend.Flex32:
		return 2e-6
	case backend.F16, backend.BF16:
		return 1e-2
	}
	return 0
}

// same reports whether got matches want within dt's tolerance (NaN
// matches NaN; infinities match exactly).
func same(got, want float64, dt backend.DType) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || tol(dt) == 0:
		return got == want
	}
	return math.Abs(got-want) <= tol(dt)*max(math.Abs(want), 1)
}

// expect compares values with a reference.
func expect(t *testing.T, name string, got, want []float64, dt backend.DType) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if !same(got[i], want[i], dt) {
			t.Fatalf("%s: [%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

// randVals draws n values of dt from ±[lo, hi] (non-zero).
func randVals(rng *rand.Rand, n int, lo, hi float64, dt backend.DType) []float64 {
	out := make([]float64, n)
	for i := range out {
		v := lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 && dt.IsSigned() {
			v = -v
		}
		if dt.IsInt() {
			v = math.Round(v)
			if v == 0 {
				v = 1
			}
		}
		out[i] = quantize(v, dt)
	}
	return out
}

// wantPanic runs f and returns the error it panics with, failing when it
// does not panic with an error.
func wantPanic(t *testing.T, name string, f func()) (err error) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("%s: did not panic", name)
		}
		e, ok := r.(error)
		if !ok {
			t.Fatalf("%s: panicked with %T %v, want an error", name, r, r)
		}
		err = e
	}()
	f()
	return nil
}

// wantLibtorchError checks that err is an *Error wrapping sentinel whose
// message contains each of msgs.
func wantLibtorchError(t *testing.T, name string, err error, sentinel error) *Error {
	t.Helper()
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("%s: error %v (%T) is not a *libtorch.Error", name, err, err)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: error %v does not wrap %v", name, err, sentinel)
	}
	return le
}

func shapeName(s []int) string { return fmt.Sprint(s) }

// newRNG returns a deterministic generator for one test.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }
