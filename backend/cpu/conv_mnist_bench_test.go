package cpu

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/torchpeer"
	"github.com/emberml/ember/ir"
)

// mnistConvLayers are the two convolutions of the MNIST CNN
// (train.NewCNN): batch 64, 5×5 kernels, stride 1, no padding.
var mnistConvLayers = []struct {
	name   string
	xs, ws [4]int
}{
	{"conv1", [4]int{64, 1, 28, 28}, [4]int{32, 1, 5, 5}},
	{"conv2", [4]int{64, 32, 12, 12}, [4]int{64, 32, 5, 5}},
}

// mnistConvOp is one of the three kernels of a convolution layer as
// training runs them: the forward Conv2d, the input gradient as the
// autodiff rule emits it (ConvTranspose2d of the output gradient with the
// same weights) and the weight gradient (KindConv2dWeightGrad).
type mnistConvOp struct {
	name  string // conv1_fwd, conv1_dgrad, ...: bench/torch_conv_bench.py's names
	flops float64
	run   func()
	peer  torchpeer.Case // the PyTorch peer's case
}

// mnistConvOps builds the six kernels of mnistConvLayers on be with
// random operands.
func mnistConvOps(be *Backend) []mnistConvOp {
	o := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	var ops []mnistConvOp
	for i, l := range mnistConvLayers {
		x := randTensor(be, l.xs[:], uint64(10*i+1))
		w := randTensor(be, l.ws[:], uint64(10*i+2))
		ys := convShape(l.xs[:], l.ws[:], o, false)
		g := randTensor(be, ys[:], uint64(10*i+3))
		flops := 2 * float64(ys[0]*ys[1]*ys[2]*ys[3]) * float64(l.ws[1]*l.ws[2]*l.ws[3])
		// torch_peer.py's conv cases: [n, cin, h, w, cout, kh, kw, pad].
		dims := []int{l.xs[0], l.xs[1], l.xs[2], l.xs[3], l.ws[0], l.ws[2], l.ws[3], 0}
		ops = append(ops,
			mnistConvOp{l.name + "_fwd", flops, func() { ir.Conv2d(be, x, w, o) }, torchpeer.Case{Name: "conv_fwd", Dims: dims}},
			mnistConvOp{l.name + "_dgrad", flops, func() { ir.ConvTranspose2d(be, g, w, o) }, torchpeer.Case{Name: "conv_dgrad", Dims: dims}},
			mnistConvOp{l.name + "_wgrad", flops, func() { conv2dWeightGrad(be, x, g, l.ws, o) }, torchpeer.Case{Name: "conv_wgrad", Dims: dims}},
		)
	}
	return ops
}

// BenchmarkConvMNIST times the forward and both gradients of each
// convolution of the MNIST CNN through Exec (output allocation included).
// Besides the wall-clock rate it reports the process's CPU time per call
// (cpu-ms/op, all workers together) and the rate per CPU second
// (cpu-GFLOP/s; with -cpu 1, one core's rate), which a shared machine's
// load does not distort as much.
func BenchmarkConvMNIST(b *testing.B) {
	for _, op := range mnistConvOps(New(backend.DeviceID{Type: "cpu"})) {
		b.Run(op.name, func(b *testing.B) {
			c0, ok := processCPUTime()
			for b.Loop() {
				op.run()
			}
			c1, _ := processCPUTime()
			b.ReportMetric(op.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := (c1 - c0).Seconds(); ok && cpu > 0 {
				b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
				b.ReportMetric(op.flops*float64(b.N)/cpu/1e9, "cpu-GFLOP/s")
			}
		})
	}
}

// BenchmarkConvVersusTorch times the kernels of BenchmarkConvMNIST side by
// side with PyTorch's: it starts the PyTorch peer (startTorchPeer;
// bench/torch_conv_bench.py runs the same cases by hand) and runs
// -benchtime rounds (e.g. -benchtime 5x), each asking PyTorch for the
// median of convVsIters calls at 1 thread, 2 threads and its default, then
// timing the median of convVsIters calls here, each side after 100 ms of
// warm-up calls (benchTimed). It reports the medians over the rounds:
// ember-ms, torch-ms (PyTorch's best setting that round), x-torch
// (torch-ms / ember-ms, above 1 when this backend is faster) and the
// thread settings' shares (torch-1t-ms, torch-2t-ms); the mean over the
// rounds of the calls here that took over 1.6 times their round's fastest
// (ember-slow/round: the half-speed phases bench/NOTES.md describes); and
// in process CPU time per call (all threads, warm-up calls included,
// which a shared machine's load distorts less): ember-cpu-ms,
// torch-cpu-ms (the least of PyTorch's settings that round) and
// x-torch-cpu. ns/op counts both sides and means nothing. The worker pool
// keeps the size it started with, so compare worker counts in separate
// processes (-cpu 1, then -cpu 2), not with one -cpu list.
func BenchmarkConvVersusTorch(b *testing.B) {
	peer := startTorchPeer(b)
	for _, op := range mnistConvOps(New(backend.DeviceID{Type: "cpu"})) {
		b.Run(op.name, func(b *testing.B) {
			var ours, theirs, one, two, oursCPU, theirsCPU []float64
			slow := 0
			for b.Loop() {
				var pt [3]torchpeer.Result
				for i, threads := range []int{1, 2, 0} {
					var err error
					if pt[i], err = peer.Median(op.peer, threads, convVsIters); err != nil {
						b.Fatal(err)
					}
				}
				one, two = append(one, pt[0].Seconds), append(two, pt[1].Seconds)
				theirs = append(theirs, math.Min(pt[0].Seconds, math.Min(pt[1].Seconds, pt[2].Seconds)))
				theirsCPU = append(theirsCPU, math.Min(pt[0].CPUSeconds, math.Min(pt[1].CPUSeconds, pt[2].CPUSeconds)))
				p0, _ := processCPUTime()
				r := benchTimed(convVsIters, op.run)
				p1, _ := processCPUTime()
				ours = append(ours, r.median)
				oursCPU = append(oursCPU, (p1-p0).Seconds()/float64(r.calls))
				slow += r.slow
			}
			e, t := benchMedian(ours)*1e3, benchMedian(theirs)*1e3
			b.ReportMetric(e, "ember-ms")
			b.ReportMetric(t, "torch-ms")
			b.ReportMetric(t/e, "x-torch")
			b.ReportMetric(benchMedian(one)*1e3, "torch-1t-ms")
			b.ReportMetric(benchMedian(two)*1e3, "torch-2t-ms")
			b.ReportMetric(op.flops/e/1e6, "GFLOP/s")
			b.ReportMetric(float64(slow)/float64(len(ours)), "ember-slow/round")
			if ec, tc := benchMedian(oursCPU)*1e3, benchMedian(theirsCPU)*1e3; ec > 0 && !math.IsNaN(tc) {
				b.ReportMetric(ec, "ember-cpu-ms")
				b.ReportMetric(tc, "torch-cpu-ms")
				b.ReportMetric(tc/ec, "x-torch-cpu")
			}
		})
	}
}

// convVsIters is the number of calls each side times per round.
const convVsIters = 15
