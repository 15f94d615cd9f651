package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// TestAccuracyMetric checks Accuracy over two batches against a count in
// Go, with rows that tie (the lowest class wins).
func TestAccuracyMetric(t *testing.T) {
	dev := ember.Flex()
	r := rand.New(rand.NewPCG(1, 1))
	m := Accuracy()
	if !math.IsNaN(m.Value()) || m.Name() != "accuracy" || !m.(HigherIsBetter).HigherIsBetter() {
		t.Fatal("fresh accuracy")
	}
	correct, total := 0, 0
	for _, n := range []int{7, 5} {
		scores := make([]float32, n*4)
		labels := make([]int64, n)
		for i := range n {
			for c := range 4 {
				scores[4*i+c] = float32(r.IntN(3)) // many ties
			}
			labels[i] = int64(r.IntN(4))
			best := 0
			for c := 1; c < 4; c++ {
				if scores[4*i+c] > scores[4*i+best] {
					best = c
				}
			}
			if int64(best) == labels[i] {
				correct++
			}
			total++
		}
		m.Update(ember.FromFloats(scores, []int{n, 4}, dev), ember.FromInts(labels, []int{n}, dev))
	}
	if got, want := m.Value(), float64(correct)/float64(total); got != want || correct == 0 || correct == total {
		t.Fatalf("accuracy %v, counted %v (%d of %d)", got, want, correct, total)
	}
	m.Reset()
	if !math.IsNaN(m.Value()) {
		t.Fatal("Reset kept batches")
	}
	var e *ember.Error
	err := ember.Try(func() {
		m.Update(ember.FromFloats([]float32{1, 2}, []int{2}, dev), ember.FromInts([]int64{0, 1}, []int{2}, dev))
	})
	if !errors.As(err, &e) {
		t.Fatalf("1-d scores: %v, want an *ember.Error", err)
	}
}

// TestErrorMetrics checks MSE and MAE against float64 sums over two
// batches, and their shape check.
func TestErrorMetrics(t *testing.T) {
	dev := ember.Flex()
	r := rand.New(rand.NewPCG(2, 2))
	mse, mae := MSE(), MAE()
	var se, ae float64
	n := 0
	for _, rows := range []int{3, 6} {
		p, y := make([]float32, 2*rows), make([]float32, 2*rows)
		for i := range p {
			p[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			d := float64(p[i]) - float64(y[i])
			se += d * d
			ae += math.Abs(d)
			n++
		}
		pt, yt := ember.FromFloats(p, []int{rows, 2}, dev), ember.FromFloats(y, []int{rows, 2}, dev)
		mse.Update(pt, yt)
		mae.Update(pt, yt)
	}
	if got, want := mse.Value(), se/float64(n); math.Abs(got-want) > 1e-15*want {
		t.Fatalf("mse %v, float64 %v", got, want)
	}
	if got, want := mae.Value(), ae/float64(n); math.Abs(got-want) > 1e-15*want {
		t.Fatalf("mae %v, float64 %v", got, want)
	}
	err := ember.Try(func() {
		mse.Update(ember.FromFloats([]float32{1, 2}, []int{2, 1}, dev), ember.FromFloats([]float32{1, 2}, []int{2}, dev))
	})
	var e *ember.Error
	if !errors.As(err, &e) {
		t.Fatalf("[2 1] against [2]: %v, want an *ember.Error", err)
	}
}

func TestModeString(t *testing.T) {
	if ModeAuto.String() != "auto" || ModeMin.String() != "min" || ModeMax.String() != "max" || Mode(7).String() != "Mode(7)" {
		t.Fatal("Mode.String")
	}
}
