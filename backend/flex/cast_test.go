package flex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refCast converts a float64 value as Cast is documented to: floats round
// to the target's precision, floats to ints truncate toward zero and
// saturate (NaN: 0), ints wrap, Bool is != 0.
func refCast(v float64, from, to backend.DType) float64 {
	switch {
	case to == backend.Bool:
		if v != 0 {
			return 1
		}
		return 0
	case to.IsFloat():
		return decodeVals(encodeVals([]float64{v}, to), to)[0]
	case from.IsFloat():
		if math.IsNaN(v) {
			return 0
		}
		v = math.Trunc(v)
		bits := float64(8 * to.Size())
		lo, hi := 0.0, math.Pow(2, bits)-1
		if to.IsSigned() {
			lo, hi = -math.Pow(2, bits-1), math.Pow(2, bits-1)-1
		}
		return math.Max(lo, math.Min(hi, v))
	}
	return wrapTo(v, to)
}

func TestCastAllPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, from := range backend.AllDTypes {
		r := randRef(rng, []int{3, 4}, from)
		if from.IsFloat() {
			r = mapRef(r, func(v float64) float64 { return v * 50 }) // reach past the small ints' range
		}
		in := read(t, mk(r, from))
		for _, to := range backend.AllDTypes {
			want := mapRef(in, func(v float64) float64 { return refCast(v, from, to) })
			for _, l := range layouts {
				check(t, fmt.Sprintf("cast %v->%v %s", from, to, l.name), ir.Cast(tb, l.make(r, from), to), want, to)
			}
		}
	}
}

func TestCastRounding(t *testing.T) {
	// float32 -> f16: ties go to the even neighbour.
	ulp16 := math.Pow(2, -10)
	in := ref{[]int{4}, []float64{1 + ulp16/2, 1 + 3*ulp16/2, 1 + ulp16/2 + ulp16/1024, -(1 + ulp16/2)}}
	check(t, "f32->f16", ir.Cast(tb, mk(in, backend.F32), backend.F16), ref{[]int{4}, []float64{1, 1 + 2*ulp16, 1 + ulp16, -1}}, backend.F16)
	ulpB := math.Pow(2, -7)
	inB := ref{[]int{3}, []float64{1 + ulpB/2, 1 + 3*ulpB/2, 1 + ulpB/2 + ulpB/64}}
	check(t, "f32->bf16", ir.Cast(tb, mk(inB, backend.F32), backend.BF16), ref{[]int{3}, []float64{1, 1 + 2*ulpB, 1 + ulpB}}, backend.BF16)
	// f64 -> f16 rounds once: just above a midpoint goes up even though the
	// float32 nearest to it is the midpoint itself.
	x := 1 + ulp16/2 + math.Pow(2, -40)
	check(t, "f64->f16 once", ir.Cast(tb, mk(ref{[]int{1}, []float64{x}}, backend.F64), backend.F16), ref{[]int{1}, []float64{1 + ulp16}}, backend.F16)
	// float -> int truncates toward zero and saturates; NaN gives 0.
	f := ref{[]int{7}, []float64{2.7, -2.7, 0.5, -0.5, 1e10, -1e10, math.NaN()}}
	check(t, "f32->i32", ir.Cast(tb, mk(f, backend.F32), backend.I32), ref{[]int{7}, []float64{2, -2, 0, 0, math.MaxInt32, math.MinInt32, 0}}, backend.I32)
	check(t, "f64->u8", ir.Cast(tb, mk(f, backend.F64), backend.U8), ref{[]int{7}, []float64{2, 0, 0, 0, 255, 0, 0}}, backend.U8)
	// ints wrap; Bool is != 0.
	check(t, "i32->i8", ir.Cast(tb, mk(ref{[]int{3}, []float64{300, -129, 5}}, backend.I32), backend.I8), ref{[]int{3}, []float64{44, 127, 5}}, backend.I8)
	check(t, "f32->bool", ir.Cast(tb, mk(ref{[]int{3}, []float64{0, -0.5, math.NaN()}}, backend.F32), backend.Bool), ref{[]int{3}, []float64{0, 1, 1}}, backend.Bool)
}

func TestFullArange(t *testing.T) {
	for _, dt := range backend.AllDTypes {
		want := ref{[]int{2, 3}, []float64{}}
		for range 6 {
			want.v = append(want.v, refCast(2.75, backend.F64, dt))
		}
		check(t, "full "+dt.String(), ir.Full(tb, []int{2, 3}, dt, 2.75), want, dt)
		check(t, "full empty "+dt.String(), ir.Full(tb, []int{0, 3}, dt, 1), ref{[]int{0, 3}, nil}, dt)
		check(t, "full scalar "+dt.String(), ir.Full(tb, nil, dt, 1), ref{[]int{}, []float64{1}}, dt)
		ar := ref{[]int{5}, nil}
		for i := range 5 {
			ar.v = append(ar.v, refCast(1+float64(i)*1.5, backend.F64, dt))
		}
		check(t, "arange "+dt.String(), arange(tb, 1, 1.5, 5, dt), ar, dt)
	}
}

func TestFromToData(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, dt := range backend.AllDTypes {
		r := randRef(rng, []int{2, 3, 2}, dt)
		b := encodeVals(r.v, dt)
		x := tb.FromData(&backend.TensorData{Shape: r.shape, DType: dt, Bytes: b})
		d, err := tb.ToData(x)
		if err != nil || string(d.Bytes) != string(b) || d.DType != dt || !sameShape(d.Shape, r.shape) {
			t.Errorf("%v: round trip changed the data (err %v)", dt, err)
		}
		// a view materializes in row-major order
		p := ir.Permute(tb, x, []int{2, 0, 1})
		want := ref{shape: []int{2, 2, 3}, v: make([]float64, 12)}
		in := read(t, x)
		for i := range want.v {
			idx := unflat(want.shape, i)
			want.v[i] = in.v[flat(r.shape, []int{idx[1], idx[2], idx[0]})]
		}
		check(t, "to data of permuted "+dt.String(), p, want, dt)
	}
}
