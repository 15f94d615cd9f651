package fusion

import (
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// runFuser is a flex backend whose programs run op by op.
type runFuser struct{ *flex.Backend }

func (runFuser) FusesNode(n *ir.FusedNode, in backend.DType) bool { return in == backend.F32 }

func (f runFuser) ExecFused(p *ir.FusedProgram, in []backend.Tensor) ([]backend.Tensor, bool) {
	return p.Run(f.Backend, in), true
}

func newBounded(t *testing.T) *Backend {
	t.Helper()
	b, ok := New(runFuser{flex.New(backend.DeviceID{Type: "flex"})}, Options{})
	if !ok {
		t.Fatal("no Fuser")
	}
	return b.(*Backend)
}

// uncomputed counts the not-computed tensors x depends on (itself
// included), each once.
func uncomputed(b *Backend, x *Tensor) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[*Tensor]bool{}
	var walk func(n *Tensor)
	walk = func(n *Tensor) {
		if n == nil || n.t != nil || seen[n] {
			return
		}
		seen[n] = true
		for _, a := range n.args {
			walk(a.lz)
		}
	}
	walk(x)
	return len(seen)
}

// TestRecipeDependenciesStayBounded runs a chain that reads each value
// twice (so naive dependency counts double every step) with readers that
// are dropped, draining every MaxNodes: the live value must never depend
// on more than a stream and a recipe of uncomputed nodes.
func TestRecipeDependenciesStayBounded(t *testing.T) {
	b := newBounded(t)
	x := b.FromData(ir.FromSlice([]float32{1, -2, 3}, []int{3}))
	for i := range 3000 {
		x = ir.MulScalar(b, ir.Add(b, x, x), 0.5)
		_ = ir.Unary(b, ir.OpExp, x)
		_ = ir.Unary(b, ir.OpNeg, x)
		if lz, ok := x.(*Tensor); ok && i%250 == 0 {
			if n := uncomputed(b, lz); n > DefaultMaxNodes+maxRecipe+2 {
				t.Fatalf("step %d: the live value depends on %d uncomputed nodes", i, n)
			}
			if lz.size < 0 || lz.size > maxRecipe+1 {
				t.Fatalf("step %d: size %d out of [0, %d]", i, lz.size, maxRecipe+1)
			}
		}
	}
	d, err := b.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.As[float32](d); got[0] != 1 || got[1] != -2 || got[2] != 3 {
		t.Fatalf("(x+x)·0.5 repeated gives %v, want [1 -2 3]", got)
	}
}

// TestExitedGoroutinesDoNotKeepStreams queues ops from goroutines that
// exit without reading them: their streams must not pile up.
func TestExitedGoroutinesDoNotKeepStreams(t *testing.T) {
	b := newBounded(t)
	x := b.FromData(ir.FromSlice([]float32{1, 2}, []int{2}))
	var wg sync.WaitGroup
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = ir.Unary(b, ir.OpExp, x)
		}()
		wg.Wait()
	}
	b.mu.Lock()
	n := len(b.streams)
	b.mu.Unlock()
	if n > maxStreams+1 {
		t.Fatalf("%d streams left by 500 exited goroutines, want at most %d", n, maxStreams+1)
	}
}

// TestLongRecipesAreWritten runs a momentum-like loop without reads: a
// drained value too long to recompute is written at its drain instead of
// being recomputed alone by the next step.
func TestLongRecipesAreWritten(t *testing.T) {
	b := newBounded(t)
	w := b.FromData(ir.FromSlice([]float32{0.5, -0.25, 2}, []int{3}))
	m := b.FromData(ir.FromSlice([]float32{0, 0, 0}, []int{3}))
	for range 600 {
		g := ir.Unary(b, ir.OpTanh, ir.MulScalar(b, w, 0.1))
		m = ir.Add(b, ir.MulScalar(b, m, 0.9), ir.MulScalar(b, g, 0.1))
		w = ir.Sub(b, w, ir.MulScalar(b, m, 0.01))
	}
	if _, err := b.ToData(w); err != nil {
		t.Fatal(err)
	}
	if r := b.Stats().Recomputed.Load(); r != 0 {
		t.Fatalf("%d values were recomputed alone after their drain", r)
	}
}
