package ember_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// cudaDevice returns cuda:0 or skips the test where no GPU can run.
func cudaDevice(tb testing.TB) ember.Device {
	tb.Helper()
	dev := ember.CUDA(0)
	if err := dev.Init(); err != nil {
		tb.Skipf("no CUDA device: %v", err)
	}
	return dev
}

// A training run of 2000 steps holds the CUDA allocator's reserved bytes
// flat after warm-up (package documentation, section Devices, on Memory),
// and the install-pools cycle works on a real workload: growable layout →
// run → read PagesPeak → install the same layout capped at the peak → run
// again without growth.
func TestCUDATrainingMemoryFlat(t *testing.T) {
	dev := cudaDevice(t)
	dev.Seed(1)
	// Start from a quiet allocator: tensors of earlier tests in this
	// process are collected and their pages released.
	runtime.GC()
	dev.MemoryCleanup()
	steps := func(ad ember.Device, n int, after func(step int)) { mlpSteps(t, ad, n, after) }
	// Warm-up is the first 1000 steps: the allocator's reserve converges to
	// the live bytes plus the garbage it lets accumulate between the
	// collections it forces (backend/cuda allocator.go, gcDueLocked). On an
	// H200 it reached 109 MB by step 250 and its final 117 MB, one 8 MiB
	// page more, at step 750 (bench/NOTES.md "CUDA acceptance run").
	reserved := map[int]uint64{}
	steps(dev.Autodiff(), 2000, func(i int) {
		if i%250 == 0 {
			if err := dev.Sync(); err != nil {
				t.Fatal(err)
			}
			u, ok := dev.MemoryPoolUsage()
			if !ok {
				t.Fatal("cuda:0 does not report MemoryPoolUsage")
			}
			reserved[i] = u.BytesReserved
		}
	})
	t.Logf("BytesReserved by step: 250 %d, 500 %d, 1000 %d, 1500 %d, 2000 %d",
		reserved[250], reserved[500], reserved[1000], reserved[1500], reserved[2000])
	for i := 1250; i <= 2000; i += 250 {
		if reserved[i] > reserved[1000] {
			t.Errorf("BytesReserved grew after warm-up: %d at step 1000, %d at step %d", reserved[1000], reserved[i], i)
		}
	}

	// The install-pools cycle.
	dev.MemoryCleanup()
	page := uint64(8 << 20)
	growable := ember.Sliced([]ember.SlicedPool{{PageSize: page}})
	if err := dev.MemoryInstallPools(growable); err != nil {
		t.Fatalf("install growable layout: %v", err)
	}
	steps(dev.Autodiff(), 50, nil)
	rep, ok := dev.MemoryPoolReport()
	if !ok || len(rep) != 1 || rep[0].PagesPeak == 0 {
		t.Fatalf("pool report after the growable run: %+v, %v", rep, ok)
	}
	peak := rep[0].PagesPeak
	capped := ember.Sliced([]ember.SlicedPool{{PageSize: page, Pages: &peak}})
	var err error
	for range 10 { // live tensors are freed by the garbage collector
		if err = dev.MemoryInstallPools(capped); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("install capped layout (%d pages): %v", peak, err)
	}
	steps(dev.Autodiff(), 50, nil)
	rep, _ = dev.MemoryPoolReport()
	t.Logf("pages peak: growable run %d, capped run %d (cap %d)", peak, rep[0].PagesPeak, peak)
	if rep[0].Pages > peak {
		t.Errorf("capped pool grew to %d pages, cap %d", rep[0].Pages, peak)
	}
	if err := dev.MemoryInstallPools(ember.Preset()); err != nil {
		t.Logf("restoring the preset layout: %v", err)
	}
}

func benchMatmul(b *testing.B, dt ember.DType, n int) {
	dev := cudaDevice(b)
	x := ember.RandomDType([]int{n, n}, ember.Normal(0, 1), dt, dev)
	y := ember.RandomDType([]int{n, n}, ember.Normal(0, 1), dt, dev)
	x.Matmul(y)
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		x.Matmul(y)
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// BenchmarkCUDAMatmulBF16_8192 is an 8192³ bf16 product (F32 accumulation).
func BenchmarkCUDAMatmulBF16_8192(b *testing.B) { benchMatmul(b, ember.BF16, 8192) }

// BenchmarkCUDAMatmulF32_4096 is a 4096³ f32 product (TF32 off).
func BenchmarkCUDAMatmulF32_4096(b *testing.B) { benchMatmul(b, ember.F32, 4096) }

// BenchmarkCUDAAddF32 adds two 2^28-element f32 tensors: bandwidth counts
// two reads and one write.
func BenchmarkCUDAAddF32(b *testing.B) {
	dev := cudaDevice(b)
	n := 1 << 28
	x := ember.RandomDType([]int{n}, ember.Normal(0, 1), ember.F32, dev)
	y := ember.RandomDType([]int{n}, ember.Normal(0, 1), ember.F32, dev)
	x.Add(y)
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		x.Add(y)
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(3*4*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkCUDATinyAdd is the per-op dispatch cost of a 1-element add
// (host time per op; the device work is negligible).
func BenchmarkCUDATinyAdd(b *testing.B) {
	dev := cudaDevice(b)
	x := ember.Ones([]int{1}, dev)
	y := ember.Ones([]int{1}, dev)
	x.Add(y)
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		x.Add(y)
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/op")
}

// BenchmarkCUDATinyIntDiv is the host time per op of a 1-element I32
// division: with the divisor checked on the device it queues like an add
// (compare BenchmarkCUDATinyAdd); a host check would add a device round
// trip per op.
func BenchmarkCUDATinyIntDiv(b *testing.B) {
	dev := cudaDevice(b)
	x := ember.Ones([]int{1}, dev).Cast(ember.I32)
	y := x.AddScalar(1)
	x.Div(y)
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		x.Div(y)
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/op")
}

// BenchmarkCUDAOneHot64 is the host time per OneHot of 64 labels into 10
// classes (a batch's targets), which reads no label back on cuda.
func BenchmarkCUDAOneHot64(b *testing.B) {
	dev := cudaDevice(b)
	vals := make([]int, 64)
	for i := range vals {
		vals[i] = (7 * i) % 10
	}
	labels := ember.FromInts(vals, []int{64}, dev)
	ember.OneHot(labels, 10)
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		ember.OneHot(labels, 10)
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/op")
}

// BenchmarkCUDAIrregularChains is the host time per elementwise op of an
// irregular op sequence with dropped results: iteration i runs a chain of
// 1 + (7i mod 13) ops tanh(y·0.5 + c) with a constant c that changes
// every iteration, and drops it; the fusion decorator's drains (every 256
// ops and at the Sync) cut the sequence at positions that move from drain
// to drain, so their programs keep changing. Each op's kernel is built
// before the timer starts.
func BenchmarkCUDAIrregularChains(b *testing.B) {
	dev := cudaDevice(b)
	x := ember.Ones([]int{64}, dev)
	x.MulScalar(0.5).AddScalar(1).Tanh()
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	ops := 0
	b.ResetTimer()
	for i := range b.N {
		y := x
		for range 1 + (7*i)%13 {
			y = y.MulScalar(0.5).AddScalar(float64(i%17) / 16).Tanh()
			ops += 3
		}
	}
	if err := dev.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ops)/1e3, "us/elementwise-op")
}

// BenchmarkCUDATrainCNNStep is one step of `ember train --model cnn` on
// cuda:0 (batch 64 uploaded from the host, forward, cross-entropy,
// backward, Adam, the loss read back), as train.step does it.
func BenchmarkCUDATrainCNNStep(b *testing.B) {
	dev := cudaDevice(b)
	dev.Seed(1)
	ad := dev.Autodiff()
	model := train.NewCNN(ad)
	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{})
	images := make([]float32, 64*28*28)
	labels := make([]int64, 64)
	for i := range images {
		images[i] = float32(i%251) / 251
	}
	for i := range labels {
		labels[i] = int64(i*7) % 10
	}
	step := func() float64 {
		x := ember.FromFloats(images, []int{64, 1, 28, 28}, ad)
		y := ember.FromInts(labels, []int{64}, ad)
		loss := nn.CrossEntropy(model.Forward(x), y)
		opt.Step(loss.Backward())
		return loss.Item()
	}
	for range 20 {
		step()
	}
	b.ResetTimer()
	for range b.N {
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1e3, "ms/step")
}

// Adam and AdamW on cuda:0 take the backend's fused update (its kernel of
// ir.KindAdamStep); over three steps it matches the update composed
// from elementwise ops on the same device (the documented sequence) within
// 1e-6 relative — by construction it is bit for bit the same.
func TestCUDAFusedAdamMatchesComposed(t *testing.T) {
	dev := cudaDevice(t)
	if !dev.Backend().Supports(ir.KindAdamStep, ember.F32) {
		t.Fatal("cuda:0 has no kernel for ir.KindAdamStep")
	}
	dev.Seed(7)
	ad := dev.Autodiff()
	for _, tc := range []struct {
		name      string
		cfg       optim.AdamConfig
		decoupled bool
	}{
		{"adam", optim.AdamConfig{LR: 0.01}, false},
		{"adam-l2", optim.AdamConfig{LR: 0.02, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.1}, false},
		{"adamw", optim.AdamConfig{LR: 0.03, WeightDecay: 0.2}, true},
	} {
		shape := []int{37, 129}
		theta := ember.Randn(shape, dev)
		p := &nn.Param{Value: theta.ToDevice(ad).RequireGrad()}
		ps := []nn.NamedParam{{Name: "w", Param: p}}
		var opt optim.Optimizer = optim.NewAdam(ps, tc.cfg)
		if tc.decoupled {
			opt = optim.NewAdamW(ps, tc.cfg)
		}
		c := tc.cfg
		if c.Beta1 == 0 {
			c.Beta1, c.Beta2, c.Eps = 0.9, 0.999, 1e-8
		}
		m, v := ember.ZerosLike(theta), ember.ZerosLike(theta)
		for step := 1; step <= 3; step++ {
			w := ember.Randn(shape, dev) // d/dθ Σ θ·w = w
			opt.Step(p.Value.Mul(w.ToDevice(ad)).Sum().Backward())
			g := w
			if tc.decoupled {
				theta = theta.MulScalar(1 - c.LR*c.WeightDecay)
			} else if c.WeightDecay != 0 {
				g = g.Add(theta.MulScalar(c.WeightDecay))
			}
			m = m.MulScalar(c.Beta1).Add(g.MulScalar(1 - c.Beta1))
			v = v.MulScalar(c.Beta2).Add(g.Mul(g).MulScalar(1 - c.Beta2))
			bc1 := 1 - math.Pow(c.Beta1, float64(step))
			bc2 := 1 - math.Pow(c.Beta2, float64(step))
			theta = theta.Sub(m.Div(v.Sqrt().DivScalar(math.Sqrt(bc2)).AddScalar(c.Eps)).MulScalar(c.LR / bc1))
			got, want := p.Value.Inner().Float64s(), theta.Float64s()
			var num, den float64
			for i := range want {
				num += (got[i] - want[i]) * (got[i] - want[i])
				den += want[i] * want[i]
			}
			if rel := math.Sqrt(num / den); !(rel <= 1e-6) {
				t.Fatalf("%s step %d: fused vs composed relative error %.3g", tc.name, step, rel)
			} else if step == 3 {
				t.Logf("%s: fused vs composed relative error %.3g after 3 steps", tc.name, rel)
			}
		}
	}
}
