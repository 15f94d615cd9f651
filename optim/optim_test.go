package optim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

func f64(vals []float64, dev ember.Device) *ember.Tensor {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return ember.FromData(&ember.TensorData{Shape: []int{len(vals)}, DType: ember.F64, Bytes: b}, dev)
}

// quadratic is ½ Σ aᵢ(θᵢ − cᵢ)², whose gradient is a(θ − c).
type quadratic struct{ a, c []float64 }

func (q quadratic) loss(theta *ember.Tensor) *ember.Tensor {
	dev := theta.Device().Inner()
	d := theta.Sub(f64(q.c, dev))
	return d.Mul(d).Mul(f64(q.a, dev)).Sum().MulScalar(0.5)
}

func (q quadratic) grad(theta []float64) []float64 {
	g := make([]float64, len(theta))
	for i := range g {
		g[i] = q.a[i] * (theta[i] - q.c[i])
	}
	return g
}

func randVals(rng *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// run takes steps optimizer steps on the quadratic from theta0 with the
// optimizer made by mk, and checks each iterate against ref, which maps
// (θ, g, step t counting from 1) to the next θ.
func run(t *testing.T, name string, mk func([]nn.NamedParam) Optimizer, ref func(theta, g []float64, step int) []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(name))))
	dev := ember.Flex().Autodiff()
	q := quadratic{a: randVals(rng, 5, 0.5, 2), c: randVals(rng, 5, -1, 1)}
	theta := randVals(rng, 5, -2, 2)
	p := &nn.Param{Value: f64(theta, dev).RequireGrad()}
	opt := mk([]nn.NamedParam{{Name: "theta", Param: p}})
	for step := 1; step <= 6; step++ {
		old := p.Value
		opt.Step(q.loss(p.Value).Backward())
		theta = ref(theta, q.grad(theta), step)
		got := p.Value.Float64s()
		for i := range got {
			if math.Abs(got[i]-theta[i]) > 1e-12*math.Max(1, math.Abs(theta[i])) {
				t.Fatalf("%s step %d: θ = %v, want %v", name, step, got, theta)
			}
		}
		if p.Value == old || !p.Value.IsTracked() || !p.Value.Device().IsAutodiff() || p.Value.DType() != ember.F64 {
			t.Fatalf("%s step %d: parameter is not a fresh F64 leaf on the autodiff device", name, step)
		}
	}
}

func TestSGD(t *testing.T) {
	const lr, mu, wd = 0.1, 0.9, 0.05
	run(t, "plain", func(ps []nn.NamedParam) Optimizer { return NewSGD(ps, SGDConfig{LR: lr}) },
		func(th, g []float64, _ int) []float64 {
			out := make([]float64, len(th))
			for i := range th {
				out[i] = th[i] - lr*g[i]
			}
			return out
		})
	for _, nesterov := range []bool{false, true} {
		var buf []float64
		name := "momentum"
		if nesterov {
			name = "nesterov"
		}
		run(t, name, func(ps []nn.NamedParam) Optimizer {
			return NewSGD(ps, SGDConfig{LR: lr, Momentum: mu, WeightDecay: wd, Nesterov: nesterov})
		}, func(th, g []float64, step int) []float64 {
			// PyTorch: g += wd·θ; b = g (first step) or μb + g; d = g + μb (Nesterov) or b.
			out := make([]float64, len(th))
			if step == 1 {
				buf = make([]float64, len(th))
			}
			for i := range th {
				gi := g[i] + wd*th[i]
				if step == 1 {
					buf[i] = gi
				} else {
					buf[i] = mu*buf[i] + gi
				}
				d := buf[i]
				if nesterov {
					d = gi + mu*buf[i]
				}
				out[i] = th[i] - lr*d
			}
			return out
		})
	}
}

// adamRef returns PyTorch's Adam (decoupled=false, L2 decay) or AdamW update.
func adamRef(lr, b1, b2, eps, wd float64, decoupled bool) func(th, g []float64, step int) []float64 {
	var m, v []float64
	return func(th, g []float64, step int) []float64 {
		if step == 1 {
			m, v = make([]float64, len(th)), make([]float64, len(th))
		}
		out := make([]float64, len(th))
		for i := range th {
			theta, gi := th[i], g[i]
			if decoupled {
				theta *= 1 - lr*wd
			} else {
				gi += wd * theta
			}
			m[i] = b1*m[i] + (1-b1)*gi
			v[i] = b2*v[i] + (1-b2)*gi*gi
			mhat := m[i] / (1 - math.Pow(b1, float64(step)))
			vhat := v[i] / (1 - math.Pow(b2, float64(step)))
			out[i] = theta - lr*mhat/(math.Sqrt(vhat)+eps)
		}
		return out
	}
}

func TestAdam(t *testing.T) {
	run(t, "adam defaults", func(ps []nn.NamedParam) Optimizer { return NewAdam(ps, AdamConfig{}) },
		adamRef(1e-3, 0.9, 0.999, 1e-8, 0, false))
	run(t, "adam custom", func(ps []nn.NamedParam) Optimizer {
		return NewAdam(ps, AdamConfig{LR: 0.05, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1})
	}, adamRef(0.05, 0.8, 0.99, 1e-6, 0.1, false))
	run(t, "adamw defaults", func(ps []nn.NamedParam) Optimizer { return NewAdamW(ps, AdamConfig{LR: 0.05}) },
		adamRef(0.05, 0.9, 0.999, 1e-8, 0.01, true))
	run(t, "adamw custom", func(ps []nn.NamedParam) Optimizer {
		return NewAdamW(ps, AdamConfig{LR: 0.02, Beta1: 0.5, Beta2: 0.9, Eps: 1e-4, WeightDecay: 0.3})
	}, adamRef(0.02, 0.5, 0.9, 1e-4, 0.3, true))
}

func TestLRAndConfigErrors(t *testing.T) {
	p := []nn.NamedParam{{Name: "p", Param: &nn.Param{Value: ember.Zeros([]int{2}, ember.Flex().Autodiff()).RequireGrad()}}}
	for _, o := range []Optimizer{NewSGD(p, SGDConfig{LR: 0.1}), NewAdam(p, AdamConfig{}), NewAdamW(p, AdamConfig{})} {
		o.SetLR(0.25)
		if o.LR() != 0.25 {
			t.Errorf("%T: LR() = %v after SetLR(0.25)", o, o.LR())
		}
	}
	if NewAdam(p, AdamConfig{}).LR() != 1e-3 {
		t.Error("Adam's default LR is not 1e-3")
	}
	for name, f := range map[string]func(){
		"nesterov without momentum": func() { NewSGD(p, SGDConfig{LR: 0.1, Nesterov: true}) },
		"negative lr":               func() { NewSGD(p, SGDConfig{LR: -1}) },
		"beta1 = 1":                 func() { NewAdam(p, AdamConfig{Beta1: 1}) },
		"nil parameter":             func() { NewAdamW([]nn.NamedParam{{Name: "x"}}, AdamConfig{}) },
		"nil value":                 func() { NewSGD([]nn.NamedParam{{Name: "x", Param: &nn.Param{}}}, SGDConfig{}) },
	} {
		if err := ember.Try(f); err == nil {
			t.Errorf("%s: no panic", name)
		}
	}
}

func TestSchedules(t *testing.T) {
	s := StepLR(0.1, 3, 0.5)
	for step, want := range []float64{0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025} {
		if got := s.LR(step); math.Abs(got-want) > 1e-15 {
			t.Errorf("StepLR(%d) = %v, want %v", step, got, want)
		}
	}
	c := CosineLR(1, 0.1, 4)
	// min + (base−min)(1 + cos(π t/4))/2 with cos(π/4) = √2/2, cos(π/2) = 0, cos(3π/4) = −√2/2.
	for step, want := range map[int]float64{
		0: 1, 1: 0.1 + 0.9*(1+math.Sqrt2/2)/2, 2: 0.55, 3: 0.1 + 0.9*(1-math.Sqrt2/2)/2, 4: 0.1, 10: 0.1,
	} {
		if got := c.LR(step); math.Abs(got-want) > 1e-15 {
			t.Errorf("CosineLR(%d) = %v, want %v", step, got, want)
		}
	}
	if ember.Try(func() { StepLR(1, 0, 0.5) }) == nil || ember.Try(func() { CosineLR(1, 0, 0) }) == nil {
		t.Error("invalid schedule sizes did not panic")
	}
}
