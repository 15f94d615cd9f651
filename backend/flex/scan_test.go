package flex

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refCumSum is the inclusive prefix sum of r along axis, each element
// summed from scratch over its lane in float64 (ints: int64, then wrapped
// to dt) and converted to dt.
func refCumSum(r ref, axis int, dt backend.DType) ref {
	out := ref{shape: r.shape, v: make([]float64, len(r.v))}
	for i := range out.v {
		idx := unflat(r.shape, i)
		last := idx[axis]
		var f float64
		var n int64
		for j := 0; j <= last; j++ {
			idx[axis] = j
			v := r.v[flat(r.shape, idx)]
			f += v
			n += int64(v)
		}
		if dt.IsInt() {
			out.v[i] = wrapTo(float64(n), dt)
		} else {
			out.v[i] = refCast(f, backend.F64, dt)
		}
	}
	return out
}

func cumsum(e ir.Executor, x ir.Tensor, axis int) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindCumSum, Axis: axis, In: [3]ir.Tensor{x}})
}

// TestCumSum checks the kernel against refCumSum for every numeric dtype,
// every axis and memory layout, a size-0 axis, lanes long enough for the
// small integer types to wrap, and a tensor past the parallel threshold.
func TestCumSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	shapes := [][]int{{1}, {7}, {3, 5}, {2, 3, 4}, {3, 0, 2}, {2, 40}}
	dts := append(append([]backend.DType{}, floatDTypes...), intDTypes...)
	for _, dt := range dts {
		for _, shape := range shapes {
			r := randRef(rng, shape, dt)
			in := read(t, mk(r, dt)) // the values as stored in dt
			for axis := range shape {
				want := refCumSum(in, axis, dt)
				for _, l := range layouts {
					what := fmt.Sprintf("cumsum %v %v axis %d %s", dt, shape, axis, l.name)
					check(t, what, cumsum(tb, l.make(r, dt), axis), want, dt)
				}
			}
		}
	}
	for _, dt := range []backend.DType{backend.F32, backend.I32} {
		r := randRef(rng, []int{300, 250}, dt)
		in := read(t, mk(r, dt))
		for axis := range 2 {
			for _, l := range layouts[:2] {
				check(t, fmt.Sprintf("large cumsum %v axis %d %s", dt, axis, l.name), cumsum(tb, l.make(r, dt), axis), refCumSum(in, axis, dt), dt)
			}
		}
	}
}

// TestCumSumRounding checks the accumulators exactly: F32 accumulates in
// float64 (1 followed by 2^-24 steps grows, where a float32 running sum
// would stay 1) and F16 in float32, each partial sum rounded on its own
// (half to even), where an F16 running sum would stay 1.
func TestCumSumRounding(t *testing.T) {
	exact := func(what string, x ir.Tensor, want []float64) {
		t.Helper()
		if got := read(t, x).v; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	tiny := ref{[]int{5}, []float64{1, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}}
	exact("f32 cumsum", cumsum(tb, mk(tiny, backend.F32), 0), []float64{1, 1, 1 + 0x1p-23, 1 + 0x1p-22, 1 + 0x1p-22})
	half := ref{[]int{4}, []float64{1, 0x1p-12, 0x1p-12, 0x1p-12}}
	exact("f16 cumsum", cumsum(tb, mk(half, backend.F16), 0), []float64{1, 1, 1, 1 + 0x1p-10})
}

// noScan hides the CumSum kernel, so that ir.Run uses the decomposition.
type noScan struct{ *Backend }

func (n noScan) Supports(k ir.Kind, dt backend.DType) bool {
	return k != ir.KindCumSum && n.Backend.Supports(k, dt)
}

// TestCumSumMatchesDecomposition compares the kernel with ir's
// Hillis–Steele decomposition, which is exact for integers.
func TestCumSumMatchesDecomposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	for _, dt := range []backend.DType{backend.I64, backend.I8, backend.U16} {
		r := randRef(rng, []int{3, 37, 2}, dt)
		for axis := range 3 {
			for _, l := range layouts {
				x := l.make(r, dt)
				check(t, fmt.Sprintf("%v axis %d %s", dt, axis, l.name), cumsum(tb, x, axis), read(t, cumsum(noScan{tb}, x, axis)), dt)
			}
		}
	}
}

// TestSupports checks the kinds Exec runs: every base kind for every
// dtype, CumSum for the numeric ones, and no fast-path kind (those are
// decomposed), which Exec rejects with an *ir.UnsupportedError.
func TestSupports(t *testing.T) {
	for _, k := range ir.Kinds() {
		base := ir.SpecOf(k).Decompose == nil
		for _, dt := range backend.AllDTypes {
			want := base || (k == ir.KindCumSum && dt != backend.Bool)
			if got := tb.Supports(k, dt); got != want {
				t.Errorf("Supports(%v, %v) = %v, want %v", k, dt, got, want)
			}
		}
	}
	x := mk(ref{[]int{1, 1, 2, 2}, []float64{1, 2, 3, 4}}, backend.F32)
	err := catch(func() {
		tb.Exec(ir.Op{Kind: ir.KindMaxPool2d, In: [3]ir.Tensor{x}, Attrs: &ir.Attrs{}})
	})
	if _, ok := err.(*ir.UnsupportedError); !ok {
		t.Errorf("Exec of max_pool2d: got %v, want an *ir.UnsupportedError", err)
	}
	// a fast-path kind runs through its decomposition
	o := ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	y := ir.Apply(tb, ir.Op{Kind: ir.KindMaxPool2d, In: [3]ir.Tensor{x}, Attrs: &ir.Attrs{Pool: o}})
	check(t, "max_pool2d decomposed", y, ref{[]int{1, 1, 1, 1}, []float64{4}}, backend.F32)
}
