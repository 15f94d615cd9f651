package ember

import "testing"

// convNDRef is the direct N-d cross-correlation in float64 (spatial
// rank sp = 1 or 3), the definition PyTorch's conv1d/conv3d implement.
func convNDRef(x, w ref, b []float64, stride, pad, dil []int, groups int) ref {
	sp := len(stride)
	n, cin, cout := x.shape[0], x.shape[1], w.shape[0]
	out := []int{n, cout}
	for i := range sp {
		k := w.shape[2+i]
		out = append(out, (x.shape[2+i]+2*pad[i]-dil[i]*(k-1)-1)/stride[i]+1)
	}
	cg, og := cin/groups, cout/groups
	return build(out, func(idx []int) float64 {
		s, o := idx[0], idx[1]
		g := o / og
		acc := 0.0
		if b != nil {
			acc = b[o]
		}
		kidx := make([]int, sp)
		var rec func(d int)
		rec = func(d int) {
			if d == sp {
				for ci := range cg {
					xi := []int{s, g*cg + ci}
					for i := range sp {
						p := idx[2+i]*stride[i] - pad[i] + kidx[i]*dil[i]
						if p < 0 || p >= x.shape[2+i] {
							return
						}
						xi = append(xi, p)
					}
					wi := append([]int{o, ci}, kidx...)
					acc += x.at(xi...) * w.at(wi...)
				}
				return
			}
			for k := range w.shape[2+d] {
				kidx[d] = k
				rec(d + 1)
			}
		}
		rec(0)
		return acc
	})
}

// TestTableConv1d3d checks Conv1d and Conv3d (strides, paddings,
// dilations, groups, bias) on every device in F32 and F64 against the
// direct float64 definition, and their gradients.
func TestTableConv1d3d(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(157)
		for _, dt := range []DType{F32, F64} {
			for _, c := range []struct{ s, p, d, g int }{{1, 0, 1, 1}, {2, 1, 1, 1}, {1, 2, 2, 2}, {3, 1, 1, 2}} {
				x := randRef([]int{2, 4, 9}, dt, nonZero(rng, 0.25, 2))
				w := randRef([]int{6, 4 / c.g, 3}, dt, nonZero(rng, 0.25, 2))
				b := randRef([]int{6}, dt, nonZero(rng, 0.25, 2))
				want := convNDRef(x, w, b.v, []int{c.s}, []int{c.p}, []int{c.d}, c.g)
				got := mk(dev, x, dt).Conv1d(mk(dev, w, dt), mk(dev, b, dt), Conv1dOptions{Stride: c.s, Padding: c.p, Dilation: c.d, Groups: c.g})
				check(t, "conv1d "+dt.String()+" "+shapeName([]int{c.s, c.p, c.d, c.g}), got, want, dt, 4, nil)
			}
			for _, c := range []struct {
				s, p, d [3]int
				g       int
			}{{[3]int{1, 1, 1}, [3]int{0, 0, 0}, [3]int{1, 1, 1}, 1}, {[3]int{2, 1, 2}, [3]int{1, 0, 1}, [3]int{1, 1, 1}, 1},
				{[3]int{1, 2, 1}, [3]int{2, 1, 0}, [3]int{2, 1, 1}, 2}} {
				x := randRef([]int{2, 4, 6, 5, 5}, dt, nonZero(rng, 0.25, 2))
				w := randRef([]int{4, 4 / c.g, 3, 2, 3}, dt, nonZero(rng, 0.25, 2))
				b := randRef([]int{4}, dt, nonZero(rng, 0.25, 2))
				want := convNDRef(x, w, b.v, c.s[:], c.p[:], c.d[:], c.g)
				got := mk(dev, x, dt).Conv3d(mk(dev, w, dt), mk(dev, b, dt), Conv3dOptions{Stride: c.s, Padding: c.p, Dilation: c.d, Groups: c.g})
				check(t, "conv3d "+dt.String()+" "+shapeName(append(append(c.s[:], c.p[:]...), c.d[:]...)), got, want, dt, 4, nil)
			}
		}
		expectPanic(t, "conv3d of a 4-d input", func() { Zeros([]int{1, 1, 2, 2}, dev).Conv3d(Zeros([]int{1, 1, 1, 1, 1}, dev), nil, Conv3dOptions{}) }, "conv3d", "[N, Cin, D, H, W]")
	})
	rng := newRNG(163)
	x1 := randRef([]int{1, 2, 6}, F64, nonZero(rng, 0.2, 2))
	w1 := randRef([]int{3, 2, 3}, F64, nonZero(rng, 0.2, 2))
	x3 := randRef([]int{1, 2, 4, 3, 3}, F64, nonZero(rng, 0.2, 2))
	w3 := randRef([]int{2, 2, 2, 2, 2}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{
		{name: "conv1d", ins: []ref{x1, w1}, f: func(xs []*Tensor) *Tensor { return xs[0].Conv1d(xs[1], nil, Conv1dOptions{Stride: 2, Padding: 1}) }},
		{name: "conv3d", ins: []ref{x3, w3}, f: func(xs []*Tensor) *Tensor {
			return xs[0].Conv3d(xs[1], nil, Conv3dOptions{Stride: [3]int{2, 1, 1}, Padding: [3]int{1, 1, 0}, Dilation: [3]int{1, 1, 1}})
		}},
	})
}
