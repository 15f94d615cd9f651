package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/internal/torchpeer"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchScale divides every benchmark size (tests set it to make runs tiny);
// 1 gives the sizes of the command's help.
var benchScale = 1

// Timing of one measurement: at least minSamples timed runs after one
// warm-up, continuing to maxSamples while under minTime, never starting a
// run after maxTime.
var (
	minSamples = 5
	maxSamples = 50
	minTime    = time.Second
	maxTime    = 4 * time.Second
)

// bencher holds what the families share: the device and the peers.
type bencher struct {
	ctx      context.Context
	dev      ember.Device
	name     string
	openblas *cpu.GEMM
	blasErr  error
	errOut   io.Writer
	// torch is the PyTorch peer (started by the first family that needs
	// it, torchTried then set; nil when none could be).
	torch      *torchpeer.Peer
	torchTried bool
	// notes are lines printed after the results (why a peer is missing).
	notes []string
}

func newBencher(cfg BenchConfig) (*bencher, error) {
	name := cfg.Device
	if name == "" {
		name = "cpu"
	}
	dev, err := parseDeviceArg(name)
	if err == nil {
		err = dev.Init()
	}
	if err != nil {
		if cfg.DeviceFromEnv {
			return nil, envDeviceError(name, err)
		}
		return nil, err
	}
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	b := &bencher{ctx: ctx, dev: dev, name: dev.String()}
	if cfg.ErrOut != nil && isTerminal(cfg.ErrOut) {
		b.errOut = cfg.ErrOut
	}
	if o, err := cpu.OpenBLAS(); err == nil {
		b.openblas = &o
	} else {
		b.blasErr = err
	}
	return b, nil
}

// progress shows what is being measured on a terminal ("" clears the line).
func (b *bencher) progress(what string) {
	if b.errOut != nil {
		fmt.Fprintf(b.errOut, "\r\033[K%s", what)
	}
}

// median times f (after a warm-up) and returns the median seconds per run.
func (b *bencher) median(label string, f func()) float64 {
	b.progress("bench " + label)
	f()
	var times []float64
	start := time.Now()
	for len(times) < maxSamples && b.ctx.Err() == nil {
		el := time.Since(start)
		if len(times) >= minSamples && el >= minTime || len(times) >= 1 && el >= maxTime {
			break
		}
		t0 := time.Now()
		f()
		times = append(times, time.Since(t0).Seconds())
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// medianPair times f and g in turn (after a warm-up of each), so that both
// see the same load on a shared machine, and returns the median seconds
// per run of each; a ratio of the two is then a paired comparison.
func (b *bencher) medianPair(label string, f, g func()) (float64, float64) {
	b.progress("bench " + label)
	f()
	g()
	var tf, tg []float64
	start := time.Now()
	for len(tf) < maxSamples && b.ctx.Err() == nil {
		el := time.Since(start)
		if len(tf) >= minSamples && el >= minTime || len(tf) >= 1 && el >= maxTime {
			break
		}
		t0 := time.Now()
		f()
		t1 := time.Now()
		g()
		tf = append(tf, t1.Sub(t0).Seconds())
		tg = append(tg, time.Since(t1).Seconds())
	}
	slices.Sort(tf)
	slices.Sort(tg)
	return tf[len(tf)/2], tg[len(tg)/2]
}

// timeOp times an ember computation, synchronizing the device after each run.
func (b *bencher) timeOp(label string, f func() *ember.Tensor) float64 {
	return b.median(label, func() {
		f()
		if err := b.dev.Sync(); err != nil {
			panic(err)
		}
	})
}

// benchFamily is one selectable group of measurements. An explicit
// family runs only when named (it needs hardware or memory the default
// run should not assume, or its rows are another family's subset).
type benchFamily struct {
	name     string
	run      func(b *bencher) ([]benchResult, error)
	explicit bool
}

var benchFamilies = []benchFamily{
	{name: "matmul", run: benchMatmul},
	{name: "add", run: func(b *bencher) ([]benchResult, error) { return benchStream(b, "add") }},
	{name: "sum", run: func(b *bencher) ([]benchResult, error) { return benchStream(b, "sum") }},
	{name: "conv2d", run: benchConv},
	{name: "softmax", run: func(b *bencher) ([]benchResult, error) { return b.kernelGroups(kernelNorms) }, explicit: true},
	{name: "fusion", run: benchFusion},
	{name: "mnist", run: func(b *bencher) ([]benchResult, error) { return b.kernelGroups(kernelMLPStep) }, explicit: true},
}

func randFloats[T float32 | float64](n int, seed uint64) []T {
	r := rand.New(rand.NewPCG(seed, 5))
	v := make([]T, n)
	for i := range v {
		v[i] = T(r.NormFloat64())
	}
	return v
}

// withRatios sets the ember row's ratios to the peer rows' rates.
func withRatios(ember benchResult, peers ...benchResult) []benchResult {
	out := []benchResult{ember}
	for _, p := range peers {
		if p.rate() > 0 {
			if ember.Ratios == nil {
				ember.Ratios = map[string]float64{}
			}
			ember.Ratios[p.Backend] = ember.rate() / p.rate()
		}
		out = append(out, p)
	}
	out[0] = ember
	return out
}

func benchMatmul(b *bencher) ([]benchResult, error) {
	type job struct {
		n  int
		dt ember.DType
	}
	var out []benchResult
	for _, j := range []job{{256, ember.F32}, {512, ember.F32}, {1024, ember.F32}, {2048, ember.F32}, {1024, ember.F64}} {
		n := max(j.n/benchScale, 2)
		flop := 2 * float64(n) * float64(n) * float64(n)
		shape := fmt.Sprintf("%dx%dx%d", n, n, n)
		dt := j.dt.String()
		x := ember.Randn([]int{n, n}, b.dev).Cast(j.dt)
		y := ember.Randn([]int{n, n}, b.dev).Cast(j.dt)
		sec := b.timeOp("matmul "+shape+" "+dt+" "+b.name, func() *ember.Tensor { return x.Matmul(y) })
		row := benchResult{Bench: "matmul", Shape: shape, Backend: b.name, DType: dt, Median: sec, GFLOPS: flop / sec / 1e9}
		var peers []benchResult
		peer := func(name string, run func()) {
			s := b.median("matmul "+shape+" "+dt+" "+name, run)
			peers = append(peers, benchResult{Bench: "matmul", Shape: shape, Backend: name, DType: dt, Median: s, GFLOPS: flop / s / 1e9})
		}
		if j.dt == ember.F32 {
			a, bb, c := randFloats[float32](n*n, 1), randFloats[float32](n*n, 2), make([]float32, n*n)
			if b.openblas != nil {
				peer("openblas", func() { b.openblas.Sgemm(false, false, n, n, n, 1, a, n, bb, n, 0, c, n) })
			}
			peer("gonum", func() { gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n) })
		} else {
			a, bb, c := randFloats[float64](n*n, 1), randFloats[float64](n*n, 2), make([]float64, n*n)
			if b.openblas != nil {
				peer("openblas", func() { b.openblas.Dgemm(false, false, n, n, n, 1, a, n, bb, n, 0, c, n) })
			}
			peer("gonum", func() { gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n) })
		}
		if b.openblas == nil {
			row.Note = "openblas skipped: " + b.blasErr.Error()
		}
		out = append(out, withRatios(row, peers...)...)
	}
	return out, nil
}

// benchStream measures add (x+y) or sum (full reduction) of 16M f32
// against Go's copy of the input bytes into a warm buffer.
func benchStream(b *bencher, op string) ([]benchResult, error) {
	n := (16 << 20) / benchScale
	shape := fmt.Sprint(n)
	x := ember.FromFloats(randFloats[float32](n, 1), []int{n}, b.dev)
	y := ember.FromFloats(randFloats[float32](n, 2), []int{n}, b.dev)
	var sec, bytes float64
	if op == "add" {
		sec = b.timeOp("add "+shape+" "+b.name, func() *ember.Tensor { return x.Add(y) })
		bytes = 3 * 4 * float64(n) // two reads, one write
	} else {
		sec = b.timeOp("sum "+shape+" "+b.name, func() *ember.Tensor { return x.Sum() })
		bytes = 4 * float64(n)
	}
	row := benchResult{Bench: op, Shape: shape, Backend: b.name, DType: "f32", Median: sec, GBPS: bytes / sec / 1e9}
	src, dst := randFloats[float32](n, 3), make([]float32, n)
	cs := b.median(op+" "+shape+" go-copy", func() { copy(dst, src) })
	peer := benchResult{Bench: op, Shape: shape, Backend: "go-copy", DType: "f32", Median: cs, GBPS: 2 * 4 * float64(n) / cs / 1e9}
	return withRatios(row, peer), nil
}

func benchConv(b *bencher) ([]benchResult, error) {
	n, c, hw := max(64/benchScale, 1), max(64/benchScale, 1), max(56/benchScale, 3)
	x := ember.Randn([]int{n, c, hw, hw}, b.dev)
	w := ember.Randn([]int{c, c, 3, 3}, b.dev)
	opts := ember.ConvOptions{Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	shape := fmt.Sprintf("%dx%dx%dx%d k3 ->%d", n, c, hw, hw, c)
	flop := 2 * float64(n*c*hw*hw) * float64(c*9)
	sec := b.timeOp("conv2d "+shape, func() *ember.Tensor { return x.Conv2d(w, nil, opts) })
	fwd := benchResult{Bench: "conv2d", Shape: shape, Backend: b.name, DType: "f32", Median: sec, GFLOPS: flop / sec / 1e9}
	y := x.Conv2d(w, nil, opts)
	sec = b.timeOp("conv_transpose2d "+shape, func() *ember.Tensor { return y.ConvTranspose2d(w, nil, opts) })
	bwd := benchResult{Bench: "conv_transpose2d", Shape: shape, Backend: b.name, DType: "f32", Median: sec, GFLOPS: flop / sec / 1e9}
	return []benchResult{fwd, bwd}, nil
}

// benchMNIST times one training step of the MLP on synthetic images:
// forward, cross-entropy, backward and an Adam update.
func benchMNIST(b *bencher) ([]benchResult, error) {
	batch := max(64/benchScale, 2)
	sec := b.median("mnist mlp step", mnistStep(b.dev, batch))
	return []benchResult{{Bench: "mnist-mlp-step", Shape: fmt.Sprintf("784-128-10 batch %d adam", batch),
		Backend: b.name, DType: "f32", Median: sec}}, nil
}

// mnistStep returns one training step of a new MNIST MLP on dev (with
// autodiff) on a batch of batch synthetic images: forward, cross-entropy,
// backward, an Adam update and the loss read back.
func mnistStep(dev ember.Device, batch int) func() {
	adev := dev.Autodiff()
	model := train.NewMLP(adev)
	opt := optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 1e-3})
	images := randFloats[float32](batch*784, 1)
	labels := mnistLabels(batch)
	return func() {
		x := ember.FromFloats(images, []int{batch, 1, 28, 28}, adev)
		y := ember.FromInts(labels, []int{batch}, adev)
		loss := nn.CrossEntropy(model.Forward(x), y)
		opt.Step(loss.Backward())
		loss.Item()
	}
}
