package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// TestToDevice moves a Linear layer from flex to cpu with autodiff: the
// parameters keep their values, live on cpu as tracked leaves, and receive
// the gradients of a loss computed there: for y = Σ (x·Wᵀ + b),
// dy/db = batch size and dy/dW[o][i] = Σ_n x[n][i], checked against those
// sums.
func TestToDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	src, dst := ember.Flex().Autodiff(), ember.CPU().Autodiff()
	l := NewLinear(3, 2, src)
	before := [][]float64{l.Weight.Value.Float64s(), l.Bias.Value.Float64s()}
	if err := ToDevice(l, dst); err != nil {
		t.Fatal(err)
	}
	for i, p := range []*Param{l.Weight, l.Bias} {
		v := p.Value
		if !v.Device().Equal(dst) || !v.IsTracked() || !slices.Equal(v.Float64s(), before[i]) {
			t.Fatalf("parameter %d after ToDevice: on %v, tracked %v, values %v (want %v)", i, v.Device(), v.IsTracked(), v.Float64s(), before[i])
		}
	}
	xv := randVals(rng, 4*3)
	x := f64(xv, []int{4, 3}, dst).Cast(l.Weight.Value.DType())
	xv = x.Float64s()
	g := l.Forward(x).Sum().Backward()
	gb, gw := g.Of(l.Bias.Value), g.Of(l.Weight.Value)
	if gb == nil || gw == nil {
		t.Fatal("moved parameters received no gradient")
	}
	for _, v := range gb.Float64s() {
		if math.Abs(v-4) > 1e-6 {
			t.Errorf("dy/db = %v, want 4", v)
		}
	}
	w := gw.Float64s()
	for o := range 2 {
		for i := range 3 {
			want := 0.0
			for n := range 4 {
				want += xv[n*3+i]
			}
			if got := w[o*3+i]; math.Abs(got-want) > 1e-5 {
				t.Errorf("dy/dW[%d][%d] = %v, want %v", o, i, got, want)
			}
		}
	}
	if err := ToDevice(nil, dst); err == nil {
		t.Error("ToDevice(nil) returned no error")
	}
}
