package ember

import (
	"math"
	"testing"
)

// matmulRef multiplies with NumPy's matmul rules (rank-1 operands promoted
// and their axis removed, batch axes broadcast); it also returns the sum of
// |terms| per element, the scale rounding errors are relative to.
func matmulRef(a, b ref) (ref, []float64) {
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	batch, _ := BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	ab, bb := ref{as[:len(as)-2], nil}, ref{bs[:len(bs)-2], nil}
	outShape := append(append([]int{}, batch...), m, n)
	var scale []float64
	out := build(outShape, func(idx []int) float64 {
		bi := idx[:len(batch)]
		// Flat batch offsets of each operand under broadcasting.
		ao, bo := 0, 0
		if len(ab.shape) > 0 {
			ao = ravelBcast(bi, ab.shape)
		}
		if len(bb.shape) > 0 {
			bo = ravelBcast(bi, bb.shape)
		}
		i, j := idx[len(batch)], idx[len(batch)+1]
		s, sa := 0.0, 0.0
		for p := range k {
			v := a.v[ao*m*k+i*k+p] * b.v[bo*k*n+p*n+j]
			s += v
			sa += math.Abs(v)
		}
		scale = append(scale, sa)
		return s
	})
	if len(a.shape) == 1 {
		out.shape = append(out.shape[:len(out.shape)-2:len(out.shape)-2], out.shape[len(out.shape)-1])
	}
	if len(b.shape) == 1 {
		out.shape = out.shape[:len(out.shape)-1]
	}
	return out, scale
}

// ravelBcast is the flat index into shape of the broadcast index idx.
func ravelBcast(idx, shape []int) int {
	off := len(idx) - len(shape)
	f := 0
	for a, s := range shape {
		i := idx[off+a]
		if s == 1 {
			i = 0
		}
		f = f*s + i
	}
	return f
}

func TestTableMatmul(t *testing.T) {
	pairs := [][2][]int{
		{{3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {4, 5}}, {{3, 4}, {4}},
		{{4}, {4}}, {{2, 3, 4}, {4}}, {{1, 4}, {4, 1}}, {{0, 4}, {4, 3}}, {{3, 0}, {0, 2}}, {{33, 70}, {70, 41}},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(31)
		for _, dt := range append(append([]DType{}, floatDTypes...), intDTypes...) {
			gen := nonZero(rng, 0.1, 2)
			if !dt.IsFloat() {
				gen = ints(rng, -5, 5)
			}
			for _, p := range pairs {
				a, b := randRef(p[0], dt, gen), randRef(p[1], dt, gen)
				want, scale := matmulRef(a, b)
				for _, l := range layoutsFor(len(p[0])) {
					name := "matmul " + dt.String() + " " + shapeName(p[0]) + "x" + shapeName(p[1]) + " " + l.name
					lb := layoutsFor(len(p[1]))
					got := l.view(dev, a, dt).Matmul(lb[len(lb)-1].view(dev, b, dt))
					check(t, name, got, want, dt, 1, scale)
				}
			}
		}
		// A larger product through the blocked kernel.
		a := randRef([]int{2, 96, 130}, F32, nonZero(rng, 0.1, 1))
		b := randRef([]int{130, 72}, F32, nonZero(rng, 0.1, 1))
		want, scale := matmulRef(a, b)
		check(t, "matmul large f32", mk(dev, a, F32).Matmul(mk(dev, b, F32)), want, F32, 1, scale)
		expectPanic(t, "matmul inner", func() { Zeros([]int{2, 3}, dev).Matmul(Zeros([]int{4, 5}, dev)) }, "[2 3]", "[4 5]")
	})
}

// convRef is PyTorch's conv2d over plain loops (groups, stride, padding,
// dilation, optional bias), returning the result and the |terms| scale.
func convRef(x, w ref, bias []float64, o ConvOptions) (ref, []float64) {
	o = convDefaults(o)
	n, cin, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	cout, cpg, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	g := max(o.Groups, 1)
	ho := (h+2*o.Padding[0]-o.Dilation[0]*(kh-1)-1)/o.Stride[0] + 1
	wo := (wd+2*o.Padding[1]-o.Dilation[1]*(kw-1)-1)/o.Stride[1] + 1
	_ = cin
	var scale []float64
	out := build([]int{n, cout, ho, wo}, func(i []int) float64 {
		s, sa := 0.0, 0.0
		if bias != nil {
			s, sa = bias[i[1]], math.Abs(bias[i[1]])
		}
		grp := i[1] / (cout / g)
		for c := range cpg {
			for p := range kh {
				for q := range kw {
					y := i[2]*o.Stride[0] - o.Padding[0] + p*o.Dilation[0]
					z := i[3]*o.Stride[1] - o.Padding[1] + q*o.Dilation[1]
					if y < 0 || y >= h || z < 0 || z >= wd {
						continue
					}
					v := x.at(i[0], grp*cpg+c, y, z) * w.at(i[1], c, p, q)
					s += v
					sa += math.Abs(v)
				}
			}
		}
		scale = append(scale, sa)
		return s
	})
	return out, scale
}

// convDefaults replaces zero stride and dilation with 1.
func convDefaults(o ConvOptions) ConvOptions {
	for i := range 2 {
		o.Stride[i] = max(o.Stride[i], 1)
		o.Dilation[i] = max(o.Dilation[i], 1)
	}
	return o
}

// convTRef is PyTorch's conv_transpose2d: every input element scatters
// x·w into the output.
func convTRef(x, w ref, bias []float64, o ConvOptions) (ref, []float64) {
	o = convDefaults(o)
	n, cin, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	copg, kh, kw := w.shape[1], w.shape[2], w.shape[3]
	g := max(o.Groups, 1)
	cout := copg * g
	ho := (h-1)*o.Stride[0] - 2*o.Padding[0] + o.Dilation[0]*(kh-1) + o.OutputPadding[0] + 1
	wo := (wd-1)*o.Stride[1] - 2*o.Padding[1] + o.Dilation[1]*(kw-1) + o.OutputPadding[1] + 1
	out := ref{[]int{n, cout, ho, wo}, make([]float64, n*cout*ho*wo)}
	scale := make([]float64, len(out.v))
	for b := range n {
		for ci := range cin {
			grp := ci / (cin / g)
			for y := range h {
				for z := range wd {
					for co := range copg {
						for p := range kh {
							for q := range kw {
								oy := y*o.Stride[0] - o.Padding[0] + p*o.Dilation[0]
								oz := z*o.Stride[1] - o.Padding[1] + q*o.Dilation[1]
								if oy < 0 || oy >= ho || oz < 0 || oz >= wo {
									continue
								}
								f := ((b*cout+grp*copg+co)*ho+oy)*wo + oz
								v := x.at(b, ci, y, z) * w.at(ci, co, p, q)
								out.v[f] += v
								scale[f] += math.Abs(v)
							}
						}
					}
				}
			}
		}
	}
	if bias != nil {
		for f := range out.v {
			c := f / (ho * wo) % cout
			out.v[f] += bias[c]
			scale[f] += math.Abs(bias[c])
		}
	}
	return out, scale
}

func TestTableConv(t *testing.T) {
	type cfg struct {
		x, w []int
		o    ConvOptions
		bias bool
	}
	convs := []cfg{
		{[]int{2, 3, 7, 6}, []int{4, 3, 3, 3}, ConvOptions{}, false},
		{[]int{1, 2, 8, 9}, []int{3, 2, 3, 2}, ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}}, true},
		{[]int{1, 4, 5, 5}, []int{6, 2, 3, 2}, ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 2}, true},
		{[]int{2, 3, 4, 4}, []int{5, 3, 1, 1}, ConvOptions{}, true},
		{[]int{1, 1, 3, 3}, []int{1, 1, 3, 3}, ConvOptions{Padding: [2]int{2, 2}, Dilation: [2]int{2, 2}}, false},
		// 5×5 with 16 channels each way and 8 images: the cpu backend's
		// Winograd path in F32 (and F16/BF16 through float32)
		{[]int{8, 16, 8, 8}, []int{16, 16, 5, 5}, ConvOptions{Padding: [2]int{2, 2}}, true},
	}
	transposed := []cfg{
		{[]int{2, 3, 4, 5}, []int{3, 2, 3, 3}, ConvOptions{}, false},
		{[]int{1, 2, 3, 3}, []int{2, 3, 3, 2}, ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 0}, OutputPadding: [2]int{1, 1}}, true},
		{[]int{1, 6, 3, 4}, []int{6, 1, 2, 3}, ConvOptions{Stride: [2]int{2, 3}, Padding: [2]int{1, 0}, Dilation: [2]int{2, 1}, Groups: 3}, true},
		{[]int{8, 16, 6, 7}, []int{16, 16, 5, 5}, ConvOptions{Padding: [2]int{1, 0}}, true},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(32)
		for _, dt := range floatDTypes {
			gen := nonZero(rng, 0.1, 1)
			for ci, c := range append(convs, transposed...) {
				tr := ci >= len(convs)
				x, w := randRef(c.x, dt, gen), randRef(c.w, dt, gen)
				var bias []float64
				var bt *Tensor
				if c.bias {
					nb := c.w[0]
					if tr {
						nb = c.w[1] * max(c.o.Groups, 1)
					}
					br := randRef([]int{nb}, dt, gen)
					bias, bt = br.v, mk(dev, br, dt)
				}
				op, refFn := "conv2d", convRef
				if tr {
					op, refFn = "conv_transpose2d", convTRef
				}
				want, scale := refFn(x, w, bias, c.o)
				ls := layoutsFor(4)
				if ci > 0 {
					ls = ls[:1]
				}
				for _, l := range ls {
					xt, wt := l.view(dev, x, dt), mk(dev, w, dt)
					got := func() *Tensor {
						if tr {
							return xt.ConvTranspose2d(wt, bt, c.o)
						}
						return xt.Conv2d(wt, bt, c.o)
					}()
					check(t, op+" "+dt.String()+" "+shapeName(c.x)+" "+shapeName(c.w)+" "+l.name, got, want, dt, 1, scale)
				}
			}
		}
		// One larger case through the im2col path.
		x, w := randRef([]int{2, 16, 12, 12}, F32, nonZero(rng, 0.1, 1)), randRef([]int{24, 16, 3, 3}, F32, nonZero(rng, 0.1, 1))
		o := ConvOptions{Padding: [2]int{1, 1}}
		want, scale := convRef(x, w, nil, o)
		check(t, "conv2d large f32", mk(dev, x, F32).Conv2d(mk(dev, w, F32), nil, o), want, F32, 1, scale)
	})
}

// poolRef pools x [N, C, H, W] with PyTorch's floor formula: max treats
// padding as -Inf; avg divides by the window size or the count of real
// elements.
func poolRef(x ref, o PoolOptions, avg, includePad bool) ref {
	for i := range 2 {
		if o.Stride[i] == 0 {
			o.Stride[i] = o.Kernel[i]
		}
		if o.Dilation[i] == 0 {
			o.Dilation[i] = 1
		}
	}
	h, w := x.shape[2], x.shape[3]
	ho := (h+2*o.Padding[0]-o.Dilation[0]*(o.Kernel[0]-1)-1)/o.Stride[0] + 1
	wo := (w+2*o.Padding[1]-o.Dilation[1]*(o.Kernel[1]-1)-1)/o.Stride[1] + 1
	return build([]int{x.shape[0], x.shape[1], ho, wo}, func(i []int) float64 {
		best, sum, cnt := math.Inf(-1), 0.0, 0
		for p := range o.Kernel[0] {
			for q := range o.Kernel[1] {
				y := i[2]*o.Stride[0] - o.Padding[0] + p*o.Dilation[0]
				z := i[3]*o.Stride[1] - o.Padding[1] + q*o.Dilation[1]
				if y < 0 || y >= h || z < 0 || z >= w {
					continue
				}
				v := x.at(i[0], i[1], y, z)
				if v > best || math.IsNaN(v) {
					best = v
				}
				if math.IsNaN(best) {
					best = math.NaN()
				}
				sum += v
				cnt++
			}
		}
		if !avg {
			return best
		}
		if includePad {
			cnt = o.Kernel[0] * o.Kernel[1]
		}
		return sum / float64(cnt)
	})
}

func TestTablePool(t *testing.T) {
	opts := []PoolOptions{
		{Kernel: [2]int{2, 2}},
		{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}},
		{Kernel: [2]int{3, 2}, Stride: [2]int{1, 2}, Padding: [2]int{1, 0}, Dilation: [2]int{2, 1}},
		{Kernel: [2]int{1, 4}, Stride: [2]int{3, 1}},
	}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(33)
		for _, dt := range floatDTypes {
			x := randRef([]int{2, 3, 7, 8}, dt, nonZero(rng, 0.1, 3))
			x.v[5] = math.NaN()
			for _, o := range opts {
				name := dt.String() + " " + shapeName(o.Kernel[:]) + shapeName(o.Stride[:]) + shapeName(o.Padding[:]) + shapeName(o.Dilation[:])
				for _, l := range layoutsFor(4) {
					xt := l.view(dev, x, dt)
					checkEq(t, "max_pool2d "+name+" "+l.name, xt.MaxPool2d(o), poolRef(x, o, false, false), dt)
					for _, inc := range []bool{false, true} {
						check(t, "avg_pool2d "+name+" "+l.name, xt.AvgPool2d(o, inc), poolRef(x, o, true, inc), dt, 2, nil)
					}
				}
			}
			// Unbatched [C, H, W] input.
			u := randRef([]int{1, 2, 5, 6}, dt, nonZero(rng, 0.1, 3))
			o := PoolOptions{Kernel: [2]int{2, 3}, Padding: [2]int{1, 1}}
			want := poolRef(u, o, false, false)
			want.shape = want.shape[1:]
			checkEq(t, "max_pool2d unbatched "+dt.String(), mk(dev, ref{u.shape[1:], u.v}, dt).MaxPool2d(o), want, dt)
		}
		expectPanic(t, "pool padding", func() {
			Zeros([]int{1, 1, 4, 4}, dev).MaxPool2d(PoolOptions{Kernel: [2]int{2, 2}, Padding: [2]int{2, 0}})
		}, "padding")
		expectPanic(t, "pool rank", func() { Zeros([]int{4, 4}, dev).AvgPool2d(PoolOptions{Kernel: [2]int{2, 2}}, true) }, "[N, C, H, W]")
	})
}
