package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// crossEntropyRef is −mean log softmax(logits)[i, t_i] in float64 with the
// log-sum-exp shifted by the row maximum.
func crossEntropyRef(logits []float64, n, c int, targets []int) float64 {
	var loss float64
	for i := range n {
		row := logits[i*c : i*c+c]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - m)
		}
		loss += m + math.Log(s) - row[targets[i]]
	}
	return loss / float64(n)
}

func TestCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	dev := ember.Flex().Autodiff()
	const n, c = 6, 4
	targets := []int{0, 3, 1, 1, 2, 3}
	tt := ember.FromInts(targets, []int{n}, dev)
	for _, scale := range []float64{1, 1e4} {
		logits := randVals(rng, n*c)
		for i := range logits {
			logits[i] *= 3 * scale
		}
		loss := CrossEntropy(f64(logits, []int{n, c}, dev), tt)
		if loss.Rank() != 0 {
			t.Fatalf("loss has shape %v, want rank 0", loss.Shape())
		}
		got, want := loss.Item(), crossEntropyRef(logits, n, c, targets)
		if math.IsInf(got, 0) || math.IsNaN(got) || math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("scale %g: cross entropy %v, want %v", scale, got, want)
		}
	}
	x := &Param{Value: f64(randVals(rng, n*c), []int{n, c}, dev)}
	checkGrads(t, func() *ember.Tensor { return CrossEntropy(x.Value, tt) }, map[string]*Param{"logits": x})

	for name, f := range map[string]func(){
		"rank-1 logits":   func() { CrossEntropy(f64(randVals(rng, 4), []int{4}, dev), tt) },
		"float targets":   func() { CrossEntropy(x.Value, f64(randVals(rng, n), []int{n}, dev)) },
		"target count":    func() { CrossEntropy(x.Value, ember.FromInts([]int{0, 1}, []int{2}, dev)) },
		"target in range": func() { CrossEntropy(x.Value, ember.FromInts([]int{0, 1, 2, 3, 4, 0}, []int{n}, dev)) },
	} {
		if err := ember.Try(f); err == nil {
			t.Errorf("%s: no panic", name)
		}
	}
}

func TestMSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	dev := ember.Flex().Autodiff()
	p, q := randVals(rng, 12), randVals(rng, 12)
	var want float64
	for i := range p {
		want += (p[i] - q[i]) * (p[i] - q[i]) / 12
	}
	pp := &Param{Value: f64(p, []int{3, 4}, dev)}
	qt := f64(q, []int{3, 4}, dev)
	l := MSE(pp.Value, qt)
	if l.Rank() != 0 || math.Abs(l.Item()-want) > 1e-14 {
		t.Errorf("MSE = %v (shape %v), want %v", l.Item(), l.Shape(), want)
	}
	checkGrads(t, func() *ember.Tensor { return MSE(pp.Value, qt) }, map[string]*Param{"pred": pp})
}
