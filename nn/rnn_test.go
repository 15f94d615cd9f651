package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// rnnRef runs one LSTM (gates 4) or GRU (gates 3) layer over x [L, N,
// in] in float64 with PyTorch's equations, from h0 (and c0), returning the
// outputs [L, N, H] and final states.
func rnnRef(gates int, x []float64, l, n, in, h int, wih, whh, bih, bhh, h0, c0 []float64) (out, hN, cN []float64) {
	hs := append([]float64{}, h0...)
	cs := append([]float64{}, c0...)
	out = make([]float64, l*n*h)
	for t := range l {
		nh := make([]float64, n*h)
		for s := range n {
			g := make([]float64, gates*h)
			gh := make([]float64, gates*h)
			for r := range gates * h {
				g[r] = bih[r]
				for k := range in {
					g[r] += wih[r*in+k] * x[(t*n+s)*in+k]
				}
				gh[r] = bhh[r]
				for k := range h {
					gh[r] += whh[r*h+k] * hs[s*h+k]
				}
			}
			for j := range h {
				if gates == 4 {
					i := sigmoid(g[j] + gh[j])
					f := sigmoid(g[h+j] + gh[h+j])
					gg := math.Tanh(g[2*h+j] + gh[2*h+j])
					o := sigmoid(g[3*h+j] + gh[3*h+j])
					cs[s*h+j] = f*cs[s*h+j] + i*gg
					nh[s*h+j] = o * math.Tanh(cs[s*h+j])
				} else {
					r := sigmoid(g[j] + gh[j])
					z := sigmoid(g[h+j] + gh[h+j])
					nn := math.Tanh(g[2*h+j] + r*gh[2*h+j])
					nh[s*h+j] = (1-z)*nn + z*hs[s*h+j]
				}
			}
		}
		hs = nh
		copy(out[t*n*h:], hs)
	}
	return out, hs, cs
}

// TestLSTMAndGRU checks one- and two-layer LSTM and GRU outputs and final
// states (from given initial states, batch-first and unbatched too)
// against float64 loops of PyTorch's equations, and gradients.
func TestLSTMAndGRU(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dev := ember.CPU()
	const l, n, in, h = 4, 2, 3, 5
	xv := randVals(rng, l*n*in)
	x := f64(xv, []int{l, n, in}, dev)
	for _, gates := range []int{4, 3} {
		var layers []RNNLayer
		var run func(x, h0, c0 *ember.Tensor) (o, hn, cn *ember.Tensor)
		name := "lstm"
		if gates == 4 {
			m := NewLSTM(in, h, 2, dev)
			layers, run = m.Layers, m.ForwardState
		} else {
			name = "gru"
			m := NewGRU(in, h, 2, dev)
			layers = m.Layers
			run = func(x, h0, _ *ember.Tensor) (o, hn, cn *ember.Tensor) {
				o, hn = m.ForwardState(x, h0)
				return o, hn, nil
			}
		}
		ws := make([][4][]float64, 2)
		for k := range layers {
			p := layers[k]
			ws[k] = [4][]float64{setRandF64(rng, p.WeightIH), setRandF64(rng, p.WeightHH), setRandF64(rng, p.BiasIH), setRandF64(rng, p.BiasHH)}
		}
		h0, c0 := randVals(rng, 2*n*h), randVals(rng, 2*n*h)
		o0, hA, cA := rnnRef(gates, xv, l, n, in, h, ws[0][0], ws[0][1], ws[0][2], ws[0][3], h0[:n*h], c0[:n*h])
		o1, hB, cB := rnnRef(gates, o0, l, n, h, h, ws[1][0], ws[1][1], ws[1][2], ws[1][3], h0[n*h:], c0[n*h:])
		c0t := f64(c0, []int{2, n, h}, dev)
		if gates == 3 {
			c0t = nil
		}
		out, hn, cn := run(x, f64(h0, []int{2, n, h}, dev), c0t)
		assertClose(t, name+" output", out.Float64s(), o1, 1e-12)
		assertClose(t, name+" final h", hn.Float64s(), append(hA, hB...), 1e-12)
		if gates == 4 {
			assertClose(t, name+" final c", cn.Float64s(), append(cA, cB...), 1e-12)
		}
		// Zero initial state, unbatched: sample 0 alone.
		z := make([]float64, n*h)
		u0, _, _ := rnnRef(gates, xv, l, n, in, h, ws[0][0], ws[0][1], ws[0][2], ws[0][3], z, z)
		u1, _, _ := rnnRef(gates, u0, l, n, h, h, ws[1][0], ws[1][1], ws[1][2], ws[1][3], z, z)
		var first []float64
		for t := range l {
			first = append(first, u1[t*n*h:t*n*h+h]...)
		}
		single := x.Narrow(1, 0, 1).Squeeze(1)
		uo, _, _ := run(single, nil, nil)
		assertClose(t, name+" unbatched", uo.Float64s(), first, 1e-12)
	}
	// Batch-first equals the seq-first run transposed.
	m := NewLSTM(in, h, 1, dev)
	seqFirst := m.Forward(x)
	m.BatchFirst = true
	assertClose(t, "lstm batch-first", m.Forward(x.SwapAxes(0, 1)).SwapAxes(0, 1).Float64s(), seqFirst.Float64s(), 1e-14)

	ad := ember.CPU().Autodiff()
	xa := &Param{Value: f64(xv, []int{l, n, in}, ad)}
	lstm := NewLSTM(in, h, 1, ad)
	gru := NewGRU(in, h, 1, ad)
	r := randVals(rand.New(rand.NewPCG(5, 5)), l*n*h)
	checkGrads(t, func() *ember.Tensor { return weightedSum(lstm.Forward(xa.Value), r) },
		map[string]*Param{"x": xa, "weight_hh": lstm.Layers[0].WeightHH, "bias_ih": lstm.Layers[0].BiasIH})
	checkGrads(t, func() *ember.Tensor { return weightedSum(gru.Forward(xa.Value), r) },
		map[string]*Param{"x": xa, "weight_ih": gru.Layers[0].WeightIH, "bias_hh": gru.Layers[0].BiasHH})
	if names := lstm.NamedParameters(); len(names) != 4 || names[0].Name != "weight_ih_l0" || names[3].Name != "bias_hh_l0" {
		t.Errorf("lstm parameter names %v", names)
	}
}
