package ir_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// TestNormKindsInfer checks the inference of the normalization kinds:
// output shapes and dtypes, and an error naming what is wrong for a
// missing input, a non-float tensor, a bad axis, parameters or gradients
// of another shape or dtype; Apply's panic names the op.
func TestNormKindsInfer(t *testing.T) {
	x := ir.NewRef(1, []int{2, 3, 4}, ir.F32)
	w := ir.NewRef(2, []int{3, 4}, ir.F32)
	w1 := ir.NewRef(3, []int{4}, ir.F32)
	wd := ir.NewRef(4, []int{3, 4}, ir.F64)
	xi := ir.NewRef(5, []int{2, 3, 4}, ir.I32)
	g := ir.NewRef(6, []int{2, 3, 4}, ir.F32)
	gs := ir.NewRef(7, []int{2, 3}, ir.F32)
	ok := []struct {
		op    ir.Op
		shape []int
	}{
		{ir.Op{Kind: ir.KindSoftmax, Axis: 1, In: [3]ir.Tensor{x}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLogSoftmax, Axis: 2, In: [3]ir.Tensor{x}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindSoftmaxGrad, Axis: 0, In: [3]ir.Tensor{x, g}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLogSoftmaxGrad, Axis: 2, In: [3]ir.Tensor{x, g}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLogSumExp, Axis: 1, In: [3]ir.Tensor{x}}, []int{2, 4}},
		{ir.Op{Kind: ir.KindLogSumExp, Axis: 1, KeepDim: true, In: [3]ir.Tensor{x}}, []int{2, 1, 4}},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 1, In: [3]ir.Tensor{x, w, w}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 2, In: [3]ir.Tensor{x, nil, w1}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 0, In: [3]ir.Tensor{x}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindRMSNorm, Axis: 2, In: [3]ir.Tensor{x, w1}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindLayerNormGrad, Axis: 1, In: [3]ir.Tensor{x, w, g}}, []int{2, 3, 4}},
		{ir.Op{Kind: ir.KindRMSNormGrad, Axis: 2, In: [3]ir.Tensor{x, nil, g}}, []int{2, 3, 4}},
	}
	for _, c := range ok {
		op := c.op
		if err := op.Infer(); err != nil {
			t.Errorf("%s: %v", op.Name(), err)
			continue
		}
		if !equalInts(op.Shape, c.shape) || op.DType != ir.F32 {
			t.Errorf("%s: inferred %v %v, want %v f32", op.Name(), op.Shape, op.DType, c.shape)
		}
	}
	bad := []struct {
		op   ir.Op
		want string
	}{
		{ir.Op{Kind: ir.KindSoftmax, Axis: 1}, "missing"},
		{ir.Op{Kind: ir.KindSoftmax, Axis: 1, In: [3]ir.Tensor{xi}}, "float"},
		{ir.Op{Kind: ir.KindLogSoftmax, Axis: 3, In: [3]ir.Tensor{x}}, "axis 3"},
		{ir.Op{Kind: ir.KindSoftmaxGrad, Axis: 1, In: [3]ir.Tensor{x}}, "missing"},
		{ir.Op{Kind: ir.KindSoftmaxGrad, Axis: 1, In: [3]ir.Tensor{x, gs}}, "y's shape"},
		{ir.Op{Kind: ir.KindLogSoftmaxGrad, Axis: 1, In: [3]ir.Tensor{x, ir.NewRef(8, []int{2, 3, 4}, ir.F64)}}, "dtype"},
		{ir.Op{Kind: ir.KindLogSumExp, Axis: 3, In: [3]ir.Tensor{x}}, "axis 3"},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 1, In: [3]ir.Tensor{x, w1}}, "weight [4] f32 must have the normalized shape [3 4]"},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 1, In: [3]ir.Tensor{x, nil, wd}}, "bias [3 4] f64"},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 3, In: [3]ir.Tensor{x}}, "axis 3"},
		{ir.Op{Kind: ir.KindLayerNorm, Axis: 1, In: [3]ir.Tensor{xi}}, "float"},
		{ir.Op{Kind: ir.KindRMSNorm, Axis: 2, In: [3]ir.Tensor{x, w}}, "weight [3 4]"},
		{ir.Op{Kind: ir.KindLayerNormGrad, Axis: 1, In: [3]ir.Tensor{x, w}}, "needs x and g"},
		{ir.Op{Kind: ir.KindRMSNormGrad, Axis: 1, In: [3]ir.Tensor{x, w, gs}}, "g [2 3] f32 must have x's shape"},
	}
	for _, c := range bad {
		op := c.op
		err := op.Infer()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", op.Kind, err, c.want)
		}
		func() {
			defer func() {
				var ie *ir.InferError
				if e, ok := recover().(error); !ok || !errors.As(e, &ie) || !strings.HasPrefix(e.Error(), "ir: "+op.Kind.String()+": ") {
					t.Errorf("%v: Apply panicked with %v, want an *InferError naming the op", op.Kind, e)
				}
			}()
			ir.Apply(flex.New(backend.DeviceID{Type: "flex"}), op)
		}()
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNormKindsDecompose runs each kind on flex (which has no kernels
// for them, so Run lowers them with their decompositions) and compares
// with the composition of base ops that defines it, built here with the
// builders, bit for bit; and checks hand-worked values.
func TestNormKindsDecompose(t *testing.T) {
	be := flex.New(backend.DeviceID{Type: "flex"})
	if be.Supports(ir.KindSoftmax, ir.F32) {
		t.Fatal("flex has a softmax kernel: the test needs a backend without one")
	}
	x := be.FromData(ir.FromSlice([]float32{1, 2, 3, -1, 0.5, 4, 2, 2, 2, -3, 7, 0.25}, []int{2, 2, 3}))
	w := be.FromData(ir.FromSlice([]float32{0.5, -2, 1.5}, []int{3}))
	b := be.FromData(ir.FromSlice([]float32{0.1, 0.2, -0.3}, []int{3}))
	g := be.FromData(ir.FromSlice([]float32{0.3, -1, 2, 0.7, 1.1, -0.4, 0.9, 0.2, -1.3, 0.6, 1, -0.8}, []int{2, 2, 3}))
	run := func(op ir.Op) ir.Tensor { return ir.Apply(be, op) }
	same := func(name string, got, want ir.Tensor) {
		t.Helper()
		gd, _ := be.ToData(got)
		wd, _ := be.ToData(want)
		if string(gd.Bytes) != string(wd.Bytes) || !equalInts(gd.Shape, wd.Shape) {
			t.Errorf("%s: %v, composition %v", name, gd, wd)
		}
	}
	const ax = 2
	shift := ir.Sub(be, x, ir.Reduce(be, ir.ReduceMax, x, ax, true))
	ex := ir.Unary(be, ir.OpExp, shift)
	same("softmax", run(ir.Op{Kind: ir.KindSoftmax, Axis: ax, In: [3]ir.Tensor{x}}),
		ir.Div(be, ex, ir.Reduce(be, ir.ReduceSum, ex, ax, true)))
	same("log_softmax", run(ir.Op{Kind: ir.KindLogSoftmax, Axis: ax, In: [3]ir.Tensor{x}}),
		ir.Sub(be, shift, ir.Unary(be, ir.OpLog, ir.Reduce(be, ir.ReduceSum, ex, ax, true))))
	y := run(ir.Op{Kind: ir.KindSoftmax, Axis: ax, In: [3]ir.Tensor{x}})
	same("softmax_grad", run(ir.Op{Kind: ir.KindSoftmaxGrad, Axis: ax, In: [3]ir.Tensor{y, g}}),
		ir.Mul(be, y, ir.Sub(be, g, ir.Reduce(be, ir.ReduceSum, ir.Mul(be, g, y), ax, true))))
	same("log_softmax_grad", run(ir.Op{Kind: ir.KindLogSoftmaxGrad, Axis: ax, In: [3]ir.Tensor{y, g}}),
		ir.Sub(be, g, ir.Mul(be, ir.Unary(be, ir.OpExp, y), ir.Reduce(be, ir.ReduceSum, g, ax, true))))
	m := ir.Reduce(be, ir.ReduceMax, x, 1, true)
	lse := ir.Add(be, ir.Unary(be, ir.OpLog, ir.Reduce(be, ir.ReduceSum, ir.Unary(be, ir.OpExp, ir.Sub(be, x, m)), 1, true)), m)
	same("logsumexp", run(ir.Op{Kind: ir.KindLogSumExp, Axis: 1, In: [3]ir.Tensor{x}}), ir.Reshape(be, lse, []int{2, 3}))
	mean := ir.DivScalar(be, ir.Reduce(be, ir.ReduceSum, x, ax, true), 3)
	diff := ir.Sub(be, x, mean)
	rstd := ir.Unary(be, ir.OpRsqrt, ir.AddScalar(be, ir.DivScalar(be, ir.Reduce(be, ir.ReduceSum, ir.Mul(be, diff, diff), ax, true), 3), 1e-5))
	same("layer_norm", run(ir.Op{Kind: ir.KindLayerNorm, Axis: ax, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{x, w, b}}),
		ir.Add(be, ir.Mul(be, ir.Mul(be, diff, rstd), w), b))
	ms := ir.DivScalar(be, ir.Reduce(be, ir.ReduceSum, ir.Mul(be, x, x), ax, true), 3)
	same("rms_norm", run(ir.Op{Kind: ir.KindRMSNorm, Axis: ax, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{x, w}}),
		ir.Mul(be, ir.Mul(be, x, ir.Unary(be, ir.OpRsqrt, ir.AddScalar(be, ms, 1e-5))), w))

	// Hand-worked values: softmax of [1, 2, 3] and its log; the layer
	// norm of [2, 2, 2] is its bias; logsumexp of a lane of -Inf is -Inf.
	vals := func(t ir.Tensor) []float64 {
		d, _ := be.ToData(t)
		return d.Convert(ir.F64).Float64s()
	}
	sm := vals(y)
	e := []float64{math.Exp(-2), math.Exp(-1), 1}
	s := e[0] + e[1] + e[2]
	for i := range 3 {
		if math.Abs(sm[i]-e[i]/s) > 1e-7 {
			t.Errorf("softmax [1 2 3][%d] = %v, want %v", i, sm[i], e[i]/s)
		}
	}
	ln := vals(run(ir.Op{Kind: ir.KindLayerNorm, Axis: ax, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{x, w, b}}))
	for i, want := range []float64{0.1, 0.2, -0.3} {
		if math.Abs(ln[6+i]-want) > 1e-7 {
			t.Errorf("layer_norm of a constant row [%d] = %v, want the bias %v", i, ln[6+i], want)
		}
	}
	ninf := be.FromData(ir.FromSlice([]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), 1, float32(math.Inf(1))}, []int{2, 2}))
	l := vals(run(ir.Op{Kind: ir.KindLogSumExp, Axis: 1, In: [3]ir.Tensor{ninf}}))
	if !math.IsInf(l[0], -1) || !math.IsInf(l[1], 1) {
		t.Errorf("logsumexp of [-Inf -Inf], [1 +Inf] = %v, want [-Inf +Inf]", l)
	}
	sn := vals(run(ir.Op{Kind: ir.KindSoftmax, Axis: 1, In: [3]ir.Tensor{ninf}}))
	for i, v := range sn {
		if !math.IsNaN(v) {
			t.Errorf("softmax of [-Inf -Inf], [1 +Inf] [%d] = %v, want NaN", i, v)
		}
	}
	empty := be.FromData(ir.FromSlice([]float32{}, []int{2, 0}))
	le := vals(run(ir.Op{Kind: ir.KindLogSumExp, Axis: 1, In: [3]ir.Tensor{empty}}))
	if len(le) != 2 || !math.IsInf(le[0], -1) || !math.IsInf(le[1], -1) {
		t.Errorf("logsumexp of an empty axis = %v, want [-Inf -Inf]", le)
	}
	if n := len(vals(run(ir.Op{Kind: ir.KindSoftmax, Axis: 1, In: [3]ir.Tensor{empty}}))); n != 0 {
		t.Errorf("softmax of an empty axis has %d elements", n)
	}
}
