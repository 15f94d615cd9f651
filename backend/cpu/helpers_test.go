package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

func newTestBackend() *Backend { return New(backend.DeviceID{Type: "cpu"}) }

// randVals returns n normal values (non-zero with probability 1).
func randVals(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// tensorOf makes a tensor of dt holding vals (converted) on be.
func tensorOf(be backend.Backend, vals []float64, shape []int, dt backend.DType) backend.Tensor {
	return be.FromData(backend.FromSlice(vals, shape).Convert(dt))
}

// values reads a tensor back as float64.
func values(t *testing.T, be backend.Backend, x backend.Tensor) []float64 {
	t.Helper()
	d, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d.Convert(backend.F64).Float64s()
}

// closeTo checks |got-want| <= tol·max(1, |want|) elementwise.
func closeTo(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*max(1, math.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v (tol %g)", name, i, got[i], want[i], tol)
		}
	}
}

// sameAsFlex checks that the cpu result equals flex's bit for bit.
func sameAsFlex(t *testing.T, name string, be *Backend, fl *flex.Backend, got, want backend.Tensor) {
	t.Helper()
	g, _ := be.ToData(got)
	w, _ := fl.ToData(want)
	if g.DType != w.DType || len(g.Shape) != len(w.Shape) || string(g.Bytes) != string(w.Bytes) {
		t.Fatalf("%s: cpu %v %v differs from flex %v %v\ncpu  %v\nflex %v", name, g.DType, g.Shape, w.DType, w.Shape, g, w)
	}
	for i := range g.Shape {
		if g.Shape[i] != w.Shape[i] {
			t.Fatalf("%s: shape %v, flex %v", name, g.Shape, w.Shape)
		}
	}
}
