//go:build libtorch && cgo

package libtorch

import (
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Full converts its value as Cast does: floats round once (F16 from
// float64 directly), integers truncate toward zero, Bool is v != 0.
func TestFull(t *testing.T) {
	all := append(append([]backend.DType{backend.Bool}, floatDTypes...), intDTypes...)
	for _, dt := range all {
		for _, v := range []float64{2.7, -2.7, 1 + 0x1p-11 + 0x1p-40, 0, 100.5, -0.5} {
			if !dt.IsSigned() && v < -0.5 || ir.ScalarFits(v, dt) != nil {
				continue
			}
			op := ir.Op{Kind: ir.KindFull, DType: dt, Shape: []int{2, 3}, Scalars: [2]float64{v}}
			want := quantize(v, dt)
			got := run1(t, op)
			for i, g := range got {
				if g != want {
					t.Fatalf("full %v %v: [%d] = %v, want %v", dt, v, i, g, want)
				}
			}
		}
	}
	// Rank 0 and large int64 values stay exact.
	big := float64(int64(1) << 62)
	got := intsOf(t, exec(t, ir.Op{Kind: ir.KindFull, DType: backend.I64, Shape: []int{}, Scalars: [2]float64{big}})[0])
	expectInts(t, "full i64 2^62", got, []int64{1 << 62})
}

// Arange: the exact integer form in int64, the float form as start +
// i·step in float64, each converted to the dtype.
func TestArange(t *testing.T) {
	for _, dt := range append(slices.Clone(floatDTypes), intDTypes...) {
		if dt.IsInt() {
			op := ir.Op{Kind: ir.KindArange, DType: dt, Shape: []int{7}, Ints: []int{-3, 2}}
			if !dt.IsSigned() {
				op.Ints = []int{3, 2}
			}
			got := run1(t, op)
			for i, g := range got {
				if want := float64(op.Ints[0] + i*op.Ints[1]); g != want {
					t.Fatalf("arange ints %v: [%d] = %v, want %v", dt, i, g, want)
				}
			}
		}
		fop := ir.Op{Kind: ir.KindArange, DType: dt, Shape: []int{9}, Scalars: [2]float64{0.5, 0.3}}
		got := run1(t, fop)
		for i, g := range got {
			x := 0.5 + float64(i)*0.3
			want := quantize(x, dt)
			if dt.IsInt() {
				want = math.Trunc(x)
			}
			if g != want {
				t.Fatalf("arange floats %v: [%d] = %v, want %v", dt, i, g, want)
			}
		}
	}
	// int64 values beyond 2^53 are exact.
	op := ir.Op{Kind: ir.KindArange, DType: backend.I64, Shape: []int{3}, Ints: []int{1<<60 + 1, 1<<58 + 3}}
	expectInts(t, "arange i64 large", intsOf(t, exec(t, op)[0]), []int64{1<<60 + 1, 1<<60 + 1 + 1<<58 + 3, 1<<60 + 1 + 2*(1<<58+3)})
}

func randomOp(dist ir.DistributionKind, dt backend.DType, n int, a, b float64) ir.Op {
	return ir.Op{Kind: ir.KindRandom, Sub: uint8(dist), DType: dt, Shape: []int{n}, Scalars: [2]float64{a, b}}
}

// Random ops stay in their ranges, have the distributions' moments, and
// repeat after Seed.
func TestRandom(t *testing.T) {
	const n = 20000
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.F16, backend.BF16} {
		u := run1(t, randomOp(ir.DistUniform, dt, n, -2, 3))
		mean := 0.0
		for _, v := range u {
			if v < -2 || v >= 3 {
				t.Fatalf("uniform %v: %v outside [-2, 3)", dt, v)
			}
			mean += v / n
		}
		if math.Abs(mean-0.5) > 0.05 {
			t.Errorf("uniform %v mean %v, want 0.5", dt, mean)
		}
		g := run1(t, randomOp(ir.DistNormal, dt, n, 1, 2))
		m, s := 0.0, 0.0
		for _, v := range g {
			m += v / n
		}
		for _, v := range g {
			s += (v - m) * (v - m) / n
		}
		if math.Abs(m-1) > 0.06 || math.Abs(math.Sqrt(s)-2) > 0.06 {
			t.Errorf("normal %v: mean %v sd %v, want 1, 2", dt, m, math.Sqrt(s))
		}
		d := run1(t, randomOp(ir.DistDefault, dt, n, 0, 0))
		for _, v := range d {
			if v < 0 || v >= 1 {
				t.Fatalf("default %v: %v outside [0, 1)", dt, v)
			}
		}
	}
	// Integer uniforms are floors of [a, b): every value of [-3, 4) appears.
	for _, dt := range intDTypes {
		lo := -3.0
		if !dt.IsSigned() {
			lo = 0
		}
		seen := map[float64]bool{}
		for _, v := range run1(t, randomOp(ir.DistUniform, dt, 2000, lo, 4)) {
			if v < lo || v >= 4 || v != math.Trunc(v) {
				t.Fatalf("uniform %v: %v outside the integers of [%v, 4)", dt, v, lo)
			}
			seen[v] = true
		}
		if len(seen) != int(4-lo) {
			t.Errorf("uniform %v: values %v, want all of [%v, 4)", dt, seen, lo)
		}
	}
	p := 0.0
	for _, v := range run1(t, randomOp(ir.DistBernoulli, backend.F32, n, 0.3, 0)) {
		if v != 0 && v != 1 {
			t.Fatalf("bernoulli: %v", v)
		}
		p += v / n
	}
	if math.Abs(p-0.3) > 0.02 {
		t.Errorf("bernoulli(0.3) mean %v", p)
	}
	// Uniform(a, a) is a; a float32 uniform that would round up to b is
	// resampled: [1, 1 + 2^-30) holds only 1 in float32.
	for _, v := range run1(t, randomOp(ir.DistUniform, backend.F32, 1000, 1, 1+0x1p-30)) {
		if v != 1 {
			t.Fatalf("uniform [1, 1+2^-30) in f32: %v", v)
		}
	}
	for _, v := range run1(t, randomOp(ir.DistUniform, backend.F64, 10, 2, 2)) {
		if v != 2 {
			t.Fatalf("uniform [2, 2): %v", v)
		}
	}

	// Seed repeats the sequence; another seed gives other values.
	seq := func(seed uint64) []float64 {
		tb.Seed(seed)
		a := run1(t, randomOp(ir.DistNormal, backend.F32, 50, 0, 1))
		b := run1(t, randomOp(ir.DistUniform, backend.I32, 50, -100, 100))
		c := run1(t, randomOp(ir.DistDefault, backend.Bool, 50, 0, 0))
		return append(append(a, b...), c...)
	}
	s1, s2, s3 := seq(42), seq(42), seq(43)
	if !slices.Equal(s1, s2) {
		t.Error("Seed(42) twice gave different sequences")
	}
	if slices.Equal(s1, s3) {
		t.Error("Seed(42) and Seed(43) gave the same sequence")
	}
}
