package cpu

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// TestSupports checks the kinds Exec runs: the fast-path kernels for
// their dtypes (max pooling F32, Flex32, F64; the gradient kernels the
// float dtypes) and, for everything else, what flex runs.
func TestSupports(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	own := map[ir.Kind]func(backend.DType) bool{
		ir.KindMaxPool2d:        func(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64 },
		ir.KindMaxPool2dGrad:    func(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64 },
		ir.KindConv2dWeightGrad: backend.DType.IsFloat,
		ir.KindSliceScatter:     backend.DType.IsFloat,
		ir.KindExtremumGrad:     backend.DType.IsFloat,
	}
	f32f64 := func(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64 }
	for _, k := range []ir.Kind{ir.KindAdamStep, ir.KindSGDStep, ir.KindSoftmax, ir.KindLogSoftmax, ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad, ir.KindLogSumExp,
		ir.KindLayerNorm, ir.KindLayerNormGrad, ir.KindRMSNorm, ir.KindRMSNormGrad} {
		own[k] = f32f64
	}
	for _, k := range ir.Kinds() {
		for _, dt := range backend.AllDTypes {
			want := fl.Supports(k, dt)
			if f, ok := own[k]; ok {
				want = f(dt)
			}
			if got := be.Supports(k, dt); got != want {
				t.Errorf("Supports(%v, %v) = %v, want %v", k, dt, got, want)
			}
		}
	}
}

// TestExecRunsKernels runs the fast-path kinds through Exec directly (no
// decomposition can stand in) and checks one small case of each.
func TestExecRunsKernels(t *testing.T) {
	be := newTestBackend()
	x := tensorOf(be, []float64{1, 5, 3, 2}, []int{1, 1, 2, 2}, backend.F32)
	exec := func(op ir.Op) []float64 {
		t.Helper()
		if err := op.Infer(); err != nil {
			t.Fatal(err)
		}
		return values(t, be, be.Exec(op)[0])
	}
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	closeTo(t, "max_pool2d", exec(ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}}), []float64{5}, 0)
	y := tensorOf(be, []float64{5}, []int{1, 1, 1, 1}, backend.F32)
	g := tensorOf(be, []float64{2}, []int{1, 1, 1, 1}, backend.F32)
	closeTo(t, "max_pool2d_grad", exec(ir.Op{Kind: ir.KindMaxPool2dGrad, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x, y, g}}), []float64{0, 2, 0, 0}, 0)
	row := ir.Reshape(be, x, []int{4})
	closeTo(t, "slice_scatter", exec(ir.Op{Kind: ir.KindSliceScatter, Shape: []int{8}, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 1, End: 8, Step: 2}}}, In: [3]ir.Tensor{row}}),
		[]float64{0, 1, 0, 5, 0, 3, 0, 2}, 0)
	y1 := tensorOf(be, []float64{5}, []int{1}, backend.F32)
	g1 := tensorOf(be, []float64{3}, []int{1}, backend.F32)
	closeTo(t, "extremum_grad", exec(ir.Op{Kind: ir.KindExtremumGrad, Axis: 0, In: [3]ir.Tensor{row, y1, g1}}), []float64{0, 3, 0, 0}, 0)
	co := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	closeTo(t, "conv2d_weight_grad", exec(ir.Op{Kind: ir.KindConv2dWeightGrad, Shape: []int{1, 1, 2, 2}, Attrs: &ir.Attrs{Conv: co}, In: [3]ir.Tensor{x, y}}),
		[]float64{5, 25, 15, 10}, 0)
}
