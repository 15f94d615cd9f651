package nn

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// f64Data packs values as F64 TensorData.
func f64Data(vals []float64, shape []int) *ember.TensorData {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return &ember.TensorData{Shape: append([]int{}, shape...), DType: ember.F64, Bytes: b}
}

// f64 makes an F64 tensor on dev (untracked).
func f64(vals []float64, shape []int, dev ember.Device) *ember.Tensor {
	return ember.FromData(f64Data(vals, shape), dev)
}

// randVals returns n values uniform in [-1, 1) avoiding tiny magnitudes.
func randVals(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		x := rng.Float64()*2 - 1
		if math.Abs(x) < 0.05 {
			x += math.Copysign(0.1, x)
		}
		v[i] = x
	}
	return v
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// setRandF64 replaces p's value with random F64 values of the same shape
// (a tracked leaf on an autodiff device) and returns the values.
func setRandF64(rng *rand.Rand, p *Param) []float64 {
	shape := p.Value.Shape()
	vals := randVals(rng, numel(shape))
	p.Value = newParam(f64(vals, shape, p.Value.Device())).Value
	return vals
}

// assertClose fails when got and want differ by more than tol·max(1, |want|) anywhere.
func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s[%d] = %v, want %v (tolerance %g)", what, i, got[i], want[i], tol)
		}
	}
}

// relErr is ‖a − b‖ / max(‖b‖, 1e-12).
func relErr(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num) / math.Max(math.Sqrt(den), 1e-12)
}

// checkGrads compares the gradients Backward gives for the cells with
// central finite differences (h = 1e-6) of the scalar f, in float64. Every
// cell must hold an F64 tensor on an autodiff device; f reads the cells.
func checkGrads(t *testing.T, f func() *ember.Tensor, cells map[string]*Param) {
	t.Helper()
	for _, c := range cells {
		if !c.Value.IsTracked() {
			c.Value = c.Value.RequireGrad()
		}
	}
	grads := f().Backward()
	const h = 1e-6
	for name, c := range cells {
		g := grads.Of(c.Value)
		if g == nil {
			t.Fatalf("%s: no gradient", name)
		}
		analytic := g.Float64s()
		orig := c.Value
		shape := orig.Shape()
		base := orig.Float64s()
		numeric := make([]float64, len(base))
		for i := range base {
			eval := func(v float64) float64 {
				p := append([]float64{}, base...)
				p[i] = v
				c.Value = f64(p, shape, orig.Device())
				return f().Item()
			}
			numeric[i] = (eval(base[i]+h) - eval(base[i]-h)) / (2 * h)
		}
		c.Value = orig
		if e := relErr(analytic, numeric); !(e < 1e-6) {
			t.Errorf("%s: gradient relative error %.3g ≥ 1e-6\nanalytic %v\nnumeric  %v", name, e, analytic, numeric)
		}
	}
}

// weightedSum returns Σ y·r for fixed random weights r, a scalar whose
// gradient exercises every output element differently.
func weightedSum(y *ember.Tensor, r []float64) *ember.Tensor {
	return y.Mul(f64(r, y.Shape(), y.Device().Inner())).Sum()
}
