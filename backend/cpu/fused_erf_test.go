package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
)

// erfISANames names the erf kernels.
var erfISANames = [...]string{erfGeneric: "go", erfWithAVX2: "avx2", erfWithAVX512: "avx512"}

// forEachErfISA runs f with erfISA set to each kernel this CPU has, the
// best first.
func forEachErfISA(t testing.TB, f func(name string)) {
	best := erfISA
	defer func() { erfISA = best }()
	for isa := best; isa >= erfGeneric; isa-- {
		erfISA = isa
		f(erfISANames[isa])
	}
}

// checkErf compares erfF32 with float32(math.Erf(float64(x))) bit for bit
// on the float32 values whose bits are first, first+stride, ... up to
// 2^32, and returns how many it checked. Blocks of 4099 elements give the
// kernels a tail for the portable loop.
func checkErf(t *testing.T, name string, first, stride uint64) uint64 {
	const block = 4099
	a, o := make([]float32, block), make([]float32, block)
	var n uint64
	for b := first; b < 1<<32; {
		k := 0
		for ; k < block && b < 1<<32; k++ {
			a[k] = math.Float32frombits(uint32(b))
			b += stride
		}
		erfF32(o[:k], a[:k])
		for i, v := range a[:k] {
			if w := float32(math.Erf(float64(v))); math.Float32bits(w) != math.Float32bits(o[i]) {
				t.Errorf("%s: erf(%v [%#08x]) = %v [%#08x], math.Erf gives %v [%#08x]",
					name, v, math.Float32bits(v), o[i], math.Float32bits(o[i]), w, math.Float32bits(w))
				return n
			}
		}
		n += uint64(k)
	}
	return n
}

// TestFusedErfExact checks every erf kernel this CPU has (AVX-512, AVX2,
// portable Go) against math.Erf bit for bit on every 997th float32 bit
// pattern (both signs, subnormals, NaNs, the infinities' neighbours), on
// random normal values, and around the intervals' ends (also in place);
// with
// EMBER_EXHAUSTIVE_ERF=1 on every float32 value (minutes per kernel).
func TestFusedErfExact(t *testing.T) {
	exhaustive := os.Getenv("EMBER_EXHAUSTIVE_ERF") == "1"
	forEachErfISA(t, func(name string) {
		if exhaustive {
			w := workers.Workers()
			counts := make([]uint64, w)
			workers.ParallelFor(w, func(i int) { counts[i] = checkErf(t, name, uint64(i), uint64(w)) })
			var total uint64
			for _, c := range counts {
				total += c
			}
			if total != 1<<32 {
				t.Fatalf("%s: checked %d values, want 2^32", name, total)
			}
			return
		}
		checkErf(t, name, 0, 997)
		r := rand.New(rand.NewPCG(5, 5))
		a := make([]float32, 1<<16+5)
		for i := range a {
			switch i % 3 {
			case 0:
				a[i] = float32(r.NormFloat64())
			case 1:
				a[i] = float32(r.NormFloat64() * 3)
			default:
				// an interval's end (of any table), a few ulps either side
				end := float32(r.IntN(erfParts16+1)) * (erfSpan / erfParts16)
				a[i] = math.Float32frombits(math.Float32bits(end) + uint32(r.IntN(9)) - 4)
				if r.IntN(2) == 0 {
					a[i] = -a[i]
				}
			}
		}
		o := make([]float32, len(a))
		erfF32(o, a)
		in := slices.Clone(a)
		erfF32(in, in) // in place, as fused steps run it
		for i, v := range a {
			if w := float32(math.Erf(float64(v))); math.Float32bits(w) != math.Float32bits(o[i]) {
				t.Fatalf("%s: erf(%v) = %v, math.Erf gives %v", name, v, o[i], w)
			} else if math.Float32bits(w) != math.Float32bits(in[i]) {
				t.Fatalf("%s: erf(%v) in place = %v, math.Erf gives %v", name, v, in[i], w)
			}
		}
	})
}

// TestFusedErfFit checks the tables' relative error against math.Erf on
// a fine grid: it must stay far below the guard, which assumes 2^-42 at
// most.
func TestFusedErfFit(t *testing.T) {
	tab := erfTable()
	for _, c := range []struct {
		name  string
		parts int
		coef  func(j, k int) float64
		deg   int
	}{
		{"8 intervals", erfParts8, func(j, k int) float64 { return tab.c8[j][k] }, erfDeg8},
		// q16 is in h = s/4: its coefficient of h^j over 4^j is that of s^j
		{"16 intervals", erfParts16, func(j, k int) float64 { return math.Ldexp(tab.q16[j][k], -2*j) }, erfDeg16},
		{"4 intervals", erfParts4, func(j, k int) float64 { return tab.c4[j][k] }, erfDeg4},
	} {
		worst := 0.0
		for i := 1; i <= 800000; i++ {
			x := float64(i) * erfSpan / 800001
			u := x * float64(c.parts) / erfSpan
			k := int(u)
			s := u - float64(k)
			p := 0.0
			for j := c.deg; j >= 0; j-- {
				p = p*s + c.coef(j, k)
			}
			y := p * x
			worst = max(worst, math.Abs(y-math.Erf(x))/math.Erf(x))
		}
		if worst > 0x1p-42 {
			t.Errorf("%s: relative error of the fit up to %g (2^%.1f), want at most 2^-42", c.name, worst, math.Log2(worst))
		}
		t.Logf("%s: relative error of the fit up to %g (2^%.1f)", c.name, worst, math.Log2(worst))
	}
}

// TestFusedErfSpan checks that math.Erf rounds to ±1 in float32 from
// erfClamp on, which the kernels assume, and that erfClamp is the float64
// below erfSpan.
func TestFusedErfSpan(t *testing.T) {
	if erfClamp != math.Nextafter(erfSpan, 0) {
		t.Errorf("erfClamp = %v, want the float64 below %v, %v", erfClamp, erfSpan, math.Nextafter(erfSpan, 0))
	}
	for _, x := range []float64{erfClamp, erfSpan, 4.5, 10, 1e30, math.MaxFloat32, math.Inf(1)} {
		if y := float32(math.Erf(x)); y != 1 {
			t.Errorf("float32(math.Erf(%v)) = %v, want 1", x, y)
		}
		if y := float32(math.Erf(-x)); y != -1 {
			t.Errorf("float32(math.Erf(%v)) = %v, want -1", -x, y)
		}
	}
}

// BenchmarkFusedErf times erfF32 on 4096 elements (in L1) with each
// kernel this CPU has and math.Erf, interleaved: <isa>-ms are medians
// over the same varying load.
func BenchmarkFusedErf(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	a, o := make([]float32, 4096), make([]float32, 4096)
	for i := range a {
		a[i] = float32((r.NormFloat64()*r.NormFloat64() + r.NormFloat64()) / math.Sqrt2)
	}
	var names []string
	var fs []func()
	best := erfISA
	defer func() { erfISA = best }()
	for isa := best; isa >= erfGeneric; isa-- {
		names = append(names, erfISANames[isa])
		fs = append(fs, func() {
			erfISA = isa
			for range 100 {
				erfF32(o, a)
			}
		})
	}
	names = append(names, "math")
	fs = append(fs, func() {
		for range 100 {
			unaryFloat(backend.OpErf, o, a)
		}
	})
	benchInterleaved(b, names, fs)
}
