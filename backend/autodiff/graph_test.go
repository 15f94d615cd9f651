package autodiff

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestCompositeGradients checks graphs where tensors are used more than
// once (gradient accumulation) and several primitives chain.
func TestCompositeGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	// x·x + sin(x), x used three times
	gradCheck(t, "reuse", []input{randIn(r, []int{3, 2}, 0.2, 2, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		x := xs[0]
		return ir.Binary(b, backend.OpAdd, ir.Binary(b, backend.OpMul, x, x), ir.Unary(b, backend.OpSin, x))
	})
	// a small MLP: tanh(x·W1 + b1)·W2, sum of squares per row, softmax-like normalisation
	ins := []input{
		constIn(randIn(r, []int{4, 3}, 0.2, 1, true)),
		randIn(r, []int{3, 5}, 0.2, 1, true),
		randIn(r, []int{5}, 0.2, 1, true),
		randIn(r, []int{5, 2}, 0.2, 1, true),
	}
	gradCheck(t, "mlp", ins, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		h := ir.Unary(b, backend.OpTanh, ir.Binary(b, backend.OpAdd, ir.Matmul(b, xs[0], xs[1]), xs[2]))
		o := ir.Matmul(b, h, xs[3])
		e := ir.Unary(b, backend.OpExp, o)
		s := ir.Reduce(b, backend.ReduceSum, e, 1, true)
		p := ir.Binary(b, backend.OpDiv, e, s)
		m := ir.Reduce(b, backend.ReduceMax, h, 1, true)
		return ir.Cat(b, []backend.Tensor{p, ir.Binary(b, backend.OpMul, m, m)}, 1)
	})
	// a diamond through movement ops and a shared intermediate
	gradCheck(t, "diamond", []input{randIn(r, []int{2, 3}, 0.2, 2, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		e := ir.Unary(b, backend.OpExp, xs[0])
		l := ir.Flip(b, ir.Permute(b, e, []int{1, 0}), []int{0})
		rgt := ir.Reshape(b, ir.Pad(b, e, []int{0, 0, 0, 0}, 0), []int{3, 2})
		return ir.Binary(b, backend.OpMul, l, rgt)
	})
}

func TestUntrackedAndNoGrad(t *testing.T) {
	b := New(newInner(), false)
	c := b.FromData(f64Data([]int{2}, []float64{1, 2}))
	if b.IsTracked(c) || b.IsTracked(ir.Unary(b, backend.OpExp, c)) || b.IsTracked(ir.Binary(b, backend.OpAdd, c, c)) {
		t.Error("ops on untracked tensors are tracked")
	}
	x := b.RequireGrad(c)
	if !b.IsTracked(x) || !b.IsTracked(ir.Binary(b, backend.OpMul, x, c)) {
		t.Error("ops on a tracked tensor are not tracked")
	}
	if b.IsTracked(ir.Binary(b, backend.OpLt, x, c)) {
		t.Error("comparison is tracked")
	}
	if b.IsTracked(b.Detach(x)) || b.IsTracked(b.Wrap(b.Primal(x))) {
		t.Error("Detach/Wrap results are tracked")
	}
	if b.Primal(x) != b.Primal(c) {
		t.Error("RequireGrad does not share the inner storage")
	}
	var y backend.Tensor
	NoGrad(func() { y = ir.Binary(b, backend.OpMul, x, x) })
	if b.IsTracked(y) {
		t.Error("op under NoGrad is tracked")
	}
	if !b.IsTracked(ir.Binary(b, backend.OpMul, x, x)) {
		t.Error("recording not restored after NoGrad")
	}
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.Contains(s, "not tracked") {
			t.Errorf("Backward of an untracked tensor: recovered %v, want a 'not tracked' panic", r)
		}
	}()
	b.Backward(y)
}

// TestIntermediateGradients checks Get on an intermediate and Remove.
func TestIntermediateGradients(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{2}, []float64{1, 2})))
	h := ir.Binary(b, backend.OpMul, x, x) // h = x², dL/dh = 3
	l := ir.Binary(b, backend.OpMul, h, b.FromData(f64Data([]int{}, []float64{3})))
	gs := b.Backward(l)
	gh, ok := gs.Get(h)
	if !ok {
		t.Fatal("no gradient for the intermediate")
	}
	checkVals(t, "dL/dh", values(t, b.Unwrap(), gh), []float64{3, 3}, 0)
	gx, ok := gs.Remove(x)
	if !ok {
		t.Fatal("Remove found no gradient")
	}
	checkVals(t, "dL/dx", values(t, b.Unwrap(), gx), []float64{6, 12}, 0)
	if _, ok := gs.Get(x); ok {
		t.Error("gradient still present after Remove")
	}
}

// TestCheckpointingKeepsNoMemoryBoundOutputs checks through the nodes that,
// with checkpointing, memory-bound nodes keep neither output nor tracked
// inputs while compute-bound ones keep their output; and that without it an
// Exp node keeps its output.
func TestCheckpointingKeepsNoMemoryBoundOutputs(t *testing.T) {
	b := New(newInner(), true)
	x := b.RequireGrad(b.FromData(f64Data([]int{2, 2}, []float64{1, 2, 3, 4})))
	e := ir.Unary(b, backend.OpExp, x)
	p := ir.Permute(b, e, []int{1, 0})
	m := ir.Matmul(b, p, x)
	s := ir.Reduce(b, backend.ReduceSum, m, 0, false)
	for _, c := range []struct {
		name string
		t    backend.Tensor
		kept bool
	}{{"exp", e, false}, {"permute", p, false}, {"matmul", m, true}, {"sum", s, true}} {
		n := c.t.(*tensor).node
		if (n.out0 != nil) != c.kept {
			t.Errorf("%s: output kept = %v, want %v", c.name, n.out0 != nil, c.kept)
		}
		for i := range n.numIn() {
			if n.input(i) != nil && n.parent(i).n != nil {
				t.Errorf("%s: tracked input %d kept", c.name, i)
			}
		}
	}
	if b.Strategy() != Balanced || !b.Checkpointing() {
		t.Error("strategy is not Balanced")
	}
	plain := New(newInner(), false)
	xp := plain.RequireGrad(plain.FromData(f64Data([]int{2}, []float64{1, 2})))
	if ir.Unary(plain, backend.OpExp, xp).(*tensor).node.out0 == nil {
		t.Error("without checkpointing the exp node lost its output")
	}
	if ir.Binary(plain, backend.OpAdd, xp, xp).(*tensor).node.out0 != nil {
		t.Error("without checkpointing the add node keeps an output it does not need")
	}
}

// TestClassifyTable checks the Balanced strategy's class of every kind
// autodiff records against its policy: elementwise ops (but casts) and
// movement ops are memory-bound, so they are recomputed; everything else
// (casts, reductions, indexing, contractions, pooling, scans) is
// compute-bound and keeps its output.
func TestClassifyTable(t *testing.T) {
	recorded := 0
	for _, k := range ir.Kinds() {
		if rules[k].backward == nil {
			continue
		}
		recorded++
		want := ir.ComputeBound
		if g := ir.SpecOf(k).Group; (g == ir.GroupElementwise && k != ir.KindCast) || g == ir.GroupMovement {
			want = ir.MemoryBound
		}
		if got := Classify(k); got != want {
			t.Errorf("Classify(%v) = %v, want %v", k, got, want)
		}
	}
	if recorded == 0 {
		t.Error("no kind has a gradient rule")
	}
}

// TestEveryKindHasARule checks that every kind is either differentiated
// (a gradient rule) or declared to run untracked, and never both.
func TestEveryKindHasARule(t *testing.T) {
	for _, k := range ir.Kinds() {
		r := rules[k]
		if (r.backward != nil) == r.nondiff {
			t.Errorf("%v: gradient rule %v, untracked %v; want exactly one", k, r.backward != nil, r.nondiff)
		}
	}
}

// TestMemoryDoesNotGrow runs 300 training-like steps (forward, Backward,
// drop) and checks that the live heap after step 300 is within 5% (plus
// 256 KiB) of the heap after step 100.
func TestMemoryDoesNotGrow(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		b := New(newInner(), ckpt)
		r := rand.New(rand.NewPCG(10, 10))
		w := b.RequireGrad(b.FromData(f64Data([]int{16, 16}, randIn(r, []int{256}, 0.1, 1, true).vals)))
		xd := f64Data([]int{8, 16}, randIn(r, []int{128}, 0.1, 1, true).vals)
		step := func() {
			x := b.FromData(xd)
			h := ir.Unary(b, backend.OpTanh, ir.Matmul(b, x, w))
			l := ir.Reduce(b, backend.ReduceSum, ir.Reshape(b, ir.Binary(b, backend.OpMul, h, h), []int{128}), 0, false)
			gs := b.Backward(l)
			if _, ok := gs.Get(w); !ok {
				t.Fatal("no gradient")
			}
		}
		heap := func() uint64 {
			runtime.GC()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapInuse
		}
		var at100 uint64
		for i := 1; i <= 300; i++ {
			step()
			if i == 100 {
				at100 = heap()
			}
		}
		at300 := heap()
		if float64(at300) > float64(at100)*1.05+256<<10 {
			t.Errorf("checkpointing=%v: heap in use grew from %d to %d bytes between steps 100 and 300", ckpt, at100, at300)
		}
	}
}

// TestConcurrentBackward records ops and runs Backward on one graph from
// several goroutines at once (with and without checkpointing, so shared
// nodes are read and recomputed concurrently); every call must give the
// gradient of a single call, bit for bit.
func TestConcurrentBackward(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		b := New(newInner(), ckpt)
		r := rand.New(rand.NewPCG(16, 16))
		w := b.RequireGrad(b.FromData(f64Data([]int{4, 4}, randIn(r, []int{16}, 0.1, 1, true).vals)))
		x := b.FromData(f64Data([]int{3, 4}, randIn(r, []int{12}, 0.1, 1, true).vals))
		h := ir.Unary(b, backend.OpTanh, ir.Add(b, ir.Matmul(b, x, w), ir.Neg(b, x)))
		loss := scalarLoss(b, ir.Mul(b, h, h), 2)
		g, _ := b.Backward(loss).Get(w)
		want := rawBytes(t, b.Unwrap(), g)
		done := make(chan []byte)
		for range 4 {
			go func() {
				g, _ := b.Backward(loss).Get(w)
				d, err := b.Unwrap().ToData(g)
				if err != nil {
					done <- nil
					return
				}
				done <- d.Bytes
			}()
		}
		for range 4 {
			if got := <-done; !bytes.Equal(got, want) {
				t.Errorf("checkpointing=%v: a concurrent Backward gave another gradient", ckpt)
			}
		}
	}
}
