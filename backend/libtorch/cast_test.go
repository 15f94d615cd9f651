//go:build libtorch && cgo

package libtorch

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// castRef is Ember's Cast of a value of dtype from (exact in float64, or
// the int64 iv for integer sources) to dtype to: floats round to nearest
// even once, floats to integers truncate toward zero and saturate (NaN
// gives 0), integers wrap, anything to Bool is x != 0 (NaN is true).
func castRef(v float64, iv int64, from, to backend.DType) (float64, int64) {
	switch {
	case to == backend.Bool:
		if from.IsInt() {
			v = float64(iv)
		}
		if v != 0 {
			return 1, 1
		}
		return 0, 0
	case to.IsFloat() && from.IsInt():
		if to == backend.F32 || to == backend.Flex32 {
			return float64(float32(iv)), 0 // one rounding from the integer
		}
		return quantize(float64(iv), to), 0
	case to.IsFloat():
		return quantize(v, to), 0
	case from.IsInt():
		w := wrapInt(iv, to)
		return float64(w), w
	}
	lo, hi := intLimits(to)
	x := math.Trunc(v)
	switch {
	case math.IsNaN(x):
		return 0, 0
	case x <= float64(lo):
		return float64(lo), lo
	case x >= float64(hi):
		return float64(hi), hi
	}
	return x, int64(x)
}

// Every pair of stored dtypes converts edge values as Ember's Cast does.
func TestCast(t *testing.T) {
	floatEdges := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e20, -1e20, 2.7, -2.7, -0.5, 0.75, 255.9, 256, -129,
		0x1p63, -0x1p63, 0x1p31, -0x1p31 - 1, 65504, 65520, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, math.Copysign(0, -1), 3}
	all := append(append([]backend.DType{backend.Bool}, floatDTypes...), intDTypes...)
	for _, from := range all {
		var vals []float64
		var ivs []int64
		switch {
		case from == backend.Bool:
			vals, ivs = []float64{0, 1, 1, 0}, []int64{0, 1, 1, 0}
		case from.IsFloat():
			for _, v := range floatEdges {
				vals = append(vals, quantize(v, from))
			}
			ivs = make([]int64, len(vals))
		default:
			lo, hi := intLimits(from)
			ivs = []int64{lo, hi, 0, 1, wrapInt(-1, from), wrapInt(200, from), wrapInt(300, from), wrapInt(-129, from), wrapInt(1<<60+1<<36+1, from), wrapInt(70000, from)}
			vals = ints64(ivs)
		}
		x := lt(vals, []int{len(vals)}, from)
		if from.IsInt() {
			x = intTensor(ivs, []int{len(ivs)}, from)
		}
		for _, to := range all {
			out := exec(t, ir.Op{Kind: ir.KindCast, DType: to, In: [3]ir.Tensor{x}})[0]
			name := "cast " + from.String() + " to " + to.String()
			if to.IsInt() {
				got := intsOf(t, out)
				for i := range vals {
					_, w := castRef(vals[i], ivs[i], from, to)
					if got[i] != w {
						t.Errorf("%s of %v: %d, want %d", name, vals[i], got[i], w)
					}
				}
				continue
			}
			got := values(t, tb, out)
			for i := range vals {
				w, _ := castRef(vals[i], ivs[i], from, to)
				if got[i] != w && !(math.IsNaN(got[i]) && math.IsNaN(w)) {
					t.Errorf("%s of %v: %v, want %v", name, vals[i], got[i], w)
				}
			}
		}
	}
}

// F64 to F16 and BF16 rounds once: 1 + 2^-11 + 2^-40 is above the F16
// midpoint between 1 and 1 + 2^-10 (two roundings through float32 give 1).
func TestCastRoundsOnce(t *testing.T) {
	x := lt([]float64{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40}, []int{2}, backend.F64)
	h := run1(t, ir.Op{Kind: ir.KindCast, DType: backend.F16, In: [3]ir.Tensor{x}})
	if h[0] != 1+0x1p-10 {
		t.Errorf("f64 1+2^-11+2^-40 to f16 = %v, want %v", h[0], 1+0x1p-10)
	}
	bf := run1(t, ir.Op{Kind: ir.KindCast, DType: backend.BF16, In: [3]ir.Tensor{x}})
	if bf[1] != 1+0x1p-7 {
		t.Errorf("f64 1+2^-8+2^-40 to bf16 = %v, want %v", bf[1], 1+0x1p-7)
	}
}
