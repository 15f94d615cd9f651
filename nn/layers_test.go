package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// poolRef pools x [n, c, h, w] with a k×k window and stride s (no padding)
// taking max (isMax) or mean.
func poolRef(x []float64, n, c, h, w, k, s int, isMax bool) []float64 {
	ho, wo := (h-k)/s+1, (w-k)/s+1
	out := make([]float64, 0, n*c*ho*wo)
	for b := range n * c {
		for i := range ho {
			for j := range wo {
				acc := math.Inf(-1)
				if !isMax {
					acc = 0
				}
				for p := range k {
					for q := range k {
						v := x[(b*h+i*s+p)*w+j*s+q]
						if isMax {
							acc = math.Max(acc, v)
						} else {
							acc += v / float64(k*k)
						}
					}
				}
				out = append(out, acc)
			}
		}
	}
	return out
}

func TestPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dev := ember.Flex()
	x := randVals(rng, 2*3*7*6)
	xt := f64(x, []int{2, 3, 7, 6}, dev)
	for _, c := range []struct{ k, s int }{{2, 0}, {3, 2}, {2, 1}} {
		s := c.s
		if s == 0 {
			s = c.k
		}
		assertClose(t, "maxpool", NewMaxPool2d(c.k, c.s).Forward(xt).Float64s(), poolRef(x, 2, 3, 7, 6, c.k, s, true), 0)
		assertClose(t, "avgpool", NewAvgPool2d(c.k, c.s).Forward(xt).Float64s(), poolRef(x, 2, 3, 7, 6, c.k, s, false), 1e-12)
	}
	if NewMaxPool2d(2, 2).NamedParameters() != nil || NewAvgPool2d(2, 2).NamedParameters() != nil {
		t.Error("pools have parameters")
	}
}

func TestActivationsAndFlatten(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	dev := ember.Flex()
	x := randVals(rng, 2*3*4)
	for i := range x {
		x[i] *= 3
	}
	xt := f64(x, []int{2, 3, 4}, dev)
	relu := make([]float64, len(x))
	gelu := make([]float64, len(x))
	for i, v := range x {
		relu[i] = math.Max(v, 0)
		gelu[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
	}
	assertClose(t, "relu", Relu{}.Forward(xt).Float64s(), relu, 0)
	assertClose(t, "gelu", Gelu{}.Forward(xt).Float64s(), gelu, 1e-12)
	f := Flatten{}.Forward(xt)
	if !slices.Equal(f.Shape(), []int{2, 12}) {
		t.Errorf("flatten shape %v, want [2 12]", f.Shape())
	}
	assertClose(t, "flatten", f.Float64s(), x, 0)
	if s := (Flatten{}).Forward(f64(x[:5], []int{5}, dev)).Shape(); !slices.Equal(s, []int{5, 1}) {
		t.Errorf("flatten of [5] gives %v, want [5 1]", s)
	}
}

func TestDropout(t *testing.T) {
	dev := ember.Flex()
	dev.Seed(7)
	const n = 20000
	x := make([]float64, n)
	for i := range x {
		x[i] = 1 + float64(i%7)
	}
	xt := f64(x, []int{100, 200}, dev)
	d := NewDropout(0.3)
	y := d.Forward(xt).Float64s()
	zeros := 0
	for i, v := range y {
		switch {
		case v == 0:
			zeros++
		case math.Abs(v-x[i]/0.7) > 1e-12:
			t.Fatalf("kept element %d = %v, want %v", i, v, x[i]/0.7)
		}
	}
	// Binomial(20000, 0.3): std ≈ 65 elements; allow 5 std.
	if math.Abs(float64(zeros)-0.3*n) > 5*math.Sqrt(n*0.3*0.7) {
		t.Errorf("%d of %d elements dropped, want about %v", zeros, n, 0.3*n)
	}
	// Another call samples a new mask.
	y2 := d.Forward(xt).Float64s()
	if slices.Equal(y, y2) {
		t.Error("two forward passes gave the same mask")
	}
	SetTraining(d, false)
	assertClose(t, "dropout eval", d.Forward(xt).Float64s(), x, 0)
	SetTraining(d, true)
	assertClose(t, "dropout p=1", NewDropout(1).Forward(xt).Float64s(), make([]float64, n), 0)
	assertClose(t, "dropout p=0", NewDropout(0).Forward(xt).Float64s(), x, 0)

	// The gradient is the mask scaled by 1/(1−p): equal to y/x elementwise.
	adev := ember.Flex().Autodiff()
	xa := f64(x[:500], []int{500}, adev).RequireGrad()
	ya := d.Forward(xa)
	g := ya.Sum().Backward().Of(xa).Float64s()
	yv := ya.Float64s()
	for i := range g {
		if math.Abs(g[i]-yv[i]/x[i]) > 1e-12 {
			t.Fatalf("dropout gradient[%d] = %v, want %v", i, g[i], yv[i]/x[i])
		}
	}
	if err := ember.Try(func() { NewDropout(1.5) }); err == nil {
		t.Error("NewDropout(1.5) did not panic")
	}
}

func TestEmbedding(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	dev := ember.Flex().Autodiff()
	e := NewEmbedding(5, 3, dev)
	w := setRandF64(rng, e.Weight)
	idx := []int{4, 0, 2, 2, 1, 4}
	y := e.Forward(ember.FromInts(idx, []int{2, 3}, dev))
	if !slices.Equal(y.Shape(), []int{2, 3, 3}) {
		t.Fatalf("shape %v, want [2 3 3]", y.Shape())
	}
	var want []float64
	for _, i := range idx {
		want = append(want, w[i*3:i*3+3]...)
	}
	assertClose(t, "embedding", y.Float64s(), want, 0)
	// Gradient: each row receives the sum of the output gradients that picked it.
	r := randVals(rng, 18)
	g := weightedSum(y, r).Backward().Of(e.Weight.Value).Float64s()
	wantG := make([]float64, 15)
	for k, i := range idx {
		for j := range 3 {
			wantG[i*3+j] += r[k*3+j]
		}
	}
	assertClose(t, "embedding gradient", g, wantG, 1e-12)
}

func TestSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	dev := ember.Flex().Autodiff()
	l0, l2 := NewLinear(4, 6, dev), NewLinear(6, 2, dev)
	bn, drop := NewBatchNorm(6, dev), NewDropout(0.5)
	m := NewSequential(l0, bn, Relu{}, drop, l2)
	var names []string
	for _, p := range m.NamedParameters() {
		names = append(names, p.Name)
	}
	want := []string{"0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias"}
	if !slices.Equal(names, want) {
		t.Errorf("parameter names %v, want %v", names, want)
	}
	names = names[:0]
	for _, p := range NamedBuffers(m) {
		names = append(names, p.Name)
	}
	if want := []string{"1.running_mean", "1.running_var", "1.num_batches_tracked"}; !slices.Equal(names, want) {
		t.Errorf("buffer names %v, want %v", names, want)
	}
	if got, want := NumParams(m), 4*6+6+6+6+6*2+2; got != want {
		t.Errorf("NumParams = %d, want %d", got, want)
	}
	SetTraining(m, false)
	if bn.Training() || drop.Training() {
		t.Error("SetTraining(false) did not reach the children")
	}
	x := f64(randVals(rng, 12), []int{3, 4}, dev)
	got := m.Forward(x).Float64s()
	manual := l2.Forward(bn.Forward(l0.Forward(x)).Relu()).Float64s()
	assertClose(t, "sequential", got, manual, 0)
	SetTraining(m, true)
	if !bn.Training() || !drop.Training() {
		t.Error("SetTraining(true) did not reach the children")
	}
	for _, p := range m.NamedParameters() {
		if !p.Param.Value.IsTracked() {
			t.Errorf("%s is not a tracked leaf on an autodiff device", p.Name)
		}
	}
	for _, p := range NewLinear(2, 2, ember.Flex()).NamedParameters() {
		if p.Param.Value.Device().IsAutodiff() {
			t.Errorf("%s on a plain device is an autodiff tensor", p.Name)
		}
	}
}

// moments returns the mean and standard deviation of vals.
func moments(vals []float64) (mean, std float64) {
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(vals)))
}

func TestInitializers(t *testing.T) {
	dev := ember.Flex()
	dev.Seed(99)
	shape := []int{200, 100} // 20000 samples: the sample std is within 1.5 % of σ with overwhelming probability
	type initCase struct {
		name    string
		t       *ember.Tensor
		bound   float64 // 0 for normal distributions
		wantStd float64
	}
	a := math.Sqrt(5)
	cases := []initCase{
		{"kaiming_uniform a=√5", KaimingUniform(shape, 100, a, dev), 0.1, 0.1 / math.Sqrt(3)},
		{"kaiming_uniform a=0", KaimingUniform(shape, 50, 0, dev), math.Sqrt(6.0 / 50), math.Sqrt(2.0 / 50)},
		{"kaiming_normal a=0", KaimingNormal(shape, 50, 0, dev), 0, math.Sqrt(2.0 / 50)},
		{"xavier_uniform", XavierUniform(shape, 100, 200, dev), math.Sqrt(6.0 / 300), math.Sqrt(2.0 / 300)},
		{"xavier_normal", XavierNormal(shape, 100, 200, dev), 0, math.Sqrt(2.0 / 300)},
	}
	for _, c := range cases {
		vals := c.t.Float64s()
		if c.bound > 0 {
			for _, v := range vals {
				if v < -c.bound || v > c.bound {
					t.Fatalf("%s: value %v outside ±%v", c.name, v, c.bound)
				}
			}
		}
		mean, std := moments(vals)
		if math.Abs(mean) > 0.05*c.wantStd || math.Abs(std-c.wantStd) > 0.015*c.wantStd {
			t.Errorf("%s: mean %v std %v, want 0 and %v", c.name, mean, std, c.wantStd)
		}
	}
	if err := ember.Try(func() { KaimingUniform(shape, 0, 0, dev) }); err == nil {
		t.Error("fanIn 0 did not panic")
	}
}
