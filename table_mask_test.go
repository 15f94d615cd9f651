package ember

import (
	"math"
	"testing"
)

// boolRef maps r through a predicate to 0/1 (the encoding of Bool refs).
func boolRef(r ref, f func(float64) bool) ref {
	return mapRef(r, func(v float64) float64 {
		if f(v) {
			return 1
		}
		return 0
	})
}

// specials returns a float ref of shape with random non-zero values and,
// at random places, NaN, +Inf, -Inf and -0.
func specials(rng interface{ IntN(int) int }, shape []int, gen func() float64) ref {
	r := randRef(shape, F64, gen)
	for i := range r.v {
		switch rng.IntN(8) {
		case 0:
			r.v[i] = math.NaN()
		case 1:
			r.v[i] = math.Inf(1)
		case 2:
			r.v[i] = math.Inf(-1)
		case 3:
			r.v[i] = math.Copysign(0, -1)
		}
	}
	return r
}

// TestTableFloatTests checks IsNaN, IsInf and IsFinite on every device,
// float dtype and layout against math.IsNaN/IsInf on the host values
// (which hold NaN, ±Inf and -0 at random places); on integer and Bool
// tensors IsNaN and IsInf are all false and IsFinite all true.
func TestTableFloatTests(t *testing.T) {
	shapes := [][]int{{9}, {1, 1}, {3, 5}, {2, 3, 4}, {2, 0, 3}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(41)
		for _, dt := range floatDTypes {
			for _, shape := range shapes {
				x := specials(rng, shape, nonZero(rng, 0.25, 3))
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " " + shapeName(shape) + " " + l.name
					checkEq(t, "isnan "+name, xt.IsNaN(), boolRef(x, math.IsNaN), Bool)
					checkEq(t, "isinf "+name, xt.IsInf(), boolRef(x, func(v float64) bool { return math.IsInf(v, 0) }), Bool)
					checkEq(t, "isfinite "+name, xt.IsFinite(), boolRef(x, func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }), Bool)
				}
			}
		}
		for _, dt := range append(append([]DType{}, intDTypes...), Bool) {
			x := randRef([]int{3, 4}, dt, ints(rng, -5, 5))
			if dt == Bool {
				x = randRef([]int{3, 4}, dt, ints(rng, 0, 1))
			}
			xt := mk(dev, x, dt)
			never := boolRef(x, func(float64) bool { return false })
			always := boolRef(x, func(float64) bool { return true })
			checkEq(t, "isnan "+dt.String(), xt.IsNaN(), never, Bool)
			checkEq(t, "isinf "+dt.String(), xt.IsInf(), never, Bool)
			checkEq(t, "isfinite "+dt.String(), xt.IsFinite(), always, Bool)
		}
	})
}

// anyAllRef reduces r along axis a (a < 0: over everything) to whether
// any (or all) elements are non-zero, NaN counting as non-zero.
func anyAllRef(r ref, a int, all, keepDim bool) ref {
	nz := func(v float64) bool { return v != 0 } // NaN != 0
	if a < 0 {
		acc := all
		for _, v := range r.v {
			if all {
				acc = acc && nz(v)
			} else {
				acc = acc || nz(v)
			}
		}
		return boolRef(ref{nil, []float64{0}}, func(float64) bool { return acc })
	}
	out := append([]int{}, r.shape...)
	out[a] = 1
	res := build(out, func(idx []int) float64 {
		acc := all
		j := append([]int{}, idx...)
		for k := range r.shape[a] {
			j[a] = k
			v := nz(r.at(j...))
			if all {
				acc = acc && v
			} else {
				acc = acc || v
			}
		}
		if acc {
			return 1
		}
		return 0
	})
	if !keepDim {
		res.shape = append(append([]int{}, out[:a]...), out[a+1:]...)
	}
	return res
}

// TestTableAnyAll checks Any, All, AnyAxis and AllAxis on every device,
// dtype, layout and axis (negative too, keepDim both ways) against host
// loops, on inputs with many zeros (and NaN for floats, which counts as
// non-zero); empty tensors give Any false and All true.
func TestTableAnyAll(t *testing.T) {
	shapes := [][]int{{6}, {1, 1}, {3, 4}, {2, 3, 2}, {2, 0, 3}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(43)
		for _, dt := range append(append(append([]DType{}, floatDTypes...), intDTypes...), Bool) {
			for _, shape := range shapes {
				hi := 2
				if dt == Bool {
					hi = 1
				}
				x := randRef(shape, dt, ints(rng, 0, hi)) // about half zeros
				if dt.IsFloat() {
					for i := range x.v {
						if rng.IntN(9) == 0 {
							x.v[i] = math.NaN()
						}
					}
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " " + shapeName(shape) + " " + l.name
					checkEq(t, "any "+name, xt.Any(), anyAllRef(x, -1, false, false), Bool)
					checkEq(t, "all "+name, xt.All(), anyAllRef(x, -1, true, false), Bool)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						for _, keep := range []bool{false, true} {
							what := name + " axis " + itoa(a)
							checkEq(t, "any_axis "+what, xt.AnyAxis(a, keep), anyAllRef(x, pa, false, keep), Bool)
							checkEq(t, "all_axis "+what, xt.AllAxis(a, keep), anyAllRef(x, pa, true, keep), Bool)
						}
					}
				}
			}
		}
		ones := mk(dev, ref{[]int{2, 2}, []float64{1, 2, 3, 4}}, F32)
		checkEq(t, "all of non-zeros", ones.All(), ref{nil, []float64{1}}, Bool)
		expectPanic(t, "any axis out of range", func() { ones.AnyAxis(2, false) }, "any", "axis 2")
	})
}

// triRef keeps r[..., i, j] where keep(j − i) and zeroes the rest.
func triRef(r ref, keep func(d int) bool) ref {
	n := len(r.shape)
	return build(r.shape, func(idx []int) float64 {
		if keep(idx[n-1] - idx[n-2]) {
			return r.at(idx...)
		}
		return 0
	})
}

// TestTableTriangles checks Tril and Triu (every device, dtype, layout,
// offsets from below the matrix to beyond it), TrilMask, TriuMask,
// DiagMask, Eye and Diag against host loops. Elements outside the kept
// triangle are exact zeros even where x holds NaN or Inf, as in PyTorch.
func TestTableTriangles(t *testing.T) {
	shapes := [][]int{{3, 4}, {4, 3}, {1, 1}, {2, 3, 3}, {0, 2}, {2, 0}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(47)
		for _, dt := range append(append(append([]DType{}, floatDTypes...), intDTypes...), Bool) {
			for _, shape := range shapes {
				var x ref
				switch {
				case dt == Bool:
					x = randRef(shape, dt, ints(rng, 0, 1))
				case dt.IsInt():
					x = randRef(shape, dt, ints(rng, -9, 9))
				default:
					x = specials(rng, shape, nonZero(rng, 0.25, 3))
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for _, k := range []int{-5, -1, 0, 1, 2, 5} {
						name := dt.String() + " " + shapeName(shape) + " " + l.name + " diagonal " + itoa(k)
						checkEq(t, "tril "+name, xt.Tril(k), triRef(x, func(d int) bool { return d <= k }), dt)
						checkEq(t, "triu "+name, xt.Triu(k), triRef(x, func(d int) bool { return d >= k }), dt)
					}
				}
			}
		}
		for _, shape := range [][]int{{3, 3}, {2, 4}, {2, 3, 2}, {0, 3}} {
			for _, k := range []int{-2, 0, 1, 4} {
				n := len(shape)
				mask := func(f func(d int) bool) ref {
					return build(shape, func(idx []int) float64 {
						if f(idx[n-1] - idx[n-2]) {
							return 1
						}
						return 0
					})
				}
				name := shapeName(shape) + " offset " + itoa(k)
				checkEq(t, "tril_mask "+name, TrilMask(shape, k, dev), mask(func(d int) bool { return d > k }), Bool)
				checkEq(t, "triu_mask "+name, TriuMask(shape, k, dev), mask(func(d int) bool { return d < k }), Bool)
				checkEq(t, "diag_mask "+name, DiagMask(shape, k, dev), mask(func(d int) bool { return d != k }), Bool)
			}
		}
		// Burn's hand-worked tri_mask cases.
		checkEq(t, "burn triu_mask offset 1", TriuMask([]int{3, 3}, 1, dev),
			ref{[]int{3, 3}, []float64{1, 0, 0, 1, 1, 0, 1, 1, 1}}, Bool)
		checkEq(t, "burn diag_mask offset 1", DiagMask([]int{3, 3}, 1, dev),
			ref{[]int{3, 3}, []float64{1, 0, 1, 1, 1, 0, 1, 1, 1}}, Bool)
		for _, rc := range [][2]int{{3, 3}, {2, 4}, {4, 1}, {0, 2}} {
			want := build([]int{rc[0], rc[1]}, func(idx []int) float64 {
				if idx[0] == idx[1] {
					return 1
				}
				return 0
			})
			check(t, "eye "+shapeName(rc[:]), Eye(rc[0], rc[1], dev), want, DType(dev.Settings().FloatDType), 1, nil)
		}
		v := randRef([]int{4}, F32, nonZero(rng, 0.5, 2))
		for _, k := range []int{-2, 0, 3} {
			ak := k
			if ak < 0 {
				ak = -k
			}
			size := 4 + ak
			want := build([]int{size, size}, func(idx []int) float64 {
				i, j := idx[0], idx[1]
				if j-i != k {
					return 0
				}
				return v.v[min(i, j)]
			})
			check(t, "diag of a vector, diagonal "+itoa(k), mk(dev, v, F32).Diag(k), want, F32, 1, nil)
		}
		m := randRef([]int{3, 5}, F32, nonZero(rng, 0.5, 2))
		for _, l := range layoutsFor(2) {
			mt := l.view(dev, m, F32)
			for _, k := range []int{-3, -2, -1, 0, 1, 4, 5, 7} {
				var vals []float64
				for i := range 3 {
					if j := i + k; j >= 0 && j < 5 {
						vals = append(vals, m.at(i, j))
					}
				}
				check(t, "diag of a matrix "+l.name+" diagonal "+itoa(k), mt.Diag(k), ref{[]int{len(vals)}, vals}, F32, 1, nil)
			}
		}
		expectPanic(t, "tril of a vector", func() { mk(dev, v, F32).Tril(0) }, "tril", "rank >= 2")
		expectPanic(t, "diag of rank 3", func() { Zeros([]int{1, 2, 3}, dev).Diag(0) }, "diag", "rank 1 or 2")
		expectPanic(t, "mask of rank 1", func() { TrilMask([]int{3}, 0, dev) }, "tril_mask", "rank >= 2")
		expectPanic(t, "eye of a negative size", func() { Eye(-1, 2, dev) }, "eye", "non-negative")
	})
}

// TestGradTriangles checks the gradients of Tril, Triu and Diag (both
// directions) against central differences.
func TestGradTriangles(t *testing.T) {
	rng := newRNG(53)
	m := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	b := randRef([]int{2, 3, 3}, F64, nonZero(rng, 0.2, 2))
	v := randRef([]int{3}, F64, nonZero(rng, 0.2, 2))
	un := func(name string, in ref, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{in}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		un("tril", m, func(x *Tensor) *Tensor { return x.Tril(0) }),
		un("tril -1 batched", b, func(x *Tensor) *Tensor { return x.Tril(-1) }),
		un("triu 1", m, func(x *Tensor) *Tensor { return x.Triu(1) }),
		un("diag of a matrix", m, func(x *Tensor) *Tensor { return x.Diag(1) }),
		un("diag of a vector", v, func(x *Tensor) *Tensor { return x.Diag(-1) }),
	})
}
