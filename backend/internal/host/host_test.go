package host

import (
	"slices"
	"testing"

	"github.com/emberml/ember/ir"
)

func TestContiguous(t *testing.T) {
	data := []float32{9, 0, 1, 2, 3, 4, 5, 9}
	v := View[float32]{Data: data, Shape: []int{2, 3}, Strides: []int{3, 1}, Offset: 1}
	got, ok := v.Contiguous()
	if !ok || !slices.Equal(got, data[1:7]) || cap(got) != 6 {
		t.Fatalf("contiguous view: %v (cap %d), %v", got, cap(got), ok)
	}
	tr := View[float32]{Data: data, Shape: []int{3, 2}, Strides: []int{1, 3}, Offset: 1}
	if _, ok := tr.Contiguous(); ok {
		t.Fatal("a transposed view is not contiguous")
	}
	one := View[float32]{Data: data, Shape: []int{1, 3}, Strides: []int{99, 1}, Offset: 4}
	if got, ok := one.Contiguous(); !ok || !slices.Equal(got, []float32{3, 4, 5}) {
		t.Fatalf("size-1 axis: %v, %v", got, ok)
	}
	empty := View[float32]{Data: data, Shape: []int{0, 3}, Strides: []int{3, 1}}
	if got, ok := empty.Contiguous(); !ok || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, ok)
	}
}

func TestInstallOnce(t *testing.T) {
	f := func(ir.Tensor) (View[float32], bool) { return View[float32]{}, false }
	Install(Accessors{Float32: f})
	defer func() {
		if recover() == nil {
			t.Error("a second Install did not panic")
		}
	}()
	Install(Accessors{Float32: f})
}
