package ember

import (
	"math"
	"sort"
	"testing"
)

// sortRef sorts r along axis a on the host with sort.SliceStable and
// PyTorch's order (NaN after numbers ascending, before them descending),
// returning the values and the original indices.
func sortRef(r ref, a int, desc bool) (vals, idxs ref) {
	vals = ref{append([]int{}, r.shape...), make([]float64, len(r.v))}
	idxs = ref{append([]int{}, r.shape...), make([]float64, len(r.v))}
	n := r.shape[a]
	st := stridesOf(r.shape)
	idx := make([]int, len(r.shape))
	for i := range r.v {
		unravelInto(i, r.shape, idx)
		if idx[a] != 0 {
			continue
		}
		order := make([]int, n)
		for k := range order {
			order[k] = k
		}
		at := func(k int) float64 { return r.v[i+k*st[a]] }
		sort.SliceStable(order, func(p, q int) bool {
			x, y := at(order[p]), at(order[q])
			xn, yn := math.IsNaN(x), math.IsNaN(y)
			if xn || yn {
				if desc {
					return xn && !yn
				}
				return !xn && yn
			}
			if desc {
				return x > y
			}
			return x < y
		})
		for k, o := range order {
			vals.v[i+k*st[a]] = at(o)
			idxs.v[i+k*st[a]] = float64(o)
		}
	}
	return vals, idxs
}

// TestTableSort checks Sort, Argsort and TopK on every device, dtype,
// layout and axis (negative too), both directions, on inputs with many
// ties, NaN and ±0, against a stable host sort; sizes that are not powers
// of two; and MaxWithIndices, MinWithIndices, Kthvalue and Median.
func TestTableSort(t *testing.T) {
	shapes := [][]int{{7}, {1, 1}, {3, 5}, {2, 3, 4}, {2, 0, 3}, {1, 17}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(167)
		for _, dt := range append(append([]DType{}, floatDTypes...), I64, I32, Bool) {
			for _, shape := range shapes {
				x := randRef(shape, dt, ints(rng, -3, 3))
				switch {
				case dt == Bool:
					x = randRef(shape, dt, ints(rng, 0, 1))
				case dt.IsFloat():
					for i := range x.v {
						switch rng.IntN(9) {
						case 0:
							x.v[i] = math.NaN()
						case 1:
							x.v[i] = math.Copysign(0, -1)
						case 2:
							x.v[i] += 0.5
						}
					}
				}
				for li, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for a := -len(shape); a < len(shape); a++ {
						if li > 0 && a >= 0 {
							continue // other layouts: the negative axes only (each axis once)
						}
						pa := (a + len(shape)) % len(shape)
						for _, desc := range []bool{false, true} {
							name := dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(a) + map[bool]string{false: " asc", true: " desc"}[desc]
							wv, wi := sortRef(x, pa, desc)
							gv, gi := xt.Sort(a, desc)
							checkEq(t, "sort values "+name, gv, wv, dt)
							checkEq(t, "sort indices "+name, gi, wi, I64)
							n := shape[pa]
							for _, k := range []int{1, n / 2} {
								if k > n || li > 0 {
									continue
								}
								tv, ti := xt.TopK(k, a, desc)
								checkEq(t, "topk "+itoa(k)+" "+name, tv, narrowRef(wv, pa, 0, k, false), dt)
								checkEq(t, "topk indices "+itoa(k)+" "+name, ti, narrowRef(wi, pa, 0, k, false), I64)
							}
						}
						if shape[pa] == 0 || dt == Bool || li > 1 {
							continue
						}
						name := dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(a)
						wv, wi := sortRef(x, pa, false)
						n := shape[pa]
						k := 1 + rng.IntN(n)
						kv, ki := xt.Kthvalue(k, a, false)
						checkEq(t, "kthvalue "+name, kv, narrowRef(wv, pa, k-1, 1, true), dt)
						checkEq(t, "kthvalue indices "+name, ki, narrowRef(wi, pa, k-1, 1, true), I64)
						// Median: the lower median, or the first NaN of the row.
						medV := narrowRef(wv, pa, (n-1)/2, 1, false)
						medI := narrowRef(wi, pa, (n-1)/2, 1, false)
						idx := make([]int, len(shape))
						for i := range medV.v {
							unravelInto(i, medV.shape, idx)
							for j := range n {
								idx[pa] = j
								if v := x.at(idx...); math.IsNaN(v) {
									medV.v[i], medI.v[i] = v, float64(j)
									break
								}
							}
						}
						mv, mi := xt.Median(a, true)
						checkEq(t, "median "+name, mv, medV, dt)
						checkEq(t, "median indices "+name, mi, medI, I64)
						// Max/min with indices: the first extreme or first NaN.
						for _, isMax := range []bool{true, false} {
							ev := ref{medV.shape, make([]float64, len(medV.v))}
							ei := ref{medV.shape, make([]float64, len(medV.v))}
							for i := range ev.v {
								unravelInto(i, ev.shape, idx)
								best, at := 0.0, -1
								for j := range n {
									idx[pa] = j
									v := x.at(idx...)
									if at >= 0 && math.IsNaN(best) {
										break
									}
									if at < 0 || math.IsNaN(v) || (isMax && v > best) || (!isMax && v < best) {
										best, at = v, j
									}
								}
								ev.v[i], ei.v[i] = best, float64(at)
							}
							var gv, gi *Tensor
							if isMax {
								gv, gi = xt.MaxWithIndices(a, true)
							} else {
								gv, gi = xt.MinWithIndices(a, true)
							}
							checkEq(t, "max/min with indices "+name, gv, ev, dt)
							checkEq(t, "max/min with indices (indices) "+name, gi, ei, I64)
						}
					}
				}
			}
		}
		expectPanic(t, "topk k too large", func() { Zeros([]int{3}, dev).TopK(4, 0, true) }, "topk", "k 4")
		expectPanic(t, "kthvalue 0", func() { Zeros([]int{3}, dev).Kthvalue(0, 0, false) }, "kthvalue", "k 0")
	})
	rng := newRNG(173)
	x := randRef([]int{3, 6}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{
		{name: "sort", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.Sort(1, false); return v })},
		{name: "topk", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.TopK(2, 0, true); return v })},
		{name: "max with indices", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.MaxWithIndices(1, false); return v })},
		{name: "median", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { v, _ := x.Median(1, false); return v })},
	})
}
