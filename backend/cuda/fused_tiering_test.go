package cuda

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/fusion"
	"github.com/emberml/ember/ir"
)

// TestFusedTieringSettings checks the settings without a GPU: the
// defaults, EMBER_CUDA_SYNC_COMPILE and SetFusedTiering.
func TestFusedTieringSettings(t *testing.T) {
	t.Setenv(SyncCompileEnv, "")
	got := (&Backend{}).FusedTieringOf()
	want := FusedTiering{Threshold: DefaultFusedThreshold, Workers: DefaultFusedWorkers(), Queue: DefaultFusedQueue}
	if got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	for v, sync := range map[string]bool{"1": true, "true": true, " ON ": true, "yes": true, "0": false, "false": false, "2": false} {
		t.Setenv(SyncCompileEnv, v)
		if got := (&Backend{}).FusedTieringOf().Sync; got != sync {
			t.Errorf("%s=%q: Sync %v, want %v", SyncCompileEnv, v, got, sync)
		}
	}
	b := &Backend{}
	b.SetFusedTiering(FusedTiering{Threshold: 5, Workers: 3, Queue: 7})
	if got := b.FusedTieringOf(); got != (FusedTiering{Threshold: 5, Workers: 3, Queue: 7}) {
		t.Errorf("after SetFusedTiering: %+v", got)
	}
	b.SetFusedTiering(FusedTiering{Sync: true})
	if got := b.FusedTieringOf(); !got.Sync || got.Threshold != DefaultFusedThreshold {
		t.Errorf("after SetFusedTiering(Sync): %+v", got)
	}
	if st := b.FusedCompileStats(); st != (FusedCompileStats{}) {
		t.Errorf("stats of an unused backend: %+v", st)
	}
	b.WaitFusedCompiles() // nothing to wait for: returns

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, w := range map[int]int{1: 1, 2: 1, 7: 1, 8: 2, 16: 4, 128: 4} {
		runtime.GOMAXPROCS(procs)
		if got := DefaultFusedWorkers(); got != w {
			t.Errorf("GOMAXPROCS %d: %d workers, want %d", procs, got, w)
		}
	}
}

// tieredBackend opens a backend of its own on GPU 0 (skipping without
// one) with an empty disk cache under a temporary directory, no warm-up,
// and the tiering cfg.
func tieredBackend(t testing.TB, cfg FusedTiering) *Backend {
	t.Helper()
	<-gpu(t).kcache.warmDone // its builds read the cache directory set below
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("EMBER_CUDA_WARMUP", "0")
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	b.SetFusedTiering(cfg)
	t.Cleanup(b.WaitFusedCompiles) // no compilation outlives its test
	return b
}

// fusedCompiled is the number of fused kernels NVRTC compiled on b.
func fusedCompiled(b *Backend) int {
	n := 0
	for _, name := range b.nvrtcCompiled() {
		if strings.HasPrefix(name, "ember_fused_") {
			n++
		}
	}
	return n
}

// sigCounter is b as a fusion decorator's base backend, counting the
// programs the decorator hands it per signature.
type sigCounter struct {
	*Backend
	mu   sync.Mutex
	seen map[string]int
}

func (s *sigCounter) ExecFused(p *ir.FusedProgram, inputs []backend.Tensor) ([]backend.Tensor, bool) {
	s.mu.Lock()
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	s.seen[fusedSignature(p)]++
	s.mu.Unlock()
	return s.Backend.ExecFused(p, inputs)
}

// hot bounds the kernels a tiering of threshold may compile for the
// programs counted: a signature seen n times gives at most n/threshold
// kernels (each of its layouts counts apart, and none is compiled before
// it is seen threshold times).
func (s *sigCounter) hot(threshold int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.seen {
		n += c / threshold
	}
	return n
}

// TestGPUFusedTieringDroppedAdds is BenchmarkCUDATinyAdd's loop (x+y on
// one element, results dropped, then Sync) through the fusion decorator
// on a backend with an empty kernel cache: no fused kernel is compiled on
// the op stream, NVRTC compiles at most the two signatures the loop gives
// (64 adds, the remainder), the values are right, and once the background
// compilations are done the same loop runs as fused programs.
func TestGPUFusedTieringDroppedAdds(t *testing.T) {
	b := tieredBackend(t, FusedTiering{})
	fb, _ := fusion.New(b, fusion.Options{})
	fst := fb.(*fusion.Backend).Stats()
	x := b.FromData(ir.FromSlice([]float32{1.25}, []int{1}))
	y := b.FromData(ir.FromSlice([]float32{-3.5}, []int{1}))
	want := math.Float32bits(1.25 + -3.5)
	run := func(iters int) {
		t.Helper()
		var kept []backend.Tensor
		for i := range iters {
			z := ir.Add(fb, x, y)
			if i%500 == 499 {
				kept = append(kept, z)
			}
		}
		if err := fb.Sync(); err != nil {
			t.Fatal(err)
		}
		for i, z := range kept {
			if got := math.Float32bits(float32(read(t, fb, z).Value(0))); got != want {
				t.Fatalf("kept result %d: %#x, want %#x", i, got, want)
			}
		}
	}
	run(2000)
	st := b.FusedCompileStats()
	if st.Sync != 0 {
		t.Errorf("%d fused kernels compiled on the op stream, want 0", st.Sync)
	}
	if st.Declined == 0 {
		t.Error("no program declined on an empty kernel cache: its kernel was compiled on the op stream")
	}
	if n := fusedCompiled(b); n > 2 {
		t.Errorf("NVRTC compiled %d fused kernels for one loop of adds, want at most 2", n)
	}
	b.WaitFusedCompiles()
	if st := b.FusedCompileStats(); st.Failed != 0 || st.Built == 0 {
		t.Fatalf("background compilations: %+v", st)
	}
	p0 := fst.Programs.Load()
	run(2000)
	if fst.Programs.Load() == p0 {
		t.Error("no fused program ran once its kernel was compiled")
	}
	if n := fusedCompiled(b); n > 2 {
		t.Errorf("NVRTC compiled %d fused kernels over two loops of adds, want at most 2", n)
	}
	t.Logf("tiering: %+v; decorator: %d programs, %d declined", b.FusedCompileStats(), fst.Programs.Load(), fst.Declined.Load())
}

// irregularOps runs steps of a random, irregular op sequence (1–5
// elementwise ops between drains, most results dropped, scalars that
// change every time, F32 at two shapes with broadcasts, I32 divisions)
// on fb and, op for op, on the reference backend ref, and compares every
// value read on fb with ref's bit for bit. The sequence depends on seed
// only.
func irregularOps(t *testing.T, fb, ref backend.Backend, seed uint64, steps int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 77))
	type pair struct{ f, r backend.Tensor }
	up := func(d *backend.TensorData) pair { return pair{fb.FromData(d), ref.FromData(d)} }
	data := rand.New(rand.NewPCG(seed, 78))
	f32 := []pair{
		up(randomFusedData(data, []int{16, 33}, backend.F32, false)),
		up(randomFusedData(data, []int{16, 33}, backend.F32, false)),
		up(randomFusedData(data, []int{33}, backend.F32, false)),
		up(randomFusedData(data, []int{257}, backend.F32, false)),
		up(randomFusedData(data, []int{257}, backend.F32, false)),
	}
	i32 := []pair{up(randomFusedData(data, []int{257}, backend.I32, false))}
	divisor := up(randomFusedData(data, []int{257}, backend.I32, true))
	check := func(p pair, what string) {
		t.Helper()
		g, w := read(t, fb, p.f), read(t, ref, p.r)
		if string(g.Bytes) != string(w.Bytes) {
			t.Fatalf("%s: %v %v differs from the op-by-op result", what, g.DType, g.Shape)
		}
	}
	both := func(f func(e ir.Executor, xs ...backend.Tensor) backend.Tensor, xs ...pair) pair {
		fx, rx := make([]backend.Tensor, len(xs)), make([]backend.Tensor, len(xs))
		for i, x := range xs {
			fx[i], rx[i] = x.f, x.r
		}
		return pair{f(fb, fx...), f(ref, rx...)}
	}
	// pick returns a random F32 value of shape [257] (big) or of one
	// broadcasting to [16, 33].
	pick := func(big bool) pair {
		for {
			p := f32[r.IntN(len(f32))]
			if sh := p.f.Shape(); (len(sh) == 1 && sh[0] == 257) == big {
				return p
			}
		}
	}
	unaries := []ir.UnaryOp{ir.OpNeg, ir.OpTanh, ir.OpExp, ir.OpAbs, ir.OpSigmoid}
	binaries := []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpMax}
	for step := range steps {
		if r.IntN(2) == 0 {
			// A recurring program: tanh(a·b)+c on [16, 33], alone in its
			// drain (Sync first) and read at once.
			if err := fb.Sync(); err != nil {
				t.Fatalf("step %d: Sync: %v", step, err)
			}
			a, bb, c := f32[0], f32[1], f32[2]
			p := both(func(e ir.Executor, x ...backend.Tensor) backend.Tensor {
				return ir.Add(e, ir.Unary(e, ir.OpTanh, ir.Mul(e, x[0], x[1])), x[2])
			}, a, bb, c)
			check(p, "recurring program")
		}
		big := r.IntN(2) == 0
		for range 1 + r.IntN(5) {
			var p pair
			switch k := r.IntN(10); {
			case k < 3:
				u := unaries[r.IntN(len(unaries))]
				p = both(func(e ir.Executor, x ...backend.Tensor) backend.Tensor { return ir.Unary(e, u, x[0]) }, pick(big))
			case k < 7:
				o := binaries[r.IntN(len(binaries))]
				p = both(func(e ir.Executor, x ...backend.Tensor) backend.Tensor { return ir.Binary(e, o, x[0], x[1]) }, pick(big), pick(big))
			case k < 9:
				v := math.Round(r.NormFloat64()*1e3) / 64 // another constant every time
				p = both(func(e ir.Executor, x ...backend.Tensor) backend.Tensor { return ir.AddScalar(e, x[0], v) }, pick(big))
			default:
				q := both(func(e ir.Executor, x ...backend.Tensor) backend.Tensor {
					return ir.Binary(e, ir.OpDiv, ir.Add(e, x[0], x[1]), x[2])
				}, i32[len(i32)-1], i32[0], divisor)
				if len(i32) < 4 {
					i32 = append(i32, q)
				}
				continue
			}
			if r.IntN(4) == 0 && len(f32) < 12 {
				f32 = append(f32, p) // kept; the others are dropped
			}
		}
		switch r.IntN(5) {
		case 0:
			check(f32[r.IntN(len(f32))], "a kept value")
		case 1:
			if err := fb.Sync(); err != nil {
				t.Fatalf("step %d: Sync: %v", step, err)
			}
		}
	}
	for i, p := range f32 {
		check(p, "kept F32 value "+string(rune('A'+i)))
	}
	for i, p := range i32 {
		check(p, "I32 quotient "+string(rune('A'+i)))
	}
}

// TestGPUFusedTieringIrregular runs an irregular sequence of elementwise
// ops with dropped results through the fusion decorator on a tiered
// backend with an empty kernel cache, against the same ops run one by one
// on the backend itself: every value read is bit-identical, no fused
// kernel is compiled on the op stream, and NVRTC compiles no kernel of a
// program seen fewer than Threshold times. After the background
// compilations the sequence runs again, partly fused, with the same bits.
func TestGPUFusedTieringIrregular(t *testing.T) {
	const threshold = 2
	b := tieredBackend(t, FusedTiering{Threshold: threshold, Workers: 2, Queue: 4})
	sc := &sigCounter{Backend: b}
	fb, _ := fusion.New(sc, fusion.Options{})
	fst := fb.(*fusion.Backend).Stats()
	irregularOps(t, fb, b, 1, 150)
	st := b.FusedCompileStats()
	if st.Sync != 0 || st.Failed != 0 {
		t.Errorf("first pass: %+v, want no kernel compiled on the op stream and none failed", st)
	}
	if n, hot := fusedCompiled(b), sc.hot(threshold); n > hot {
		t.Errorf("first pass: NVRTC compiled %d fused kernels; the programs allow at most %d", n, hot)
	}
	b.WaitFusedCompiles()
	p0 := fst.Programs.Load()
	irregularOps(t, fb, b, 1, 150)
	if fst.Programs.Load() == p0 {
		t.Error("second pass: no program ran fused")
	}
	st = b.FusedCompileStats()
	if st.Sync != 0 || st.Failed != 0 {
		t.Errorf("second pass: %+v", st)
	}
	if n, hot := fusedCompiled(b), sc.hot(threshold); n > hot {
		t.Errorf("both passes: NVRTC compiled %d fused kernels; the programs allow at most %d", n, hot)
	}
	sc.mu.Lock()
	sigs := len(sc.seen)
	sc.mu.Unlock()
	t.Logf("%d signatures, %d fused kernels compiled; tiering %+v; decorator %d programs, %d declined",
		sigs, fusedCompiled(b), st, fst.Programs.Load(), fst.Declined.Load())
}

// TestGPUFusedTieringRecording checks that a program recorded into a CUDA
// graph runs fused at its first call (compiled on the recording
// goroutine, since the graph keeps its kernels), with the op-by-op bits.
func TestGPUFusedTieringRecording(t *testing.T) {
	b := tieredBackend(t, FusedTiering{})
	rng := rand.New(rand.NewPCG(5, 6))
	shape := []int{1000}
	p := geluChainProgram(shape)
	ins := make([]backend.Tensor, 4)
	for i := range ins {
		ins[i] = b.FromData(randomFusedData(rng, shape, backend.F32, false))
	}
	want := read(t, b, p.Run(b, ins)[0])
	out := b.NewStatic(shape, backend.F32)
	beginGraph(t, b)
	outs, ok := b.ExecFused(p, ins)
	if !ok {
		t.Fatal("ExecFused declined a program while recording")
	}
	if err := b.CopyInto(out, outs[0]); err != nil {
		t.Fatal(err)
	}
	g := endGraph(t, b)
	if err := g.Launch(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, b, out); string(got.Bytes) != string(want.Bytes) {
		t.Error("the recorded fused program differs from the op-by-op run")
	}
	if st := b.FusedCompileStats(); st.Sync != 1 || st.Declined != 0 {
		t.Errorf("stats %+v, want one kernel compiled on the recording goroutine and no decline", st)
	}
}

// TestGPUFusedTieringDiskCache checks that a kernel in the disk cache is
// loaded at its program's first call, without NVRTC and without a
// decline, by a backend with an empty in-process cache.
func TestGPUFusedTieringDiskCache(t *testing.T) {
	a := tieredBackend(t, FusedTiering{Sync: true})
	rng := rand.New(rand.NewPCG(7, 8))
	shape := []int{4, 250}
	p := geluChainProgram(shape)
	var ins []backend.Tensor
	for range 4 {
		ins = append(ins, a.FromData(randomFusedData(rng, shape, backend.F32, false)))
	}
	outs, ok := a.ExecFused(p, ins)
	if !ok || fusedCompiled(a) != 1 {
		t.Fatalf("sync backend: ok %v, %d fused kernels compiled", ok, fusedCompiled(a))
	}
	want := read(t, a, outs[0])

	b, err := Open(0) // same XDG_CACHE_HOME: a's kernel is on disk
	if err != nil {
		t.Fatal(err)
	}
	b.SetFusedTiering(FusedTiering{Threshold: 100})
	var insB []backend.Tensor
	for _, x := range ins {
		insB = append(insB, b.FromData(read(t, a, x)))
	}
	outs, ok = b.ExecFused(p, insB)
	if !ok {
		t.Fatal("a kernel in the disk cache was not used at the first call")
	}
	if got := read(t, b, outs[0]); string(got.Bytes) != string(want.Bytes) {
		t.Error("the kernel loaded from disk gives other bits")
	}
	if st := b.FusedCompileStats(); st.Loaded != 1 || st.Declined != 0 || fusedCompiled(b) != 0 {
		t.Errorf("stats %+v, %d compiled by NVRTC; want one kernel loaded from disk", st, fusedCompiled(b))
	}
}

// BenchmarkFusedDroppedAdds is the host time per op of a loop of x+y on
// one element with the results dropped, through the fusion decorator, on
// a backend opened for the benchmark with an empty disk cache:
// tiered (the default: programs run op by op until their kernels are
// compiled in the background), sync (each new kernel compiled on the op
// stream, EMBER_CUDA_SYNC_COMPILE=1) and compiled (tiered after the
// kernels are built: the fused steady state). It reports µs/op and the
// NVRTC compilations of fused kernels per benchmark run.
func BenchmarkFusedDroppedAdds(bb *testing.B) {
	for _, mode := range []string{"tiered", "sync", "compiled"} {
		bb.Run(mode, func(bb *testing.B) {
			b := tieredBackend(bb, FusedTiering{Sync: mode == "sync"})
			fb, _ := fusion.New(b, fusion.Options{})
			x := b.FromData(ir.FromSlice([]float32{1}, []int{1}))
			y := b.FromData(ir.FromSlice([]float32{2}, []int{1}))
			loop := func(n int) {
				for range n {
					ir.Add(fb, x, y)
				}
				if err := fb.Sync(); err != nil {
					bb.Fatal(err)
				}
			}
			if mode == "compiled" {
				loop(2 * fusion.DefaultMaxNodes)
				b.WaitFusedCompiles()
				loop(bb.N % fusion.DefaultMaxNodes) // the remainder's signature
				loop(bb.N % fusion.DefaultMaxNodes)
				b.WaitFusedCompiles()
			}
			n0 := fusedCompiled(b)
			start := time.Now()
			bb.ResetTimer()
			loop(bb.N)
			bb.StopTimer()
			bb.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(bb.N)/1e3, "us/op")
			bb.ReportMetric(float64(fusedCompiled(b)-n0), "nvrtc")
		})
	}
}
