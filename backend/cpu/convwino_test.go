package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

// winoCases are convolutions the Winograd path takes (as conv2d: x, w)
// as conv2d and as conv_transpose2d of the same options, or (tposeOnly,
// padding above winoMaxPad) only as conv_transpose2d. They cover the
// MNIST CNN's second layer, batches that are not a multiple of the lanes
// (a partial last group), every padding, sides that are not a multiple of
// 4 (cropped or partial tiles), rows of several chunks, channel counts off
// the vector, and a 2×4 conv2d output (as conv_transpose2d input).
var winoCases = []struct {
	directCase
	tposeOnly bool
}{
	{directCase{[4]int{16, 32, 12, 12}, [4]int{64, 32, 5, 5}, convOpt(0, 0, 1, 1, 1)}, false},
	{directCase{[4]int{21, 16, 9, 10}, [4]int{20, 16, 5, 5}, convOpt(2, 1, 1, 1, 1)}, false},
	{directCase{[4]int{8, 17, 13, 7}, [4]int{33, 17, 5, 5}, convOpt(4, 3, 1, 1, 1)}, true},
	{directCase{[4]int{9, 24, 6, 40}, [4]int{16, 24, 5, 5}, convOpt(0, 2, 1, 1, 1)}, false},
	{directCase{[4]int{16, 16, 8, 7}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, true},
	{directCase{[4]int{9, 40, 11, 22}, [4]int{18, 40, 5, 5}, convOpt(2, 2, 1, 1, 1)}, false},
	// as conv_transpose2d: sides 13 and 17 (≡ 1 mod 4) padded by 1
	{directCase{[4]int{16, 16, 15, 19}, [4]int{16, 16, 5, 5}, convOpt(1, 1, 1, 1, 1)}, false},
}

// winoTol bounds the Winograd path's error relative to
// max(|want|, Σ|terms|, 1) (the numerical tables' F32 tolerance is 1e-5).
const winoTol = 4e-6

// withWinograd runs f with the Winograd path on or off.
func withWinograd(on bool, f func()) {
	prev := winogradOn
	winogradOn = on
	defer func() { winogradOn = prev }()
	f()
}

// withWinogradOff turns the Winograd path off and returns the function
// that restores it.
func withWinogradOff() func() {
	prev := winogradOn
	winogradOn = false
	return func() { winogradOn = prev }
}

// TestWinogradAgainstReference runs the Winograd conv2d and
// conv_transpose2d on every kernel set against the float64 loop of
// refConv, asserting that the path is taken, within winoTol of
// max(|want|, Σ|terms|, 1).
func TestWinogradAgainstReference(t *testing.T) {
	be := newTestBackend()
	for _, set := range tileKernelSets() {
		withTileKernel(t, set, func() {
			for ci, c := range winoCases {
				for _, transpose := range []bool{false, true} {
					if c.tposeOnly && !transpose {
						continue
					}
					name := fmt.Sprintf("%s/case %d transpose=%v", set, ci, transpose)
					xs, ws := c.x, c.w
					if transpose {
						xs = convShape(c.x[:], c.w[:], c.o, false)
					}
					os := convShape(xs[:], ws[:], c.o, transpose)
					if _, ok := useWinograd(xs, ws, os, unfold.GeomOf(ws[2], ws[3], c.o), c.o.Groups, transpose); !ok {
						t.Fatalf("%s: Winograd path not taken for x %v w %v", name, xs, ws)
					}
					xv, wv := randVals(numel(xs[:]), uint64(ci+1)), randVals(numel(ws[:]), uint64(ci+60))
					want := refConv(xv, xs, wv, ws, c.o, os, transpose)
					scale := refConv(absVals(xv), xs, absVals(wv), ws, c.o, os, transpose)
					x, w := tensorOf(be, xv, xs[:], backend.F32), tensorOf(be, wv, ws[:], backend.F32)
					var got ir.Tensor
					if transpose {
						got = ir.ConvTranspose2d(be, x, w, c.o)
					} else {
						got = ir.Conv2d(be, x, w, c.o)
					}
					if [4]int(got.Shape()) != os {
						t.Fatalf("%s: shape %v, want %v", name, got.Shape(), os)
					}
					gv := values(t, be, got)
					worst := 0.0
					for i := range gv {
						e := math.Abs(gv[i]-want[i]) / max(math.Abs(want[i]), scale[i], 1)
						worst = max(worst, e)
						if !(e <= winoTol) {
							t.Fatalf("%s: [%d] = %v, want %v (Σ|terms| %v)", name, i, gv[i], want[i], scale[i])
						}
					}
					t.Logf("%s: largest error %.3g × max(|want|, Σ|terms|, 1)", name, worst)
				}
			}
		})
	}
}

// TestWinogradSkips checks shapes that keep the direct or general path:
// a 3×3 kernel, stride 2, dilation 2, groups, conv2d padding 3, too few
// input or output channels, too small a batch, mostly empty tiles.
func TestWinogradSkips(t *testing.T) {
	withTileKernel(t, "generic", func() {
		L := 8
		for _, c := range []struct {
			directCase
			transpose bool
		}{
			{directCase{[4]int{16, 16, 9, 9}, [4]int{16, 16, 3, 3}, convOpt(0, 0, 1, 1, 1)}, false},
			{directCase{[4]int{16, 16, 9, 9}, [4]int{16, 16, 5, 5}, backend.ConvOptions{Stride: [2]int{2, 1}, Dilation: [2]int{1, 1}, Groups: 1}}, false},
			{directCase{[4]int{16, 16, 13, 13}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 2, 1, 1)}, false},
			{directCase{[4]int{16, 32, 12, 12}, [4]int{32, 16, 5, 5}, convOpt(0, 0, 1, 1, 2)}, false},
			{directCase{[4]int{16, 16, 12, 12}, [4]int{16, 16, 5, 5}, convOpt(3, 0, 1, 1, 1)}, false},
			{directCase{[4]int{16, 8, 12, 12}, [4]int{16, 8, 5, 5}, convOpt(0, 0, 1, 1, 1)}, false},
			{directCase{[4]int{16, 16, 12, 12}, [4]int{8, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, false},
			{directCase{[4]int{L/2 - 1, 16, 12, 12}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, false},
			{directCase{[4]int{16, 16, 5, 6}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, false},
			{directCase{[4]int{16, 16, 1, 2}, [4]int{16, 16, 5, 5}, convOpt(0, 0, 1, 1, 1)}, true},
			{directCase{[4]int{16, 16, 8, 8}, [4]int{16, 16, 5, 5}, convOpt(5, 0, 1, 1, 1)}, true},
			{directCase{[4]int{16, 16, 9, 12}, [4]int{16, 16, 5, 5}, convOpt(0, 1, 1, 1, 1)}, true},
			{directCase{[4]int{16, 16, 12, 17}, [4]int{16, 16, 5, 5}, convOpt(1, 0, 1, 1, 1)}, true},
		} {
			xs := c.x
			ws := c.w
			os := convShape(xs[:], ws[:], c.o, c.transpose)
			if c.transpose {
				ws = [4]int{c.w[1], c.w[0], 5, 5}
				os = convShape(xs[:], ws[:], c.o, true)
			}
			if _, ok := useWinograd(xs, ws, os, unfold.GeomOf(ws[2], ws[3], c.o), c.o.Groups, c.transpose); ok {
				t.Errorf("x %v w %v %+v transpose %v: Winograd path taken", xs, ws, c.o, c.transpose)
			}
		}
		// and one it takes, so that the skips above are not vacuous
		xs, ws := [4]int{L / 2, 16, 12, 12}, [4]int{16, 16, 5, 5}
		o := convOpt(2, 2, 1, 1, 1)
		if _, ok := useWinograd(xs, ws, convShape(xs[:], ws[:], o, false), unfold.GeomOf(5, 5, o), 1, false); !ok {
			t.Errorf("x %v w %v: Winograd path not taken", xs, ws)
		}
		withWinograd(false, func() {
			if _, ok := useWinograd(xs, ws, convShape(xs[:], ws[:], o, false), unfold.GeomOf(5, 5, o), 1, false); ok {
				t.Errorf("x %v w %v: Winograd path taken while off", xs, ws)
			}
		})
	})
}

// TestWinogradDeterministic checks that the Winograd conv2d and
// conv_transpose2d give the same bits on the worker pool as on one
// goroutine.
func TestWinogradDeterministic(t *testing.T) {
	if winogradSet() == nil {
		t.Skip("no Winograd kernels on this machine")
	}
	be := newTestBackend()
	for ci, c := range winoCases {
		os := convShape(c.x[:], c.w[:], c.o, false)
		x := tensorOf(be, randVals(numel(c.x[:]), uint64(ci+3)), c.x[:], backend.F32)
		w := tensorOf(be, randVals(numel(c.w[:]), uint64(ci+4)), c.w[:], backend.F32)
		g := tensorOf(be, randVals(numel(os[:]), uint64(ci+5)), os[:], backend.F32)
		run := func() [2][]float64 {
			var r [2][]float64
			if !c.tposeOnly {
				r[0] = values(t, be, ir.Conv2d(be, x, w, c.o))
			}
			r[1] = values(t, be, ir.ConvTranspose2d(be, g, w, c.o))
			return r
		}
		par := run()
		directSerial = true
		ser := run()
		directSerial = false
		for k := range par {
			for i := range par[k] {
				if math.Float64bits(par[k][i]) != math.Float64bits(ser[k][i]) {
					t.Fatalf("case %d op %d: [%d] parallel %v, serial %v", ci, k, i, par[k][i], ser[k][i])
				}
			}
		}
	}
}

// TestWinogradNonFinite puts one Inf, NaN or huge finite value into the
// input or the weights of convolutions the Winograd path takes: a
// transform mixes a whole tile, so the result must come from the direct
// kernels, bit for bit the result with the path off (NaN and Inf only in
// the outputs within the value's reach), for conv2d and conv_transpose2d.
func TestWinogradNonFinite(t *testing.T) {
	be := newTestBackend()
	ws := [4]int{16, 16, 5, 5}
	for _, transpose := range []bool{false, true} {
		xs := [4]int{16, 16, 12, 12}
		if transpose {
			xs = [4]int{16, 16, 8, 8}
		}
		o := convOpt(0, 0, 1, 1, 1)
		os := convShape(xs[:], ws[:], o, transpose)
		if _, ok := useWinograd(xs, ws, os, unfold.GeomOf(5, 5, o), 1, transpose); !ok {
			t.Fatalf("transpose=%v: Winograd path not taken for x %v", transpose, xs)
		}
		for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1e38, 3e37} {
			for _, inW := range []bool{false, true} {
				xv, wv := randVals(numel(xs[:]), 1), randVals(numel(ws[:]), 2)
				if inW {
					wv[2*25+12] = bad
				} else {
					xv[3*xs[2]*xs[3]+5*xs[3]+5] = bad
				}
				x, w := tensorOf(be, xv, xs[:], backend.F32), tensorOf(be, wv, ws[:], backend.F32)
				run := func() []float64 {
					if transpose {
						return values(t, be, ir.ConvTranspose2d(be, x, w, o))
					}
					return values(t, be, ir.Conv2d(be, x, w, o))
				}
				got := run()
				var want []float64
				withWinograd(false, func() { want = run() })
				finite := 0
				for i := range want {
					if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Fatalf("transpose=%v, %v in the weights=%v: y[%d] = %v, want %v (path off)", transpose, bad, inW, i, got[i], want[i])
					}
					if !math.IsNaN(want[i]) && !math.IsInf(want[i], 0) {
						finite++
					}
				}
				if finite == 0 || finite == len(want) && (math.IsNaN(bad) || math.IsInf(bad, 0)) {
					t.Fatalf("transpose=%v, %v in the weights=%v: %d of %d outputs finite", transpose, bad, inW, finite, len(want))
				}
			}
		}
	}
}
