package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/internal/unfold"
	"github.com/emberml/ember/ir"
)

// tileKernelSets returns the gemm tile kernel sets this machine runs
// ("generic" last), for tests that run the direct convolutions on each.
func tileKernelSets() []string {
	var sets []string
	for _, n := range []string{"avx512", "avx2"} {
		if restore, err := gemm.UseTileKernel(n); err == nil {
			restore()
			sets = append(sets, n)
		}
	}
	return append(sets, "generic")
}

// withTileKernel runs f with the named tile kernels selected; the generic
// set has 8 lanes, as AVX2.
func withTileKernel(t *testing.T, name string, f func()) {
	t.Helper()
	restore, err := gemm.UseTileKernel(name)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	directPortable = name == "generic"
	defer func() { directPortable = false }()
	f()
}

// directCase is a convolution the direct paths handle: x [N, C, H, W],
// w [Cout, C/groups, kH, kW] (conv2d's layout; the transposed tests use
// the adjoint's).
type directCase struct {
	x, w [4]int
	o    backend.ConvOptions
}

func convOpt(p0, p1, d0, d1, g int) backend.ConvOptions {
	return backend.ConvOptions{Stride: [2]int{1, 1}, Padding: [2]int{p0, p1}, Dilation: [2]int{d0, d1}, Groups: g}
}

// directCases covers the MNIST CNN's layers (smaller batches), odd sizes
// (rows split into uneven tiles, channel counts that are not a multiple of
// the vector), padding, dilation, groups, a depth above directConvDepth
// (chunked), batches smaller than the worker count and a 1×1 kernel.
var directCases = []directCase{
	{[4]int{3, 1, 28, 28}, [4]int{32, 1, 5, 5}, convOpt(0, 0, 1, 1, 1)},
	{[4]int{5, 32, 12, 12}, [4]int{64, 32, 5, 5}, convOpt(0, 0, 1, 1, 1)},
	{[4]int{2, 3, 13, 17}, [4]int{20, 3, 3, 3}, convOpt(1, 1, 1, 1, 1)},
	{[4]int{3, 9, 11, 9}, [4]int{40, 9, 3, 2}, convOpt(2, 0, 1, 2, 1)},
	{[4]int{2, 12, 10, 15}, [4]int{24, 4, 3, 3}, convOpt(1, 2, 2, 1, 3)},
	{[4]int{1, 70, 9, 7}, [4]int{16, 70, 3, 3}, convOpt(1, 1, 1, 1, 1)},
	{[4]int{1, 8, 31, 5}, [4]int{9, 8, 2, 4}, convOpt(0, 3, 1, 1, 1)},
	{[4]int{4, 16, 6, 6}, [4]int{33, 16, 1, 1}, convOpt(0, 0, 1, 1, 1)},
}

// TestDirectConvAgainstReference runs the direct conv2d and
// conv_transpose2d on every tile kernel set against the float64 loop of
// refConv and against the im2col/GEMM path (convT), on random non-zero
// operands, asserting that the direct path is taken (the Winograd path,
// which would take some of these shapes, is off).
func TestDirectConvAgainstReference(t *testing.T) {
	defer withWinogradOff()()
	be := newTestBackend()
	for _, set := range tileKernelSets() {
		withTileKernel(t, set, func() {
			for ci, c := range directCases {
				for _, transpose := range []bool{false, true} {
					name := fmt.Sprintf("%s/case %d transpose=%v", set, ci, transpose)
					xs, ws := c.x, c.w
					if transpose { // the input gradient's op: x = [N, Cout, Ho, Wo], w as conv2d's
						os := convShape(c.x[:], c.w[:], c.o, false)
						xs = os
					}
					os := convShape(xs[:], ws[:], c.o, transpose)
					g := unfold.GeomOf(ws[2], ws[3], c.o)
					use := useDirectConv(xs, ws, os, g, c.o.Groups)
					if transpose {
						use = useDirectConvTranspose(xs, ws, os, g, c.o.Groups)
					}
					if !use {
						if transpose && (xs[1]/c.o.Groups < 8 || os[1]/c.o.Groups*2 < gemm.TileLanes()) {
							continue // too few channels for the transposed path
						}
						t.Fatalf("%s: direct path not taken for x %v w %v", name, xs, ws)
					}
					xv, wv := randVals(numel(xs[:]), uint64(ci+1)), randVals(numel(ws[:]), uint64(ci+60))
					want := refConv(xv, xs, wv, ws, c.o, os, transpose)
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
					depth := ws[1] * ws[2] * ws[3]
					if transpose {
						depth = xs[1] / c.o.Groups * ws[2] * ws[3]
					}
					tol := 2e-6 * math.Sqrt(float64(depth))
					gv := values(t, be, got)
					closeTo(t, name+" vs float64", gv, want, tol)
					gen := convT(x, w, c.o, backend.F32, os[:], transpose, be.f32, &scratchF32, gemm.Sgemm)
					closeTo(t, name+" vs im2col", gv, values(t, be, gen), tol)
				}
			}
		})
	}
}

// TestDirectConvSkips checks shapes that keep the general path: stride 2,
// rows narrower than 3 pixels, too few output channels for a vector.
func TestDirectConvSkips(t *testing.T) {
	if !gemm.TileAccelerated() {
		t.Skip("no tile kernels on this machine")
	}
	for _, c := range []directCase{
		{[4]int{2, 4, 9, 9}, [4]int{16, 4, 3, 3}, backend.ConvOptions{Stride: [2]int{2, 1}, Dilation: [2]int{1, 1}, Groups: 1}},
		{[4]int{2, 4, 9, 4}, [4]int{16, 4, 3, 3}, convOpt(0, 0, 1, 1, 1)},
		{[4]int{2, 4, 9, 9}, [4]int{2, 4, 3, 3}, convOpt(0, 0, 1, 1, 1)},
	} {
		os := convShape(c.x[:], c.w[:], c.o, false)
		if useDirectConv(c.x, c.w, os, unfold.GeomOf(c.w[2], c.w[3], c.o), c.o.Groups) {
			t.Errorf("x %v w %v %+v: direct path taken", c.x, c.w, c.o)
		}
	}
}

// wgradCases adds shapes for the pixels orientation of the weight gradient
// (few input channels) to directCases, with batches that make several
// segments and chunks (the 60×60 images: chunks of 6 and 4 images in each
// segment of 10), padding of the columns only and dilated columns.
var wgradCases = append(append([]directCase(nil), directCases...),
	directCase{[4]int{37, 1, 28, 28}, [4]int{32, 1, 5, 5}, convOpt(0, 0, 1, 1, 1)},
	directCase{[4]int{5, 2, 9, 11}, [4]int{20, 2, 3, 4}, convOpt(1, 2, 2, 1, 1)},
	directCase{[4]int{3, 6, 8, 8}, [4]int{16, 3, 3, 3}, convOpt(1, 1, 1, 1, 2)},
	directCase{[4]int{40, 16, 6, 7}, [4]int{16, 16, 3, 3}, convOpt(0, 1, 1, 1, 1)},
	directCase{[4]int{20, 1, 60, 60}, [4]int{4, 1, 3, 3}, convOpt(0, 0, 1, 2, 1)},
	directCase{[4]int{6, 1, 10, 12}, [4]int{7, 1, 3, 5}, convOpt(0, 1, 1, 1, 1)},
)

// TestDirectWeightGradAgainstReference runs the direct weight gradient on
// every tile kernel set against the float64 loop of refWeightGrad and the
// im2col/GEMM path (weightGradT), asserting that the direct path is taken
// and that both orientations are covered.
func TestDirectWeightGradAgainstReference(t *testing.T) {
	be := newTestBackend()
	for _, set := range tileKernelSets() {
		withTileKernel(t, set, func() {
			seen := map[bool]bool{}
			for ci, c := range wgradCases {
				name := fmt.Sprintf("%s/case %d", set, ci)
				os := convShape(c.x[:], c.w[:], c.o, false)
				p := newWgradPlan(c.x, c.w, os, unfold.GeomOf(c.w[2], c.w[3], c.o), c.o.Groups)
				if p == nil {
					t.Fatalf("%s: direct path not taken for x %v w %v", name, c.x, c.w)
				}
				seen[p.pixels] = true
				xv, gv := randVals(numel(c.x[:]), uint64(ci+7)), randVals(numel(os[:]), uint64(ci+70))
				want := refWeightGrad(xv, c.x, gv, os, c.w, c.o)
				x, g := tensorOf(be, xv, c.x[:], backend.F32), tensorOf(be, gv, os[:], backend.F32)
				got := values(t, be, conv2dWeightGrad(be, x, g, c.w, c.o))
				tol := 2e-6 * math.Sqrt(float64(c.x[0]*os[2]*os[3]))
				closeTo(t, name+" vs float64", got, want, tol)
				gen := weightGradT(x, g, c.w, c.o, backend.F32, c.w[:], be.f32, &scratchF32, gemm.Sgemm)
				closeTo(t, name+" vs im2col", got, values(t, be, gen), tol)
			}
			if !seen[true] || !seen[false] {
				t.Fatalf("%s: orientations covered %v", set, seen)
			}
		})
	}
}

// TestDirectConvDeterministic checks that the three direct kernels give
// the same bits on the worker pool as on one goroutine (the Winograd path
// off).
func TestDirectConvDeterministic(t *testing.T) {
	defer withWinogradOff()()
	if !gemm.TileAccelerated() {
		t.Skip("no tile kernels on this machine")
	}
	be := newTestBackend()
	for ci, c := range wgradCases {
		os := convShape(c.x[:], c.w[:], c.o, false)
		x := tensorOf(be, randVals(numel(c.x[:]), uint64(ci+3)), c.x[:], backend.F32)
		w := tensorOf(be, randVals(numel(c.w[:]), uint64(ci+4)), c.w[:], backend.F32)
		g := tensorOf(be, randVals(numel(os[:]), uint64(ci+5)), os[:], backend.F32)
		run := func() [3][]float64 {
			return [3][]float64{
				values(t, be, ir.Conv2d(be, x, w, c.o)),
				values(t, be, ir.ConvTranspose2d(be, g, w, c.o)),
				values(t, be, conv2dWeightGrad(be, x, g, c.w, c.o)),
			}
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

// TestTransposeTo checks the blocked transpose against the definition for
// sizes around the 8×8 blocks, padded leading dimensions, with the vector
// blocks and with the portable ones.
func TestTransposeTo(t *testing.T) {
	avx := hasAVX
	defer func() { hasAVX = avx }()
	for _, useAVX := range []bool{avx, false} {
		hasAVX = useAVX
		for _, rows := range []int{1, 7, 8, 9, 16, 23} {
			for _, cols := range []int{1, 8, 13, 24} {
				lds, ldd := cols+3, rows+5
				src := make([]float32, rows*lds)
				for i := range src {
					src[i] = float32(i) + 0.5
				}
				dst := make([]float32, cols*ldd)
				for i := range dst {
					dst[i] = -1
				}
				transposeTo(dst, ldd, src, lds, rows, cols)
				for c := range cols {
					for r := range ldd {
						want := float32(-1)
						if r < rows {
							want = src[r*lds+c]
						}
						if got := dst[c*ldd+r]; got != want {
							t.Fatalf("avx %v %d×%d: dst[%d][%d] = %v, want %v", useAVX, rows, cols, c, r, got, want)
						}
					}
				}
			}
		}
	}
}
