package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

func newTestBackend() *Backend { return New(backend.DeviceID{Type: "cpu"}) }

// randVals returns n normal values (non-zero with probability 1).
func randVals(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// tensorOf makes a tensor of dt holding vals (converted) on be.
func tensorOf(be backend.Backend, vals []float64, shape []int, dt backend.DType) backend.Tensor {
	return be.FromData(ir.FromSlice(vals, shape).Convert(dt))
}

// values reads a tensor back as float64.
func values(t *testing.T, be backend.Backend, x backend.Tensor) []float64 {
	t.Helper()
	d, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d.Convert(backend.F64).Float64s()
}

// closeTo checks |got-want| <= tol·max(1, |want|) elementwise.
func closeTo(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol*max(1, math.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v (tol %g)", name, i, got[i], want[i], tol)
		}
	}
}

// sameAsFlex checks that the cpu result equals flex's bit for bit.
func sameAsFlex(t *testing.T, name string, be *Backend, fl *flex.Backend, got, want backend.Tensor) {
	t.Helper()
	g, _ := be.ToData(got)
	w, _ := fl.ToData(want)
	if g.DType != w.DType || len(g.Shape) != len(w.Shape) || string(g.Bytes) != string(w.Bytes) {
		t.Fatalf("%s: cpu %v %v differs from flex %v %v\ncpu  %v\nflex %v", name, g.DType, g.Shape, w.DType, w.Shape, g, w)
	}
	for i := range g.Shape {
		if g.Shape[i] != w.Shape[i] {
			t.Fatalf("%s: shape %v, flex %v", name, g.Shape, w.Shape)
		}
	}
}

// convShape is the output shape of a convolution of x [N, C, H, W] with w
// (transpose: w [Cin, Cout/groups, kH, kW]), from ir's formula.
func convShape(xs, ws []int, o backend.ConvOptions, transpose bool) [4]int {
	sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, transpose)
	c := ws[0]
	if transpose {
		c = ws[1] * o.Groups
	}
	return [4]int{xs[0], c, sp[0], sp[1]}
}

// The fast-path kinds have no builders in ir; these build, infer and run
// them on e (through ir.Run, so a backend without the kernel decomposes).

func sliceScatter(e ir.Executor, src ir.Tensor, shape []int, ranges []backend.Range) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindSliceScatter, Shape: shape, Attrs: &ir.Attrs{Ranges: ranges}, In: [3]ir.Tensor{src}})
}

func maxPool2d(e ir.Executor, x ir.Tensor, o backend.PoolOptions) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}})
}

func maxPool2dGrad(e ir.Executor, x, y, g ir.Tensor, o backend.PoolOptions) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x, y, g}})
}

func conv2dWeightGrad(e ir.Executor, x, g ir.Tensor, ws [4]int, o backend.ConvOptions) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: ws[:], Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{x, g}})
}

func extremumGradOf(e ir.Executor, x, y, g ir.Tensor, axis int) ir.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindExtremumGrad, Axis: axis, In: [3]ir.Tensor{x, y, g}})
}
