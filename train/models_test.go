package train

import (
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

func TestModelShapesAndSizes(t *testing.T) {
	dev := ember.Flex()
	dev.Seed(5)
	cases := []struct {
		name   string
		params int
		shapes map[string][]int
	}{
		// 784·128 + 128 + 128·10 + 10
		{"mlp", 101770, map[string][]int{"1.weight": {128, 784}, "1.bias": {128}, "3.weight": {10, 128}, "3.bias": {10}}},
		// (25·32 + 32) + (32·25·64 + 64) + (1024·10 + 10)
		{"cnn", 62346, map[string][]int{"0.weight": {32, 1, 5, 5}, "0.bias": {32}, "3.weight": {64, 32, 5, 5},
			"3.bias": {64}, "7.weight": {10, 1024}, "7.bias": {10}}},
	}
	for _, c := range cases {
		m, ok := NewModel(c.name, dev)
		if !ok {
			t.Fatalf("NewModel(%q) unknown", c.name)
		}
		if n := nn.NumParams(m); n != c.params {
			t.Errorf("%s: %d parameters, want %d", c.name, n, c.params)
		}
		ps := m.NamedParameters()
		if len(ps) != len(c.shapes) {
			t.Errorf("%s: %d parameter tensors, want %d", c.name, len(ps), len(c.shapes))
		}
		for _, p := range ps {
			want, ok := c.shapes[p.Name]
			if !ok || !slices.Equal(p.Param.Value.Shape(), want) {
				t.Errorf("%s: parameter %s has shape %v, want %v", c.name, p.Name, p.Param.Value.Shape(), want)
			}
		}
		x := ember.Randn([]int{3, 1, 28, 28}, dev)
		if got := m.Forward(x).Shape(); !slices.Equal(got, []int{3, 10}) {
			t.Errorf("%s: output shape %v, want [3 10]", c.name, got)
		}
	}
	if _, ok := NewModel("resnet", dev); ok {
		t.Error("NewModel accepted an unknown name")
	}
}
