package hostrng

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The samples are math/rand/v2's draws from a PCG seeded (seed,
// pcgStream), transformed as Sample's comment says: checked against a
// generator built here.
func TestSampleMatchesPCG(t *testing.T) {
	const seed = 1234
	g := New(seed)
	ref := rand.New(rand.NewPCG(seed, pcgStream))
	v := make([]float64, 257)

	g.Sample(v, ir.Distribution{Kind: ir.DistNormal, A: 0.5, B: 2}, backend.F64)
	for i, x := range v {
		if want := 0.5 + 2*ref.NormFloat64(); x != want {
			t.Fatalf("normal sample %d = %v, want %v", i, x, want)
		}
	}
	g.Sample(v, ir.Distribution{Kind: ir.DistUniform, A: -3, B: 5}, backend.F64)
	for i, x := range v {
		if want := -3 + ref.Float64()*8; x != want {
			t.Fatalf("uniform sample %d = %v, want %v", i, x, want)
		}
	}
	g.Sample(v, ir.Distribution{Kind: ir.DistUniform, A: -3, B: 5}, backend.I32)
	for i, x := range v {
		if want := math.Floor(-3 + ref.Float64()*8); x != want || x < -3 || x >= 5 {
			t.Fatalf("integer sample %d = %v, want %v in [-3, 5)", i, x, want)
		}
	}
	g.Sample(v, ir.Distribution{Kind: ir.DistBernoulli, A: 0.3}, backend.F32)
	for i, x := range v {
		want := 0.0
		if ref.Float64() < 0.3 {
			want = 1
		}
		if x != want {
			t.Fatalf("Bernoulli sample %d = %v, want %v", i, x, want)
		}
	}
}

// A uniform sample that would round up to B in the element dtype is drawn
// again: on [1, 1+2^-23) every float64 sample above 1+2^-24 rounds to B
// in float32, so about half the draws are redrawn and none is kept.
func TestUniformNeverRoundsToB(t *testing.T) {
	g := New(7)
	hi := 1 + math.Ldexp(1, -23)
	v := make([]float64, 4096)
	for _, dt := range []backend.DType{backend.F32, backend.F16, backend.BF16} {
		g.Sample(v, ir.Distribution{Kind: ir.DistUniform, A: 1, B: hi}, dt)
		for i, x := range v {
			if roundTo(dt, x) >= hi {
				t.Fatalf("%v sample %d = %v rounds to %v, not below B = %v", dt, i, x, roundTo(dt, x), hi)
			}
			if x < 1 || x >= hi {
				t.Fatalf("%v sample %d = %v outside [1, %v)", dt, i, x, hi)
			}
		}
	}
}

// State and SetState round-trip: the restored generator repeats the
// draws that followed the saved state; a bad state is refused and changes
// nothing.
func TestStateRoundTrip(t *testing.T) {
	g := New(99)
	a := make([]float64, 16)
	g.Sample(a, ir.Distribution{Kind: ir.DistNormal, B: 1}, backend.F64)
	st, err := g.State()
	if err != nil {
		t.Fatal(err)
	}
	b1, b2 := make([]float64, 16), make([]float64, 16)
	g.Sample(b1, ir.Distribution{Kind: ir.DistNormal, B: 1}, backend.F64)
	if err := g.SetState([]byte("not a state")); err == nil {
		t.Fatal("SetState accepted a malformed state")
	}
	if err := g.SetState(st); err != nil {
		t.Fatal(err)
	}
	g.Sample(b2, ir.Distribution{Kind: ir.DistNormal, B: 1}, backend.F64)
	for i := range b1 {
		if b1[i] != b2[i] || b1[i] == a[i] {
			t.Fatalf("draw %d after restoring: %v, want %v (and not the earlier %v)", i, b2[i], b1[i], a[i])
		}
	}
	g.Seed(99)
	g.Sample(b2, ir.Distribution{Kind: ir.DistNormal, B: 1}, backend.F64)
	for i := range a {
		if a[i] != b2[i] {
			t.Fatalf("draw %d after Seed(99) = %v, want %v", i, b2[i], a[i])
		}
	}
}
