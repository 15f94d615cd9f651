package ember

import "testing"

// convTransposeRef is the direct transposed convolution in float64 (the
// scatter form of its definition): every input element adds x·w at
// position i·stride − padding + k·dilation of the output, per group.
func convTransposeRef(x, w ref, stride, pad, dil, outPad []int, groups int) ref {
	sp := len(stride)
	n, cin := x.shape[0], x.shape[1]
	cog := w.shape[1]
	out := []int{n, cog * groups}
	for i := range sp {
		k := w.shape[2+i]
		out = append(out, (x.shape[2+i]-1)*stride[i]-2*pad[i]+dil[i]*(k-1)+outPad[i]+1)
	}
	res := ref{out, make([]float64, numel(out))}
	cig := cin / groups
	xi := make([]int, len(x.shape))
	for i := range x.v {
		unravelInto(i, x.shape, xi)
		g := xi[1] / cig
		kidx := make([]int, sp)
		var rec func(d int)
		rec = func(d int) {
			if d == sp {
				for oc := range cog {
					pos := []int{xi[0], g*cog + oc}
					for a := range sp {
						p := xi[2+a]*stride[a] - pad[a] + kidx[a]*dil[a]
						if p < 0 || p >= out[2+a] {
							return
						}
						pos = append(pos, p)
					}
					res.v[ravel(pos, out)] += x.v[i] * w.at(append([]int{xi[1], oc}, kidx...)...)
				}
				return
			}
			for k := range w.shape[2+d] {
				kidx[d] = k
				rec(d + 1)
			}
		}
		rec(0)
	}
	return res
}

// TestTableConvMore checks ConvTranspose1d, ConvTranspose3d (strides,
// paddings, dilations, output padding, groups) against the scatter
// definition, and Conv2dPadded ("same", asymmetric, every padding mode)
// against Conv2d of the explicitly padded input, on every device; and
// gradients.
func TestTableConvMore(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(197)
		for _, dt := range []DType{F32, F64} {
			x1 := randRef([]int{2, 4, 5}, dt, nonZero(rng, 0.25, 2))
			w1 := randRef([]int{4, 3, 3}, dt, nonZero(rng, 0.25, 2))
			want := convTransposeRef(x1, w1, []int{2}, []int{1}, []int{1}, []int{1}, 2)
			check(t, "conv_transpose1d "+dt.String(), mk(dev, x1, dt).ConvTranspose1d(mk(dev, w1, dt), nil, Conv1dOptions{Stride: 2, Padding: 1, Groups: 2}, 1), want, dt, 4, nil)
			for _, c := range []struct {
				s, p, d, op [3]int
				g           int
			}{{[3]int{1, 1, 1}, [3]int{0, 0, 0}, [3]int{1, 1, 1}, [3]int{}, 1}, {[3]int{2, 1, 2}, [3]int{1, 0, 1}, [3]int{1, 1, 1}, [3]int{1, 0, 1}, 2},
				{[3]int{1, 2, 1}, [3]int{2, 1, 0}, [3]int{2, 1, 1}, [3]int{0, 1, 0}, 1}} {
				x := randRef([]int{1, 4, 3, 4, 3}, dt, nonZero(rng, 0.25, 2))
				w := randRef([]int{4, 2, 2, 3, 2}, dt, nonZero(rng, 0.25, 2))
				b := randRef([]int{2 * c.g}, dt, nonZero(rng, 0.25, 2))
				want := convTransposeRef(x, w, c.s[:], c.p[:], c.d[:], c.op[:], c.g)
				want = build(want.shape, func(idx []int) float64 { return want.at(idx...) + b.v[idx[1]] })
				got := mk(dev, x, dt).ConvTranspose3d(mk(dev, w, dt), mk(dev, b, dt), Conv3dOptions{Stride: c.s, Padding: c.p, Dilation: c.d, Groups: c.g}, c.op)
				check(t, "conv_transpose3d "+dt.String()+" "+shapeName(append(c.s[:], c.p[:]...)), got, want, dt, 4, nil)
			}
			x := mk(dev, randRef([]int{1, 2, 6, 7}, dt, nonZero(rng, 0.25, 2)), dt)
			w := mk(dev, randRef([]int{3, 2, 3, 4}, dt, nonZero(rng, 0.25, 2)), dt)
			for _, mode := range []PaddingMode{PadZeros, PadReflect, PadReplicate, PadCircular} {
				same := x.Conv2dPadded(w, nil, ConvOptions{Dilation: [2]int{1, 2}}, ConvPadding{Same: true, Mode: mode})
				if s := same.Shape(); s[2] != 6 || s[3] != 7 {
					t.Errorf("same padding %v: shape %v, want [1 3 6 7]", mode, s)
				}
				ref := x.PadWithMode([]int{3, 3, 1, 1}, mode).Conv2d(w, nil, ConvOptions{Dilation: [2]int{1, 2}}) // W: 2·3 = 6, H: 2
				checkEq(t, "conv2d same "+mode.String()+" "+dt.String(), same, tensorRef(ref), dt)
				pads := [4]int{2, 0, 1, 3}
				asym := x.Conv2dPadded(w, nil, ConvOptions{Stride: [2]int{2, 1}}, ConvPadding{Pads: &pads, Mode: mode})
				ref = x.PadWithMode([]int{1, 3, 2, 0}, mode).Conv2d(w, nil, ConvOptions{Stride: [2]int{2, 1}})
				checkEq(t, "conv2d asymmetric "+mode.String()+" "+dt.String(), asym, tensorRef(ref), dt)
			}
			expectPanic(t, "same with stride 2", func() {
				x.Conv2dPadded(w, nil, ConvOptions{Stride: [2]int{2, 2}}, ConvPadding{Same: true})
			}, "conv2d", "stride 1")
		}
	})
	rng := newRNG(199)
	x := randRef([]int{1, 2, 2, 3, 2}, F64, nonZero(rng, 0.2, 2))
	w := randRef([]int{2, 1, 2, 2, 2}, F64, nonZero(rng, 0.2, 2))
	x2 := randRef([]int{1, 2, 4, 5}, F64, nonZero(rng, 0.2, 2))
	w2 := randRef([]int{2, 2, 3, 3}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{
		{name: "conv_transpose3d", ins: []ref{x, w}, f: func(xs []*Tensor) *Tensor {
			return xs[0].ConvTranspose3d(xs[1], nil, Conv3dOptions{Stride: [3]int{2, 1, 2}, Padding: [3]int{0, 1, 0}, Groups: 2}, [3]int{1, 0, 0})
		}},
		{name: "conv2d same reflect", ins: []ref{x2, w2}, f: func(xs []*Tensor) *Tensor {
			return xs[0].Conv2dPadded(xs[1], nil, ConvOptions{}, ConvPadding{Same: true, Mode: PadReflect})
		}},
	})
}

// tensorRef reads t (on any device) as a float64 ref.
func tensorRef(t *Tensor) ref { return ref{t.Shape(), t.Cast(F64).Float64s()} }
