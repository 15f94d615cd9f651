package cpu

import (
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/torchpeer"
	"github.com/emberml/ember/ir"
)

// The normalization kernels on [4096, 1024] F32 (the last axis), against
// their decompositions run op by op on the same backend ("composed").
// bench/torch_norm_bench.py times PyTorch's on the same shapes; run both
// in one session to compare.

const benchRows, benchCols = 4096, 1024

// benchNormOp builds the op of kind k on x [4096, 1024] (weight and bias
// [1024] for the normalizations).
func benchNormOp(be *Backend, k ir.Kind) ir.Op {
	x := randTensor(be, []int{benchRows, benchCols}, 1)
	op := ir.Op{Kind: k, Axis: 1, In: [3]ir.Tensor{x}}
	switch k {
	case ir.KindLayerNorm:
		op.Scalars[0] = 1e-5
		op.In[1], op.In[2] = randTensor(be, []int{benchCols}, 2), randTensor(be, []int{benchCols}, 3)
	case ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad:
		op.In[1] = randTensor(be, []int{benchRows, benchCols}, 2)
	case ir.KindLayerNormGrad:
		op.Scalars[0] = 1e-5
		op.In[1], op.In[2] = randTensor(be, []int{benchCols}, 2), randTensor(be, []int{benchRows, benchCols}, 3)
	}
	if err := op.Infer(); err != nil {
		panic(err)
	}
	return op
}

func benchNorm(b *testing.B, k ir.Kind, composed bool) {
	be := New(backend.DeviceID{Type: "cpu"})
	op := benchNormOp(be, k)
	b.SetBytes(2 * 4 * benchRows * benchCols)
	for b.Loop() {
		if composed {
			ir.SpecOf(k).Decompose(op, be)
		} else {
			be.Exec(op)
		}
	}
}

func BenchmarkSoftmax(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindSoftmax, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindSoftmax, true) })
}

func BenchmarkLogSoftmax(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindLogSoftmax, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindLogSoftmax, true) })
}

func BenchmarkLayerNorm(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindLayerNorm, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindLayerNorm, true) })
}

func BenchmarkSoftmaxGrad(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindSoftmaxGrad, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindSoftmaxGrad, true) })
}

func BenchmarkLogSoftmaxGrad(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindLogSoftmaxGrad, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindLogSoftmaxGrad, true) })
}

func BenchmarkLayerNormGrad(b *testing.B) {
	b.Run("kernel", func(b *testing.B) { benchNorm(b, ir.KindLayerNormGrad, false) })
	b.Run("composed", func(b *testing.B) { benchNorm(b, ir.KindLayerNormGrad, true) })
}

// BenchmarkNormVersusTorch times the kernels of BenchmarkSoftmax and its
// neighbors (Exec, output allocation included) side by side with
// PyTorch's: it starts the PyTorch peer (internal/torchpeer, under
// $EMBER_TORCH_PYTHON, else python3, else /usr/bin/python3; skipped when
// none has torch) and runs -benchtime rounds (e.g. -benchtime 5x), each
// asking PyTorch for the median of normVsIters calls at 1 thread, 2
// threads and its default, then timing the median of normVsIters calls
// here, each side after 100 ms of warm-up calls. It reports the medians
// over the rounds: ember-ms, torch-ms (PyTorch's best setting), x-torch
// (torch-ms / ember-ms, above 1 when this backend is faster) and, for the
// forward kinds, kernel-ms (the kernel writing into a buffer it reuses:
// Exec without the output's allocation); ns/op counts both sides and
// means nothing.
func BenchmarkNormVersusTorch(b *testing.B) {
	peer := startTorchPeer(b)
	for _, c := range []struct {
		name string
		k    ir.Kind
	}{
		{"softmax", ir.KindSoftmax}, {"log_softmax", ir.KindLogSoftmax}, {"layer_norm", ir.KindLayerNorm},
		{"softmax_grad", ir.KindSoftmaxGrad}, {"log_softmax_grad", ir.KindLogSoftmaxGrad}, {"layer_norm_grad", ir.KindLayerNormGrad},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := New(backend.DeviceID{Type: "cpu"})
			op := benchNormOp(be, c.k)
			kernel := kernelOnly(be, op)
			pc := torchpeer.Case{Name: c.name, Dims: []int{benchRows, benchCols}}
			var ours, bare, theirs []float64
			for b.Loop() {
				r, err := peer.Best(pc, normVsIters)
				if err != nil {
					b.Fatal(err)
				}
				theirs = append(theirs, r.Seconds)
				ours = append(ours, benchMedianSeconds(normVsIters, func() { be.Exec(op) }))
				if kernel != nil {
					bare = append(bare, benchMedianSeconds(normVsIters, kernel))
				}
			}
			e, t := benchMedian(ours)*1e3, benchMedian(theirs)*1e3
			b.ReportMetric(e, "ember-ms")
			b.ReportMetric(t, "torch-ms")
			b.ReportMetric(t/e, "x-torch")
			if kernel != nil {
				b.ReportMetric(benchMedian(bare)*1e3, "kernel-ms")
			}
		})
	}
}

// kernelOnly returns, for the F32 forward kinds, the row kernel of op
// writing into one output buffer allocated here once (what Exec runs,
// without the output's allocation), and nil for the other kinds.
func kernelOnly(be *Backend, op ir.Op) func() {
	x, _ := rowMajorData(op.In[0], be.f32)
	out := make([]float32, len(x))
	g := axisLanesOf(op.In[0].Shape(), op.Axis)
	switch op.Kind {
	case ir.KindSoftmax, ir.KindLogSoftmax:
		return func() { softmax32(out, x, g, op.Kind == ir.KindLogSoftmax) }
	case ir.KindLayerNorm:
		w, _ := rowMajorData(op.In[1], be.f32)
		bias, _ := rowMajorData(op.In[2], be.f32)
		nr := newNormRows(&op)
		return func() { norm32(out, x, w, bias, nr) }
	}
	return nil
}

// normVsIters is the number of calls each side times per round.
const normVsIters = 15

// benchRun is what benchTimed measured.
type benchRun struct {
	median float64 // seconds, of the timed calls
	calls  int     // calls made, warm-up included
	slow   int     // timed calls longer than benchSlow times the fastest
}

// benchSlow is the ratio to the fastest timed call above which benchTimed
// counts a call as slow (a call at one worker's speed takes about twice
// as long).
const benchSlow = 1.6

// benchTimed calls f for torchpeer.Warmup (at least twice; the PyTorch
// peer warms up for as long), then times iters calls.
func benchTimed(iters int, f func()) benchRun {
	t := torchpeer.Time(iters, torchpeer.Warmup, f)
	r := benchRun{median: t.Median, calls: t.Calls}
	fastest := slices.Min(t.Times)
	for _, s := range t.Times {
		if s > benchSlow*fastest {
			r.slow++
		}
	}
	return r
}

// benchMedianSeconds is benchTimed's median.
func benchMedianSeconds(iters int, f func()) float64 {
	return benchTimed(iters, f).median
}

func benchMedian(v []float64) float64 { return torchpeer.Median(v) }

// startTorchPeer starts the PyTorch peer (torchpeer.Start with the
// default interpreters), stopped when b ends, or skips b when no Python
// with torch runs it.
func startTorchPeer(b *testing.B) *torchpeer.Peer {
	p, err := torchpeer.Start(torchpeer.Options{})
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}
