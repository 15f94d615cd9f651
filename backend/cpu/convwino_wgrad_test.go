package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/unfold"
)

// winoWgradTol bounds the Winograd weight gradient's error relative to
// max(|gw|, Σ|x·g|, 1) per weight (the numerical tables' F32 tolerance is
// 1e-5). The largest measured: 3.7e-6 on winoWgradCases; a sweep of 300
// shapes (batches 1 to 19, sides 4 to 13, every padding, 16 to 33
// channels) gave at most 3.5e-6 with the path's depth of at least 32
// tiles, 5.6e-6 at 16 to 31 tiles and up to 1.9e-5 with 1 to 3 tiles.
const winoWgradTol = 6e-6

// winoWgradCase is a weight gradient the Winograd path takes: batch n,
// channels cin and cout, output-gradient sides ho × wo, padding (ph, pw).
type winoWgradCase struct{ n, cin, cout, ho, wo, ph, pw int }

func (c winoWgradCase) shapes() (xs, ws, gs [4]int, o backend.ConvOptions) {
	o = convOpt(c.ph, c.pw, 1, 1, 1)
	xs = [4]int{c.n, c.cin, c.ho + 4 - 2*c.ph, c.wo + 4 - 2*c.pw}
	ws = [4]int{c.cout, c.cin, 5, 5}
	gs = [4]int{c.n, c.cout, c.ho, c.wo}
	return
}

// winoWgradCases covers the MNIST CNN's second layer (a smaller batch),
// batches that are not a multiple of the lanes or of the segment size
// (several segments and chunks), output sides 4 to 13 (partial tiles),
// every padding up to winoMaxPad, the fewest tiles (winoWgradMinDepth),
// and channel counts at and around winoMinChannels and off the vector.
var winoWgradCases = []winoWgradCase{
	{16, 32, 64, 8, 8, 0, 0},
	{8, 16, 17, 5, 8, 0, 1},
	{9, 17, 16, 6, 6, 1, 0},
	{9, 20, 24, 8, 9, 2, 2},
	{5, 33, 18, 9, 10, 1, 2},
	{17, 16, 16, 11, 13, 0, 0},
	{4, 31, 40, 12, 9, 2, 1},
	{33, 16, 20, 13, 12, 1, 1},
	{11, 24, 16, 10, 4, 2, 0},
	{8, 16, 33, 4, 13, 0, 2},
	{3, 48, 16, 13, 13, 2, 2},
	{6, 32, 16, 10, 6, 2, 1},
	{2, 32, 33, 13, 13, 2, 1},
	{32, 16, 16, 4, 4, 1, 1},
}

// withWinogradWgrad turns the Winograd weight gradient on (WinogradEnv
// "all") for the rest of t.
func withWinogradWgrad(t *testing.T) {
	prev := winoWgradOn
	winoWgradOn = true
	t.Cleanup(func() { winoWgradOn = prev })
}

// TestWinogradWeightGradAgainstReference runs the Winograd weight
// gradient on every kernel set against the float64 loop of
// refWeightGrad on random non-zero inputs, asserting that the path is
// taken and every weight within winoWgradTol of max(|gw|, Σ|x·g|, 1).
func TestWinogradWeightGradAgainstReference(t *testing.T) {
	withWinogradWgrad(t)
	be := newTestBackend()
	for _, set := range tileKernelSets() {
		withTileKernel(t, set, func() {
			worstAll := 0.0
			for ci, c := range winoWgradCases {
				name := fmt.Sprintf("%s/%+v", set, c)
				xs, ws, gs, o := c.shapes()
				if _, ok := useWinogradWgrad(xs, ws, gs, unfold.GeomOf(5, 5, o), 1); !ok {
					t.Fatalf("%s: Winograd path not taken", name)
				}
				xv, gv := randVals(numel(xs[:]), uint64(ci+100)), randVals(numel(gs[:]), uint64(ci+200))
				want := refWeightGrad(xv, xs, gv, gs, ws, o)
				scale := refWeightGrad(absVals(xv), xs, absVals(gv), gs, ws, o)
				x, g := tensorOf(be, xv, xs[:], backend.F32), tensorOf(be, gv, gs[:], backend.F32)
				got := values(t, be, conv2dWeightGrad(be, x, g, ws, o))
				worst := 0.0
				for i := range got {
					e := math.Abs(got[i]-want[i]) / max(math.Abs(want[i]), scale[i], 1)
					worst = max(worst, e)
					if !(e <= winoWgradTol) {
						t.Fatalf("%s: gw[%d] = %v, want %v (Σ|terms| %v)", name, i, got[i], want[i], scale[i])
					}
				}
				worstAll = max(worstAll, worst)
				t.Logf("%s: largest error %.3g × max(|gw|, Σ|terms|, 1)", name, worst)
			}
			t.Logf("%s: largest error over the cases %.3g", set, worstAll)
		})
	}
}

// TestWinogradWeightGradSkips checks weight gradients that keep the
// direct path: one input channel (a first layer), a 3×3 kernel, stride 2,
// dilation 2, groups, padding 3, 15 input or output channels, mostly
// empty tiles, fewer than winoWgradMinDepth tiles, an output side below 4
// times the padding, the Winograd paths switched off, and WinogradEnv
// unset (the weight gradient's path is taken only with "all").
func TestWinogradWeightGradSkips(t *testing.T) {
	withWinogradWgrad(t)
	withTileKernel(t, "generic", func() {
		for _, c := range []struct {
			x, w [4]int
			o    backend.ConvOptions
		}{
			{[4]int{64, 1, 28, 28}, [4]int{32, 1, 5, 5}, convOpt(0, 0, 1, 1, 1)},
			{[4]int{8, 16, 12, 12}, [4]int{16, 16, 3, 3}, convOpt(0, 0, 1, 1, 1)},
			{[4]int{8, 16, 13, 13}, [4]int{16, 16, 5, 5}, backend.ConvOptions{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Groups: 1}},
			{[4]int{8, 16, 16, 16}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 2, 2, 1)},
			{[4]int{8, 32, 12, 12}, [4]int{32, 16, 5, 5}, convOpt(0, 0, 1, 1, 2)},
			{[4]int{8, 16, 12, 12}, [4]int{16, 16, 5, 5}, convOpt(3, 3, 1, 1, 1)},
			{[4]int{8, 15, 12, 12}, [4]int{16, 15, 5, 5}, convOpt(0, 0, 1, 1, 1)},
			{[4]int{8, 16, 12, 12}, [4]int{15, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)},
			{[4]int{8, 16, 9, 9}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)},  // 5×5 outputs in 2×2 tiles
			{[4]int{31, 16, 8, 8}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, // 31 tiles
			{[4]int{8, 16, 7, 12}, [4]int{16, 16, 5, 5}, convOpt(2, 2, 1, 1, 1)}, // 7 output rows, padding 2
		} {
			gs := convShape(c.x[:], c.w[:], c.o, false)
			if _, ok := useWinogradWgrad(c.x, c.w, gs, unfold.GeomOf(c.w[2], c.w[3], c.o), c.o.Groups); ok {
				t.Errorf("x %v w %v %+v: Winograd path taken", c.x, c.w, c.o)
			}
		}
		xs, ws := [4]int{8, 16, 12, 12}, [4]int{16, 16, 5, 5}
		o := convOpt(0, 0, 1, 1, 1)
		gs := convShape(xs[:], ws[:], o, false)
		if _, ok := useWinogradWgrad(xs, ws, gs, unfold.GeomOf(5, 5, o), 1); !ok {
			t.Errorf("x %v w %v: Winograd path not taken", xs, ws)
		}
		withWinograd(false, func() {
			if _, ok := useWinogradWgrad(xs, ws, gs, unfold.GeomOf(5, 5, o), 1); ok {
				t.Errorf("x %v w %v: Winograd path taken while off", xs, ws)
			}
		})
		winoWgradOn = false // WinogradEnv unset: the convolutions only
		if _, ok := useWinogradWgrad(xs, ws, gs, unfold.GeomOf(5, 5, o), 1); ok {
			t.Errorf("x %v w %v: Winograd weight gradient taken by default", xs, ws)
		}
	})
}

// TestWinogradWeightGradDeterministic checks that the Winograd weight
// gradient gives the same bits on the worker pool as on one goroutine,
// for batches of one and of several segments.
func TestWinogradWeightGradDeterministic(t *testing.T) {
	withWinogradWgrad(t)
	if winogradSet() == nil {
		t.Skip("no Winograd kernels on this machine")
	}
	be := newTestBackend()
	for ci, c := range append([]winoWgradCase{{64, 32, 64, 8, 8, 0, 0}, {37, 20, 16, 7, 9, 1, 2}}, winoWgradCases...) {
		xs, ws, gs, o := c.shapes()
		x := tensorOf(be, randVals(numel(xs[:]), uint64(ci+3)), xs[:], backend.F32)
		g := tensorOf(be, randVals(numel(gs[:]), uint64(ci+5)), gs[:], backend.F32)
		par := values(t, be, conv2dWeightGrad(be, x, g, ws, o))
		directSerial = true
		ser := values(t, be, conv2dWeightGrad(be, x, g, ws, o))
		directSerial = false
		for i := range par {
			if math.Float64bits(par[i]) != math.Float64bits(ser[i]) {
				t.Fatalf("%+v: gw[%d] parallel %v, serial %v", c, i, par[i], ser[i])
			}
		}
	}
}

// TestWinogradWeightGradNonFinite puts one Inf, NaN or huge finite value
// into the input or the output gradient of a weight gradient the
// Winograd path takes: the result must come from the direct kernels, bit
// for bit the result with the path off (NaN and Inf only in the weights
// within the value's reach).
func TestWinogradWeightGradNonFinite(t *testing.T) {
	withWinogradWgrad(t)
	be := newTestBackend()
	c := winoWgradCase{20, 16, 16, 8, 8, 0, 0}
	xs, ws, gs, o := c.shapes()
	if _, ok := useWinogradWgrad(xs, ws, gs, unfold.GeomOf(5, 5, o), 1); !ok {
		t.Fatalf("Winograd path not taken for %+v", c)
	}
	for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1e38, 3e37} {
		for _, inG := range []bool{false, true} {
			xv, gv := randVals(numel(xs[:]), 1), randVals(numel(gs[:]), 2)
			if inG {
				gv[3*gs[2]*gs[3]+2*gs[3]+5] = bad
			} else {
				xv[3*xs[2]*xs[3]+5*xs[3]+5] = bad
			}
			x, g := tensorOf(be, xv, xs[:], backend.F32), tensorOf(be, gv, gs[:], backend.F32)
			got := values(t, be, conv2dWeightGrad(be, x, g, ws, o))
			var want []float64
			withWinograd(false, func() { want = values(t, be, conv2dWeightGrad(be, x, g, ws, o)) })
			finite := 0
			for i := range want {
				if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%v in g=%v: gw[%d] = %v, want %v (path off)", bad, inG, i, got[i], want[i])
				}
				if !math.IsNaN(want[i]) && !math.IsInf(want[i], 0) {
					finite++
				}
			}
			if finite == 0 || finite == len(want) && (math.IsNaN(bad) || math.IsInf(bad, 0)) {
				t.Fatalf("%v in g=%v: %d of %d weights finite", bad, inG, finite, len(want))
			}
		}
	}
}
