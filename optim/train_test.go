package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// TestMLPTrains fits a 2-16-3 MLP to three well-separated Gaussian blobs
// (a linearly separable problem) with full-batch Adam and cross entropy,
// and expects a low loss and perfect training accuracy after 300 steps.
func TestMLPTrains(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 1))
	dev := ember.Flex().Autodiff()
	dev.Seed(5)
	const perClass = 32
	centers := [][2]float64{{2, 0}, {-1, 1.7}, {-1, -1.7}}
	var xs []float32
	var ys []int
	for c, ctr := range centers {
		for range perClass {
			xs = append(xs, float32(ctr[0]+0.4*rng.NormFloat64()), float32(ctr[1]+0.4*rng.NormFloat64()))
			ys = append(ys, c)
		}
	}
	n := len(ys)
	x := ember.FromFloats(xs, []int{n, 2}, dev)
	y := ember.FromInts(ys, []int{n}, dev)
	model := nn.NewSequential(nn.NewLinear(2, 16, dev), nn.Relu{}, nn.NewLinear(16, 3, dev))
	opt := NewAdam(model.NamedParameters(), AdamConfig{LR: 0.02})
	sched := CosineLR(0.02, 0.002, 300)
	var first, last float64
	for step := range 300 {
		opt.SetLR(sched.LR(step))
		loss := nn.CrossEntropy(model.Forward(x), y)
		if step == 0 {
			first = loss.Item()
		}
		opt.Step(loss.Backward())
	}
	nn.SetTraining(model, false)
	logits := model.Forward(x)
	last = nn.CrossEntropy(logits, y).Item()
	t.Logf("loss %v -> %v", first, last)
	if !(last < 0.05) || math.IsNaN(last) {
		t.Errorf("loss went from %v to %v, want below 0.05", first, last)
	}
	pred := logits.Argmax(1, false).Int64s()
	for i, p := range pred {
		if int(p) != ys[i] {
			t.Fatalf("sample %d predicted %d, label %d (loss %v)", i, p, ys[i], last)
		}
	}
}
