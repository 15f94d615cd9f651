package ember

import (
	"math"
	"slices"
	"testing"
)

// reduceRef reduces r along axis a with f, which sees the values of one
// lane in order; keepDim keeps the axis with size 1.
func reduceRef(r ref, a int, keepDim bool, f func(lane []float64) float64) ref {
	out := slices.Clone(r.shape)
	out[a] = 1
	res := build(out, func(idx []int) float64 {
		lane := make([]float64, r.shape[a])
		src := slices.Clone(idx)
		for i := range lane {
			src[a] = i
			lane[i] = r.at(src...)
		}
		return f(lane)
	})
	if !keepDim {
		res.shape = slices.Delete(slices.Clone(out), a, a+1)
	}
	return res
}

func sumLane(l []float64) float64 {
	s := 0.0
	for _, v := range l {
		s += v
	}
	return s
}

func absSumLane(l []float64) float64 {
	s := 0.0
	for _, v := range l {
		s += math.Abs(v)
	}
	return s
}

func prodLane(l []float64) float64 {
	p := 1.0
	for _, v := range l {
		p *= v
	}
	return p
}

// argLane returns the index of the first NaN, else of the first extreme
// value (better(a, b) says a beats b).
func argLane(l []float64, better func(a, b float64) bool) float64 {
	best := 0
	for i, v := range l {
		if math.IsNaN(v) {
			return float64(i)
		}
		if better(v, l[best]) {
			best = i
		}
	}
	return float64(best)
}

func greater(a, b float64) bool { return a > b }
func less(a, b float64) bool    { return a < b }

type reduceCase struct {
	name string
	f    func(x *Tensor, axis int, keep bool) *Tensor
	ref  func(lane []float64) float64
	arg  bool
}

var reduceCases = []reduceCase{
	{"sum", (*Tensor).SumAxis, sumLane, false},
	{"prod", (*Tensor).ProdAxis, prodLane, false},
	{"max", (*Tensor).MaxAxis, func(l []float64) float64 { return l[int(argLane(l, greater))] }, false},
	{"min", (*Tensor).MinAxis, func(l []float64) float64 { return l[int(argLane(l, less))] }, false},
	{"argmax", (*Tensor).Argmax, func(l []float64) float64 { return argLane(l, greater) }, true},
	{"argmin", (*Tensor).Argmin, func(l []float64) float64 { return argLane(l, less) }, true},
}

func TestTableReduce(t *testing.T) {
	shapes := [][]int{{5}, {1, 1}, {3, 4}, {2, 3, 4}, {2, 0, 3}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(11)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			for _, shape := range shapes {
				// Small integers make ties frequent; prod stays small.
				x := randRef(shape, dt, ints(rng, -3, 3))
				if dt.IsFloat() {
					x = randRef(shape, dt, nonZero(rng, 0.5, 1.5))
					for i := range x.v {
						if rng.IntN(4) == 0 {
							x.v[i] = 1 // ties
						}
					}
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						for _, keep := range []bool{false, true} {
							for _, c := range reduceCases {
								name := c.name + " " + dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(pa) + map[bool]string{true: " keep", false: ""}[keep]
								if a < 0 {
									name += " (negative)"
								}
								if shape[pa] == 0 && c.name != "sum" && c.name != "prod" {
									expectPanic(t, name, func() { c.f(xt, a, keep) }, "empty axis")
									continue
								}
								want := reduceRef(x, pa, keep, c.ref)
								switch {
								case c.arg:
									checkEq(t, name, c.f(xt, a, keep), want, I64)
								case c.name == "sum":
									check(t, name, c.f(xt, a, keep), want, dt, 1, reduceRef(x, pa, keep, absSumLane).v)
								default:
									checkEq(t, name, c.f(xt, a, keep), mapRef(want, func(v float64) float64 { return quantize(v, dt) }), dt)
								}
							}
						}
					}
				}
			}
			// Full reductions return rank 0.
			x := randRef([]int{3, 4}, dt, ints(rng, -3, 3))
			flat := ref{[]int{12}, x.v}
			xt := layoutsFor(2)[4].view(dev, x, dt)
			checkEq(t, "sum all "+dt.String(), xt.Sum(), ref{nil, []float64{sumLane(flat.v)}}, dt)
			checkEq(t, "prod all "+dt.String(), xt.Narrow(0, 0, 1).Prod(), ref{nil, []float64{prodLane(x.v[:4])}}, dt)
			checkEq(t, "max all "+dt.String(), xt.Max(), ref{nil, []float64{slices.Max(x.v)}}, dt)
			checkEq(t, "min all "+dt.String(), xt.Min(), ref{nil, []float64{slices.Min(x.v)}}, dt)
			checkEq(t, "sum empty "+dt.String(), mk(dev, ref{[]int{0}, nil}, dt).Sum(), ref{nil, []float64{0}}, dt)
			checkEq(t, "prod empty "+dt.String(), mk(dev, ref{[]int{0, 2}, nil}, dt).ProdAxis(0, false), ref{[]int{2}, []float64{1, 1}}, dt)
		}
		// NaN propagates and the first NaN's index wins.
		nanRow := ref{[]int{2, 5}, []float64{1, math.NaN(), 3, math.NaN(), 0, 2, 5, 5, -1, -1}}
		for _, dt := range floatDTypes {
			xt := mk(dev, nanRow, dt)
			checkEq(t, "max NaN "+dt.String(), xt.MaxAxis(1, false), ref{[]int{2}, []float64{math.NaN(), 5}}, dt)
			checkEq(t, "min NaN "+dt.String(), xt.MinAxis(-1, true), ref{[]int{2, 1}, []float64{math.NaN(), -1}}, dt)
			checkEq(t, "argmax NaN/tie "+dt.String(), xt.Argmax(1, false), ref{[]int{2}, []float64{1, 1}}, I64)
			checkEq(t, "argmin NaN/tie "+dt.String(), xt.Argmin(1, false), ref{[]int{2}, []float64{1, 3}}, I64)
			checkEq(t, "max all NaN "+dt.String(), xt.Max(), ref{nil, []float64{math.NaN()}}, dt)
		}
		// Bool sums count as I64.
		b := randRef([]int{3, 4}, Bool, ints(rng, 0, 1))
		checkEq(t, "sum bool", mk(dev, b, Bool).SumAxis(1, false), reduceRef(b, 1, false, sumLane), I64)
		checkEq(t, "sum bool all", mk(dev, b, Bool).Sum(), ref{nil, []float64{sumLane(b.v)}}, I64)
		expectPanic(t, "axis out of range", func() { mk(dev, b, Bool).SumAxis(2, false) }, "axis 2", "rank 2")
	})
}

func TestTableMeanVar(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(12)
		for _, dt := range floatDTypes {
			for _, shape := range [][]int{{6}, {3, 4}, {2, 3, 5}} {
				x := randRef(shape, dt, nonZero(rng, 0.2, 3))
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " " + shapeName(shape) + " " + l.name
					checkEq(t, "mean "+name, xt.Mean(), ref{nil, []float64{quantize(sumLane(x.v)/float64(len(x.v)), dt)}}, dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						for _, keep := range []bool{false, true} {
							n := float64(shape[pa])
							mean := reduceRef(x, pa, keep, func(l []float64) float64 { return sumLane(l) / n })
							check(t, "mean_axis "+name, xt.MeanAxis(a, keep), mean, dt, 1, reduceRef(x, pa, keep, func(l []float64) float64 { return absSumLane(l) / n }).v)
							for _, corr := range []int{0, 1, 2} {
								v := reduceRef(x, pa, keep, func(l []float64) float64 {
									m := sumLane(l) / n
									s := 0.0
									for _, e := range l {
										s += (e - m) * (e - m)
									}
									return s / max(0, n-float64(corr))
								})
								// Var composes four rounded ops: loosen 3x for half precision.
								check(t, "var "+name, xt.Var(a, corr, keep), v, dt, 3, nil)
								check(t, "std "+name, xt.Std(a, corr, keep), mapRef(v, math.Sqrt), dt, 3, nil)
							}
						}
					}
				}
			}
		}
	})
}
