package ndarray

import (
	"math"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestFull(t *testing.T) {
	cases := []struct {
		dt    backend.DType
		value float64
		want  float64
	}{
		{backend.F32, 0.1, float64(float32(0.1))}, {backend.F16, 1 + 1.0/2048, 1}, {backend.F16, 1 + 3.0/2048, 1 + 4.0/2048},
		{backend.BF16, math.NaN(), math.NaN()}, {backend.F64, math.Inf(-1), math.Inf(-1)},
		{backend.I32, 3.7, 3}, {backend.I8, -3.7, -3}, {backend.U8, -0.5, 0}, {backend.U64, 1e19, 1e19},
		{backend.Bool, 2, 1}, {backend.Bool, math.NaN(), 1}, {backend.Bool, 0, 0},
	}
	for _, c := range cases {
		got := vals(t, run(t, ir.Op{Kind: ir.KindFull, DType: c.dt, Shape: []int{2, 3}, Scalars: [2]float64{c.value}}))
		if len(got) != 6 {
			t.Fatalf("full %v: %d elements", c.dt, len(got))
		}
		for _, v := range got {
			if !sameBits(v, c.want) {
				t.Errorf("full(%v) in %v = %v, want %v", c.value, c.dt, v, c.want)
				break
			}
		}
	}
	if got := vals(t, run(t, ir.Op{Kind: ir.KindFull, DType: backend.F32, Scalars: [2]float64{5}})); !slices.Equal(got, []float64{5}) {
		t.Errorf("rank-0 full = %v", got)
	}
}

func TestArange(t *testing.T) {
	got := vals(t, run(t, ir.Op{Kind: ir.KindArange, DType: backend.F32, Shape: []int{4}, Scalars: [2]float64{0.5, 0.25}}))
	if !slices.Equal(got, []float64{0.5, 0.75, 1, 1.25}) {
		t.Errorf("float arange = %v", got)
	}
	// The exact integer form: values near the ends of I64 are exact.
	start := int64(math.MaxInt64 - 6)
	gi := ints(t, run(t, ir.Op{Kind: ir.KindArange, DType: backend.I64, Shape: []int{3}, Ints: []int{int(start), 3}}))
	if !slices.Equal(gi, []int64{start, start + 3, start + 6}) {
		t.Errorf("integer arange = %v", gi)
	}
	gu := ints(t, run(t, ir.Op{Kind: ir.KindArange, DType: backend.U8, Shape: []int{3}, Ints: []int{255, -100}}))
	if !slices.Equal(gu, []int64{255, 155, 55}) {
		t.Errorf("u8 arange = %v", gu)
	}
}

func random(t *testing.T, dt backend.DType, n int, d ir.Distribution) []float64 {
	t.Helper()
	return vals(t, run(t, ir.Op{Kind: ir.KindRandom, Sub: uint8(d.Kind), DType: dt, Shape: []int{n}, Scalars: [2]float64{d.A, d.B}}))
}

func moments(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)-1))
}

func TestRandomSeed(t *testing.T) {
	be := New(backend.DeviceID{Type: "ndarray"})
	draw := func() []float64 {
		var all []float64
		for _, dt := range backend.AllDTypes {
			op := ir.Op{Kind: ir.KindRandom, Sub: uint8(ir.DistNormal), DType: dt, Shape: []int{3, 5}, Scalars: [2]float64{1, 3}}
			if err := op.Infer(); err != nil {
				t.Fatal(err)
			}
			d, _ := be.ToData(be.Exec(op)[0])
			all = append(all, ir.As[float64](d)...)
		}
		return all
	}
	be.Seed(42)
	a, b := draw(), draw()
	be.Seed(42)
	c := draw()
	if !slices.Equal(a, c) {
		t.Error("the same seed gave different values")
	}
	if slices.Equal(a, b) {
		t.Error("successive draws are equal")
	}
}

func TestRandomDistributions(t *testing.T) {
	const n = 20000
	tb.Seed(7)
	// Normal(2, 3) in F64: moments within 5 standard errors.
	m, s := moments(random(t, backend.F64, n, ir.Distribution{Kind: ir.DistNormal, A: 2, B: 3}))
	if math.Abs(m-2) > 5*3/math.Sqrt(n) || math.Abs(s-3) > 0.1 {
		t.Errorf("normal(2, 3): mean %v, std %v", m, s)
	}
	for _, dt := range []backend.DType{backend.F32, backend.F16, backend.BF16} {
		v := random(t, dt, n, ir.Distribution{Kind: ir.DistUniform, A: -1, B: 3})
		for _, x := range v {
			if x < -1 || x >= 3 {
				t.Fatalf("%v uniform[-1, 3) gave %v", dt, x)
			}
		}
		if m, s := moments(v); math.Abs(m-1) > 0.05 || math.Abs(s-4/math.Sqrt(12)) > 0.05 {
			t.Errorf("%v uniform[-1, 3): mean %v, std %v", dt, m, s)
		}
	}
	// Integer uniform samples are the integers of [A, B), each about
	// equally often.
	counts := map[float64]int{}
	for _, x := range random(t, backend.I8, n, ir.Distribution{Kind: ir.DistUniform, A: -3, B: 2}) {
		counts[x]++
	}
	if len(counts) != 5 {
		t.Errorf("i8 uniform[-3, 2): values %v", counts)
	}
	for v, c := range counts {
		if v < -3 || v > 1 || math.Abs(float64(c)-n/5) > 5*math.Sqrt(n/5) {
			t.Errorf("i8 uniform[-3, 2): %v drawn %d times", v, c)
		}
	}
	for _, dt := range []backend.DType{backend.F32, backend.U8, backend.Bool} {
		v := random(t, dt, n, ir.Distribution{Kind: ir.DistBernoulli, A: 0.3})
		ones := 0
		for _, x := range v {
			if x != 0 && x != 1 {
				t.Fatalf("%v bernoulli gave %v", dt, x)
			}
			ones += int(x)
		}
		if p := float64(ones) / n; math.Abs(p-0.3) > 0.02 {
			t.Errorf("%v bernoulli(0.3): frequency %v", dt, p)
		}
	}
	v := random(t, backend.Bool, n, ir.Distribution{})
	if m, _ := moments(v); math.Abs(m-0.5) > 0.02 {
		t.Errorf("bool default random: frequency of true %v", m)
	}
}
