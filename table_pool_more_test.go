package ember

import (
	"math"
	"testing"
)

// poolNDRef pools x [N, C, spatial...] in float64 with per-axis kernel,
// stride, dilation, before/after padding and output size, as PyTorch's
// pooling kernels define it: max treats padding as -Inf and keeps the
// first maximum or first NaN (returning its flat spatial index); avg
// divides by the window's positions inside [-before, size+after) when
// include, else by its positions inside the input.
func poolNDRef(x ref, k, s, d, before, after, out []int, mode string) (vals, idxs ref) {
	sp := len(k)
	shape := append(append([]int{}, x.shape[:2]...), out...)
	vals = ref{shape, make([]float64, numel(shape))}
	idxs = ref{shape, make([]float64, numel(shape))}
	idx := make([]int, len(shape))
	for i := range vals.v {
		unravelInto(i, shape, idx)
		best, bestAt := math.Inf(-1), -1
		sum, count := 0.0, 0
		tap := make([]int, sp)
		var rec func(a int)
		rec = func(a int) {
			if a == sp {
				src := append([]int{}, idx[:2]...)
				inside, padded := true, true
				flat := 0
				for j := range sp {
					p := idx[2+j]*s[j] - before[j] + tap[j]*d[j]
					if p < 0 || p >= x.shape[2+j] {
						inside = false
					}
					if p < -before[j] || p >= x.shape[2+j]+after[j] {
						padded = false
					}
					src = append(src, p)
					flat = flat*x.shape[2+j] + p
				}
				v := math.Inf(-1)
				if inside {
					v = x.at(src...)
					sum += v
				}
				if (mode == "avg" && padded) || (mode == "avgx" && inside) {
					count++
				}
				if bestAt < 0 || (!math.IsNaN(best) && (math.IsNaN(v) || v > best)) {
					best, bestAt = v, flat
				}
				return
			}
			for t := range k[a] {
				tap[a] = t
				rec(a + 1)
			}
		}
		rec(0)
		if mode == "max" {
			vals.v[i], idxs.v[i] = best, float64(bestAt)
		} else {
			vals.v[i] = sum / float64(count)
		}
	}
	return vals, idxs
}

// TestTablePoolMore checks MaxPool2dWith and AvgPool2dWith (ceil mode,
// asymmetric padding, both divisors), MaxPool2dWithIndices and
// MaxUnpool2d, the 1-d and 3-d poolings on every device and float dtype
// against window loops in float64, and their gradients.
func TestTablePoolMore(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(179)
		x := randRef([]int{2, 2, 7, 8}, F64, nonZero(rng, 0.25, 3))
		x.v[5] = math.NaN()
		for _, dt := range []DType{F32, F64} {
			xt := mk(dev, x, dt)
			for _, c := range []struct {
				k, s, d [2]int
				pads    [4]int
				ceil    bool
			}{
				{[2]int{3, 2}, [2]int{2, 2}, [2]int{1, 1}, [4]int{1, 1, 1, 1}, true},
				{[2]int{2, 3}, [2]int{2, 2}, [2]int{1, 1}, [4]int{0, 1, 1, 0}, false},
				{[2]int{3, 3}, [2]int{2, 3}, [2]int{1, 1}, [4]int{1, 0, 0, 1}, true},
				{[2]int{2, 2}, [2]int{3, 3}, [2]int{2, 1}, [4]int{0, 0, 0, 0}, true},
			} {
				o := PoolOptions{Kernel: c.k, Stride: c.s, Dilation: c.d}
				pads := c.pads
				e := PoolExtras{CeilMode: c.ceil, Padding: &pads}
				out := make([]int, 2)
				for a := range 2 {
					in := x.shape[2+a] + c.pads[2*a] + c.pads[2*a+1]
					span := c.d[a]*(c.k[a]-1) + 1
					if c.ceil {
						out[a] = (in-span+c.s[a]-1)/c.s[a] + 1
						if (out[a]-1)*c.s[a] >= x.shape[2+a]+c.pads[2*a] {
							out[a]--
						}
					} else {
						out[a] = (in-span)/c.s[a] + 1
					}
				}
				before := []int{c.pads[0], c.pads[2]}
				after := []int{c.pads[1], c.pads[3]}
				name := dt.String() + " " + shapeName(c.k[:]) + " " + shapeName(c.pads[:])
				mv, _ := poolNDRef(x, c.k[:], c.s[:], c.d[:], before, after, out, "max")
				checkEq(t, "max_pool2d with "+name, xt.MaxPool2dWith(o, e), mapRef(mv, func(v float64) float64 { return quantize(v, dt) }), dt)
				av, _ := poolNDRef(x, c.k[:], c.s[:], c.d[:], before, after, out, "avg")
				check(t, "avg_pool2d with include "+name, xt.AvgPool2dWith(o, true, e), av, dt, 2, nil)
				ax, _ := poolNDRef(x, c.k[:], c.s[:], c.d[:], before, after, out, "avgx")
				check(t, "avg_pool2d with exclude "+name, xt.AvgPool2dWith(o, false, e), ax, dt, 2, nil)
			}
			o := PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}
			out := []int{(7+2-3)/2 + 1, (8+2-2)/2 + 1}
			mv, mi := poolNDRef(x, o.Kernel[:], o.Stride[:], []int{1, 1}, o.Padding[:], o.Padding[:], out, "max")
			v, i := xt.MaxPool2dWithIndices(o)
			checkEq(t, "max_pool2d with indices "+dt.String(), v, mapRef(mv, func(v float64) float64 { return quantize(v, dt) }), dt)
			checkEq(t, "max_pool2d indices "+dt.String(), i, mi, I64)
			// Unpool with non-overlapping windows: each value at its index.
			o2 := PoolOptions{Kernel: [2]int{2, 2}}
			v2, i2 := xt.MaxPool2dWithIndices(o2)
			want := ref{[]int{2, 2, 7, 8}, make([]float64, 2*2*7*8)}
			vd, id := v2.Float64s(), i2.Int64s()
			for j := range vd {
				plane := j / (3 * 4)
				want.v[plane*56+int(id[j])] = vd[j]
			}
			checkEq(t, "max_unpool2d "+dt.String(), v2.MaxUnpool2d(i2, o2, [2]int{7, 8}), want, dt)
			if got := v2.MaxUnpool2d(i2, o2, [2]int{}).Shape(); got[2] != 6 || got[3] != 8 {
				t.Errorf("max_unpool2d default size: %v, want [.. 6 8]", got)
			}

			l := randRef([]int{2, 3, 9}, F64, nonZero(rng, 0.25, 3))
			lt := mk(dev, l, dt)
			l4 := ref{[]int{2, 3, 1, 9}, l.v}
			m1, _ := poolNDRef(l4, []int{1, 3}, []int{1, 2}, []int{1, 2}, []int{0, 1}, []int{0, 1}, []int{1, (9+2-5)/2 + 1}, "max")
			checkEq(t, "max_pool1d "+dt.String(), lt.MaxPool1d(3, 2, 1, 2), ref{[]int{2, 3, m1.shape[3]}, mapRef(m1, func(v float64) float64 { return quantize(v, dt) }).v}, dt)
			a1, _ := poolNDRef(l4, []int{1, 4}, []int{1, 3}, []int{1, 1}, []int{0, 2}, []int{0, 2}, []int{1, (9+4-4)/3 + 1}, "avgx")
			check(t, "avg_pool1d "+dt.String(), lt.AvgPool1d(4, 3, 2, false), ref{[]int{2, 3, a1.shape[3]}, a1.v}, dt, 2, nil)

			v3 := randRef([]int{1, 2, 5, 6, 5}, F64, nonZero(rng, 0.25, 3))
			v3t := mk(dev, v3, dt)
			o3 := Pool3dOptions{Kernel: [3]int{2, 3, 2}, Stride: [3]int{2, 2, 1}, Padding: [3]int{1, 1, 0}, Dilation: [3]int{2, 1, 1}}
			out3 := make([]int, 3)
			for a := range 3 {
				out3[a] = (v3.shape[2+a]+2*o3.Padding[a]-o3.Dilation[a]*(o3.Kernel[a]-1)-1)/o3.Stride[a] + 1
			}
			m3, _ := poolNDRef(v3, o3.Kernel[:], o3.Stride[:], o3.Dilation[:], o3.Padding[:], o3.Padding[:], out3, "max")
			checkEq(t, "max_pool3d "+dt.String(), v3t.MaxPool3d(o3), mapRef(m3, func(v float64) float64 { return quantize(v, dt) }), dt)
			o3.Dilation = [3]int{1, 1, 1}
			for a := range 3 {
				out3[a] = (v3.shape[2+a]+2*o3.Padding[a]-(o3.Kernel[a]-1)-1)/o3.Stride[a] + 1
			}
			a3, _ := poolNDRef(v3, o3.Kernel[:], o3.Stride[:], o3.Dilation[:], o3.Padding[:], o3.Padding[:], out3, "avg")
			check(t, "avg_pool3d include "+dt.String(), v3t.AvgPool3d(o3, true), a3, dt, 2, nil)
			a3x, _ := poolNDRef(v3, o3.Kernel[:], o3.Stride[:], o3.Dilation[:], o3.Padding[:], o3.Padding[:], out3, "avgx")
			check(t, "avg_pool3d exclude "+dt.String(), v3t.AvgPool3d(o3, false), a3x, dt, 2, nil)
		}
	})
	rng := newRNG(181)
	x := randRef([]int{1, 2, 5, 6}, F64, nonZero(rng, 0.2, 2))
	x3 := randRef([]int{1, 1, 4, 4, 3}, F64, nonZero(rng, 0.2, 2))
	o := PoolOptions{Kernel: [2]int{3, 2}, Stride: [2]int{2, 2}}
	pads := [4]int{1, 0, 0, 1}
	runGradCases(t, []gradCase{
		{name: "max_pool2d ceil", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.MaxPool2dWith(o, PoolExtras{CeilMode: true, Padding: &pads}) })},
		{name: "avg_pool2d ceil", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor { return x.AvgPool2dWith(o, false, PoolExtras{CeilMode: true, Padding: &pads}) })},
		{name: "max_unpool2d", ins: []ref{x}, f: on1(func(x *Tensor) *Tensor {
			v, i := x.MaxPool2dWithIndices(PoolOptions{Kernel: [2]int{2, 2}})
			return v.MaxUnpool2d(i, PoolOptions{Kernel: [2]int{2, 2}}, [2]int{5, 6})
		})},
		{name: "avg_pool3d", ins: []ref{x3}, f: on1(func(x *Tensor) *Tensor {
			return x.AvgPool3d(Pool3dOptions{Kernel: [3]int{2, 2, 2}, Stride: [3]int{1, 2, 1}, Padding: [3]int{1, 1, 0}}, false)
		})},
		{name: "max_pool3d", ins: []ref{x3}, f: on1(func(x *Tensor) *Tensor { return x.MaxPool3d(Pool3dOptions{Kernel: [3]int{2, 2, 2}}) })},
	})
}
