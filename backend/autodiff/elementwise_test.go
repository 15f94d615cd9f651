package autodiff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestUnaryGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	shape := []int{3, 4}
	cases := []struct {
		op         backend.UnaryOp
		lo, hi     float64
		signed     bool
		transposed bool // apply the op to a permuted (non-contiguous) view
	}{
		{backend.OpNeg, 0.2, 2, true, false},
		{backend.OpAbs, 0.2, 2, true, true},
		{backend.OpSign, 0.2, 2, true, false},
		{backend.OpExp, 0.1, 1.5, true, true},
		{backend.OpLog, 0.3, 3, false, false},
		{backend.OpLog1p, 0.1, 0.9, true, false},
		{backend.OpExpm1, 0.1, 1.5, true, false},
		{backend.OpSqrt, 0.3, 3, false, true},
		{backend.OpRsqrt, 0.3, 3, false, false},
		{backend.OpRecip, 0.3, 3, true, false},
		{backend.OpSin, 0.1, 3, true, false},
		{backend.OpCos, 0.1, 3, true, true},
		{backend.OpTanh, 0.1, 2, true, false},
		{backend.OpSigmoid, 0.1, 3, true, false},
		{backend.OpErf, 0.1, 2, true, false},
		{backend.OpFloor, 0.1, 3, true, false},
		{backend.OpCeil, 0.1, 3, true, false},
		{backend.OpRound, 0.1, 3, true, false},
	}
	for _, c := range cases {
		in := randIn(r, shape, c.lo, c.hi, c.signed)
		if c.op == backend.OpFloor || c.op == backend.OpCeil || c.op == backend.OpRound {
			for i, v := range in.vals { // keep away from integers and half-integers
				in.vals[i] = math.Floor(v) + 0.2
			}
		}
		op, tr := c.op, c.transposed
		gradCheck(t, op.String(), []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			x := xs[0]
			if tr {
				x = ir.Permute(b, x, []int{1, 0})
			}
			return ir.Unary(b, op, x)
		})
	}
}

func TestBinaryGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	type shapes struct{ a, b []int }
	layouts := []shapes{
		{[]int{2, 3}, []int{2, 3}},
		{[]int{2, 3, 4}, []int{3, 1}}, // b broadcast (new leading axis and stretched axis)
		{[]int{1, 4}, []int{3, 1}},    // both broadcast
		{[]int{}, []int{2, 3}},        // rank-0 operand
	}
	cases := []struct {
		op       backend.BinaryOp
		alo, ahi float64
		asigned  bool
		blo, bhi float64
		bsigned  bool
	}{
		{backend.OpAdd, 0.2, 2, true, 0.2, 2, true},
		{backend.OpSub, 0.2, 2, true, 0.2, 2, true},
		{backend.OpMul, 0.2, 2, true, 0.2, 2, true},
		{backend.OpDiv, 0.2, 2, true, 0.5, 2, true},
		{backend.OpPow, 0.5, 2, false, 0.2, 2, true},
		{backend.OpMax, 0.2, 2, true, 0.2, 2, true},
		{backend.OpMin, 0.2, 2, true, 0.2, 2, true},
		{backend.OpAtan2, 0.2, 2, true, 0.2, 2, true},
		{backend.OpFloorDiv, 0.2, 5, true, 0.7, 2, true},
		{backend.OpRem, 0.2, 5, true, 0.7, 2, true},
		{backend.OpMod, 0.2, 5, true, 0.7, 2, true},
	}
	for _, c := range cases {
		for li, l := range layouts {
			a := randIn(r, l.a, c.alo, c.ahi, c.asigned)
			bb := randIn(r, l.b, c.blo, c.bhi, c.bsigned)
			if c.op == backend.OpMax || c.op == backend.OpMin {
				// keep operands at least 0.05 apart (no ties, no kinks)
				for i := range a.vals {
					a.vals[i] = math.Round(a.vals[i]*10)/10 + 0.05
				}
				for i := range bb.vals {
					bb.vals[i] = math.Round(bb.vals[i]*10) / 10
				}
			}
			if c.op == backend.OpFloorDiv || c.op == backend.OpRem || c.op == backend.OpMod {
				// quotients away from integers: b = ±1, a = k + 0.5 ± 0.3
				for i := range bb.vals {
					bb.vals[i] = math.Copysign(1+math.Floor(math.Abs(bb.vals[i])), bb.vals[i])
				}
				for i := range a.vals {
					a.vals[i] = math.Floor(a.vals[i]) + 0.3 + 0.4*r.Float64()
				}
			}
			op := c.op
			gradCheck(t, op.String()+"/"+string(rune('0'+li)), []input{a, bb}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
				return ir.Binary(b, op, xs[0], xs[1])
			})
		}
	}
}

func TestBinaryOneOperandTracked(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, op := range []backend.BinaryOp{backend.OpMul, backend.OpDiv, backend.OpPow, backend.OpSub} {
		a := randIn(r, []int{2, 3}, 0.5, 2, false)
		c := constIn(randIn(r, []int{3}, 0.5, 2, true))
		gradCheck(t, op.String()+"/const-b", []input{a, c}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Binary(b, op, xs[0], xs[1])
		})
		gradCheck(t, op.String()+"/const-a", []input{constIn(a), randIn(r, []int{3}, 0.5, 2, true)}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
			return ir.Binary(b, op, xs[0], xs[1])
		})
	}
}

// TestMaxMinTies checks the even split on ties (PyTorch's maximum/minimum)
// on hand-worked values.
func TestMaxMinTies(t *testing.T) {
	for _, op := range []backend.BinaryOp{backend.OpMax, backend.OpMin} {
		b := New(newInner(), false)
		x := b.RequireGrad(b.FromData(f64Data([]int{3}, []float64{1, 2, 3})))
		y := b.RequireGrad(b.FromData(f64Data([]int{3}, []float64{3, 2, 1})))
		gs := b.Backward(ir.Binary(b, op, x, y))
		gx, _ := gs.Get(x)
		gy, _ := gs.Get(y)
		wx, wy := []float64{0, 0.5, 1}, []float64{1, 0.5, 0}
		if op == backend.OpMin {
			wx, wy = wy, wx
		}
		checkVals(t, op.String()+" grad x", values(t, b.Unwrap(), gx), wx, 0)
		checkVals(t, op.String()+" grad y", values(t, b.Unwrap(), gy), wy, 0)
	}
}

// TestPowZeroBase checks d/db a^b = 0 at a == 0, b >= 0 (PyTorch) and
// d/da 0^2 = 0.
func TestPowZeroBase(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{2}, []float64{0, 2})))
	y := b.RequireGrad(b.FromData(f64Data([]int{2}, []float64{2, 3})))
	gs := b.Backward(ir.Binary(b, backend.OpPow, x, y))
	gx, _ := gs.Get(x)
	gy, _ := gs.Get(y)
	checkVals(t, "pow grad a", values(t, b.Unwrap(), gx), []float64{0, 12}, 1e-12)
	checkVals(t, "pow grad b", values(t, b.Unwrap(), gy), []float64{0, 8 * math.Ln2}, 1e-12)
}

func TestWhereGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	c := constIn(randIn(r, []int{3, 1}, 0.1, 1, true))
	a := randIn(r, []int{3, 4}, 0.2, 2, true)
	bb := randIn(r, []int{4}, 0.2, 2, true)
	gradCheck(t, "where", []input{c, a, bb}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
		cond := ir.Binary(b, backend.OpGt, xs[0], ir.Full(b, []int{}, backend.F64, 0))
		if b.IsTracked(cond) {
			t.Fatal("comparison result is tracked")
		}
		return ir.Where(b, cond, xs[1], xs[2])
	})
}

// TestCastGradient checks that the gradient through F64 -> F32 -> F64 is
// the upstream gradient rounded to F32 and has each tensor's dtype.
func TestCastGradient(t *testing.T) {
	b := New(newInner(), false)
	x := b.RequireGrad(b.FromData(f64Data([]int{3}, []float64{1.5, -2, 0.25})))
	h := ir.Cast(b, x, backend.F32)
	y := ir.Cast(b, h, backend.F64)
	w := b.FromData(f64Data([]int{3}, []float64{0.1, 0.2, 0.3}))
	gs := b.Backward(ir.Binary(b, backend.OpMul, y, w))
	gx, _ := gs.Get(x)
	gh, ok := gs.Get(h)
	if !ok || gh.DType() != backend.F32 || gx.DType() != backend.F64 {
		t.Fatalf("gradient dtypes: intermediate %v (ok %v), leaf %v; want f32, f64", gh.DType(), ok, gx.DType())
	}
	want := []float64{float64(float32(0.1)), float64(float32(0.2)), float64(float32(0.3))}
	checkVals(t, "cast grad", values(t, b.Unwrap(), gx), want, 0)
	if b.IsTracked(ir.Cast(b, x, backend.I64)) {
		t.Error("cast to i64 is tracked")
	}
}
