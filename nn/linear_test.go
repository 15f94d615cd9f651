package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

func TestLinearForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dev := ember.Flex()
	l := NewLinear(4, 3, dev)
	if got := l.Weight.Value.Shape(); got[0] != 3 || got[1] != 4 {
		t.Fatalf("weight shape %v, want [3 4]", got)
	}
	w := setRandF64(rng, l.Weight)
	b := setRandF64(rng, l.Bias)
	x := randVals(rng, 2*5*4)
	y := l.Forward(f64(x, []int{2, 5, 4}, dev))
	if s := y.Shape(); len(s) != 3 || s[0] != 2 || s[1] != 5 || s[2] != 3 {
		t.Fatalf("output shape %v, want [2 5 3]", s)
	}
	want := make([]float64, 2*5*3)
	for n := range 10 {
		for o := range 3 {
			s := b[o]
			for i := range 4 {
				s += x[n*4+i] * w[o*4+i]
			}
			want[n*3+o] = s
		}
	}
	assertClose(t, "linear", y.Float64s(), want, 1e-12)
}

func TestLinearGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dev := ember.Flex().Autodiff()
	l := NewLinear(3, 4, dev)
	setRandF64(rng, l.Weight)
	setRandF64(rng, l.Bias)
	x := &Param{Value: f64(randVals(rng, 15), []int{5, 3}, dev)}
	r := randVals(rng, 20)
	checkGrads(t, func() *ember.Tensor { return weightedSum(l.Forward(x.Value), r) },
		map[string]*Param{"weight": l.Weight, "bias": l.Bias, "x": x})
}
