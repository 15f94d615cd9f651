package cpu

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
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
// PyTorch's: it starts bench/torch_norm_bench.py --serve under a python3
// that has torch ($EMBER_TORCH_PYTHON, else python3, else
// /usr/bin/python3; skipped when none does) and runs -benchtime rounds
// (e.g. -benchtime 5x), each asking PyTorch for the median of
// normVsIters calls at 1 thread, 2 threads and its default, then timing
// the median of normVsIters calls here. It reports the medians over the
// rounds: ember-ms, torch-ms (PyTorch's best setting), x-torch
// (torch-ms / ember-ms, above 1 when this backend is faster) and, for the
// forward kinds, kernel-ms (the kernel writing into a buffer it reuses:
// Exec without the output's allocation); ns/op counts both sides and
// means nothing.
func BenchmarkNormVersusTorch(b *testing.B) {
	peer := startTorchPeer(b, "torch_norm_bench.py")
	defer peer.close()
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
			var ours, bare, theirs []float64
			for b.Loop() {
				best := math.Inf(1)
				for _, threads := range []int{1, 2, 0} {
					best = min(best, peer.median(b, c.name, threads, normVsIters))
				}
				theirs = append(theirs, best)
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

// benchWarmup is how long benchTimed calls f before timing it. After an
// idle gap of 200 ms or more (a peer's turn), this 2-vCPU machine runs a
// two-worker kernel at one worker's speed for 30–50 ms (bench/NOTES.md,
// "half-speed phases"), which two warm-up calls left inside the median;
// bench/torch_peer.py's timed warms up for as long.
const benchWarmup = 100 * time.Millisecond

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

// benchTimed calls f for benchWarmup (at least twice), then times iters
// calls.
func benchTimed(iters int, f func()) benchRun {
	var r benchRun
	for t0 := time.Now(); r.calls < 2 || time.Since(t0) < benchWarmup; r.calls++ {
		f()
	}
	ts := make([]float64, iters)
	for i := range ts {
		t0 := time.Now()
		f()
		ts[i] = time.Since(t0).Seconds()
	}
	r.calls += iters
	r.median = benchMedian(ts)
	fastest := slices.Min(ts)
	for _, t := range ts {
		if t > benchSlow*fastest {
			r.slow++
		}
	}
	return r
}

// benchMedianSeconds is benchTimed's median.
func benchMedianSeconds(iters int, f func()) float64 {
	return benchTimed(iters, f).median
}

func benchMedian(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// torchPeer is a running peer script of bench/ (torch_norm_bench.py,
// torch_conv_bench.py) in --serve mode.
type torchPeer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startTorchPeer starts bench/script --serve, or skips b when no python3
// with torch runs it.
func startTorchPeer(b *testing.B, script string) *torchPeer {
	var tried []string
	for _, py := range []string{os.Getenv("EMBER_TORCH_PYTHON"), "python3", "/usr/bin/python3"} {
		if py == "" {
			continue
		}
		cmd := exec.Command(py, "../../bench/"+script, "--serve")
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		outp, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			tried = append(tried, py+": "+err.Error())
			continue
		}
		out := bufio.NewScanner(outp)
		if out.Scan() && strings.HasPrefix(out.Text(), "ready") {
			return &torchPeer{cmd: cmd, in: in, out: out}
		}
		in.Close()
		cmd.Wait()
		tried = append(tried, py+": no torch")
	}
	b.Skipf("no python3 with torch to run bench/%s (%s)", script, strings.Join(tried, "; "))
	return nil
}

// median asks the peer for the median seconds of iters calls of op at
// threads threads (0: PyTorch's default).
func (p *torchPeer) median(b *testing.B, op string, threads, iters int) float64 {
	v, _ := p.medianCPU(b, op, threads, iters)
	return v
}

// medianCPU is median, also returning the peer's process CPU seconds per
// call when its answer carries them (NaN otherwise).
func (p *torchPeer) medianCPU(b *testing.B, op string, threads, iters int) (wall, cpu float64) {
	if _, err := fmt.Fprintf(p.in, "%s %d %d\n", op, threads, iters); err != nil {
		b.Fatal(err)
	}
	if !p.out.Scan() {
		b.Fatalf("torch peer: no answer for %s: %v", op, p.out.Err())
	}
	f := strings.Fields(p.out.Text())
	if len(f) == 0 {
		b.Fatalf("torch peer: empty answer for %s", op)
	}
	wall, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		b.Fatalf("torch peer: %v", err)
	}
	cpu = math.NaN()
	if len(f) > 1 {
		if cpu, err = strconv.ParseFloat(f[1], 64); err != nil {
			b.Fatalf("torch peer: %v", err)
		}
	}
	return wall, cpu
}

func (p *torchPeer) close() {
	fmt.Fprintln(p.in, "quit")
	p.in.Close()
	p.cmd.Wait()
}
