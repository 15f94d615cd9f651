package autodiff

import (
	"testing"

	"github.com/emberml/ember/backend"
)

// BenchmarkAddTracked measures the per-op cost of recording a tiny tracked
// add (the kernel itself is a 4-element add on flex).
func BenchmarkAddTracked(bm *testing.B) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{4}, []float64{1, 2, 3, 4})))
	for bm.Loop() {
		b.Binary(backend.OpAdd, x, x)
	}
}

// BenchmarkAddUntracked is the same add on untracked tensors.
func BenchmarkAddUntracked(bm *testing.B) {
	b := New(newInner(), false)
	x := b.FromData(f64Data([]int{4}, []float64{1, 2, 3, 4}))
	for bm.Loop() {
		b.Binary(backend.OpAdd, x, x)
	}
}

// BenchmarkAddInner is the add on the inner backend directly, the baseline
// for the two above.
func BenchmarkAddInner(bm *testing.B) {
	in := newInner()
	x := in.FromData(f64Data([]int{4}, []float64{1, 2, 3, 4}))
	for bm.Loop() {
		in.Binary(backend.OpAdd, x, x)
	}
}
