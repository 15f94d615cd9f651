package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// clipCase is a set of parameters whose gradients are known: the loss
// Σᵢ Σ cᵢ ⊙ θᵢ has gradient cᵢ for θᵢ. frozen receives no gradient.
type clipCase struct {
	params []nn.NamedParam
	coefs  [][]float64 // the gradients, in float64
	grads  *ember.Gradients
}

func newClipCase(t *testing.T, seed uint64, dt ember.DType, scale float64) *clipCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	dev := ember.Flex().Autodiff()
	shapes := [][]int{{3, 4}, {5}, {2, 2, 2}}
	c := &clipCase{}
	var loss *ember.Tensor
	for i, sh := range shapes {
		n := 1
		for _, s := range sh {
			n *= s
		}
		w := randVals(rng, n, -1, 1)
		coef := randVals(rng, n, -scale, scale)
		// The gradient is coef rounded to dt; the reference uses those
		// rounded values.
		ct := f64(coef, dev.Inner()).Cast(dt).Reshape(sh...)
		c.coefs = append(c.coefs, ct.Float64s())
		p := &nn.Param{Value: f64(w, dev.Inner()).Cast(dt).Reshape(sh...).ToDevice(dev).RequireGrad()}
		c.params = append(c.params, nn.NamedParam{Name: string(rune('a' + i)), Param: p})
		term := p.Value.Mul(ct).Sum()
		if loss == nil {
			loss = term
		} else {
			loss = loss.Add(term)
		}
	}
	frozen := &nn.Param{Value: f64([]float64{1, 2}, dev.Inner()).Cast(dt).ToDevice(dev).RequireGrad()}
	c.params = append(c.params, nn.NamedParam{Name: "frozen", Param: frozen})
	c.grads = loss.Backward()
	return c
}

// refNorm is the float64 total p-norm of the gradients, PyTorch's
// definition: the p-norm of the parameters' p-norms.
func refNorm(coefs [][]float64, p float64) float64 {
	var per []float64
	for _, c := range coefs {
		per = append(per, pnorm(c, p))
	}
	return pnorm(per, p)
}

func pnorm(v []float64, p float64) float64 {
	if math.IsInf(p, 1) {
		m := 0.0
		for _, x := range v {
			m = math.Max(m, math.Abs(x))
		}
		return m
	}
	s := 0.0
	for _, x := range v {
		s += math.Pow(math.Abs(x), p)
	}
	return math.Pow(s, 1/p)
}

func relClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestClipGradNormReference compares ClipGradNorm's total norm and clipped
// gradients with float64 computations of PyTorch's clip_grad_norm_ for
// p = 1, 2, 3 and ∞, F32 (relative tolerance 1e-6) and F64 (1e-13)
// gradients, clipping and not clipping.
func TestClipGradNormReference(t *testing.T) {
	for _, dt := range []ember.DType{ember.F32, ember.F64} {
		tol := 1e-6
		if dt == ember.F64 {
			tol = 1e-13
		}
		for _, p := range []float64{1, 2, 3, math.Inf(1)} {
			for _, maxNorm := range []float64{0.5, 1e6} {
				c := newClipCase(t, uint64(p*10)+uint64(maxNorm), dt, 2)
				want := refNorm(c.coefs, p)
				total := ClipGradNorm(c.grads, c.params, maxNorm, p)
				if total.DType() != dt || total.Rank() != 0 {
					t.Fatalf("%v p=%v: total is %v %v, want a rank-0 %v", dt, p, total.Shape(), total.DType(), dt)
				}
				if got := total.Item(); !relClose(got, want, tol) {
					t.Errorf("%v p=%v: total norm %.9g, float64 reference %.9g", dt, p, got, want)
				}
				coef := math.Min(1, maxNorm/(want+1e-6))
				for i, cf := range c.coefs {
					got := c.grads.Of(c.params[i].Param.Value).Float64s()
					for j := range got {
						if w := cf[j] * coef; !relClose(got[j], w, tol) {
							t.Fatalf("%v p=%v max %v: gradient %d[%d] = %.9g, want %.9g", dt, p, maxNorm, i, j, got[j], w)
						}
					}
					if maxNorm == 1e6 && !slices.Equal(got, cf) {
						t.Errorf("%v p=%v: a gradient below the bound changed", dt, p)
					}
				}
				if c.grads.Of(c.params[len(c.params)-1].Param.Value) != nil {
					t.Errorf("the parameter without a gradient got one")
				}
				// Clipped with p, the new total is maxNorm (up to ε and rounding).
				if maxNorm < want {
					if again := GradNorm(c.grads, c.params, p).Item(); !relClose(again, maxNorm, 1e-5) {
						t.Errorf("%v p=%v: norm after clipping %.9g, want %v", dt, p, again, maxNorm)
					}
				}
			}
		}
	}
}

// TestClipGradValueReference checks clamping against float64.
func TestClipGradValueReference(t *testing.T) {
	c := newClipCase(t, 5, ember.F32, 3)
	ClipGradValue(c.grads, c.params, 1.25)
	for i, cf := range c.coefs {
		got := c.grads.Of(c.params[i].Param.Value).Float64s()
		for j := range got {
			if w := math.Max(-1.25, math.Min(1.25, cf[j])); got[j] != w {
				t.Fatalf("gradient %d[%d] = %v, want %v (from %v)", i, j, got[j], w, cf[j])
			}
		}
	}
}

// TestClipGradNormNonFinite follows PyTorch: an infinite gradient makes
// the total infinite and every clipped gradient NaN or zero, never a
// silent finite update of the same size.
func TestClipGradNormNonFinite(t *testing.T) {
	dev := ember.Flex().Autodiff()
	w := &nn.Param{Value: ember.FromFloats([]float32{1, 2}, []int{2}, dev).RequireGrad()}
	grads := w.Value.Mul(ember.FromFloats([]float32{float32(math.Inf(1)), 1}, []int{2}, dev.Inner())).Sum().Backward()
	total := ClipGradNorm(grads, []nn.NamedParam{{Name: "w", Param: w}}, 1, 2)
	if !math.IsInf(total.Item(), 1) {
		t.Fatalf("total %v, want +Inf", total.Item())
	}
	for _, g := range grads.Of(w.Value).Float64s() {
		if !math.IsNaN(g) && g != 0 {
			t.Fatalf("clipped gradient %v after an infinite norm", g)
		}
	}
}

func TestClipErrors(t *testing.T) {
	c := newClipCase(t, 1, ember.F32, 1)
	for _, bad := range []struct {
		name string
		f    func()
		want string
	}{
		{"zero max", func() { ClipGradNorm(c.grads, c.params, 0, 2) }, "maxNorm"},
		{"NaN max", func() { ClipGradNorm(c.grads, c.params, math.NaN(), 2) }, "maxNorm"},
		{"negative p", func() { ClipGradNorm(c.grads, c.params, 1, -1) }, "normType"},
		{"NaN p", func() { GradNorm(c.grads, c.params, math.NaN()) }, "normType"},
		{"zero value", func() { ClipGradValue(c.grads, c.params, 0) }, "clipValue"},
		{"infinite value", func() { ClipGradValue(c.grads, c.params, math.Inf(1)) }, "clipValue"},
	} {
		err := ember.Try(bad.f)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want one naming %s", bad.name, err, bad.want)
		}
	}
	if ClipGradNorm(nil, c.params, 1, 2) != nil || GradNorm(c.grads, nil, 2) != nil {
		t.Error("no gradients: want a nil norm")
	}
}
