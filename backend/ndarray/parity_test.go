package ndarray

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// The reference backend: ndarray must give flex's values bit for bit on
// the elementwise, cast, reduce (but F64 sums, which both add pairwise in
// different block orders), movement, indexing and integer linear-algebra
// kinds, and for Random after the same Seed. (Float Matmul and the
// convolutions accumulate in float32 on flex for F32 and the half types,
// in float64 here; TestMatmul and TestConv check those against float64.)

var fb = flex.New(backend.DeviceID{Type: "flex"})

// onBoth runs op with inputs made from the same data on flex and on
// ndarray and compares the results' bytes.
func onBoth(t *testing.T, what string, op ir.Op, inputs ...*backend.TensorData) {
	t.Helper()
	res := [2]*backend.TensorData{}
	for k, be := range []backend.Backend{fb, tb} {
		o := op
		o.Xs = nil
		for i, d := range inputs {
			if o.Kind == ir.KindCat {
				o.Xs = append(o.Xs, be.FromData(d))
			} else {
				o.In[i] = be.FromData(d)
			}
		}
		if err := o.Infer(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var err error
		if res[k], err = be.ToData(be.Exec(o)[0]); err != nil {
			t.Fatal(err)
		}
	}
	f, n := res[0], res[1]
	if f.DType != n.DType || !slices.Equal(f.Shape, n.Shape) {
		t.Fatalf("%s: flex gives %v %v, ndarray %v %v", what, f.DType, f.Shape, n.DType, n.Shape)
	}
	if !slices.Equal(f.Bytes, n.Bytes) {
		fv, nv := ir.As[float64](f), ir.As[float64](n)
		for i := range fv {
			if !sameBits(fv[i], nv[i]) || f.Bytes[i*f.DType.Size()] != n.Bytes[i*n.DType.Size()] {
				t.Errorf("%s: element %d: flex %v, ndarray %v", what, i, fv[i], nv[i])
				return
			}
		}
		t.Errorf("%s: the bytes differ (NaN payloads)", what)
	}
}

// anyVals draws n values for dt: for floats, magnitudes from 1e-3 to 1e3
// of either sign with some NaN, ±Inf, ±0 and ties; for integers, values
// spread over the dtype's range, small ones included.
func anyVals(rng *rand.Rand, dt backend.DType, n int) *backend.TensorData {
	v := make([]float64, n)
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.5, 2.5, -1.5}
	for i := range v {
		switch {
		case dt.IsFloat() && rng.IntN(6) == 0:
			v[i] = special[rng.IntN(len(special))]
		case dt.IsFloat():
			v[i] = math.Copysign(math.Pow(10, 6*rng.Float64()-3), rng.Float64()-0.5)
		case dt == backend.Bool:
			v[i] = float64(rng.IntN(2))
		default:
			lo, hi := intRange(dt)
			x := randInts(rng, 1, lo, hi, false)[0]
			if rng.IntN(2) == 0 {
				x = randInts(rng, 1, sgnLo(dt, -9), 9, false)[0]
			}
			return ir.FromSlice(append(randInts(rng, n-1, lo, hi, false), x), []int{n}).Convert(dt)
		}
	}
	return ir.FromSlice(v, []int{n}).Convert(dt)
}

func reshaped(d *backend.TensorData, shape []int) *backend.TensorData {
	return &backend.TensorData{Shape: shape, DType: d.DType, Bytes: d.Bytes}
}

func TestFlexParityElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, dt := range backend.AllDTypes {
		for u := ir.OpNeg; u <= ir.OpNot; u++ {
			op := ir.Op{Kind: ir.KindUnary, Sub: uint8(u)}
			x := anyVals(rng, dt, 64)
			op.In[0] = tb.FromData(x)
			if op.Infer() != nil {
				continue // not defined on dt
			}
			onBoth(t, fmt.Sprintf("%v %v", dt, u), ir.Op{Kind: ir.KindUnary, Sub: uint8(u)}, x)
		}
		for b := ir.OpAdd; b <= ir.OpShr; b++ {
			x, y := reshaped(anyVals(rng, dt, 24), []int{2, 3, 4}), reshaped(anyVals(rng, dt, 4), []int{4})
			op := ir.Op{Kind: ir.KindBinary, Sub: uint8(b), In: [3]ir.Tensor{tb.FromData(x), tb.FromData(y)}}
			if op.Infer() != nil {
				continue
			}
			if dt.IsInt() && (b == ir.OpDiv || b == ir.OpFloorDiv || b == ir.OpRem || b == ir.OpMod) {
				y = ir.FromSlice(randInts(rng, 4, sgnLo(dt, -50), 50, true), []int{4}).Convert(dt)
			}
			if dt.IsInt() && b.IsShift() {
				y = ir.FromSlice([]int64{-1, 3, int64(8*dt.Size() - 1), int64(8 * dt.Size())}, []int{4}).Convert(dt)
			}
			if dt.IsInt() && b == ir.OpPow {
				y = ir.FromSlice(randInts(rng, 4, sgnLo(dt, -3), 70, false), []int{4}).Convert(dt)
			}
			onBoth(t, fmt.Sprintf("%v %v", dt, b), ir.Op{Kind: ir.KindBinary, Sub: uint8(b)}, x, y)
		}
		c := reshaped(anyVals(rng, backend.Bool, 3), []int{3, 1})
		onBoth(t, fmt.Sprintf("%v where", dt), ir.Op{Kind: ir.KindWhere}, c, reshaped(anyVals(rng, dt, 12), []int{3, 4}), reshaped(anyVals(rng, dt, 4), []int{4}))
		for _, to := range backend.AllDTypes {
			onBoth(t, fmt.Sprintf("cast %v to %v", dt, to), ir.Op{Kind: ir.KindCast, DType: to}, anyVals(rng, dt, 64))
		}
	}
}

func TestFlexParityReduceAndMovement(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	shape := []int{3, 4, 5}
	for _, dt := range backend.AllDTypes {
		for r := ir.ReduceSum; r <= ir.ReduceArgMin; r++ {
			for axis := range shape {
				x := reshaped(anyVals(rng, dt, 60), shape)
				op := ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis, In: [3]ir.Tensor{tb.FromData(x)}}
				if op.Infer() != nil || (dt == backend.F64 && r == ir.ReduceSum) {
					continue
				}
				onBoth(t, fmt.Sprintf("%v %v axis %d", dt, r, axis), ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis}, x)
			}
		}
		x := reshaped(anyVals(rng, dt, 60), shape)
		onBoth(t, dt.String()+" permute", ir.Op{Kind: ir.KindPermute, Ints: []int{2, 0, 1}}, x)
		onBoth(t, dt.String()+" flip", ir.Op{Kind: ir.KindFlip, Ints: []int{1, 2}}, x)
		onBoth(t, dt.String()+" slice", ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: []ir.Range{{Start: 0, End: 3, Step: 2}, {Start: 1, End: 4, Step: 1}, {Start: 0, End: 5, Step: 3}}}}, x)
		onBoth(t, dt.String()+" expand", ir.Op{Kind: ir.KindExpand, Shape: []int{2, 3, 4, 5}}, x)
		onBoth(t, dt.String()+" pad", ir.Op{Kind: ir.KindPad, Ints: []int{0, 1, 2, 0, 1, 1}, Scalars: [2]float64{1}}, x)
		onBoth(t, dt.String()+" cat", ir.Op{Kind: ir.KindCat, Axis: 1}, x, reshaped(anyVals(rng, dt, 15), []int{3, 1, 5}))
		ix := ir.FromSlice(randInts(rng, 24, 0, 3, false), []int{2, 3, 4})
		onBoth(t, dt.String()+" gather", ir.Op{Kind: ir.KindGather, Axis: 1}, x, ix)
		onBoth(t, dt.String()+" index_select", ir.Op{Kind: ir.KindIndexSelect, Axis: 2}, x, ir.FromSlice([]int64{4, 0, 4}, []int{3}))
		if dt.IsFloat() { // finite sources: flex's and this order of additions agree
			src := ir.FromSlice(randVals(rng, 24, 0.1, 10, dt), []int{2, 3, 4}).Convert(dt)
			onBoth(t, dt.String()+" scatter_add", ir.Op{Kind: ir.KindScatterAdd, Axis: 1}, reshaped(ir.FromSlice(randVals(rng, 60, 0.1, 10, dt), shape).Convert(dt), shape), ix, src)
		} else {
			onBoth(t, dt.String()+" scatter_add", ir.Op{Kind: ir.KindScatterAdd, Axis: 1}, x, ix, reshaped(anyVals(rng, dt, 24), []int{2, 3, 4}))
		}
		if dt.IsInt() {
			onBoth(t, dt.String()+" matmul", ir.Op{Kind: ir.KindMatmul}, reshaped(anyVals(rng, dt, 24), []int{2, 3, 4}), reshaped(anyVals(rng, dt, 8), []int{4, 2}))
		}
	}
}

func TestFlexParityRandom(t *testing.T) {
	fb.Seed(99)
	tb.Seed(99)
	for _, dt := range backend.AllDTypes {
		for _, d := range []ir.Distribution{{}, {Kind: ir.DistUniform, A: 0, B: 5}, {Kind: ir.DistNormal, A: 1, B: 2}, {Kind: ir.DistBernoulli, A: 0.4}} {
			op := ir.Op{Kind: ir.KindRandom, Sub: uint8(d.Kind), DType: dt, Shape: []int{50}, Scalars: [2]float64{d.A, d.B}}
			onBoth(t, fmt.Sprintf("%v random %+v", dt, d), op)
		}
	}
}
