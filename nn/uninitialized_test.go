package nn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestUninitializedModules checks that zero-value and nil modules fail
// with an *ember.Error naming the layer and its constructor instead of a
// nil dereference.
func TestUninitializedModules(t *testing.T) {
	dev := ember.CPU()
	x := ember.Ones([]int{2, 3}, dev)
	img := ember.Ones([]int{1, 1, 4, 4}, dev)
	idx := ember.Zeros([]int{2}, dev).Cast(ember.I64)
	cases := []struct {
		name, want string
		f          func()
	}{
		{"Linear{}", "NewLinear", func() { (&Linear{}).Forward(x) }},
		{"nil *Linear", "NewLinear", func() { (*Linear)(nil).Forward(x) }},
		{"Linear without bias", "bias", func() { l := NewLinear(3, 2, dev); l.Bias = nil; l.Forward(x) }},
		{"Conv2d{}", "NewConv2d", func() { (&Conv2d{}).Forward(img) }},
		{"Embedding{}", "NewEmbedding", func() { (&Embedding{}).Forward(idx) }},
		{"BatchNorm{}", "NewBatchNorm", func() { (&BatchNorm{}).Forward(x) }},
		{"LayerNorm{}", "NewLayerNorm", func() { (&LayerNorm{}).Forward(x) }},
		{"nil *Dropout", "NewDropout", func() { (*Dropout)(nil).Forward(x) }},
		{"nil *MaxPool2d", "NewMaxPool2d", func() { (*MaxPool2d)(nil).Forward(img) }},
		{"nil *AvgPool2d", "NewAvgPool2d", func() { (*AvgPool2d)(nil).Forward(img) }},
		{"Sequential with a nil module", "module 1 is nil", func() { NewSequential(Relu{}, nil).Forward(x) }},
		{"parameters of a nil module", "module 0 is nil", func() { NewSequential(nil).NamedParameters() }},
	}
	for _, c := range cases {
		err := ember.Try(c.f)
		var e *ember.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an *ember.Error mentioning %q", c.name, err, c.want)
		}
	}
}

// TestLiteralModules checks that modules built as struct literals from
// their exported parameters take their sizes from the parameters: a
// literal Linear computes x·Wᵀ + b, compared with a float64 loop.
func TestLiteralModules(t *testing.T) {
	dev := ember.CPU()
	w := []float32{0.5, -1.25, 2, 0.75, -0.5, 1.5}
	b := []float32{0.25, -0.75}
	l := &Linear{Weight: &Param{Value: ember.FromFloats(w, []int{2, 3}, dev)}, Bias: &Param{Value: ember.FromFloats(b, []int{2}, dev)}}
	xs := []float32{1.5, -2, 0.25}
	got := l.Forward(ember.FromFloats(xs, []int{1, 3}, dev)).Float32s()
	for o := range 2 {
		want := float64(b[o])
		for i := range 3 {
			want += float64(xs[i]) * float64(w[o*3+i])
		}
		if math.Abs(float64(got[o])-want) > 1e-6 {
			t.Errorf("out %d: got %v, want %v", o, got[o], want)
		}
	}
	if s := (*Sequential)(nil).Forward(ember.FromFloats(xs, []int{3}, dev)).Float32s(); s[1] != -2 {
		t.Errorf("nil Sequential changed its input: %v", s)
	}
}
