package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// normKernelCases are normalizations over one trailing axis (with and
// without a tail of n mod 8, over the parallel threshold), over several
// trailing axes and over every axis.
var normKernelCases = []normCase{
	{[]int{5, 7}, 1}, {[]int{3, 1024}, 1}, {[]int{64, 1001}, 1}, {[]int{2, 3, 4, 5}, 1}, {[]int{6, 9}, 0}, {[]int{8, 20}, 1},
}

// normEdgeRows writes boundary rows into v (shape [8, 20], normalized
// axis 1): NaN, +Inf, a constant row (zero variance), values whose
// squares overflow float32, and a row far from 0.
func normEdgeRows(v []float64) {
	v[3] = math.NaN()
	v[20+5] = math.Inf(1)
	for k := range 20 {
		v[40+k] = 2.5
		v[60+k] = 1e30 * float64(1+k%3)
		v[80+k] = 1e4 + float64(k%5)
	}
}

// normStats are the float64 mean (0 for RMSNorm) and 1/√(var + eps) of a
// row (mean square for RMSNorm).
func normStats(row []float64, eps float64, rms bool) (mean, rstd float64) {
	n := float64(len(row))
	if !rms {
		for _, v := range row {
			mean += v
		}
		mean /= n
	}
	q := 0.0
	for _, v := range row {
		q += (v - mean) * (v - mean)
	}
	return mean, 1 / math.Sqrt(q/n+eps)
}

// TestNormKernels checks LayerNorm and RMSNorm, with and without weight
// and bias, against the float64 normalization of the same inputs and
// against the decomposition run op by op on flex, for normKernelCases
// (contiguous and flipped x) in F32, Flex32 and F64, in each kernelMode.
// Bound: 8 units of roundoff of
// |x̂·w| + |b| + (|mean|·rstd + 1)·|w| (the rounding of x − mean is
// relative to the mean), plus the float64 sums' error; the edge rows
// (which overflow float32 or hold NaN) only against the decomposition,
// with NaN at the same positions.
func TestNormKernels(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	const eps = 1e-5
	for _, mode := range kernelModes {
		for ci, c := range normKernelCases {
			var edit func([]float64)
			edge := len(c.shape) == 2 && c.shape[0] == 8 && c.shape[1] == 20
			if edge {
				edit = normEdgeRows
			}
			ns := c.shape[c.axis:]
			for _, dt := range kernelDTypes {
				for _, k := range []ir.Kind{ir.KindLayerNorm, ir.KindRMSNorm} {
					for _, affine := range []int{0, 1, 2, 3} { // bit 0: weight, bit 1: bias
						if k == ir.KindRMSNorm && affine&2 != 0 {
							continue
						}
						for _, flipped := range []bool{false, true} {
							name := fmt.Sprintf("%v %v %v axis %d %v affine=%d flipped=%v", mode, k, c.shape, c.axis, dt, affine, flipped)
							build := func(b backend.Backend) (ir.Op, []float64, []float64, []float64) {
								v, x := kindInputs(b, c.shape, dt, uint64(ci), flipped, edit)
								op := ir.Op{Kind: k, Axis: c.axis, Scalars: [2]float64{eps}, In: [3]ir.Tensor{x}}
								var w, bias []float64
								if affine&1 != 0 {
									w, op.In[1] = kindInputs(b, ns, dt, uint64(ci+20), false, nil)
								}
								if affine&2 != 0 {
									bias, op.In[2] = kindInputs(b, ns, dt, uint64(ci+40), false, nil)
								}
								return op, v, w, bias
							}
							op, v, w, bias := build(be)
							var got []float64
							withKernelMode(mode, func() { got = values(t, be, runKind(t, be, op, false)) })
							fop, _, _, _ := build(fl)
							dec := values(t, fl, runKind(t, fl, fop, true))
							n := numel(ns)
							want := make([]float64, len(v))
							tol := make([]float64, len(v))
							u, su := roundoff(dt), sumRoundoff(n)
							for r := 0; r < len(v)/n; r++ {
								row := v[r*n : (r+1)*n]
								mean, rstd := normStats(row, eps, k == ir.KindRMSNorm)
								for i, xv := range row {
									wi, bi := 1.0, 0.0
									if w != nil {
										wi = w[i]
									}
									if bias != nil {
										bi = bias[i]
									}
									xh := (xv - mean) * rstd
									want[r*n+i] = xh*wi + bi
									tol[r*n+i] = (8*u+su)*(math.Abs(xh*wi)+math.Abs(bi)) + (8*u+su)*(math.Abs(mean)*rstd+1)*math.Abs(wi)
								}
							}
							if !edge {
								checkWithin(t, name+" vs float64", got, want, func(i int) float64 { return tol[i] })
							}
							checkWithin(t, name+" vs decomposition", got, dec, func(i int) float64 {
								if edge && i/n <= 4 {
									return 0 // NaN, Inf and overflow rows: the same special values
								}
								return 2 * tol[i]
							})
						}
					}
				}
			}
		}
	}
}

// TestNormGradKernels checks LayerNormGrad and RMSNormGrad, with and
// without a weight, against the float64 formula rstd·((ĝ − mean ĝ) −
// x̂·mean(ĝ·x̂)) (without the mean of ĝ for RMSNorm) on the same x, weight
// and g, and against the decomposition on flex, g contiguous and
// broadcast, in F32, Flex32 and F64 and each kernelMode: within 16 units
// of roundoff of rstd·(|ĝ| + mean|ĝ| + |x̂|·mean|ĝ·x̂|)·(1 + |mean|·rstd)
// plus the float64 sums' error.
func TestNormGradKernels(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	const eps = 1e-3
	for _, mode := range kernelModes {
		for ci, c := range normKernelCases[:5] {
			ns := c.shape[c.axis:]
			n := numel(ns)
			for _, dt := range kernelDTypes {
				for _, k := range []ir.Kind{ir.KindLayerNormGrad, ir.KindRMSNormGrad} {
					for _, weighted := range []bool{false, true} {
						for _, bcast := range []bool{false, true} {
							name := fmt.Sprintf("%v %v %v axis %d %v weight=%v bcast=%v", mode, k, c.shape, c.axis, dt, weighted, bcast)
							build := func(b backend.Backend) (ir.Op, []float64, []float64, []float64) {
								v, x := kindInputs(b, c.shape, dt, uint64(ci), false, nil)
								op := ir.Op{Kind: k, Axis: c.axis, Scalars: [2]float64{eps}, In: [3]ir.Tensor{x}}
								var w []float64
								if weighted {
									w, op.In[1] = kindInputs(b, ns, dt, uint64(ci+20), false, nil)
								}
								gv, g := kindInputs(b, c.shape, dt, uint64(ci+60), false, nil)
								if bcast {
									g = ir.Expand(b, tensorOf(b, gv[:1], []int{}, dt), c.shape)
									for i := range gv {
										gv[i] = gv[0]
									}
								}
								op.In[2] = g
								return op, v, w, gv
							}
							op, v, w, gv := build(be)
							var got []float64
							withKernelMode(mode, func() { got = values(t, be, runKind(t, be, op, false)) })
							fop, _, _, _ := build(fl)
							dec := values(t, fl, runKind(t, fl, fop, true))
							want := make([]float64, len(v))
							tol := make([]float64, len(v))
							u, su := roundoff(dt), sumRoundoff(n)
							rms := k == ir.KindRMSNormGrad
							for r := 0; r < len(v)/n; r++ {
								row, gr := v[r*n:(r+1)*n], gv[r*n:(r+1)*n]
								mean, rstd := normStats(row, eps, rms)
								gh := make([]float64, n)
								xh := make([]float64, n)
								var a, b, aa, ba float64
								for i := range row {
									gh[i] = gr[i]
									if w != nil {
										gh[i] *= w[i]
									}
									xh[i] = (row[i] - mean) * rstd
									a += gh[i]
									b += gh[i] * xh[i]
									aa += math.Abs(gh[i])
									ba += math.Abs(gh[i] * xh[i])
								}
								a, b, aa, ba = a/float64(n), b/float64(n), aa/float64(n), ba/float64(n)
								if rms {
									a = 0
								}
								for i := range row {
									want[r*n+i] = rstd * ((gh[i] - a) - xh[i]*b)
									tol[r*n+i] = (16*u + su) * rstd * (math.Abs(gh[i]) + aa + math.Abs(xh[i])*ba) * (1 + math.Abs(mean)*rstd)
								}
							}
							checkWithin(t, name+" vs float64", got, want, func(i int) float64 { return tol[i] })
							checkWithin(t, name+" vs decomposition", got, dec, func(i int) float64 { return 2 * tol[i] })
						}
					}
				}
			}
		}
	}
}

// TestNormMatchesDecompositionF32 checks the claim of the kernels' doc:
// for one normalized axis, F32 LayerNorm follows the decomposition's
// rounding, so it equals the decomposition run op by op on this backend
// except where a last-bit difference of the float64 sums changes the
// float32 mean or variance: at most 2% of the elements may differ, each
// by at most 4 ulp.
func TestNormMatchesDecompositionF32(t *testing.T) {
	be := newTestBackend()
	shape := []int{64, 1001}
	_, x := kindInputs(be, shape, backend.F32, 7, false, nil)
	_, w := kindInputs(be, shape[1:], backend.F32, 8, false, nil)
	_, b := kindInputs(be, shape[1:], backend.F32, 9, false, nil)
	op := ir.Op{Kind: ir.KindLayerNorm, Axis: 1, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{x, w, b}}
	got := values(t, be, runKind(t, be, op, false))
	dec := values(t, be, runKind(t, be, op, true))
	differ := 0
	for i := range got {
		if got[i] != dec[i] {
			differ++
			if d := math.Abs(got[i]-dec[i]) / ulpOf32(dec[i]); d > 4 {
				t.Errorf("[%d] = %v, decomposition %v (%.1f ulp)", i, got[i], dec[i], d)
			}
		}
	}
	if differ*50 > len(got) {
		t.Errorf("%d of %d elements differ from the decomposition", differ, len(got))
	}
}
