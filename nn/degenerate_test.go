package nn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// wantNNError runs f, which must panic with an *ember.Error for op whose
// message holds every fragment; a Go runtime panic fails the test instead
// of crashing it.
func wantNNError(t *testing.T, what, op string, f func(), fragments ...string) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("runtime panic: " + strings.TrimSpace(errString(r)))
			}
		}()
		err = ember.Try(f)
	}()
	var e *ember.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want an *ember.Error for %s", what, err, op)
		return
	}
	if e.Op != op {
		t.Errorf("%s: Error.Op = %q, want %q (%v)", what, e.Op, op, err)
	}
	for _, fr := range fragments {
		if !strings.Contains(err.Error(), fr) {
			t.Errorf("%s: message %q lacks %q", what, err.Error(), fr)
		}
	}
}

func errString(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	s, _ := r.(string)
	return s
}

// TestNilArgumentsAreErrors gives every loss and every layer's Forward a
// nil tensor: each panics with an *ember.Error naming the op and the
// operand, on every local device.
func TestNilArgumentsAreErrors(t *testing.T) {
	for _, dev := range []ember.Device{ember.Flex(), ember.CPU()} {
		t.Run(dev.String(), func(t *testing.T) {
			logits := ember.Zeros([]int{2, 3}, dev)
			targets := ember.FromInts([]int{0, 2}, []int{2}, dev)
			wantNNError(t, "CrossEntropy(logits, nil)", "cross_entropy", func() { CrossEntropy(logits, nil) }, "operand targets is a nil *Tensor")
			wantNNError(t, "CrossEntropy(nil, targets)", "cross_entropy", func() { CrossEntropy(nil, targets) }, "operand logits is a nil *Tensor")
			wantNNError(t, "MSE(nil, x)", "mse", func() { MSE(nil, logits) }, "operand pred is a nil *Tensor")
			wantNNError(t, "MSE(x, nil)", "mse", func() { MSE(logits, nil) }, "operand target is a nil *Tensor")
			layers := map[string]Module{
				"linear":     NewLinear(3, 2, dev),
				"conv2d":     NewConv2d(1, 1, 3, ember.ConvOptions{}, dev),
				"embedding":  NewEmbedding(4, 2, dev),
				"batch_norm": NewBatchNorm(3, dev),
				"layer_norm": NewLayerNorm(3, dev),
				"max_pool2d": NewMaxPool2d(2, 2),
				"avg_pool2d": NewAvgPool2d(2, 2),
				"dropout":    NewDropout(0.5),
				"relu":       Relu{},
				"gelu":       Gelu{},
				"flatten":    Flatten{},
				"sequential": NewSequential(),
			}
			for op, m := range layers {
				name := "x"
				if op == "embedding" {
					name = "idx"
				}
				wantNNError(t, op+" Forward(nil)", op, func() { m.Forward(nil) }, "operand "+name+" is a nil *Tensor")
			}
			// A valid edge: CrossEntropy of equal logits over 3 classes is
			// log 3 whatever the targets.
			if got := CrossEntropy(logits, targets).Item(); math.Abs(got-math.Log(3)) > 1e-6 {
				t.Errorf("CrossEntropy of zeros = %v, want log 3", got)
			}
		})
	}
}

// TestDegenerateInitArguments checks initializer slopes that define no
// distribution and layer sizes whose weight shape overflows an int.
func TestDegenerateInitArguments(t *testing.T) {
	dev := ember.Flex()
	wantNNError(t, "KaimingUniform(a NaN)", "kaiming_uniform", func() { KaimingUniform([]int{2}, 4, math.NaN(), dev) }, "finite")
	wantNNError(t, "KaimingNormal(a Inf)", "kaiming_normal", func() { KaimingNormal([]int{2}, 4, math.Inf(1), dev) }, "finite")
	wantNNError(t, "NewConv2d huge kernel", "conv2d", func() { NewConv2d(4, 1, 1<<31, ember.ConvOptions{}, dev) }, "more elements than an int can count")
	// fanIn + fanOut past MaxInt: the bound is still √(6 / (fanIn + fanOut)).
	x := XavierUniform([]int{64}, math.MaxInt, math.MaxInt, dev)
	bound := math.Sqrt(6 / (2 * float64(math.MaxInt)))
	for _, v := range x.Float64s() {
		if math.IsNaN(v) || math.Abs(v) > bound {
			t.Fatalf("XavierUniform with fans MaxInt: sample %v outside ±%v", v, bound)
		}
	}
}
