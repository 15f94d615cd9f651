package ndarray

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The test reference: values as float64 over row-major shapes, built and
// read through ir.TensorData (not through the backend's own conversions
// beyond FromData and ToData, which data_test.go checks bit by bit).

var tb = New(backend.DeviceID{Type: "ndarray"})

var floatDTypes = []backend.DType{backend.F64, backend.F32, backend.Flex32, backend.F16, backend.BF16}

// mk makes a tensor of dt and shape from float64 values, converted to dt
// as ir.TensorData.Convert converts them.
func mk(dt backend.DType, shape []int, v []float64) backend.Tensor {
	return tb.FromData(ir.FromSlice(v, shape).Convert(dt))
}

// mkI makes an integer (or Bool) tensor from exact int64 values.
func mkI(dt backend.DType, shape []int, v []int64) backend.Tensor {
	return tb.FromData(ir.FromSlice(v, shape).Convert(dt))
}

// run infers op and executes it.
func run(t *testing.T, op ir.Op) backend.Tensor {
	t.Helper()
	if err := op.Infer(); err != nil {
		t.Fatalf("%s: infer: %v", op.Name(), err)
	}
	return tb.Exec(op)[0]
}

func data(t *testing.T, x backend.Tensor) *backend.TensorData {
	t.Helper()
	d, err := tb.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// vals reads a tensor as float64 values (exact for every float dtype).
func vals(t *testing.T, x backend.Tensor) []float64 { t.Helper(); return ir.As[float64](data(t, x)) }

// ints reads a tensor as int64 values (U64 above MaxInt64 wraps).
func ints(t *testing.T, x backend.Tensor) []int64 { t.Helper(); return ir.As[int64](data(t, x)) }

// quant is v rounded to dt once (Convert).
func quant(v float64, dt backend.DType) float64 {
	return ir.As[float64](ir.FromSlice([]float64{v}, nil).Convert(dt))[0]
}

// randVals draws n values uniformly from ±[lo, hi], quantized to dt.
func randVals(rng *rand.Rand, n int, lo, hi float64, dt backend.DType) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
		v[i] = quant(v[i], dt)
	}
	return v
}

// randInts draws n integers uniformly from [lo, hi], none zero when
// nonzero is set.
func randInts(rng *rand.Rand, n int, lo, hi int64, nonzero bool) []int64 {
	v := make([]int64, n)
	for i := range v {
		for v[i] == 0 {
			if span := uint64(hi) - uint64(lo); span == math.MaxUint64 {
				v[i] = int64(rng.Uint64())
			} else {
				v[i] = lo + int64(rng.Uint64N(span+1))
			}
			if !nonzero {
				break
			}
		}
	}
	return v
}

func numel(shape []int) int { return ir.NumElements(shape) }

// unflat is the multi-index of flat position i in shape.
func unflat(shape []int, i int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
	return idx
}

// flat is the row-major position of idx in shape.
func flat(shape, idx []int) int {
	p := 0
	for d := range shape {
		p = p*shape[d] + idx[d]
	}
	return p
}

// bcastPos is the position in shape in (broadcast to out) of the output
// multi-index idx.
func bcastPos(in []int, idx []int) int {
	off := len(idx) - len(in)
	p := 0
	for d, s := range in {
		i := idx[off+d]
		if s == 1 {
			i = 0
		}
		p = p*s + i
	}
	return p
}

// tol is the relative tolerance of results computed in float64 and
// rounded to dt (one rounding to dt, plus float64 error).
func tol(dt backend.DType) float64 {
	switch dt {
	case backend.F64:
		return 1e-13
	case backend.F32, backend.Flex32:
		return 1e-6
	case backend.F16:
		return 1e-3
	}
	return 8e-3
}

// near reports |got - want| <= tol(dt)·max(|want|, 1), NaN matching NaN
// and infinities matching exactly.
func near(got, want float64, dt backend.DType) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(got) == math.IsNaN(want) && (math.IsNaN(got) || got == want)
	}
	return math.Abs(got-want) <= tol(dt)*max(math.Abs(want), 1)
}

// sameBits reports whether a and b are the same float64 (NaN matching NaN).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// catch runs f and returns the error it panics with (nil if none); a
// panic with a non-error value, a Go runtime error included, fails.
func catch(t *testing.T, f func()) (err error) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(error)
		var re interface{ RuntimeError() }
		if !ok || errors.As(e, &re) {
			t.Errorf("panic %v (%T) is not an error of the backend", r, r)
			err = fmt.Errorf("%v", r)
			return
		}
		err = e
	}()
	f()
	return nil
}
