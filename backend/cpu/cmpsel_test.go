package cpu

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestCompareSelectF32Vector checks the float32 compare-with-scalar and
// select loops (vector bulk and scalar rest) against plain Go on inputs
// with NaN, ±0, ±Inf and ties, for every comparison, lengths around the
// vector width, and scalar and vector operands of the select.
func TestCompareSelectF32Vector(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0.5}
	for _, n := range []int{0, 1, 15, 16, 17, 47, 64, 100} {
		a := make([]float32, n)
		b := make([]float32, n)
		for i := range a {
			a[i] = special[(i*5+n)%len(special)]
			b[i] = float32(i) - 3.5
		}
		for _, s := range special {
			for _, op := range []backend.BinaryOp{backend.OpEq, backend.OpNe, backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe} {
				got := make([]bool, n)
				cmpVST(op, got, a, s)
				for i, v := range a {
					var w bool
					switch op {
					case backend.OpEq:
						w = v == s
					case backend.OpNe:
						w = v != s
					case backend.OpLt:
						w = v < s
					case backend.OpLe:
						w = v <= s
					case backend.OpGt:
						w = v > s
					default:
						w = v >= s
					}
					if got[i] != w {
						t.Fatalf("n %d: %v %v %v = %v, want %v", n, v, op, s, got[i], w)
					}
				}
			}
		}
		c := make([]bool, n)
		for i := range c {
			c[i] = (i*7)%3 == 0
		}
		for _, mode := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			got := make([]float32, n)
			selectF32(got, c, a, -2, mode[0], b, 9, mode[1])
			for i := range got {
				w := float32(9)
				if !mode[1] {
					w = b[i]
				}
				if c[i] {
					w = -2
					if !mode[0] {
						w = a[i]
					}
				}
				if math.Float32bits(got[i]) != math.Float32bits(w) {
					t.Fatalf("n %d scalars %v: [%d] = %v, want %v", n, mode, i, got[i], w)
				}
			}
		}
	}
}
