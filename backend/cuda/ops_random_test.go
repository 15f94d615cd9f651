package cuda

import (
	"math"
	"testing"

	"github.com/emberml/ember/backend"
)

// moments returns the mean and standard deviation of d's values.
func moments(d *backend.TensorData) (mean, std float64) {
	n := float64(d.NumElements())
	for i := range d.NumElements() {
		mean += d.Value(i)
	}
	mean /= n
	for i := range d.NumElements() {
		v := d.Value(i) - mean
		std += v * v
	}
	return mean, math.Sqrt(std / n)
}

// TestKernelRandom checks each distribution's range and first two moments
// on 200000 samples (4.5 standard errors), that integer samples cover
// their range, and that Seed makes the stream reproducible.
func TestKernelRandom(t *testing.T) {
	b := gpu(t)
	const n = 200000
	se := 4.5 / math.Sqrt(n)
	for _, dt := range backend.AllDTypes {
		read := func(dist backend.Distribution) *backend.TensorData {
			d, err := b.ToData(randomOn(b, []int{n}, dt, dist))
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		check := func(what string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				t.Errorf("%v %s = %g, want %g ± %g", dt, what, got, want, tol)
			}
		}
		switch {
		case dt.IsFloat():
			u := read(backend.Distribution{Kind: backend.DistUniform, A: 2, B: 5})
			for i := range n {
				if v := u.Value(i); !(v >= 2 && v < 5) {
					t.Fatalf("%v uniform [2,5): sample %d = %g", dt, i, v)
				}
			}
			m, s := moments(u)
			check("uniform mean", m, 3.5, 3*se*1.5)
			check("uniform std", s, 3/math.Sqrt(12), 0.02)
			nd := read(backend.Distribution{Kind: backend.DistNormal, A: 1, B: 2})
			m, s = moments(nd)
			check("normal mean", m, 1, 2*se+0.01)
			check("normal std", s, 2, 0.03)
			d := read(backend.Distribution{Kind: backend.DistDefault})
			m, _ = moments(d)
			check("default mean", m, 0.5, se+0.005)
		case dt.IsInt():
			u := read(backend.Distribution{Kind: backend.DistUniform, A: 0, B: 10})
			seen := map[float64]int{}
			for i := range n {
				v := u.Value(i)
				if v < 0 || v >= 10 || v != math.Floor(v) {
					t.Fatalf("%v uniform [0,10): sample %d = %g", dt, i, v)
				}
				seen[v]++
			}
			if len(seen) != 10 {
				t.Errorf("%v uniform [0,10) hit %d values", dt, len(seen))
			}
			m, _ := moments(u)
			check("uniform mean", m, 4.5, 3*se*3)
		}
		bern := read(backend.Distribution{Kind: backend.DistBernoulli, A: 0.3})
		m, _ := moments(bern)
		check("bernoulli mean", m, 0.3, se)
	}
	b.Seed(42)
	first, _ := b.ToData(randomOn(b, []int{1000}, backend.F32, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}))
	second, _ := b.ToData(randomOn(b, []int{1000}, backend.F32, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}))
	b.Seed(42)
	again, _ := b.ToData(randomOn(b, []int{1000}, backend.F32, backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}))
	if string(first.Bytes) != string(again.Bytes) {
		t.Error("Seed(42) did not reproduce the first sample")
	}
	if string(first.Bytes) == string(second.Bytes) {
		t.Error("two successive samples are equal")
	}
}
