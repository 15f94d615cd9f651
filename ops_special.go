package ember

import (
	"math"
	"strconv"

	"github.com/emberml/ember/ir"
)

// Hypot returns √(x² + y²) elementwise with broadcasting (PyTorch's
// torch.hypot), computed as m·√(1 + (n/m)²) with m = max(|x|, |y|) and n =
// min(|x|, |y|), so that it neither overflows nor underflows where the
// squares would (hypot(1e200, 1e200) is finite in F64, hypot(3e30, 4e30)
// in F32). As C's hypot, an infinite operand gives +Inf even when the
// other is NaN, and hypot(0, 0) = 0 (with gradient 0 there; elsewhere the
// gradient is x/hypot). Int and Bool inputs are first cast to the
// device's float dtype. It panics with an *Error when the shapes do not
// broadcast or the devices differ.
func (x *Tensor) Hypot(y *Tensor) *Tensor {
	x = x.asFloat("hypot")
	y = y.asFloat("hypot")
	a, b := x.Abs(), y.Abs()
	m, n := a.Maximum(b), a.Minimum(b)
	zero := m.EqScalar(0)
	safe := Where(zero, OnesLike(m), m)
	r := n.Div(safe)
	h := safe.Mul(r.Mul(r).AddScalar(1).Sqrt())
	h = Where(zero, ZerosLike(h), h)
	inf := a.EqScalar(math.Inf(1)).Or(b.EqScalar(math.Inf(1)))
	return Where(inf, FullLike(h, math.Inf(1)), h)
}

// Erfinv returns the inverse error function elementwise (PyTorch's
// torch.special.erfinv): erf(erfinv(x)) = x for x in (−1, 1), ±Inf at ±1,
// NaN outside [−1, 1] and at NaN. It starts from Giles's single-precision
// approximation ("Approximating the erfinv function", GPU Computing Gems,
// 2011) and refines it with two Newton steps on erf, so it is accurate to
// the dtype's precision; the gradient, √π/2·exp(erfinv(x)²), follows from
// the composition. Int and Bool inputs are first cast to the device's
// float dtype.
func (x *Tensor) Erfinv() *Tensor {
	x = x.asFloat("erfinv")
	// Giles's initial guess, both branches evaluated and one selected,
	// untracked: the Newton steps carry the gradient (and an unselected
	// branch's infinite slope would turn it into NaN).
	g := x.Detach()
	w := g.Neg().AddScalar(1).Mul(g.AddScalar(1)).Log().Neg()
	poly := func(v *Tensor, cs []float64) *Tensor {
		p := FullLike(v, cs[0])
		for _, c := range cs[1:] {
			p = p.Mul(v).AddScalar(c)
		}
		return p
	}
	central := poly(w.AddScalar(-2.5), []float64{2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
		0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941})
	tail := poly(w.ClampMin(0).Sqrt().AddScalar(-3), []float64{-0.000200214257, 0.000100950558, 0.00134934322,
		-0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682})
	y := Where(w.LtScalar(5), central, tail).Mul(g)
	// Newton: y ← y − (erf(y) − x)/(2/√π·exp(−y²)).
	open := x.Abs().LtScalar(1)
	for range 2 {
		d := y.Mul(y).Neg().Exp().MulScalar(2 / math.Sqrt(math.Pi))
		step := y.Erf().Sub(x).Div(Where(open, d, OnesLike(d)))
		y = Where(open, y.Sub(step), y)
	}
	edge := x.Abs().EqScalar(1)
	return Where(edge, g.MulScalar(math.Inf(1)), y)
}

// ArangeFloat makes [start, start+step, ...] up to but excluding end in
// the device's float dtype (PyTorch's arange with float arguments): ⌈(end
// − start)/step⌉ elements, element i computed as start + i·step in
// float64 and rounded once. It panics with an *Error for a zero, NaN or
// infinite step, NaN or infinite bounds, a step whose sign leads away
// from end, or a count that does not fit an int.
func ArangeFloat(start, end, step float64, dev Device) *Tensor {
	args := []string{"start " + ftoa(start), "end " + ftoa(end), "step " + ftoa(step)}
	switch {
	case step == 0 || math.IsNaN(step) || math.IsInf(step, 0):
		fail("arange", args, "step must be finite and non-zero")
	case math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(end) || math.IsInf(end, 0):
		fail("arange", args, "bounds must be finite")
	case (end-start)*step < 0:
		fail("arange", args, "the step's sign leads away from end")
	}
	count := math.Ceil((end - start) / step)
	if !(count < 1<<53) {
		fail("arange", args, "%v elements are too many", count)
	}
	n := int(count)
	dt := DType(dev.opSettings().FloatDType)
	op := &ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: dt, Scalars: [2]float64{start, step}}
	if err := op.Infer(); err != nil {
		fail("arange", args, "%v", err)
	}
	return dev.run(op)
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
