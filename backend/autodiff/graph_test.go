package autodiff

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestCompositeGradients checks graphs where tensors are used more than
// once (gradient accumulation) and several primitives chain.
func TestCompositeGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	// x·x + sin(x), x used three times
	gradCheck(t, "reuse", []input{randIn(r, []int{3, 2}, 0.2, 2, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		x := xs[0]
		return b.Binary(backend.OpAdd, b.Binary(backend.OpMul, x, x), b.Unary(backend.OpSin, x))
	})
	// a small MLP: tanh(x·W1 + b1)·W2, sum of squares per row, softmax-like normalisation
	ins := []input{
		constIn(randIn(r, []int{4, 3}, 0.2, 1, true)),
		randIn(r, []int{3, 5}, 0.2, 1, true),
		randIn(r, []int{5}, 0.2, 1, true),
		randIn(r, []int{5, 2}, 0.2, 1, true),
	}
	gradCheck(t, "mlp", ins, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		h := b.Unary(backend.OpTanh, b.Binary(backend.OpAdd, b.Matmul(xs[0], xs[1]), xs[2]))
		o := b.Matmul(h, xs[3])
		e := b.Unary(backend.OpExp, o)
		s := b.Reduce(backend.ReduceSum, e, 1, true)
		p := b.Binary(backend.OpDiv, e, s)
		m := b.Reduce(backend.ReduceMax, h, 1, true)
		return b.Cat([]backend.Tensor{p, b.Binary(backend.OpMul, m, m)}, 1)
	})
	// a diamond through movement ops and a shared intermediate
	gradCheck(t, "diamond", []input{randIn(r, []int{2, 3}, 0.2, 2, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		e := b.Unary(backend.OpExp, xs[0])
		l := b.Flip(b.Permute(e, []int{1, 0}), []int{0})
		rgt := b.Reshape(b.Pad(e, [][2]int{{0, 0}, {0, 0}}, 0), []int{3, 2})
		return b.Binary(backend.OpMul, l, rgt)
	})
}

func TestUntrackedAndNoGrad(t *testing.T) {
	b := New(newInner(), false)
	c := b.FromData(f64Data([]int{2}, []float64{1, 2}))
	if b.IsTracked(c) || b.IsTracked(b.Unary(backend.OpExp, c)) || b.IsTracked(b.Binary(backend.OpAdd, c, c)) {
		t.Error("ops on untracked tensors are tracked")
	}
	x := b.RequireGrad(c)
	if !b.IsTracked(x) || !b.IsTracked(b.Binary(backend.OpMul, x, c)) {
		t.Error("ops on a tracked tensor are not tracked")
	}
	if b.IsTracked(b.Binary(backend.OpLt, x, c)) {
		t.Error("comparison is tracked")
	}
	if b.IsTracked(b.Detach(x)) || b.IsTracked(b.Wrap(b.Primal(x))) {
		t.Error("Detach/Wrap results are tracked")
	}
	if b.Primal(x) != b.Primal(c) {
		t.Error("RequireGrad does not share the inner storage")
	}
	var y backend.Tensor
	NoGrad(func() { y = b.Binary(backend.OpMul, x, x) })
	if b.IsTracked(y) {
		t.Error("op under NoGrad is tracked")
	}
	if !b.IsTracked(b.Binary(backend.OpMul, x, x)) {
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
	h := b.Binary(backend.OpMul, x, x) // h = x², dL/dh = 3
	l := b.Binary(backend.OpMul, h, b.FromData(f64Data([]int{}, []float64{3})))
	gs := b.Backward(l)
	gh, ok := gs.Get(h)
	if !ok {
		t.Fatal("no gradient for the intermediate")
	}
	checkVals(t, "dL/dh", values(t, b.Inner(), gh), []float64{3, 3}, 0)
	gx, ok := gs.Remove(x)
	if !ok {
		t.Fatal("Remove found no gradient")
	}
	checkVals(t, "dL/dx", values(t, b.Inner(), gx), []float64{6, 12}, 0)
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
	e := b.Unary(backend.OpExp, x)
	p := b.Permute(e, []int{1, 0})
	m := b.Matmul(p, x)
	s := b.Reduce(backend.ReduceSum, m, 0, false)
	for _, c := range []struct {
		name string
		t    backend.Tensor
		kept bool
	}{{"exp", e, false}, {"permute", p, false}, {"matmul", m, true}, {"sum", s, true}} {
		n := c.t.(*tensor).node
		if (n.output != nil) != c.kept {
			t.Errorf("%s: output kept = %v, want %v", c.name, n.output != nil, c.kept)
		}
		for i, v := range n.saved {
			if v != nil && n.parents[i] != nil {
				t.Errorf("%s: tracked input %d kept", c.name, i)
			}
		}
	}
	if b.Strategy() != Balanced || !b.Checkpointing() {
		t.Error("strategy is not Balanced")
	}
	plain := New(newInner(), false)
	xp := plain.RequireGrad(plain.FromData(f64Data([]int{2}, []float64{1, 2})))
	if plain.Unary(backend.OpExp, xp).(*tensor).node.output == nil {
		t.Error("without checkpointing the exp node lost its output")
	}
	if plain.Binary(backend.OpAdd, xp, xp).(*tensor).node.output != nil {
		t.Error("without checkpointing the add node keeps an output it does not need")
	}
}

func TestClassifyTable(t *testing.T) {
	for p := PrimUnary; p <= PrimMaxPool2d; p++ {
		want := MemoryBound
		switch p {
		case PrimCast, PrimReduce, PrimGather, PrimScatterAdd, PrimIndexSelect, PrimMatmul, PrimConv2d, PrimConvTranspose2d, PrimMaxPool2d:
			want = ComputeBound
		}
		if got := Classify(p); got != want {
			t.Errorf("Classify(%v) = %v, want %v", p, got, want)
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
			h := b.Unary(backend.OpTanh, b.Matmul(x, w))
			l := b.Reduce(backend.ReduceSum, b.Reshape(b.Binary(backend.OpMul, h, h), []int{128}), 0, false)
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
