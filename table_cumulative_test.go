package ember

import (
	"math"
	"testing"
)

// cumRef scans r along axis a sequentially in float64: products (prod),
// or running maxima/minima with PyTorch's cummax/cummin rule — take x
// when it is NaN or when the running value is not NaN and x >= (<=) it —
// returning the values and the indices where they were taken.
func cumRef(r ref, a int, kind string) (vals, idxs ref) {
	vals = ref{append([]int{}, r.shape...), make([]float64, len(r.v))}
	idxs = ref{append([]int{}, r.shape...), make([]float64, len(r.v))}
	st := stridesOf(r.shape)
	idx := make([]int, len(r.shape))
	for i := range r.v {
		unravelInto(i, r.shape, idx)
		v := r.v[i]
		if idx[a] == 0 {
			vals.v[i], idxs.v[i] = v, 0
			continue
		}
		prev, pi := vals.v[i-st[a]], idxs.v[i-st[a]]
		switch kind {
		case "prod":
			vals.v[i] = prev * v
		case "max", "min":
			better := v >= prev
			if kind == "min" {
				better = v <= prev
			}
			if math.IsNaN(v) || (!math.IsNaN(prev) && better) {
				vals.v[i], idxs.v[i] = v, float64(idx[a])
			} else {
				vals.v[i], idxs.v[i] = prev, pi
			}
		}
	}
	return vals, idxs
}

// TestTableCumulative checks CumProd, CumMax and CumMin on every device,
// dtype, layout and axis (negative too) against sequential float64 scans:
// products within the dtype's tolerance (relative to the product of |x|;
// halves twice that), ints exactly (values small enough not to wrap);
// running extremes and their indices exactly, on inputs with repeated
// values (ties take the later index) and, for floats, NaN (propagating
// with the index of the latest NaN).
func TestTableCumulative(t *testing.T) {
	shapes := [][]int{{7}, {1, 1}, {3, 5}, {2, 3, 4}, {2, 0, 3}, {1, 17}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(79)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			for _, shape := range shapes {
				x := randRef(shape, dt, ints(rng, -4, 4)) // ties and zeros
				px := randRef(shape, dt, ints(rng, -2, 2))
				if dt.IsFloat() {
					px = randRef(shape, dt, nonZero(rng, 0.5, 1.5))
					for i := range x.v {
						if rng.IntN(13) == 0 {
							x.v[i] = math.NaN()
						}
					}
				}
				for _, l := range layoutsFor(len(shape)) {
					xt, pt := l.view(dev, x, dt), l.view(dev, px, dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						name := dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(a)
						want, _ := cumRef(px, pa, "prod")
						abs, _ := cumRef(mapRef(px, math.Abs), pa, "prod")
						loosen := 1.0
						if dt == F16 || dt == BF16 {
							loosen = 2
						}
						check(t, "cumprod "+name, pt.CumProd(a), want, dt, loosen, abs.v)
						for _, kind := range []string{"max", "min"} {
							vals, idxs := cumRef(x, pa, kind)
							var gv, gi *Tensor
							if kind == "max" {
								gv, gi = xt.CumMax(a)
							} else {
								gv, gi = xt.CumMin(a)
							}
							checkEq(t, "cum"+kind+" values "+name, gv, vals, dt)
							checkEq(t, "cum"+kind+" indices "+name, gi, idxs, DType(dev.Settings().IntDType))
						}
					}
				}
			}
		}
		zeros := ref{[]int{5}, []float64{2, 0, 3, -1, 4}}
		checkEq(t, "cumprod through a zero", mk(dev, zeros, F32).CumProd(0), ref{[]int{5}, []float64{2, 0, 0, 0, 0}}, F32)
		b := ref{[]int{4}, []float64{0, 1, 0, 1}}
		checkEq(t, "cumprod of Bool", mk(dev, b, Bool).CumProd(0), ref{[]int{4}, []float64{0, 0, 0, 0}}, DType(dev.Settings().IntDType))
		bv, bi := mk(dev, b, Bool).CumMax(0)
		checkEq(t, "cummax of Bool", bv, ref{[]int{4}, []float64{0, 1, 1, 1}}, Bool)
		checkEq(t, "cummax of Bool indices", bi, ref{[]int{4}, []float64{0, 1, 1, 3}}, DType(dev.Settings().IntDType))
		v0, i0 := mk(dev, ref{nil, []float64{-2.5}}, F32).CumMin(0)
		checkEq(t, "cummin rank 0", v0, ref{nil, []float64{-2.5}}, F32)
		checkEq(t, "cummin rank 0 index", i0, ref{nil, []float64{0}}, DType(dev.Settings().IntDType))
		expectPanic(t, "cumprod axis out of range", func() { mk(dev, zeros, F32).CumProd(1) }, "cumprod", "axis 1")
	})
}

// TestGradCumulative checks the gradients of CumProd (with zeros in the
// input, where a division-based formula would fail) and of the CumMax and
// CumMin values against central differences.
func TestGradCumulative(t *testing.T) {
	rng := newRNG(83)
	x := randRef([]int{3, 5}, F64, nonZero(rng, 0.3, 1.5))
	z := randRef([]int{2, 6}, F64, nonZero(rng, 0.3, 1.5))
	z.v[2], z.v[9] = 0, 0
	runGradCases(t, []gradCase{
		{name: "cumprod", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.CumProd(1) })},
		{name: "cumprod axis 0", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.CumProd(0) })},
		{name: "cumprod with zeros", ins: []ref{z}, f: on1(func(x *Tensor) *Tensor { return x.CumProd(-1) })},
		{name: "cummax", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.CumMax(1); return v })},
		{name: "cummin", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.CumMin(0); return v })},
	})
}

// TestCumMaxTieGradient checks PyTorch's routing at ties by hand: cummax
// of [1, 3, 3, 2] takes the indices [0, 1, 2, 2], so the gradient of the
// sum is [1, 1, 2, 0].
func TestCumMaxTieGradient(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		x := FromFloats([]float32{1, 3, 3, 2}, []int{4}, dev.Autodiff()).RequireGrad()
		v, _ := x.CumMax(0)
		g := v.Sum().Backward().Of(x).Float32s()
		for i, want := range []float32{1, 1, 2, 0} {
			if g[i] != want {
				t.Fatalf("gradient %v, want [1 1 2 0]", g)
			}
		}
	})
}
