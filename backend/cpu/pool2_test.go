package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestMaxPool2MatchesGeneral checks the 2×2 vector kernels against the
// general forward loop (maxPoolFwd) and the tiled gradient
// (maxPoolBwdTiled) bit for bit, NaN payloads included, on inputs with
// ties, NaNs of distinct payloads, −∞ and −0 and gradients with −0 and
// NaN, for even and odd heights and widths of 8, 16 and 24.
func TestMaxPool2MatchesGeneral(t *testing.T) {
	if !hasPool2 {
		t.Skip("no 2×2 pooling kernels on this machine")
	}
	o := backend.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	for _, s := range [][4]int{{2, 3, 8, 8}, {1, 5, 7, 16}, {3, 2, 24, 24}, {2, 2, 9, 24}, {1, 1, 2, 8}} {
		name := fmt.Sprint(s)
		x, y, gr, g, n := maxPoolBwdCase(s, o, uint64(s[2]*100+s[3]))
		for i := range x.data {
			if i%53 == 11 { // NaNs with their own payloads
				x.data[i] = math.Float32frombits(0x7fc00000 | uint32(i))
			}
		}
		for i := range gr.data {
			if i%29 == 4 {
				gr.data[i] = math.Float32frombits(0xffc00000 | uint32(i))
			}
		}
		if !pool2Geom(g, x, y, gr) {
			t.Fatalf("%s: kernels not applicable", name)
		}
		want := make([]float32, len(y.data))
		maxPoolFwd(want, x, g, maxTapF32)
		got := make([]float32, len(y.data))
		maxPool2Fwd(got, x, g)
		sameBits32(t, name+" forward", got, want)
		y.data = want // the maxima the gradient's selection compares with
		wantG, gotG := make([]float32, n), make([]float32, n)
		for i := range gotG {
			gotG[i] = float32(math.NaN()) // every element must be written
		}
		maxPoolBwdTiled(wantG, x, y, gr, g)
		maxPool2Bwd(gotG, x, y, gr, g)
		sameBits32(t, name+" backward", gotG, wantG)
	}
}

func sameBits32(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v (%#x), want %v (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
