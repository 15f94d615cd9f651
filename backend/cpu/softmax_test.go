package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// u32 is 2^-24, half a float32 ulp at 1 (the unit roundoff).
const u32 = 0x1p-24

// u64 is 2^-53.
const u64 = 0x1p-53

// unit returns the unit roundoff of dt's storage.
func roundoff(dt backend.DType) float64 {
	if dt == backend.F64 {
		return u64
	}
	return u32
}

// ulp32 is the spacing of float32 values at |v| (2^-149 in the subnormal
// range).
func ulpOf32(v float64) float64 {
	a := float32(math.Abs(v))
	if a < 0x1p-126 {
		return 0x1p-149
	}
	if math.IsInf(float64(a), 0) {
		return math.Inf(1)
	}
	return float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
}

// sumUnit bounds the relative error of a float64 sum of n terms in any
// order (2n units of float64 roundoff, the kernels and the decompositions
// summing in different orders).
func sumRoundoff(n int) float64 { return 2 * float64(n) * u64 }

// TestExpF32Accuracy checks the vector exp of softmax_amd64.s (through
// expSum32, which runs it on all but a row's last len%8 elements) and its
// scalar form expF32 against math.Exp on 300000 points of [-104, 88.72],
// the subnormal results included: both within 1 ulp of the exact e^x
// (the ulp of the float32 result; 2^-149 below 2^-126), so within 1.5
// ulp of float32(math.Exp(x)). The edges are exact: NaN gives NaN, -Inf
// and x < -103.98 give 0, x > 88.73 and +Inf give +Inf, 0 gives 1.
func TestExpF32Accuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([]float32, 0, 300000)
	for len(xs) < cap(xs)/2 {
		xs = append(xs, float32(-104+192.72*float64(len(xs))/float64(cap(xs)/2)))
	}
	for len(xs) < cap(xs) {
		xs = append(xs, float32(-104+192.72*r.Float64()))
	}
	for _, avx := range []bool{true, false} {
		if avx && !rowVec {
			continue
		}
		o := make([]float32, len(xs))
		withAVX(avx, func() { expSum32(o, xs, 0) })
		worst := 0.0
		for i, x := range xs {
			want := math.Exp(float64(x))
			for name, got := range map[string]float32{"vector": o[i], "expF32": expF32(x)} {
				e := math.Abs(float64(got)-want) / ulpOf32(want)
				if e > 1 {
					t.Fatalf("avx=%v %s: e^%v = %v, want %v (%.3f ulp)", avx, name, x, got, want, e)
				}
				worst = max(worst, e)
			}
		}
		t.Logf("avx=%v: worst error %.3f ulp", avx, worst)
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	edges := []float32{nan, -inf, -200, -104, -103.99, 0, 88.73, 100, inf, -0.0, 1, -1, 88.72, -87.5, -100, 2}
	wants := []float32{nan, 0, 0, 0, 0, 1, inf, inf, inf, 1}
	o := make([]float32, len(edges))
	expSum32(o, edges, 0)
	for i, want := range wants {
		for _, got := range []float32{o[i], expF32(edges[i])} {
			if math.Float32bits(got) != math.Float32bits(want) && !(want != want && got != got) {
				t.Errorf("e^%v = %v, want %v", edges[i], got, want)
			}
		}
	}
}

// withAVX runs f with the AVX2 row kernels on (where the machine has
// them) or off (the portable loops that other architectures run).
func withAVX(on bool, f func()) {
	old := rowVec
	rowVec = on && old
	defer func() { rowVec = old }()
	f()
}

// kernelMode selects the kernels' paths: the AVX2 loops or the portable
// ones, and non-temporal stores for every output or none.
type kernelMode struct{ avx, stream bool }

func (m kernelMode) String() string { return fmt.Sprintf("avx=%v stream=%v", m.avx, m.stream) }

var kernelModes = []kernelMode{{true, false}, {true, true}, {false, false}}

// withMode runs f in mode m.
func withKernelMode(m kernelMode, f func()) {
	old := streamMin
	if m.stream {
		streamMin = 0
	} else {
		streamMin = math.MaxInt
	}
	defer func() { streamMin = old }()
	withAVX(m.avx, f)
}

// laneIndices returns, for shape viewed along axis as [outer, n, inner],
// the flat indices of each lane's elements.
func laneIndicesOf(shape []int, axis int) [][]int {
	g := axisLanesOf(shape, axis)
	var ls [][]int
	for o := range g.outer {
		for j := range g.inner {
			l := make([]int, g.n)
			for k := range l {
				l[k] = (o*g.n+k)*g.inner + j
			}
			ls = append(ls, l)
		}
	}
	return ls
}

// normCase is a shape and axis the kernels are checked on: last, middle
// and first axes, rows with tails (n mod 8 ≠ 0), rows over the parallel
// threshold, and inner extents over laneBlock.
type normCase struct {
	shape []int
	axis  int
}

var softmaxCases = []normCase{
	{[]int{7}, 0}, {[]int{3, 13}, 1}, {[]int{5, 1024}, 1}, {[]int{64, 1001}, 1}, {[]int{4, 6, 5}, 1},
	{[]int{3, 9, 600}, 1}, {[]int{6, 5}, 0}, {[]int{2, 40, 8}, 2},
}

// edgeRows writes boundary lanes into v (shape [8, 20], axis 1): NaN,
// +Inf, only -Inf, some -Inf, huge values with ties, huge negatives, a
// constant lane and one far above the others.
func edgeRows(v []float64) {
	inf := math.Inf(1)
	v[3] = math.NaN()
	v[20+5] = inf
	for k := range 20 {
		v[40+k] = math.Inf(-1)
	}
	v[60], v[61], v[75] = math.Inf(-1), math.Inf(-1), math.Inf(-1)
	for k := range 20 {
		v[80+k] = 1e30 * float64(k%3)
		v[100+k] = -1e30 * float64(1+k%4)
		v[120+k] = 2.5
	}
	v[140+7] = 80
}

// inputs returns random non-zero values of shape (normal, scaled by 3),
// rounded to dt, and the tensor of dt holding them on be, flipped along
// axis 0 (a non-contiguous view, with the values flipped back) when
// flipped.
func kindInputs(be backend.Backend, shape []int, dt backend.DType, seed uint64, flipped bool, edit func([]float64)) ([]float64, backend.Tensor) {
	v := randVals(numel(shape), seed)
	for i := range v {
		v[i] *= 3
		if v[i] == 0 {
			v[i] = 0.5
		}
	}
	if edit != nil {
		edit(v)
	}
	d := ir.FromSlice(v, shape).Convert(dt)
	v = d.Convert(backend.F64).Float64s()
	if !flipped {
		return v, be.FromData(d)
	}
	// Store the values flipped along axis 0 and flip the view back.
	w := make([]float64, len(v))
	rows, per := shape[0], numel(shape[1:])
	for r := range rows {
		copy(w[(rows-1-r)*per:(rows-r)*per], v[r*per:(r+1)*per])
	}
	return v, ir.Flip(be, be.FromData(ir.FromSlice(w, shape).Convert(dt)), []int{0})
}

// apply infers op and runs it on be's kernel (Exec), or through its
// decomposition on flex.
func runKind(t *testing.T, e ir.Executor, op ir.Op, decompose bool) backend.Tensor {
	t.Helper()
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	if decompose {
		return ir.SpecOf(op.Kind).Decompose(op, e)[0]
	}
	return e.Exec(op)[0]
}

// within checks got against want elementwise with the tolerance tol(i):
// NaN exactly where want is NaN, infinities equal, |got − want| ≤ tol(i)
// elsewhere.
func checkWithin(t *testing.T, name string, got, want []float64, tol func(i int) float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range want {
		g, w := got[i], want[i]
		ok := (math.IsNaN(w) && math.IsNaN(g)) || g == w || math.Abs(g-w) <= tol(i)
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("%s: [%d] = %v, want %v (diff %.3g, tol %.3g)", name, i, g, w, math.Abs(g-w), tol(i))
			}
		}
	}
}

// softmaxRef is the float64 softmax (or log-softmax) of lane values l,
// shifted by their maximum in the dtype's rounding (the shifted values
// are the kernel's and the decomposition's exact inputs to exp), and the
// lane's log Σ e^(x−m).
func softmaxRef(l []float64, dt backend.DType, log bool) (y []float64, lse float64) {
	m := math.Inf(-1)
	for _, v := range l {
		if v > m || v != v {
			m = v
		}
	}
	d := make([]float64, len(l))
	s := 0.0
	for i, v := range l {
		d[i] = v - m
		if dt != backend.F64 {
			d[i] = float64(float32(v) - float32(m))
		}
		s += math.Exp(d[i])
	}
	y = make([]float64, len(l))
	for i := range d {
		if log {
			y[i] = d[i] - math.Log(s)
		} else {
			y[i] = math.Exp(d[i]) / s
		}
	}
	return y, math.Log(s)
}

var kernelDTypes = []backend.DType{backend.F32, backend.Flex32, backend.F64}

// TestSoftmaxKernels checks Softmax and LogSoftmax against the float64
// softmax of the same inputs (their maximum subtracted in the dtype, the
// rounding both the kernel and the decomposition start from) and against
// the decomposition run op by op on flex, for every case of softmaxCases
// and the edge lanes, contiguous and flipped, in F32, Flex32 and F64, in
// each kernelMode (AVX2 or portable loops, streaming stores or not).
// Bounds: softmax within 6 units of roundoff of the result (plus 2^-148
// for subnormal results), log-softmax within 4 units of roundoff of
// |result| + |log Σ| + 1, each plus the float64 sum's error (sumRoundoff);
// NaN exactly where the reference is NaN (a lane holding NaN, +Inf or only
// -Inf); twice the bounds against the decomposition.
func TestSoftmaxKernels(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	cases := append(softmaxCases, normCase{[]int{8, 20}, 1})
	for _, mode := range kernelModes {
		for ci, c := range cases {
			var edit func([]float64)
			if len(c.shape) == 2 && c.shape[0] == 8 && c.shape[1] == 20 {
				edit = edgeRows
			}
			for _, dt := range kernelDTypes {
				for _, flipped := range []bool{false, true} {
					for _, k := range []ir.Kind{ir.KindSoftmax, ir.KindLogSoftmax} {
						name := fmt.Sprintf("%v %v %v axis %d %v flipped=%v", mode, k, c.shape, c.axis, dt, flipped)
						v, x := kindInputs(be, c.shape, dt, uint64(ci), flipped, edit)
						var got []float64
						withKernelMode(mode, func() { got = values(t, be, runKind(t, be, ir.Op{Kind: k, Axis: c.axis, In: [3]ir.Tensor{x}}, false)) })
						want := make([]float64, len(v))
						lse := make([]float64, len(v))
						for _, l := range laneIndicesOf(c.shape, c.axis) {
							lv := make([]float64, len(l))
							for i, j := range l {
								lv[i] = v[j]
							}
							y, s := softmaxRef(lv, dt, k == ir.KindLogSoftmax)
							for i, j := range l {
								want[j], lse[j] = y[i], s
							}
						}
						u, su := roundoff(dt), sumRoundoff(c.shape[c.axis])
						tol := func(i int) float64 { return (6*u+su)*math.Abs(want[i]) + 0x1p-148 }
						if k == ir.KindLogSoftmax {
							tol = func(i int) float64 { return 4*u*(math.Abs(want[i])+math.Abs(lse[i])+1) + su }
						}
						checkWithin(t, name+" vs float64", got, want, tol)
						_, fx := kindInputs(fl, c.shape, dt, uint64(ci), flipped, edit)
						dec := values(t, fl, runKind(t, fl, ir.Op{Kind: k, Axis: c.axis, In: [3]ir.Tensor{fx}}, true))
						checkWithin(t, name+" vs decomposition", got, dec, func(i int) float64 { return 2 * tol(i) })
					}
				}
			}
		}
	}
}

// TestLogSumExpKernel checks LogSumExp against the float64 m + log Σ
// e^(x−m) (m the lane maximum, 0 where infinite, the shift rounded in the
// dtype) and the decomposition on flex, keeping and dropping the axis:
// within 4 units of roundoff of |result| + 1; -Inf for lanes of only
// -Inf, +Inf for lanes holding +Inf, NaN for NaN; an empty axis gives
// -Inf (through the decomposition); in each kernelMode.
func TestLogSumExpKernel(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	cases := append(softmaxCases, normCase{[]int{8, 20}, 1}, normCase{[]int{3, 0}, 1})
	for _, mode := range kernelModes {
		for ci, c := range cases {
			var edit func([]float64)
			if len(c.shape) == 2 && c.shape[0] == 8 && c.shape[1] == 20 {
				edit = edgeRows
			}
			for _, dt := range kernelDTypes {
				for _, keep := range []bool{false, true} {
					name := fmt.Sprintf("%v %v axis %d %v keep=%v", mode, c.shape, c.axis, dt, keep)
					v, x := kindInputs(be, c.shape, dt, uint64(ci), false, edit)
					op := ir.Op{Kind: ir.KindLogSumExp, Axis: c.axis, KeepDim: keep, In: [3]ir.Tensor{x}}
					var got []float64
					withKernelMode(mode, func() { got = values(t, be, runKind(t, be, op, false)) })
					var want []float64
					for _, l := range laneIndicesOf(c.shape, c.axis) {
						m := math.Inf(-1)
						for _, j := range l {
							if v[j] > m || v[j] != v[j] {
								m = v[j]
							}
						}
						if math.IsInf(m, 0) {
							m = 0
						}
						s := 0.0
						for _, j := range l {
							d := v[j] - m
							if dt != backend.F64 {
								d = float64(float32(v[j]) - float32(m))
							}
							s += math.Exp(d)
						}
						want = append(want, math.Log(s)+m)
					}
					if c.shape[c.axis] == 0 {
						want = make([]float64, c.shape[0])
						for i := range want {
							want[i] = math.Inf(-1)
						}
					}
					u, su := roundoff(dt), sumRoundoff(c.shape[c.axis])
					tol := func(i int) float64 { return 4*u*(math.Abs(want[i])+1) + su }
					checkWithin(t, name+" vs float64", got, want, tol)
					_, fx := kindInputs(fl, c.shape, dt, uint64(ci), false, edit)
					op.In[0] = fx
					dec := values(t, fl, runKind(t, fl, op, true))
					checkWithin(t, name+" vs decomposition", got, dec, func(i int) float64 { return 2 * tol(i) })
				}
			}
		}
	}
}

// TestSoftmaxGradKernels checks SoftmaxGrad and LogSoftmaxGrad against
// the float64 formulas y·(g − Σ g·y) and g − e^y·Σ g on the same y (a
// softmax or log-softmax of random values) and random g, and against the
// decomposition on flex, with g contiguous and broadcast (the layout of a
// Sum's gradient), in F32, Flex32 and F64 and each kernelMode: within 8
// units of roundoff of |y|·(|g| + Σ|g·y|), respectively |g| + e^y·Σ|g|,
// plus the float64 sums' error.
func TestSoftmaxGradKernels(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	for _, mode := range kernelModes {
		for ci, c := range softmaxCases {
			for _, dt := range kernelDTypes {
				for _, k := range []ir.Kind{ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad} {
					fwd := ir.KindSoftmax
					if k == ir.KindLogSoftmaxGrad {
						fwd = ir.KindLogSoftmax
					}
					for _, bcast := range []bool{false, true} {
						name := fmt.Sprintf("%v %v %v axis %d %v bcast=%v", mode, k, c.shape, c.axis, dt, bcast)
						run := func(b backend.Backend, decompose bool) []float64 {
							_, x := kindInputs(b, c.shape, dt, uint64(ci), false, nil)
							y := runKind(t, b, ir.Op{Kind: fwd, Axis: c.axis, In: [3]ir.Tensor{x}}, decompose)
							gv := randVals(numel(c.shape), uint64(ci+50))
							var g backend.Tensor
							if bcast {
								g = ir.Expand(b, tensorOf(b, gv[:1], []int{}, dt), c.shape)
							} else {
								g = tensorOf(b, gv, c.shape, dt)
							}
							var got []float64
							withKernelMode(mode, func() {
								got = values(t, b, runKind(t, b, ir.Op{Kind: k, Axis: c.axis, In: [3]ir.Tensor{y, g}}, decompose))
							})
							return append(append(got, values(t, b, y)...), values(t, b, g)...)
						}
						n := numel(c.shape)
						all := run(be, false)
						got, y, g := all[:n], all[n:2*n], all[2*n:]
						want := make([]float64, n)
						tol := make([]float64, n)
						for _, l := range laneIndicesOf(c.shape, c.axis) {
							s, sa := 0.0, 0.0
							for _, j := range l {
								if k == ir.KindSoftmaxGrad {
									s += g[j] * y[j]
									sa += math.Abs(g[j] * y[j])
								} else {
									s += g[j]
									sa += math.Abs(g[j])
								}
							}
							u, su := roundoff(dt), sumRoundoff(len(l))
							for _, j := range l {
								if k == ir.KindSoftmaxGrad {
									want[j] = y[j] * (g[j] - s)
									tol[j] = math.Abs(y[j]) * (8*u*math.Abs(g[j]) + (8*u+su)*sa)
								} else {
									want[j] = g[j] - math.Exp(y[j])*s
									tol[j] = 8*u*math.Abs(g[j]) + (8*u+su)*math.Exp(y[j])*sa
								}
							}
						}
						checkWithin(t, name+" vs float64", got, want, func(i int) float64 { return tol[i] })
						dec := run(fl, true)[:n]
						checkWithin(t, name+" vs decomposition", got, dec, func(i int) float64 { return 2 * tol[i] })
					}
				}
			}
		}
	}
}

// TestSoftmaxDTypes checks the kernels' dtype filter: F32, Flex32 and F64
// are supported; F16 and BF16 are not, and Exec of them (a caller that
// skips Supports) lowers the op with the decomposition, matching flex's
// bit for bit.
func TestSoftmaxDTypes(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	kinds := []ir.Kind{ir.KindSoftmax, ir.KindLogSoftmax, ir.KindLogSumExp, ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad,
		ir.KindLayerNorm, ir.KindLayerNormGrad, ir.KindRMSNorm, ir.KindRMSNormGrad}
	for _, k := range kinds {
		for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64} {
			if !be.Supports(k, dt) {
				t.Errorf("Supports(%v, %v) = false", k, dt)
			}
		}
		for _, dt := range []backend.DType{backend.F16, backend.BF16} {
			if be.Supports(k, dt) {
				t.Errorf("Supports(%v, %v) = true", k, dt)
			}
			op := func(b backend.Backend) ir.Op {
				_, x := kindInputs(b, []int{3, 5}, dt, 1, false, nil)
				op := ir.Op{Kind: k, Axis: 1, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{x}}
				switch k {
				case ir.KindSoftmaxGrad, ir.KindLogSoftmaxGrad:
					op.In[1] = x
				case ir.KindLayerNormGrad, ir.KindRMSNormGrad:
					op.In[2] = x
				}
				return op
			}
			sameAsFlex(t, fmt.Sprintf("%v %v", k, dt), be, fl, runKind(t, be, op(be), false), runKind(t, fl, op(fl), true))
		}
	}
}
