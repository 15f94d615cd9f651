package flex

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestSeedDeterminism(t *testing.T) {
	be := New(backend.DeviceID{Type: "flex"})
	draw := func() []float64 {
		var all []float64
		for _, dt := range backend.AllDTypes {
			all = append(all, read(t, random(be, []int{3, 5}, dt, backend.Distribution{Kind: backend.DistNormal, A: 1, B: 3})).v...)
			lo := -4.0
			if !dt.IsSigned() {
				lo = 0 // integers below 0 are not values of an unsigned dtype
			}
			all = append(all, read(t, random(be, []int{7}, dt, backend.Distribution{Kind: backend.DistUniform, A: lo, B: 9})).v...)
		}
		return all
	}
	be.Seed(42)
	a := draw()
	b := draw()
	be.Seed(42)
	c := draw()
	same := func(x, y []float64) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, c) {
		t.Error("same seed gave different values")
	}
	if same(a, b) {
		t.Error("successive draws repeated the same values")
	}
	// a fresh backend starts from DefaultSeed
	f1 := read(t, random(New(backend.DeviceID{Type: "flex"}), []int{4}, backend.F64, backend.Distribution{})).v
	be.Seed(DefaultSeed)
	if !same(f1, read(t, random(be, []int{4}, backend.F64, backend.Distribution{})).v) {
		t.Error("a new backend is not seeded with DefaultSeed")
	}
}

// moments returns the mean and standard deviation of v.
func moments(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

func TestRandomDistributions(t *testing.T) {
	be := New(backend.DeviceID{Type: "flex"})
	be.Seed(7)
	n := 20000
	// 5 standard errors: a correct sampler fails with probability < 1e-6
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.F16, backend.BF16} {
		u := read(t, random(be, []int{n}, dt, backend.Distribution{Kind: backend.DistUniform, A: 2, B: 4})).v
		m, s := moments(u)
		if math.Abs(m-3) > 5*(2/math.Sqrt(12))/math.Sqrt(float64(n)) || math.Abs(s-2/math.Sqrt(12)) > 0.02 {
			t.Errorf("uniform[2,4) %v: mean %v std %v", dt, m, s)
		}
		for _, v := range u {
			if v < 2 || v >= 4 {
				t.Fatalf("uniform[2,4) %v: sample %v out of range", dt, v)
			}
		}
		g := read(t, random(be, []int{n}, dt, backend.Distribution{Kind: backend.DistNormal, A: -1, B: 2})).v
		if m, s := moments(g); math.Abs(m+1) > 5*2/math.Sqrt(float64(n)) || math.Abs(s-2) > 0.05 {
			t.Errorf("normal(-1, 2) %v: mean %v std %v", dt, m, s)
		}
		d := read(t, random(be, []int{n}, dt, backend.Distribution{})).v
		if m, _ := moments(d); math.Abs(m-0.5) > 5*0.289/math.Sqrt(float64(n)) {
			t.Errorf("default %v: mean %v", dt, m)
		}
	}
	p := 0.3
	for _, dt := range []backend.DType{backend.F32, backend.I32, backend.Bool} {
		b := read(t, random(be, []int{n}, dt, backend.Distribution{Kind: backend.DistBernoulli, A: p})).v
		m, _ := moments(b)
		if math.Abs(m-p) > 5*math.Sqrt(p*(1-p)/float64(n)) {
			t.Errorf("bernoulli(0.3) %v: mean %v", dt, m)
		}
		for _, v := range b {
			if v != 0 && v != 1 {
				t.Fatalf("bernoulli %v: sample %v", dt, v)
			}
		}
	}
	// integer uniform draws every integer of [-3, 3) about equally often
	iv := read(t, random(be, []int{n}, backend.I16, backend.Distribution{Kind: backend.DistUniform, A: -3, B: 3})).v
	counts := map[float64]int{}
	for _, v := range iv {
		counts[v]++
	}
	for k := -3.0; k < 3; k++ {
		if c := float64(counts[k]); math.Abs(c-float64(n)/6) > 5*math.Sqrt(float64(n)*(1.0/6)*(5.0/6)) {
			t.Errorf("int uniform: %v drawn %v times of %d", k, c, n)
		}
	}
	if len(counts) != 6 {
		t.Errorf("int uniform [-3, 3): values %v", counts)
	}
}

func TestDriver(t *testing.T) {
	d, ok := backend.Lookup("flex")
	if !ok {
		t.Fatal("flex is not registered")
	}
	if d.Priority() != 10 {
		t.Errorf("priority %d, want 10", d.Priority())
	}
	devs := d.Devices()
	if len(devs) != 1 || devs[0] != (backend.DeviceID{Type: "flex"}) {
		t.Errorf("devices %v", devs)
	}
	be, err := d.Open(devs[0])
	if err != nil || be.ID() != devs[0] {
		t.Fatalf("open: %v %v", be, err)
	}
	if be.Sync() != nil {
		t.Error("sync returned an error")
	}
	be.Flush()
	for _, dt := range backend.AllDTypes {
		if !be.SupportsDType(dt) {
			t.Errorf("%v unsupported", dt)
		}
	}
	cpu := NewDriver("cpu", 20)
	if cpu.Devices()[0].Type != "cpu" || cpu.Priority() != 20 {
		t.Errorf("NewDriver(cpu, 20): %v %d", cpu.Devices(), cpu.Priority())
	}
}

// TestLargeParallel runs the split (multi-goroutine) paths on tensors past
// the parallel threshold, contiguous and permuted.
func TestLargeParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	shape := []int{300, 250}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.BF16, backend.I32} {
		a, b := randRef(rng, shape, dt), randRef(rng, []int{250}, dt)
		ia, ib := read(t, mk(a, dt)), read(t, mk(b, dt))
		for _, l := range layouts[:2] {
			x := l.make(a, dt)
			want := ia.withVals(func(i int) float64 { return ia.v[i] + ib.v[i%250] })
			check(t, "large add "+dt.String()+" "+l.name, ir.Binary(tb, backend.OpAdd, x, mk(b, dt)), want, dt)
			check(t, "large neg "+dt.String()+" "+l.name, ir.Unary(tb, backend.OpNeg, x), mapRef(ia, func(v float64) float64 { return -v }), dt)
			for axis := 0; axis < 2; axis++ {
				check(t, "large max "+dt.String()+" "+l.name, ir.Reduce(tb, backend.ReduceMax, x, axis, false), refReduce(backend.ReduceMax, ia, axis, false), dt)
				if dt != backend.BF16 {
					check(t, "large sum "+dt.String()+" "+l.name, ir.Reduce(tb, backend.ReduceSum, x, axis, true), refReduce(backend.ReduceSum, ia, axis, true), dt)
				}
			}
			check(t, "large cast "+dt.String()+" "+l.name, ir.Cast(tb, x, backend.F64), ia, backend.F64)
		}
	}
}

// TestSupports checks the kinds Exec runs: every base kind for every
// dtype; a fast-path kind without a kernel is rejected by Exec with an
// *ir.UnsupportedError and runs through its decomposition with ir.Run.
func TestSupports(t *testing.T) {
	for _, k := range ir.Kinds() {
		if ir.SpecOf(k).Decompose != nil {
			continue
		}
		for _, dt := range backend.AllDTypes {
			if !tb.Supports(k, dt) {
				t.Errorf("Supports(%v, %v) = false for a base kind", k, dt)
			}
		}
	}
	if tb.Supports(ir.KindMaxPool2d, backend.F32) {
		t.Fatal("flex claims a max-pool kernel")
	}
	x := mk(ref{[]int{1, 1, 2, 2}, []float64{1, 2, 3, 4}}, backend.F32)
	err := catch(func() {
		tb.Exec(ir.Op{Kind: ir.KindMaxPool2d, In: [3]ir.Tensor{x}, Attrs: &ir.Attrs{}})
	})
	if _, ok := err.(*ir.UnsupportedError); !ok {
		t.Errorf("Exec of max_pool2d: got %v, want an *ir.UnsupportedError", err)
	}
	o := ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	y := ir.Apply(tb, ir.Op{Kind: ir.KindMaxPool2d, In: [3]ir.Tensor{x}, Attrs: &ir.Attrs{Pool: o}})
	check(t, "max_pool2d decomposed", y, ref{[]int{1, 1, 1, 1}, []float64{4}}, backend.F32)
}
