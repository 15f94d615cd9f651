package autodiff

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestRecomputeCacheReleased runs Backward with checkpointing on a chain
// of 90 memory-bound ops (Neg, Add of a constant, Reshape) ending in Exp,
// whose backward reads its output and so recomputes the whole chain. Each
// link is read only by the recomputation of the next one, so at most a
// couple of recomputed values may be cached at once (it was the whole
// chain when the cache lived until Backward returned). It also checks
// that every node is recomputed exactly once, that the cache is empty at
// the end, that the gradient equals the hand-derived one (±exp of the
// chain's value, float64 loop, relative tolerance 1e-12) and is
// bit-identical to the one without checkpointing, and that intermediate
// gradients stay available.
func TestRecomputeCacheReleased(t *testing.T) {
	const links = 90
	r := rand.New(rand.NewPCG(11, 11))
	x0 := randIn(r, []int{3, 4}, 0.1, 1, true).vals
	run := func(ckpt bool) (gx, gmid []byte, st *cacheStats) {
		b := New(newInner(), ckpt)
		b.stats = &cacheStats{}
		x := b.RequireGrad(b.FromData(f64Data([]int{3, 4}, x0)))
		h, mid := x, x
		for k := range links {
			switch k % 3 {
			case 0:
				h = ir.Unary(b, backend.OpNeg, h)
			case 1:
				h = ir.Binary(b, backend.OpAdd, h, ir.Full(b, []int{}, backend.F64, 0.01*float64(k)))
			default:
				if len(h.Shape()) == 2 {
					h = ir.Reshape(b, h, []int{12})
				} else {
					h = ir.Reshape(b, h, []int{3, 4})
				}
			}
			if k == links/2 {
				mid = h
			}
		}
		y := ir.Unary(b, backend.OpExp, ir.Reshape(b, h, []int{3, 4}))
		gs := b.Backward(y)
		g, ok := gs.Get(x)
		gm, okm := gs.Get(mid)
		if !ok || !okm {
			t.Fatalf("checkpointing=%v: gradient of the leaf (%v) or the intermediate (%v) missing", ckpt, ok, okm)
		}
		if ckpt {
			// The reference: h = s·x + c elementwise, dy/dx = s·exp(h).
			s, c := 1.0, 0.0
			for k := range links {
				switch k % 3 {
				case 0:
					s, c = -s, -c
				case 1:
					c += 0.01 * float64(k)
				}
			}
			want := make([]float64, len(x0))
			for i, v := range x0 {
				want[i] = s * math.Exp(s*v+c)
			}
			for i, v := range values(t, b.Unwrap(), g) {
				if math.Abs(v-want[i]) > 1e-12*math.Abs(want[i]) {
					t.Errorf("dy/dx[%d] = %.17g, want %.17g", i, v, want[i])
				}
			}
		}
		return rawBytes(t, b.Unwrap(), g), rawBytes(t, b.Unwrap(), gm), b.stats
	}
	gx, gm, _ := run(false)
	gxc, gmc, st := run(true)
	if !bytes.Equal(gx, gxc) || !bytes.Equal(gm, gmc) {
		t.Error("gradients differ with checkpointing")
	}
	// links recomputed ops plus the Reshape before Exp and Exp itself.
	if st.recomputes != links+2 || st.repeats != 0 {
		t.Errorf("recomputed %d forward ops (%d repeats), want %d and 0", st.recomputes, st.repeats, links+2)
	}
	if st.live != 0 {
		t.Errorf("%d recomputed values still cached when Backward returned, want 0", st.live)
	}
	if st.maxLive > 2 {
		t.Errorf("at most %d recomputed values cached at once on a chain of %d, want <= 2", st.maxLive, links)
	}
}

// TestRecomputeCacheLayers runs an 8-layer tanh(h·W + b) network with
// checkpointing: each layer's Add and Tanh are recomputed (Matmul outputs
// are kept), and a layer's values are read only by its own backward step
// and the next layer's Matmul, so at most two recomputed values are cached
// at once (sixteen were with a cache that lived until Backward returned).
// The gradients of every weight must be bit-identical to those without
// checkpointing.
func TestRecomputeCacheLayers(t *testing.T) {
	const layers = 8
	r := rand.New(rand.NewPCG(12, 12))
	xd := f64Data([]int{4, 6}, randIn(r, []int{24}, 0.1, 1, true).vals)
	wd := make([]*backend.TensorData, layers)
	bd := make([]*backend.TensorData, layers)
	for k := range wd {
		wd[k] = f64Data([]int{6, 6}, randIn(r, []int{36}, 0.1, 0.6, true).vals)
		bd[k] = f64Data([]int{6}, randIn(r, []int{6}, 0.1, 0.5, true).vals)
	}
	run := func(ckpt bool) ([][]byte, *cacheStats) {
		b := New(newInner(), ckpt)
		b.stats = &cacheStats{}
		params := make([]backend.Tensor, 0, 2*layers)
		h := b.FromData(xd)
		for k := range layers {
			w, bias := b.RequireGrad(b.FromData(wd[k])), b.RequireGrad(b.FromData(bd[k]))
			params = append(params, w, bias)
			h = ir.Unary(b, backend.OpTanh, ir.Binary(b, backend.OpAdd, ir.Matmul(b, h, w), bias))
		}
		gs := b.Backward(scalarLoss(b, h, 3))
		out := make([][]byte, len(params))
		for i, p := range params {
			g, ok := gs.Get(p)
			if !ok {
				t.Fatalf("checkpointing=%v: no gradient for parameter %d", ckpt, i)
			}
			out[i] = rawBytes(t, b.Unwrap(), g)
		}
		return out, b.stats
	}
	plain, _ := run(false)
	ckpt, st := run(true)
	for i := range plain {
		if !bytes.Equal(plain[i], ckpt[i]) {
			t.Errorf("parameter %d: gradient differs with checkpointing", i)
		}
	}
	if st.recomputes != 2*layers || st.repeats != 0 || st.live != 0 {
		t.Errorf("recomputed %d ops (%d repeats, %d left cached), want %d, 0, 0", st.recomputes, st.repeats, st.live, 2*layers)
	}
	if st.maxLive > 2 {
		t.Errorf("at most %d recomputed values cached at once over %d layers, want <= 2", st.maxLive, layers)
	}
}
