package fusion_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/backend/fusion"
	"github.com/emberml/ember/ir"
)

// refFuser is a base backend (flex) whose fused programs run op by op
// (FusedProgram.Run), so that the decorator's queueing, planning and
// recomputation are checked against plain flex independently of any
// one-pass executor. It counts the programs and their nodes.
type refFuser struct {
	*flex.Backend
	programs, nodes atomic.Int64
	decline         bool
	inputs          atomic.Int64 // inputs of the last program
	// declineFirst declines the first declineFirst calls of each
	// signature (as a backend compiling kernels by tiers does); seen
	// counts the calls per signature, maxOps is the most ops of a
	// program run or declined.
	declineFirst int
	mu           sync.Mutex
	seen         map[string]int
	maxOps       int
}

func (f *refFuser) FusesNode(n *ir.FusedNode, in backend.DType) bool {
	return in == backend.F32 || in == backend.Bool || n.DType == backend.F32
}

func (f *refFuser) ExecFused(p *ir.FusedProgram, inputs []backend.Tensor) ([]backend.Tensor, bool) {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	for i, in := range p.Inputs {
		if inputs[i].DType() != in.DType || !slices.Equal(inputs[i].Shape(), in.Shape) {
			panic("input does not match its description")
		}
	}
	if f.decline {
		return nil, false
	}
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	sig := p.Signature()
	f.seen[sig]++
	first := f.seen[sig] <= f.declineFirst
	ops := 0
	for i := range p.Nodes {
		if p.Nodes[i].Kind != ir.KindFull {
			ops++
		}
	}
	f.maxOps = max(f.maxOps, ops)
	f.mu.Unlock()
	if first {
		return nil, false
	}
	f.programs.Add(1)
	f.nodes.Add(int64(len(p.Nodes)))
	f.inputs.Store(int64(len(p.Inputs)))
	outs := p.Run(f.Backend, inputs)
	for _, o := range outs {
		if !slices.Equal(o.Shape(), p.Shape) {
			panic("output shape differs from the iteration shape")
		}
	}
	return outs, true
}

func newPair(t *testing.T) (fused backend.Backend, ref *flex.Backend, f *refFuser) {
	t.Helper()
	f = &refFuser{Backend: flex.New(backend.DeviceID{Type: "flex"})}
	b, ok := fusion.New(f, fusion.Options{MaxNodes: 64})
	if !ok {
		t.Fatal("fusion.New found no Fuser")
	}
	return b, flex.New(backend.DeviceID{Type: "flex"}), f
}

func randData(r *rand.Rand, shape []int) *backend.TensorData {
	n := backend.NumElements(shape)
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(20) {
		case 0:
			v[i] = float32(math.NaN())
		case 1:
			v[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			v[i] = 0
		default:
			v[i] = float32(r.NormFloat64() * 3)
		}
	}
	return ir.FromSlice(v, shape)
}

func bitsOf(t *testing.T, b backend.Backend, x backend.Tensor) []byte {
	t.Helper()
	d, err := b.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d.Bytes
}

// pair is one tensor on both backends.
type pair struct{ f, r backend.Tensor }

func apply(t *testing.T, fb backend.Backend, rb *flex.Backend, op ir.Op, args ...pair) pair {
	t.Helper()
	fo, ro := op, op
	for i, a := range args {
		fo.In[i], ro.In[i] = a.f, a.r
	}
	if err := ro.Infer(); err != nil {
		t.Fatalf("%s: %v", ro.Name(), err)
	}
	if err := fo.Infer(); err != nil {
		t.Fatalf("%s: %v", fo.Name(), err)
	}
	return pair{ir.Run(fb, fo)[0], ir.Run(rb, ro)[0]}
}

var (
	unaries  = []ir.UnaryOp{ir.OpNeg, ir.OpAbs, ir.OpExp, ir.OpLog, ir.OpSqrt, ir.OpTanh, ir.OpSigmoid, ir.OpErf, ir.OpRecip, ir.OpFloor}
	binaries = []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin, ir.OpPow, ir.OpAtan2}
	compares = []ir.BinaryOp{ir.OpLt, ir.OpGe, ir.OpEq, ir.OpNe}
)

// TestRandomChainsMatchEager builds random programs of elementwise ops
// (with broadcasts, constants, comparisons, where and casts) interleaved
// with ops that are not fused (sums, reshapes, matmuls), reads every
// tensor back in random order — so that intermediates that were never
// written are recomputed — and compares each with plain flex bit for bit.
func TestRandomChainsMatchEager(t *testing.T) {
	randomChains(t, fusion.Options{MaxNodes: 64}, 0)
}

// TestRandomChainsSplitAndDeclined runs the random programs of
// TestRandomChainsMatchEager cut into programs of at most 3 ops (values
// one program reads from an earlier one of its group are written), on a
// base backend that declines the first two calls of every signature, as
// one compiling kernels by tiers does: every value stays bit-identical to
// eager flex.
func TestRandomChainsSplitAndDeclined(t *testing.T) {
	randomChains(t, fusion.Options{MaxNodes: 64, MaxProgramOps: 3}, 2)
}

// randomChains is TestRandomChainsMatchEager on decorators with opts over
// a base backend declining the first declineFirst calls of each
// signature.
func randomChains(t *testing.T, opts fusion.Options, declineFirst int) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		f := &refFuser{Backend: flex.New(backend.DeviceID{Type: "flex"}), declineFirst: declineFirst}
		fb, _ := fusion.New(f, opts)
		rb := flex.New(backend.DeviceID{Type: "flex"})
		m, n := 1+r.IntN(5), 1+r.IntN(7)
		if trial%10 == 0 {
			m, n = 70, 130
		}
		if trial%10 == 3 {
			m = 0 // empty results of broadcasts from [1, n] and [n]
		}
		shapes := [][]int{{m, n}, {n}, {m, 1}, {}, {1, n}}
		var pool []pair
		for range 3 {
			sh := shapes[r.IntN(len(shapes))]
			if len(pool) == 0 {
				sh = shapes[0]
			}
			d := randData(r, sh)
			pool = append(pool, pair{fb.FromData(d), rb.FromData(d)})
		}
		pick := func() pair { return pool[r.IntN(len(pool))] }
		for range 30 {
			var p pair
			switch k := r.IntN(10); {
			case k < 3:
				p = apply(t, fb, rb, ir.Op{Kind: ir.KindUnary, Sub: uint8(unaries[r.IntN(len(unaries))])}, pick())
			case k < 6:
				p = apply(t, fb, rb, ir.Op{Kind: ir.KindBinary, Sub: uint8(binaries[r.IntN(len(binaries))])}, pick(), pick())
			case k == 6:
				c := apply(t, fb, rb, ir.Op{Kind: ir.KindBinary, Sub: uint8(compares[r.IntN(len(compares))])}, pick(), pick())
				p = apply(t, fb, rb, ir.Op{Kind: ir.KindWhere}, c, pick(), pick())
			case k == 7:
				full := ir.Op{Kind: ir.KindFull, Shape: []int{}, DType: backend.F32, Scalars: [2]float64{r.NormFloat64()}}
				c := apply(t, fb, rb, full)
				p = apply(t, fb, rb, ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpMul)}, pick(), c)
			case k == 8:
				p = pick()
				if len(p.f.Shape()) > 0 {
					p = apply(t, fb, rb, ir.Op{Kind: ir.KindReduce, Sub: uint8(ir.ReduceSum), Axis: len(p.f.Shape()) - 1, KeepDim: true}, p)
				}
			default:
				c := apply(t, fb, rb, ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpGt)}, pick(), pick())
				p = apply(t, fb, rb, ir.Op{Kind: ir.KindCast, DType: backend.F32}, c)
			}
			pool = append(pool, p)
		}
		for _, i := range r.Perm(len(pool)) {
			got, want := bitsOf(t, fb, pool[i].f), bitsOf(t, rb, pool[i].r)
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d: tensor %d of shape %v differs from eager flex", trial, i, pool[i].r.Shape())
			}
		}
		if limit := opts.MaxProgramOps; limit > 0 && f.maxOps > limit {
			t.Fatalf("trial %d: a program of %d ops, want at most %d", trial, f.maxOps, limit)
		}
	}
}

// gelu queues t·((erf(t/√2)+1)·0.5), ember's Gelu, on e.
func gelu(e ir.Executor, x backend.Tensor) backend.Tensor {
	cdf := ir.MulScalar(e, ir.AddScalar(e, ir.Unary(e, ir.OpErf, ir.MulScalar(e, x, 1/math.Sqrt2)), 1), 0.5)
	return ir.Mul(e, x, cdf)
}

// TestChainIsOneProgram checks that gelu(x·a+b)·c, read once, runs as one
// program whose value equals eager flex's.
func TestChainIsOneProgram(t *testing.T) {
	fb, rb, f := newPair(t)
	r := rand.New(rand.NewPCG(3, 4))
	sh := []int{33, 17}
	var fx, rx [4]backend.Tensor
	for i := range fx {
		d := randData(r, sh)
		fx[i], rx[i] = fb.FromData(d), rb.FromData(d)
	}
	chain := func(e ir.Executor, x [4]backend.Tensor) backend.Tensor {
		return ir.Mul(e, gelu(e, ir.Add(e, ir.Mul(e, x[0], x[1]), x[2])), x[3])
	}
	got := chain(fb, fx)
	if _, ok := got.(*fusion.Tensor); !ok {
		t.Fatalf("result is %T, want a pending *fusion.Tensor", got)
	}
	if !slices.Equal(bitsOf(t, fb, got), bitsOf(t, rb, chain(rb, rx))) {
		t.Fatal("fused chain differs from eager flex")
	}
	if p := f.programs.Load(); p != 1 {
		t.Fatalf("%d programs ran, want 1", p)
	}
	// 3 ops, gelu's 5 and its 3 constants.
	if n := f.nodes.Load(); n != 11 {
		t.Fatalf("program has %d nodes, want 11", n)
	}
}

// TestAdamDecompositionFuses runs the decomposition of AdamStep on the
// fusion backend: its three outputs come from one program.
func TestAdamDecompositionFuses(t *testing.T) {
	fb, rb, f := newPair(t)
	r := rand.New(rand.NewPCG(5, 6))
	sh := []int{10, 20}
	var fx, rx []backend.Tensor
	for range 4 {
		d := randData(r, sh)
		fx, rx = append(fx, fb.FromData(d)), append(rx, rb.FromData(d))
	}
	op := ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: ir.OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 3, WeightDecay: 0.01}}}
	fo, ro := op, op
	fo.Xs, ro.Xs = fx, rx
	got, want := ir.ApplyAll(fb, fo), ir.ApplyAll(rb, ro)
	for i := range 3 {
		if !slices.Equal(bitsOf(t, fb, got[i]), bitsOf(t, rb, want[i])) {
			t.Fatalf("output %d differs", i)
		}
	}
	if p := f.programs.Load(); p != 1 {
		t.Fatalf("%d programs ran, want 1", p)
	}
}

// TestDeclinedProgramRunsOpByOp checks the fallback of a program the base
// backend declines.
func TestDeclinedProgramRunsOpByOp(t *testing.T) {
	fb, rb, f := newPair(t)
	f.decline = true
	d := randData(rand.New(rand.NewPCG(7, 8)), []int{5, 6})
	x, y := fb.FromData(d), rb.FromData(d)
	got := gelu(fb, ir.Unary(fb, ir.OpTanh, x))
	if !slices.Equal(bitsOf(t, fb, got), bitsOf(t, rb, gelu(rb, ir.Unary(rb, ir.OpTanh, y)))) {
		t.Fatal("declined program differs from eager flex")
	}
	if st := fb.(*fusion.Backend).Stats(); st.Declined.Load() != 1 {
		t.Fatalf("declined %d programs, want 1", st.Declined.Load())
	}
}

// TestMaxNodesDrains checks that a long chain is drained at MaxNodes
// without being read, and still computes the right value.
func TestMaxNodesDrains(t *testing.T) {
	fb, rb, _ := newPair(t)
	d := randData(rand.New(rand.NewPCG(9, 10)), []int{4, 4})
	x, y := fb.FromData(d), rb.FromData(d)
	for range 200 {
		x = ir.AddScalar(fb, ir.Unary(fb, ir.OpTanh, x), 0.25)
		y = ir.AddScalar(rb, ir.Unary(rb, ir.OpTanh, y), 0.25)
	}
	if fl := fb.(*fusion.Backend).Stats().Flushes.Load(); fl < 5 {
		t.Fatalf("%d drains for 600 nodes with MaxNodes 64, want >= 5", fl)
	}
	if !slices.Equal(bitsOf(t, fb, x), bitsOf(t, rb, y)) {
		t.Fatal("long chain differs from eager flex")
	}
}

// TestMaxSinkBytesDrains checks that results made and dropped unread are
// drained once their bytes reach MaxSinkBytes (so they are not all
// allocated at once), that a chain's intermediate nodes do not count,
// and that the values are right.
func TestMaxSinkBytesDrains(t *testing.T) {
	f := &refFuser{Backend: flex.New(backend.DeviceID{Type: "flex"})}
	fb, _ := fusion.New(f, fusion.Options{MaxSinkBytes: 4 * 64 * 4})
	rb := flex.New(backend.DeviceID{Type: "flex"})
	st := fb.(*fusion.Backend).Stats()
	d := randData(rand.New(rand.NewPCG(13, 14)), []int{64})
	x, y := fb.FromData(d), rb.FromData(d)
	// A chain: one sink of 256 bytes however long it grows.
	cx, cy := x, y
	for range 40 {
		cx = ir.AddScalar(fb, ir.Unary(fb, ir.OpTanh, cx), 0.5)
		cy = ir.AddScalar(rb, ir.Unary(rb, ir.OpTanh, cy), 0.5)
	}
	if fl := st.Flushes.Load(); fl != 0 {
		t.Fatalf("a chain with one 256-byte sink drained %d times, want 0", fl)
	}
	if !slices.Equal(bitsOf(t, fb, cx), bitsOf(t, rb, cy)) {
		t.Fatal("chain differs from eager flex")
	}
	before := st.Flushes.Load()
	var last backend.Tensor
	for i := range 10 {
		last = ir.AddScalar(fb, x, float64(i)) // sinks, dropped but the last
	}
	if fl := st.Flushes.Load() - before; fl < 2 {
		t.Fatalf("10 dropped 256-byte sinks with MaxSinkBytes 1024 drained %d times, want >= 2", fl)
	}
	if !slices.Equal(bitsOf(t, fb, last), bitsOf(t, rb, ir.AddScalar(rb, y, 9))) {
		t.Fatal("last sink differs from eager flex")
	}
}

// TestConcurrentStreams runs chains from several goroutines, each also
// reading tensors another goroutine made (its producer's stream is
// drained first), under -race.
func TestConcurrentStreams(t *testing.T) {
	fb, rb, _ := newPair(t)
	const workers = 4
	r := rand.New(rand.NewPCG(11, 12))
	var fx, rx [workers]backend.Tensor
	for i := range workers {
		d := randData(r, []int{8, 9})
		fx[i], rx[i] = fb.FromData(d), rb.FromData(d)
	}
	var mu sync.Mutex
	shared := map[int]pair{}
	var wg sync.WaitGroup
	errs := make(chan string, workers*20)
	for w := range workers {
		wg.Go(func() {
			a, b := fx[w], rx[w]
			for step := range 20 {
				a = ir.Mul(fb, ir.Unary(fb, ir.OpSigmoid, a), fx[(w+1)%workers])
				b = ir.Mul(rb, ir.Unary(rb, ir.OpSigmoid, b), rx[(w+1)%workers])
				mu.Lock()
				shared[w] = pair{a, b}
				o, ok := shared[(w+1)%workers]
				mu.Unlock()
				if ok && step%3 == 0 {
					// Another goroutine's pending tensor.
					a = ir.Add(fb, a, o.f)
					b = ir.Add(rb, b, o.r)
				}
			}
			fd, _ := fb.ToData(a)
			rd, _ := rb.ToData(b)
			if !slices.Equal(fd.Bytes, rd.Bytes) {
				errs <- "worker result differs from eager flex"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if err := fb.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestNonFusedOpReadsPending checks that a matmul and a reshape read
// pending tensors correctly, and that Sync and Seed drain the stream.
func TestNonFusedOpReadsPending(t *testing.T) {
	fb, rb, _ := newPair(t)
	r := rand.New(rand.NewPCG(13, 14))
	d1, d2 := randData(r, []int{6, 5}), randData(r, []int{5, 4})
	fa, ra := ir.Unary(fb, ir.OpTanh, fb.FromData(d1)), ir.Unary(rb, ir.OpTanh, rb.FromData(d1))
	fbm, rbm := ir.MulScalar(fb, fb.FromData(d2), 2), ir.MulScalar(rb, rb.FromData(d2), 2)
	mm := func(e ir.Executor, a, b backend.Tensor) backend.Tensor {
		return ir.Apply(e, ir.Op{Kind: ir.KindMatmul, In: [3]backend.Tensor{a, b}})
	}
	got, want := mm(fb, fa, fbm), mm(rb, ra, rbm)
	if !slices.Equal(bitsOf(t, fb, got), bitsOf(t, rb, want)) {
		t.Fatal("matmul of pending tensors differs")
	}
	x := ir.Unary(fb, ir.OpExp, got)
	fb.Seed(7)
	if st := fb.(*fusion.Backend).Stats(); st.Flushes.Load() < 2 {
		t.Fatalf("Seed did not drain the stream (%d drains)", st.Flushes.Load())
	}
	if !slices.Equal(bitsOf(t, fb, x), bitsOf(t, rb, ir.Unary(rb, ir.OpExp, want))) {
		t.Fatal("exp after Seed differs")
	}
}

// TestTwoDecoratorsShareTensors passes tensors made by one decorator to
// another over the same base backend (as two stacks of one device could):
// each reads the other's through its owner.
func TestTwoDecoratorsShareTensors(t *testing.T) {
	f := &refFuser{Backend: flex.New(backend.DeviceID{Type: "flex"})}
	b1, _ := fusion.New(f, fusion.Options{})
	b2, _ := fusion.New(f, fusion.Options{})
	rb := flex.New(backend.DeviceID{Type: "flex"})
	r := rand.New(rand.NewPCG(15, 16))
	d := randData(r, []int{3, 4})
	x1, x2 := b1.FromData(d), b2.FromData(d)
	r1, r2 := rb.FromData(d), rb.FromData(d)
	for range 10 {
		x1 = ir.Unary(b1, ir.OpTanh, ir.Add(b1, x1, x2))
		x2 = ir.MulScalar(b2, ir.Add(b2, x2, x1), 0.5)
		r1 = ir.Unary(rb, ir.OpTanh, ir.Add(rb, r1, r2))
		r2 = ir.MulScalar(rb, ir.Add(rb, r2, r1), 0.5)
	}
	if !slices.Equal(bitsOf(t, b2, x2), bitsOf(t, rb, r2)) || !slices.Equal(bitsOf(t, b1, x1), bitsOf(t, rb, r1)) {
		t.Fatal("tensors shared between decorators differ from eager flex")
	}
}

// TestRepeatedOperandIsOneInput checks that a tensor read by several
// nodes of a program (x·x + x) is passed to the backend once.
func TestRepeatedOperandIsOneInput(t *testing.T) {
	fb, rb, f := newPair(t)
	d := randData(rand.New(rand.NewPCG(17, 18)), []int{5, 7})
	x, y := fb.FromData(d), rb.FromData(d)
	got := ir.Add(fb, ir.Mul(fb, x, x), ir.Unary(fb, ir.OpTanh, x))
	want := ir.Add(rb, ir.Mul(rb, y, y), ir.Unary(rb, ir.OpTanh, y))
	if !slices.Equal(bitsOf(t, fb, got), bitsOf(t, rb, want)) {
		t.Fatal("x·x + tanh(x) differs from eager flex")
	}
	if n := f.inputs.Load(); n != 1 {
		t.Fatalf("the program has %d inputs, want 1", n)
	}
}

// TestLongGroupsSplit checks the cut of long groups into programs of at
// most MaxProgramOps ops: a loop of dropped results (x+y, 200 times) runs
// as programs of one signature plus one for the rest; a chain of 50 ops
// read at its end, and an intermediate of it read later, keep their
// values (the values a later program of the group reads are written).
func TestLongGroupsSplit(t *testing.T) {
	const limit = 16
	f := &refFuser{Backend: flex.New(backend.DeviceID{Type: "flex"})}
	fb, _ := fusion.New(f, fusion.Options{MaxProgramOps: limit})
	rb := flex.New(backend.DeviceID{Type: "flex"})
	r := rand.New(rand.NewPCG(19, 20))
	dx, dy := randData(r, []int{3}), randData(r, []int{3})
	fx, fy, rx, ry := fb.FromData(dx), fb.FromData(dy), rb.FromData(dx), rb.FromData(dy)
	var last backend.Tensor
	for range 200 {
		last = ir.Add(fb, fx, fy)
	}
	if !slices.Equal(bitsOf(t, fb, last), bitsOf(t, rb, ir.Add(rb, rx, ry))) {
		t.Fatal("x+y differs from eager flex")
	}
	if f.maxOps > limit {
		t.Fatalf("a program of %d ops, want at most %d", f.maxOps, limit)
	}
	// 200 = 12·16 + 8: one signature of 16 adds, one of 8.
	f.mu.Lock()
	sigs := len(f.seen)
	full := 0
	for _, n := range f.seen {
		full = max(full, n)
	}
	f.mu.Unlock()
	if sigs != 2 || full != 12 {
		t.Errorf("%d signatures, the commonest run %d times; want 2 and 12", sigs, full)
	}

	cx, cy := fx, rx
	var midF, midR backend.Tensor
	for i := range 50 {
		cx = ir.AddScalar(fb, ir.Unary(fb, ir.OpTanh, cx), 0.125)
		cy = ir.AddScalar(rb, ir.Unary(rb, ir.OpTanh, cy), 0.125)
		if i == 20 {
			midF, midR = cx, cy
		}
	}
	if !slices.Equal(bitsOf(t, fb, cx), bitsOf(t, rb, cy)) {
		t.Fatal("long chain differs from eager flex")
	}
	if !slices.Equal(bitsOf(t, fb, midF), bitsOf(t, rb, midR)) {
		t.Fatal("an intermediate of the long chain differs from eager flex")
	}
	if f.maxOps > limit {
		t.Fatalf("a program of %d ops, want at most %d", f.maxOps, limit)
	}
}
