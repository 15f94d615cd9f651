package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// TestRMSNormAndGroupNorm checks RMSNorm and GroupNorm against float64
// loops on random weights, and their gradients in x and the parameters.
func TestRMSNormAndGroupNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dev := ember.CPU()
	const n, c, hw = 2, 6, 3
	xv := randVals(rng, n*c*hw)
	x := f64(xv, []int{n, c, hw}, dev)

	r := NewRMSNorm(hw, dev)
	wr := setRandF64(rng, r.Weight)
	want := make([]float64, len(xv))
	for row := range n * c {
		ms := 0.0
		for k := range hw {
			ms += xv[row*hw+k] * xv[row*hw+k]
		}
		ms /= hw
		for k := range hw {
			want[row*hw+k] = xv[row*hw+k] / math.Sqrt(ms+r.Eps) * wr[k]
		}
	}
	assertClose(t, "rms_norm", r.Forward(x).Float64s(), want, 1e-12)

	const groups = 3
	g := NewGroupNorm(groups, c, dev)
	wg, bg := setRandF64(rng, g.Weight), setRandF64(rng, g.Bias)
	per := c / groups * hw
	for s := range n {
		for gi := range groups {
			base := s*c*hw + gi*per
			mean, v := 0.0, 0.0
			for k := range per {
				mean += xv[base+k]
			}
			mean /= float64(per)
			for k := range per {
				v += (xv[base+k] - mean) * (xv[base+k] - mean)
			}
			v /= float64(per)
			for k := range per {
				ch := gi*(c/groups) + k/hw
				want[base+k] = (xv[base+k]-mean)/math.Sqrt(v+g.Eps)*wg[ch] + bg[ch]
			}
		}
	}
	assertClose(t, "group_norm", g.Forward(x).Float64s(), want, 1e-12)

	ad := ember.CPU().Autodiff()
	xa := &Param{Value: f64(xv, []int{n, c, hw}, ad)}
	ra := NewRMSNorm(hw, ad)
	setRandF64(rng, ra.Weight)
	checkGrads(t, func() *ember.Tensor {
		return weightedSum(ra.Forward(xa.Value), randVals(rand.New(rand.NewPCG(1, 1)), n*c*hw))
	},
		map[string]*Param{"x": xa, "weight": ra.Weight})
	ga := NewGroupNorm(groups, c, ad)
	setRandF64(rng, ga.Weight)
	setRandF64(rng, ga.Bias)
	checkGrads(t, func() *ember.Tensor {
		return weightedSum(ga.Forward(xa.Value), randVals(rand.New(rand.NewPCG(2, 2)), n*c*hw))
	},
		map[string]*Param{"x": xa, "weight": ga.Weight, "bias": ga.Bias})
	if s := g.Forward(ember.Ones([]int{0, c, hw}, dev)).Shape(); len(s) != 3 || s[0] != 0 || s[1] != c {
		t.Errorf("group_norm of an empty batch: shape %v, want [0 %d %d]", s, c, hw)
	}
	if err := ember.Try(func() { NewGroupNorm(4, 6, dev) }); err == nil {
		t.Error("groups not dividing channels: no error")
	}
}

// attentionRef computes multi-head attention in float64 loops.
func attentionRef(q, k, v []float64, b, lq, lk, e, heads int, win, bin, wout, bout []float64, causal bool) []float64 {
	d := e / heads
	proj := func(x []float64, l, part int) []float64 {
		out := make([]float64, b*l*e)
		for s := range b * l {
			for o := range e {
				acc := bin[part*e+o]
				for i := range e {
					acc += x[s*e+i] * win[(part*e+o)*e+i]
				}
				out[s*e+o] = acc
			}
		}
		return out
	}
	Q, K, V := proj(q, lq, 0), proj(k, lk, 1), proj(v, lk, 2)
	cat := make([]float64, b*lq*e)
	for s := range b {
		for h := range heads {
			for i := range lq {
				scores := make([]float64, lk)
				mx := math.Inf(-1)
				for j := range lk {
					if causal && j > i {
						scores[j] = math.Inf(-1)
						continue
					}
					acc := 0.0
					for t := range d {
						acc += Q[(s*lq+i)*e+h*d+t] * K[(s*lk+j)*e+h*d+t]
					}
					scores[j] = acc / math.Sqrt(float64(d))
					mx = math.Max(mx, scores[j])
				}
				sum := 0.0
				for j := range lk {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for t := range d {
					acc := 0.0
					for j := range lk {
						acc += scores[j] / sum * V[(s*lk+j)*e+h*d+t]
					}
					cat[(s*lq+i)*e+h*d+t] = acc
				}
			}
		}
	}
	out := make([]float64, b*lq*e)
	for s := range b * lq {
		for o := range e {
			acc := bout[o]
			for i := range e {
				acc += cat[s*e+i] * wout[o*e+i]
			}
			out[s*e+o] = acc
		}
	}
	return out
}

// TestMultiHeadAttention checks Attend (cross-attention with Lq ≠ Lk,
// and causal self-attention) against float64 loops, and gradients in the
// query and the projections.
func TestMultiHeadAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, dev := range []ember.Device{ember.CPU(), ember.CPU().Autodiff()} {
		const b, lq, lk, e, heads = 2, 3, 4, 6, 2
		m := NewMultiHeadAttention(e, heads, dev)
		win, bin := setRandF64(rng, m.InProj), setRandF64(rng, m.InBias)
		wout, bout := setRandF64(rng, m.OutProj), setRandF64(rng, m.OutBias)
		q, k, v := randVals(rng, b*lq*e), randVals(rng, b*lk*e), randVals(rng, b*lk*e)
		got := m.Attend(f64(q, []int{b, lq, e}, dev), f64(k, []int{b, lk, e}, dev), f64(v, []int{b, lk, e}, dev), nil)
		assertClose(t, "cross attention on "+dev.String(), got.Float64s(), attentionRef(q, k, v, b, lq, lk, e, heads, win, bin, wout, bout, false), 1e-12)
		xs := randVals(rng, b*lk*e)
		x := f64(xs, []int{b, lk, e}, dev)
		self := m.Attend(x, x, x, CausalMask(lk, dev))
		assertClose(t, "causal self-attention on "+dev.String(), self.Float64s(), attentionRef(xs, xs, xs, b, lk, lk, e, heads, win, bin, wout, bout, true), 1e-12)
		if dev.IsAutodiff() {
			qa := &Param{Value: f64(q, []int{b, lq, e}, dev)}
			kt, vt := f64(k, []int{b, lk, e}, dev), f64(v, []int{b, lk, e}, dev)
			r := randVals(rand.New(rand.NewPCG(3, 3)), b*lq*e)
			checkGrads(t, func() *ember.Tensor { return weightedSum(m.Attend(qa.Value, kt, vt, nil), r) },
				map[string]*Param{"query": qa, "in_proj_weight": m.InProj, "out_proj.bias": m.OutBias})
		}
	}
}
