package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// elemShapes are the logical shapes of the elementwise tests: rank 0,
// size-0 and size-1 axes, odd sizes (vector tails) and one large enough for
// many blocks.
var elemShapes = [][]int{{}, {0}, {1}, {7}, {3, 4}, {0, 3}, {2, 1, 3}, {2, 3, 5, 7}, {1000, 37}}

func TestKernelUnary(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range backend.AllDTypes {
		for op := backend.OpNeg; op <= backend.OpNot; op++ {
			if op == backend.OpNot && dt != backend.Bool {
				continue // Not is Bool-only
			}
			for li, l := range layouts {
				// every layout, a rotating shape each, plus the large
				// contiguous case (vector loop and tail)
				shapes := [][]int{elemShapes[(int(op)*4+li)%len(elemShapes)]}
				if li == 0 {
					shapes = append(shapes, []int{1000, 37})
				}
				for _, shape := range shapes {
					what := name("unary ", op, " ", dt, " ", l.name, " ", shape)
					try(t, what, func() {
						x, fx := randomPair(b, rng, shape, dt, l)
						rtol := 0.0
						if !dt.IsFloat() && op >= backend.OpExp && op <= backend.OpErf {
							// float-only ops on integers go through double:
							// the device's and Go's libm may differ by an ulp
							rtol = 1e-15
						}
						sameTol(t, b, unaryOn(b, op, x), unaryOn(flexRef, op, fx), what, rtol)
					})
				}
			}
		}
	}
}

// binaryShapes are pairs of broadcastable shapes.
var binaryShapes = [][2][]int{
	{{3, 1, 5}, {4, 1}}, {{}, {7}}, {{2, 3}, {}}, {{0, 3}, {1, 3}}, {{1}, {1}},
	{{5, 6}, {5, 6}}, {{1000, 37}, {1000, 37}}, {{1000, 37}, {37}}, {{1000, 37}, {}}, {{}, {1001}},
}

func TestKernelBinary(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range backend.AllDTypes {
		for op := backend.OpAdd; op <= backend.OpXor; op++ {
			for si, sh := range binaryShapes {
				l := layouts[(si+int(op))%len(layouts)]
				what := name("binary ", op, " ", dt, " ", l.name, " ", sh)
				try(t, what, func() {
					x, fx := randomPair(b, rng, sh[0], dt, l)
					y, fy := randomPair(b, rng, sh[1], dt, l)
					same(t, b, binaryOn(b, op, x, y), binaryOn(flexRef, op, fx, fy), what)
				})
			}
		}
	}
}

// TestKernelBinarySpecial checks NaN propagation and signed zeros of Max
// and Min, float FloorDiv/Mod signs, and integer division at the range
// limits (MIN / -1 wraps, as Go).
func TestKernelBinarySpecial(t *testing.T) {
	b := gpu(t)
	nan := math.NaN()
	fa := []float64{nan, 1, nan, 0, -7.5, 7.5, -7.5, math.Inf(1), 5, -0.0}
	fb := []float64{1, nan, nan, -0.0, 2, -2, -2, 2, math.Inf(-1), 0}
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.F16, backend.BF16} {
		i, j := 0, 0
		da := fromF64([]int{len(fa)}, dt, func() float64 { i++; return fa[i-1] })
		db := fromF64([]int{len(fb)}, dt, func() float64 { j++; return fb[j-1] })
		for _, op := range []backend.BinaryOp{backend.OpMax, backend.OpMin, backend.OpFloorDiv, backend.OpRem, backend.OpMod, backend.OpPow, backend.OpAtan2, backend.OpEq, backend.OpNe, backend.OpLt} {
			x, fx := pair(b, da, layouts[0], da.Shape)
			y, fy := pair(b, db, layouts[0], db.Shape)
			same(t, b, binaryOn(b, op, x, y), binaryOn(flexRef, op, fx, fy), name(op, " ", dt, " specials"))
		}
	}
	for _, dt := range []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8} {
		lo := -math.Ldexp(1, 8*dt.Size()-1)
		ia := []float64{lo, lo, -7, 7, -7, lo + 1}
		ib := []float64{-1, 1, 2, -2, -2, -1}
		i, j := 0, 0
		da := fromF64([]int{len(ia)}, dt, func() float64 { i++; return ia[i-1] })
		db := fromF64([]int{len(ib)}, dt, func() float64 { j++; return ib[j-1] })
		for _, op := range []backend.BinaryOp{backend.OpDiv, backend.OpFloorDiv, backend.OpRem, backend.OpMod, backend.OpMul, backend.OpSub} {
			x, fx := pair(b, da, layouts[0], da.Shape)
			y, fy := pair(b, db, layouts[0], db.Shape)
			same(t, b, binaryOn(b, op, x, y), binaryOn(flexRef, op, fx, fy), name(op, " ", dt, " limits"))
		}
	}
}

func TestKernelWhere(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := [][3][]int{{{3, 1, 5}, {4, 1}, {1, 5}}, {{}, {7}, {7}}, {{7}, {}, {}}, {{1000, 37}, {1000, 37}, {1000, 37}}, {{0, 2}, {1, 2}, {2}}}
	for _, dt := range backend.AllDTypes {
		for _, l := range layouts {
			for _, sh := range shapes {
				what := name("where ", dt, " ", l.name, " ", sh)
				try(t, what, func() {
					c, fc := randomPair(b, rng, sh[0], backend.Bool, l)
					x, fx := randomPair(b, rng, sh[1], dt, l)
					y, fy := randomPair(b, rng, sh[2], dt, l)
					same(t, b, ir.Where(b, c, x, y), ir.Where(flexRef, fc, fx, fy), what)
				})
			}
		}
	}
}

// castSource returns cast test data: for float sources random values of
// several magnitudes and the special values (NaN, ±Inf, halves for ties,
// values beyond every integer range, F16's overflow threshold, a
// subnormal); for integer sources random bit patterns over the whole
// range; for Bool 0 and 1.
func castData(rng *rand.Rand, n int, dt backend.DType) *backend.TensorData {
	if dt.IsFloat() {
		specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e20, -1e20, 3e9, -3e9, 65520, 65519, 0.5, 1.5, 2.5, -0.5, -2.5,
			300.7, -129.9, 1e-7, -1e-7, 3.0000001, 127.5, 255.5, 32767.5, 1 + 1.0/2048 + 1.0/(1<<30)}
		i := 0
		return fromF64([]int{n}, dt, func() float64 {
			i++
			if i <= len(specials) {
				return specials[i-1]
			}
			return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(12)-2))
		})
	}
	raw := make([]byte, n*dt.Size())
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	if dt == backend.Bool {
		for i := range raw {
			raw[i] &= 1
		}
	}
	d, err := backend.NewTensorData([]int{n}, dt, raw)
	if err != nil {
		panic(err)
	}
	return d
}

func TestKernelCast(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, from := range backend.AllDTypes {
		for _, to := range backend.AllDTypes {
			for _, l := range layouts[:3] {
				what := name("cast ", from, "->", to, " ", l.name)
				try(t, what, func() {
					base := l.base([]int{3, 5, 7})
					d := castData(rng, backend.NumElements(base), from)
					d.Shape = base
					x, fx := pair(b, d, l, []int{3, 5, 7})
					g, err := b.ToData(ir.Cast(b, x, to))
					if err != nil {
						t.Fatal(err)
					}
					w, _ := flexRef.ToData(ir.Cast(flexRef, fx, to))
					if err := g.ApproxEqual(w, 0, 0); err != nil {
						t.Errorf("%s: %v", what, err)
					}
				})
			}
		}
	}
}

// TestKernelCopyStrided checks Contiguous (the strided copy) on views of
// every element size, including a rank-10 tensor (split on the host).
func TestKernelCopyStrided(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []backend.DType{backend.F64, backend.F32, backend.F16, backend.U8, backend.Bool} {
		for _, l := range layouts {
			for _, shape := range [][]int{{}, {5}, {4, 6, 3}, {2, 3, 2, 3, 2, 2, 3, 2, 2, 2}} {
				x, fx := randomPair(b, rng, shape, dt, l)
				same(t, b, b.Contiguous(tensorOf(x)), fx, name("copy ", dt, " ", l.name, " ", shape))
			}
		}
	}
}
