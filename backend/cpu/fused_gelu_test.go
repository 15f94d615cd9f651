package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// geluVariant is gelu(x·a + b)·c written in one of the orders a program
// may hold: constants first or second, the last product t·w or w·t, an
// intermediate value kept as a second output, or an infinite constant
// (the last two must not become a gelu step).
type geluVariant struct {
	name                 string
	constFirst, swapLast bool
	keepErf              bool
	alpha                float64
	fuses                bool
}

// program builds the variant over inputs of shape.
func (v geluVariant) program(shape []int) *ir.FusedProgram {
	var b fusedBuilder
	b.p.Shape = shape
	x, a, bias, c := b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape)
	bin := func(op ir.BinaryOp, v0 ir.FusedRef, k float64, first bool) ir.FusedRef {
		if first {
			return b.binary(op, b.full(ir.F32, k), v0)
		}
		return b.binary(op, v0, b.full(ir.F32, k))
	}
	t := b.binary(ir.OpAdd, b.binary(ir.OpMul, x, a), bias)
	e := b.unary(ir.OpErf, bin(ir.OpMul, t, v.alpha, v.constFirst))
	w := bin(ir.OpMul, bin(ir.OpAdd, e, 1, v.constFirst), 0.5, !v.constFirst)
	y := b.binary(ir.OpMul, t, w)
	if v.swapLast {
		y = b.binary(ir.OpMul, w, t)
	}
	y = b.binary(ir.OpMul, y, c)
	b.p.Outputs = []int{y.Index()}
	if v.keepErf {
		b.p.Outputs = append(b.p.Outputs, e.Index())
	}
	return &b.p
}

// geluInputs returns n F32 tensors of shape: mostly normal values of
// varied scale, and some NaNs (with payloads), infinities, zeros,
// subnormals, huge values and erf's interval ends.
func geluInputs(be *Backend, r *rand.Rand, n int, shape []int) []backend.Tensor {
	ts := make([]backend.Tensor, n)
	for i := range ts {
		v := make([]float32, numel(shape))
		for j := range v {
			switch r.IntN(100) {
			case 0:
				v[j] = math.Float32frombits(0x7fc00000 | r.Uint32()&0x803fffff) // NaN, either sign
			case 1:
				v[j] = float32(math.Inf(1 - 2*r.IntN(2)))
			case 2:
				v[j] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal or zero
			case 3:
				v[j] = float32(r.NormFloat64() * 1e30)
			case 4:
				v[j] = float32(r.IntN(2*erfParts16+1)-erfParts16) * (erfSpan / erfParts16) * math.Sqrt2
			default:
				v[j] = float32(r.NormFloat64() * math.Exp(2*r.NormFloat64()))
			}
		}
		ts[i] = be.FromData(ir.FromSlice(v, shape))
	}
	return ts
}

// TestFusedGelu checks that a plan runs the composed gelu as one step
// where it may and not where it may not, and that the result is bit for
// bit that of one Exec per node (NaNs included) with every erf kernel,
// with and without the prefetching piecewise path, on lengths with and
// without partial vector blocks.
func TestFusedGelu(t *testing.T) {
	be := newTestBackend()
	pmin := fusedPrefetchMin
	defer func() { fusedPrefetchMin = pmin }()
	r := rand.New(rand.NewPCG(3, 11))
	variants := []geluVariant{
		{name: "gelu", alpha: 1 / math.Sqrt2, fuses: true},
		{name: "constants first", constFirst: true, alpha: 1 / math.Sqrt2, fuses: true},
		{name: "w·t", swapLast: true, alpha: 1 / math.Sqrt2, fuses: true},
		{name: "scaled", alpha: 3.5, fuses: true},
		{name: "erf kept", keepErf: true, alpha: 1 / math.Sqrt2},
		{name: "infinite scale", alpha: math.Inf(1)},
	}
	for _, v := range variants {
		for _, n := range []int{5, 16, 37, 4099, 3*fusedBlock + 37} {
			shape := []int{n}
			p := v.program(shape)
			inputs := geluInputs(be, r, 4, shape)
			pl, ok := compileFused(p, inputs)
			if !ok {
				t.Fatalf("%s: declined", v.name)
			}
			gelus := 0
			for _, st := range pl.steps {
				if st.op == opGelu {
					gelus++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[v.fuses]; gelus != want {
				t.Fatalf("%s: %d gelu steps in %d steps, want %d", v.name, gelus, len(pl.steps), want)
			}
			want := p.Run(be, inputs)
			forEachErfISA(t, func(isa string) {
				for _, pf := range []int{pmin, 0} {
					fusedPrefetchMin = pf
					got, ok := be.ExecFused(p, inputs)
					if !ok {
						t.Fatalf("%s: declined", v.name)
					}
					sameTensors(t, be, fmt.Sprintf("%s, %d elements, %s, prefetch from %d", v.name, n, isa, pf), got, want, false)
				}
			})
		}
	}
}
