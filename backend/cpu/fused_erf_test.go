package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
)

// checkErf compares erfF32 with float32(math.Erf(float64(x))) bit for bit
// on the float32 values whose bits are first, first+stride, ... up to
// 2^32, and returns how many it checked.
func checkErf(t *testing.T, first, stride uint64) int {
	const block = 4096
	a, o := make([]float32, block), make([]float32, block)
	n := 0
	for b := first; b < 1<<32; {
		k := 0
		for ; k < block && b < 1<<32; k++ {
			a[k] = math.Float32frombits(uint32(b))
			b += stride
		}
		erfF32(o[:k], a[:k])
		for i, v := range a[:k] {
			if w := float32(math.Erf(float64(v))); math.Float32bits(w) != math.Float32bits(o[i]) {
				t.Errorf("erf(%v [%#08x]) = %v [%#08x], math.Erf gives %v [%#08x]",
					v, math.Float32bits(v), o[i], math.Float32bits(o[i]), w, math.Float32bits(w))
				return n
			}
		}
		n += k
	}
	return n
}

// TestFusedErfExact checks the fused float32 erf against math.Erf on
// every 997th float32 bit pattern (both signs, subnormals, NaNs, the
// infinities' neighbours), on random normal values, and around the
// intervals' ends; with EMBER_EXHAUSTIVE_ERF=1 on every float32 value
// (minutes).
func TestFusedErfExact(t *testing.T) {
	if os.Getenv("EMBER_EXHAUSTIVE_ERF") == "1" {
		w := workers.Workers()
		counts := make([]int, w)
		workers.ParallelFor(w, func(i int) { counts[i] = checkErf(t, uint64(i), uint64(w)) })
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != 1<<32 {
			t.Fatalf("checked %d values, want 2^32", total)
		}
		return
	}
	checkErf(t, 0, 997)
	r := rand.New(rand.NewPCG(5, 5))
	a := make([]float32, 1<<16)
	for i := range a {
		switch i % 3 {
		case 0:
			a[i] = float32(r.NormFloat64())
		case 1:
			a[i] = float32(r.NormFloat64() * 3)
		default:
			// an interval's end, a few ulps either side
			end := float32(r.IntN(erfParts+1)) * (erfSpan / erfParts)
			a[i] = math.Float32frombits(math.Float32bits(end) + uint32(r.IntN(9)) - 4)
			if r.IntN(2) == 0 {
				a[i] = -a[i]
			}
		}
	}
	o := make([]float32, len(a))
	erfF32(o, a)
	for i, v := range a {
		if w := float32(math.Erf(float64(v))); math.Float32bits(w) != math.Float32bits(o[i]) {
			t.Fatalf("erf(%v) = %v, math.Erf gives %v", v, o[i], w)
		}
	}
}

// TestFusedErfFit checks the polynomials' relative error against
// math.Erf on a fine grid: it must stay far below the guard, which
// assumes 2^-46 at most.
func TestFusedErfFit(t *testing.T) {
	tab := erfTable()
	worst := 0.0
	for i := 1; i <= 600000; i++ {
		x := float64(i) * erfSpan / 600001
		u := x * (erfParts / erfSpan)
		k := int(u)
		tt := 2*(u-float64(k)) - 1
		p := 0.0
		for j := erfDeg; j >= 0; j-- {
			p = p*tt + tab[k][j]
		}
		y := p * (tab[k][erfDeg+1]*x + tab[k][erfDeg+2])
		worst = max(worst, math.Abs(y-math.Erf(x))/math.Erf(x))
	}
	if worst > 0x1p-46 {
		t.Fatalf("relative error of the fit up to %g (2^%.1f), want at most 2^-46", worst, math.Log2(worst))
	}
	t.Logf("relative error of the fit up to %g (2^%.1f)", worst, math.Log2(worst))
}

func BenchmarkFusedErf(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	a, o := make([]float32, 4096), make([]float32, 4096)
	for i := range a {
		a[i] = float32((r.NormFloat64()*r.NormFloat64() + r.NormFloat64()) / math.Sqrt2)
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			erfF32(o, a)
		}
	})
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			unaryFloat(backend.OpErf, o, a)
		}
	})
}
