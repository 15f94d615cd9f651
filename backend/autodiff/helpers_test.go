package autodiff

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Gradient-check tolerances (float64): central differences with step
// fdEps, compared with |analytic - numeric| <= fdTol·max(1, |numeric|).
const (
	fdEps = 1e-6
	fdTol = 1e-6
)

func f64Data(shape []int, v []float64) *backend.TensorData {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	d, err := backend.NewTensorData(shape, backend.F64, b)
	if err != nil {
		panic(err)
	}
	return d
}

func i64Data(shape []int, v []int64) *backend.TensorData {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	d, err := backend.NewTensorData(shape, backend.I64, b)
	if err != nil {
		panic(err)
	}
	return d
}

// values reads a float tensor (F64 or F32) of either backend as float64s.
func values(t *testing.T, be backend.Backend, x backend.Tensor) []float64 {
	t.Helper()
	d, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	switch d.DType {
	case backend.F64:
		v := make([]float64, d.NumElements())
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.Bytes[8*i:]))
		}
		return v
	case backend.F32:
		v := make([]float64, d.NumElements())
		for i := range v {
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(d.Bytes[4*i:])))
		}
		return v
	}
	t.Fatalf("values: unexpected dtype %v", d.DType)
	return nil
}

func rawBytes(t *testing.T, be backend.Backend, x backend.Tensor) []byte {
	t.Helper()
	d, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d.Bytes
}

// input describes one float64 operand of a gradient check.
type input struct {
	shape []int
	vals  []float64
	track bool // false: an untracked constant
}

// randIn returns a tracked input with values of magnitude in [lo, hi) and
// random sign when signed.
func randIn(r *rand.Rand, shape []int, lo, hi float64, signed bool) input {
	v := make([]float64, backend.NumElements(shape))
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if signed && r.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return input{shape: shape, vals: v, track: true}
}

func constIn(in input) input { in.track = false; return in }

// graphFn builds the function under test on the autodiff backend b.
type graphFn func(b *Backend, xs []backend.Tensor) backend.Tensor

// scalarLoss returns Σ y·w for a fixed pseudo-random weight tensor w (so
// that the upstream gradient is not all ones), built from autodiff ops.
func scalarLoss(b *Backend, y backend.Tensor, seed uint64) backend.Tensor {
	n := backend.NumElements(y.Shape())
	r := rand.New(rand.NewPCG(seed, 7))
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 + r.Float64()
	}
	wt := b.FromData(f64Data(y.Shape(), w))
	p := ir.Mul(b, y, wt)
	flat := ir.Reshape(b, p, []int{n})
	return ir.Reduce(b, ir.ReduceSum, flat, 0, false)
}

// analytic runs f and Backward and returns the gradients of the tracked
// inputs (raw bytes and float64 values) and the loss.
func analytic(t *testing.T, ckpt bool, ins []input, f graphFn) (raw [][]byte, grads [][]float64) {
	t.Helper()
	b := New(newInner(), ckpt)
	xs := make([]backend.Tensor, len(ins))
	for i, in := range ins {
		xs[i] = b.FromData(f64Data(in.shape, in.vals))
		if in.track {
			xs[i] = b.RequireGrad(xs[i])
		}
	}
	y := f(b, xs)
	if !b.IsTracked(y) {
		t.Fatalf("output of a graph with tracked inputs is not tracked")
	}
	if ckpt {
		b.stats = &cacheStats{}
	}
	gs := b.Backward(scalarLoss(b, y, 1))
	if st := b.stats; st != nil && (st.live != 0 || st.repeats != 0) {
		t.Errorf("checkpointed Backward: %d recomputed values still cached at the end, %d nodes recomputed twice; want 0 and 0", st.live, st.repeats)
	}
	raw = make([][]byte, len(ins))
	grads = make([][]float64, len(ins))
	for i, in := range ins {
		if !in.track {
			if _, ok := gs.Get(xs[i]); ok {
				t.Fatalf("untracked input %d has a gradient", i)
			}
			continue
		}
		g, ok := gs.Get(xs[i])
		if !ok {
			t.Fatalf("no gradient for input %d", i)
		}
		if !slices.Equal(g.Shape(), in.shape) || g.DType() != backend.F64 {
			t.Fatalf("gradient %d: shape %v dtype %v, want %v f64", i, g.Shape(), g.DType(), in.shape)
		}
		raw[i] = rawBytes(t, b.Unwrap(), g)
		grads[i] = values(t, b.Unwrap(), g)
	}
	return raw, grads
}

// lossAt evaluates the loss without tracking.
func lossAt(t *testing.T, b *Backend, ins []input, f graphFn) float64 {
	xs := make([]backend.Tensor, len(ins))
	for i, in := range ins {
		xs[i] = b.FromData(f64Data(in.shape, in.vals))
	}
	var l float64
	NoGrad(func() { l = values(t, b, scalarLoss(b, f(b, xs), 1))[0] })
	return l
}

// gradCheck compares the analytic gradients of f with central finite
// differences, and the checkpointed gradients with the plain ones bit for
// bit.
func gradCheck(t *testing.T, name string, ins []input, f graphFn) {
	t.Helper()
	raw, grads := analytic(t, false, ins, f)
	rawC, _ := analytic(t, true, ins, f)
	for i := range raw {
		if !bytes.Equal(raw[i], rawC[i]) {
			t.Errorf("%s: gradient %d differs with checkpointing", name, i)
		}
	}
	b := New(newInner(), false)
	for i, in := range ins {
		if !in.track {
			continue
		}
		for j := range in.vals {
			orig := in.vals[j]
			in.vals[j] = orig + fdEps
			lp := lossAt(t, b, ins, f)
			in.vals[j] = orig - fdEps
			lm := lossAt(t, b, ins, f)
			in.vals[j] = orig
			num := (lp - lm) / (2 * fdEps)
			got := grads[i][j]
			if math.Abs(got-num) > fdTol*math.Max(1, math.Abs(num)) || math.IsNaN(got) {
				t.Errorf("%s: d/dx%d[%d] = %.12g, finite difference %.12g", name, i, j, got, num)
			}
		}
	}
}

// checkVals compares got with want elementwise within tol (absolute).
func checkVals(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol || math.IsNaN(got[i]) {
			t.Errorf("%s[%d] = %.12g, want %.12g", name, i, got[i], want[i])
		}
	}
}

// exec infers op and runs it with b.Exec, so that its kind is recorded as
// one op even where the inner backend lowers it.
func exec(b *Backend, op ir.Op) ir.Outputs {
	if err := op.Infer(); err != nil {
		panic(err)
	}
	return b.Exec(op)
}
