package flex

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// refMatmul is the batched product in float64 with NumPy batch broadcasting.
func refMatmul(a, b ref) ref {
	ra, rb := len(a.shape), len(b.shape)
	m, k, n := a.shape[ra-2], a.shape[ra-1], b.shape[rb-1]
	batch, pa, pb := broadcastRef(a.shape[:ra-2], b.shape[:rb-2])
	shape := append(append([]int{}, batch...), m, n)
	out := ref{shape: shape, v: make([]float64, size(shape))}
	for bi := range pa {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += a.v[(pa[bi]*m+i)*k+p] * b.v[(pb[bi]*k+p)*n+j]
				}
				out.v[(bi*m+i)*n+j] = s
			}
		}
	}
	return out
}

func TestMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	cases := [][2][]int{
		{{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 2}}, {{2, 1, 3, 4}, {3, 4, 5}}, {{1, 4}, {4, 1}},
		{{3, 0}, {0, 2}}, {{0, 3}, {3, 2}}, {{2, 3}, {2, 3, 1}}, {{37, 70}, {70, 129}},
	}
	dts := []backend.DType{backend.F32, backend.F64, backend.Flex32, backend.F16, backend.BF16, backend.I32, backend.I8, backend.U8, backend.I64, backend.Bool}
	for _, dt := range dts {
		for _, c := range cases {
			a, b := randRef(rng, c[0], dt), randRef(rng, c[1], dt)
			want := refMatmul(read(t, mk(a, dt)), read(t, mk(b, dt)))
			switch {
			case dt == backend.Bool:
				want = mapRef(want, func(v float64) float64 { return refCast(v, backend.F64, backend.Bool) })
			case dt.IsInt():
				want = mapRef(want, func(v float64) float64 { return wrapTo(v, dt) })
			}
			for li, l := range layouts {
				if size(c[0])*size(c[1]) > 10000 && li > 1 {
					continue
				}
				x, y := l.make(a, dt), layouts[(li+1)%len(layouts)].make(b, dt)
				var got ir.Tensor
				if dt == backend.Bool { // ir rejects it; the kernel is the or-of-ands
					got = execRaw(ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{x, y}}, want.shape, dt)
				} else {
					got = ir.Matmul(tb, x, y)
				}
				check(t, fmt.Sprintf("matmul %v %v x %v %s", dt, c[0], c[1], l.name), got, want, dt)
			}
		}
	}
	// an expanded (stride-0) batch operand is read in place
	a := randRef(rng, []int{1, 3, 4}, backend.F32)
	b := randRef(rng, []int{5, 4, 2}, backend.F32)
	x := ir.Expand(tb, mk(a, backend.F32), []int{5, 3, 4})
	check(t, "matmul expanded batch", ir.Matmul(tb, x, mk(b, backend.F32)), refMatmul(read(t, mk(a, backend.F32)), read(t, mk(b, backend.F32))), backend.F32)
}

// refConv is the direct float64 formula of PyTorch's conv2d, or of
// conv_transpose2d (scattering each input element) when transpose.
func refConv(x, w ref, o backend.ConvOptions, transpose bool) ref {
	n, cin, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	kh, kw := w.shape[2], w.shape[3]
	g := o.Groups
	var cout, ho, wo int
	if transpose {
		cout = w.shape[1] * g
		ho = (h-1)*o.Stride[0] - 2*o.Padding[0] + o.Dilation[0]*(kh-1) + o.OutputPadding[0] + 1
		wo = (wd-1)*o.Stride[1] - 2*o.Padding[1] + o.Dilation[1]*(kw-1) + o.OutputPadding[1] + 1
	} else {
		cout = w.shape[0]
		ho = (h+2*o.Padding[0]-o.Dilation[0]*(kh-1)-1)/o.Stride[0] + 1
		wo = (wd+2*o.Padding[1]-o.Dilation[1]*(kw-1)-1)/o.Stride[1] + 1
	}
	out := ref{shape: []int{n, cout, ho, wo}, v: make([]float64, n*cout*ho*wo)}
	cinG, coutG := cin/g, cout/g
	for b := 0; b < n; b++ {
		for ci := 0; ci < cin; ci++ {
			grp := ci / cinG
			for cg := 0; cg < coutG; cg++ {
				co := grp*coutG + cg
				for ky := 0; ky < kh; ky++ {
					for kx := 0; kx < kw; kx++ {
						var wv float64
						if transpose {
							wv = w.v[flat(w.shape, []int{ci, cg, ky, kx})]
						} else {
							wv = w.v[flat(w.shape, []int{co, ci - grp*cinG, ky, kx})]
						}
						for oy := 0; oy < ho; oy++ {
							for ox := 0; ox < wo; ox++ {
								var iy, ix int
								if transpose {
									// out[oy] gets x[iy] when oy = iy*s - p + ky*d
									ny, nx := oy+o.Padding[0]-ky*o.Dilation[0], ox+o.Padding[1]-kx*o.Dilation[1]
									if ny%o.Stride[0] != 0 || nx%o.Stride[1] != 0 || ny < 0 || nx < 0 {
										continue
									}
									iy, ix = ny/o.Stride[0], nx/o.Stride[1]
								} else {
									iy, ix = oy*o.Stride[0]-o.Padding[0]+ky*o.Dilation[0], ox*o.Stride[1]-o.Padding[1]+kx*o.Dilation[1]
								}
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								out.v[flat(out.shape, []int{b, co, oy, ox})] += wv * x.v[flat(x.shape, []int{b, ci, iy, ix})]
							}
						}
					}
				}
			}
		}
	}
	return out
}

func TestConv2d(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	opts := []backend.ConvOptions{
		{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1},
		{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1},
		{Stride: [2]int{1, 1}, Padding: [2]int{2, 1}, Dilation: [2]int{2, 1}, Groups: 2},
		{Stride: [2]int{2, 1}, Padding: [2]int{0, 1}, Dilation: [2]int{1, 2}, Groups: 1, OutputPadding: [2]int{1, 0}},
	}
	dts := []backend.DType{backend.F32, backend.F64, backend.Flex32, backend.F16, backend.BF16, backend.I32, backend.I64}
	for _, dt := range dts {
		for oi, o := range opts {
			for _, transpose := range []bool{false, true} {
				if !transpose && o.OutputPadding != [2]int{} {
					o.OutputPadding = [2]int{}
				}
				x := randRef(rng, []int{2, 4, 5, 6}, dt)
				ws := []int{6, 4 / o.Groups, 3, 2}
				if transpose {
					ws = []int{4, 6 / o.Groups, 3, 2}
				}
				w := randRef(rng, ws, dt)
				want := refConv(read(t, mk(x, dt)), read(t, mk(w, dt)), o, transpose)
				for li, l := range layouts {
					xt, wt := l.make(x, dt), layouts[(li+1)%len(layouts)].make(w, dt)
					what := fmt.Sprintf("conv %v opts %d transpose %v %s", dt, oi, transpose, l.name)
					var got backend.Tensor
					kind := ir.KindConv2d
					if transpose {
						kind = ir.KindConvTranspose2d
					}
					cop := ir.Op{Kind: kind, Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{xt, wt}}
					if dt.IsInt() { // ir rejects it; the kernel wraps
						got = execRaw(cop, want.shape, dt)
					} else {
						got = ir.Apply(tb, cop)
					}
					check(t, what, got, want, dt)
				}
			}
		}
	}
}
