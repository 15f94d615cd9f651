package ndarray

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refMatmul is the broadcast batched product by the triple loop in
// float64 (or exactly in big.Int for exact, with the result wrapped to
// dt).
func refMatmul(a, b []float64, as, bs, out []int) []float64 {
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	res := make([]float64, numel(out))
	batch := out[:len(out)-2]
	for bi := range numel(batch) {
		idx := unflat(batch, bi)
		pa, pb := bcastPos(as[:len(as)-2], idx), bcastPos(bs[:len(bs)-2], idx)
		for i := range m {
			for j := range n {
				s := 0.0
				for p := range k {
					s += a[pa*m*k+i*k+p] * b[pb*k*n+p*n+j]
				}
				res[bi*m*n+i*n+j] = s
			}
		}
	}
	return res
}

func TestMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	shapes := [][3][]int{
		{{3, 4}, {4, 5}, {3, 5}},
		{{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},
		{{3, 0}, {0, 2}, {3, 2}},
		{{0, 3}, {3, 2}, {0, 2}},
	}
	for _, dt := range floatDTypes {
		for _, s := range shapes {
			a, b := randVals(rng, numel(s[0]), 0.5, 2, dt), randVals(rng, numel(s[1]), 0.5, 2, dt)
			got := run(t, ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{mk(dt, s[0], a), mk(dt, s[1], b)}})
			if !slices.Equal(got.Shape(), s[2]) {
				t.Fatalf("%v %v x %v: shape %v, want %v", dt, s[0], s[1], got.Shape(), s[2])
			}
			for i, v := range vals(t, got) {
				if w := quant(refMatmul(a, b, s[0], s[1], s[2])[i], dt); !near(v, w, dt) {
					t.Errorf("%v %v x %v: element %d = %v, want %v", dt, s[0], s[1], i, v, w)
				}
			}
		}
	}
	// Integers wrap.
	rng2 := rand.New(rand.NewPCG(25, 26))
	for _, dt := range []backend.DType{backend.I8, backend.U16, backend.I64} {
		lo, hi := intRange(dt)
		a, b := randInts(rng2, 12, lo, hi, true), randInts(rng2, 8, lo, hi, true)
		at, bt := mkI(dt, []int{3, 4}, a), mkI(dt, []int{4, 2}, b)
		a, b = ints(t, at), ints(t, bt)
		got := ints(t, run(t, ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{at, bt}}))
		for i := range 3 {
			for j := range 2 {
				s := new(big.Int)
				for p := range 4 {
					x, y := big.NewInt(a[i*4+p]), big.NewInt(b[p*2+j])
					if !dt.IsSigned() {
						x.SetUint64(uint64(a[i*4+p]))
						y.SetUint64(uint64(b[p*2+j]))
					}
					s.Add(s, x.Mul(x, y))
				}
				if w := wrap(s, dt); got[i*2+j] != w {
					t.Errorf("%v matmul [%d, %d] = %d, want %d", dt, i, j, got[i*2+j], w)
				}
			}
		}
	}
}

// refConv is the direct convolution (transpose false) or its adjoint,
// PyTorch's definitions, in float64.
func refConv(x []float64, xs []int, w []float64, ws []int, o ir.ConvOptions, os []int, transpose bool) []float64 {
	out := make([]float64, numel(os))
	g := o.Groups
	cin := xs[1] / g
	cout := os[1] / g
	for n := range xs[0] {
		for ci := range xs[1] {
			grp := ci / cin
			for co := grp * cout; co < (grp+1)*cout; co++ {
				for ky := range ws[2] {
					for kx := range ws[3] {
						var wv float64
						if transpose {
							wv = w[flat(ws, []int{ci, co - grp*cout, ky, kx})]
						} else {
							wv = w[flat(ws, []int{co, ci - grp*cin, ky, kx})]
						}
						if transpose {
							for iy := range xs[2] {
								for ix := range xs[3] {
									oy, ox := iy*o.Stride[0]-o.Padding[0]+ky*o.Dilation[0], ix*o.Stride[1]-o.Padding[1]+kx*o.Dilation[1]
									if oy >= 0 && oy < os[2] && ox >= 0 && ox < os[3] {
										out[flat(os, []int{n, co, oy, ox})] += wv * x[flat(xs, []int{n, ci, iy, ix})]
									}
								}
							}
							continue
						}
						for oy := range os[2] {
							for ox := range os[3] {
								iy, ix := oy*o.Stride[0]-o.Padding[0]+ky*o.Dilation[0], ox*o.Stride[1]-o.Padding[1]+kx*o.Dilation[1]
								if iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3] {
									out[flat(os, []int{n, co, oy, ox})] += wv * x[flat(xs, []int{n, ci, iy, ix})]
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func TestConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	cases := []struct {
		xs, ws    []int
		o         ir.ConvOptions
		transpose bool
	}{
		{[]int{2, 3, 7, 6}, []int{4, 3, 3, 2}, ir.ConvOptions{}, false},
		{[]int{1, 4, 9, 8}, []int{6, 2, 3, 3}, ir.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}, Groups: 2}, false},
		{[]int{1, 2, 1, 1}, []int{3, 2, 3, 3}, ir.ConvOptions{Padding: [2]int{1, 1}}, false},
		{[]int{2, 4, 4, 5}, []int{4, 3, 3, 2}, ir.ConvOptions{}, true},
		{[]int{1, 4, 3, 4}, []int{4, 2, 3, 3}, ir.ConvOptions{Stride: [2]int{2, 3}, Padding: [2]int{1, 0}, Dilation: [2]int{2, 1}, Groups: 2, OutputPadding: [2]int{1, 2}}, true},
	}
	for _, dt := range floatDTypes {
		for _, c := range cases {
			o := c.o.WithDefaults()
			x, w := randVals(rng, numel(c.xs), 0.5, 2, dt), randVals(rng, numel(c.ws), 0.5, 2, dt)
			kind := ir.KindConv2d
			if c.transpose {
				kind = ir.KindConvTranspose2d
			}
			got := run(t, ir.Op{Kind: kind, Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{mk(dt, c.xs, x), mk(dt, c.ws, w)}})
			want := refConv(x, c.xs, w, c.ws, o, got.Shape(), c.transpose)
			name := fmt.Sprintf("%v %v x %v %+v transpose=%v", dt, c.xs, c.ws, o, c.transpose)
			sp := ir.ConvOutputSize([2]int{c.xs[2], c.xs[3]}, [2]int{c.ws[2], c.ws[3]}, o, c.transpose)
			if s := got.Shape(); s[2] != sp[0] || s[3] != sp[1] {
				t.Fatalf("%s: shape %v", name, s)
			}
			for i, v := range vals(t, got) {
				if w := quant(want[i], dt); !near(v, w, dt) {
					t.Errorf("%s: element %d = %v, want %v", name, i, v, w)
					break
				}
			}
		}
	}
}
