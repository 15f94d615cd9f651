package ember

import (
	"math"
	"math/big"
	"testing"
)

// exactSum is the sum of v rounded once to float64, through math/big.Float
// at 2048 bits (exact for any float64 inputs of these magnitudes).
func exactSum(v []float64) float64 {
	acc := new(big.Float).SetPrec(2048)
	for _, x := range v {
		acc.Add(acc, new(big.Float).SetFloat64(x))
	}
	f, _ := acc.Float64()
	return f
}

// naiveSum is the plain left-to-right loop whose error the kernels must beat.
func naiveSum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// F64 sums and means on every local device (flex and cpu pairwise, cuda
// compensated) are accurate to a few units in the last place for a
// million and more random values, full and along either axis, far below
// the error of a plain loop on the same data (checked on the data itself),
// and deterministic: repeated runs give the same bits, and flex and cpu
// give the same bits as each other.
func TestSumF64IsPairwise(t *testing.T) {
	const tol = 1e-15 // about 4.5 float64 ulps; the plain loop is off by more than 4e-15 here
	rng := newRNG(2024)
	flat := randRef([]int{1 << 21}, F64, uniform(rng, 0.5, 1.5))
	const rows, cols = 1 << 18, 8
	mat := randRef([]int{rows, cols}, F64, uniform(rng, 0.25, 4))
	colOf := func(j int) []float64 {
		c := make([]float64, rows)
		for i := range c {
			c[i] = mat.v[i*cols+j]
		}
		return c
	}
	colErr := func(sum func([]float64) float64) float64 {
		worst := 0.0
		for j := range cols {
			c := colOf(j)
			worst = max(worst, relErr(sum(c), exactSum(c)))
		}
		return worst
	}
	if e := relErr(naiveSum(flat.v), exactSum(flat.v)); e < 4*tol {
		t.Fatalf("the plain loop's error %.3g on the flat data does not exceed 4x the tolerance: the test would not tell them apart", e)
	}
	if e := colErr(naiveSum); e < 4*tol {
		t.Fatalf("the plain loop's worst column error %.3g does not exceed 4x the tolerance", e)
	}
	wantFlat := exactSum(flat.v)
	wantCols := make([]float64, cols)
	for j := range cols {
		wantCols[j] = exactSum(colOf(j))
	}
	results := map[string][]float64{}
	for _, dev := range testDevices(t) {
		name := dev.String()
		x := mk(dev, flat, F64)
		m := mk(dev, mat, F64)
		mt := mk(dev, ref{[]int{cols, rows}, transpose(mat.v, rows, cols)}, F64) // rows of the transposed matrix
		var all []float64
		check1 := func(what string, got, want float64) {
			all = append(all, got)
			if e := relErr(got, want); !(e <= tol) {
				t.Errorf("%s %s: relative error %.3g > %.3g (got %v, want %v)", name, what, e, tol, got, want)
			}
		}
		check1("Sum", x.Sum().Item(), wantFlat)
		check1("Mean", x.Mean().Item(), wantFlat/float64(len(flat.v)))
		for j, v := range m.SumAxis(0, false).Float64s() {
			check1("SumAxis(0) column "+itoa(j), v, wantCols[j])
		}
		for j, v := range m.MeanAxis(0, true).Float64s() {
			check1("MeanAxis(0) column "+itoa(j), v, wantCols[j]/rows)
		}
		for j, v := range mt.SumAxis(1, false).Float64s() {
			check1("SumAxis(1) row "+itoa(j), v, wantCols[j])
		}
		for j, v := range m.Permute(1, 0).SumAxis(1, false).Float64s() {
			check1("SumAxis(1) of a permuted view, row "+itoa(j), v, wantCols[j])
		}
		if a, b := x.Sum().Item(), x.Sum().Item(); math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("%s: repeated Sum differs: %v vs %v", name, a, b)
		}
		results[name] = all
	}
	f, c := results[Flex().String()], results[CPU().String()]
	for i := range f {
		if math.Float64bits(f[i]) != math.Float64bits(c[i]) {
			t.Errorf("result %d: flex %v and cpu %v differ", i, f[i], c[i])
		}
	}
}

// transpose returns the [cols, rows] transpose of row-major [rows, cols] v.
func transpose(v []float64, rows, cols int) []float64 {
	out := make([]float64, len(v))
	for i := range rows {
		for j := range cols {
			out[j*rows+i] = v[i*cols+j]
		}
	}
	return out
}
