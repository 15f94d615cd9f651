package nn

import (
	"math"
	"strconv"

	"github.com/emberml/ember"
)

// RNNLayer holds one layer of an LSTM (G = 4 gates) or GRU (G = 3), with
// PyTorch's layouts: WeightIH [G·H, in] (weight_ih_l{k}), WeightHH [G·H,
// H] (weight_hh_l{k}), BiasIH and BiasHH [G·H], the gates stacked in
// PyTorch's order.
type RNNLayer struct {
	WeightIH, WeightHH, BiasIH, BiasHH *Param
}

func newRNNLayers(op string, gates, input, hidden, layers int, dev ember.Device) []RNNLayer {
	if input <= 0 || hidden <= 0 || layers <= 0 {
		fail(op, nil, "sizes must be positive, got input=%d hidden=%d layers=%d", input, hidden, layers)
	}
	b := 1 / math.Sqrt(float64(hidden)) // PyTorch: U(−1/√H, 1/√H) for every weight
	out := make([]RNNLayer, layers)
	for l := range out {
		in := input
		if l > 0 {
			in = hidden
		}
		out[l] = RNNLayer{
			WeightIH: newParam(uniform([]int{gates * hidden, in}, b, dev)),
			WeightHH: newParam(uniform([]int{gates * hidden, hidden}, b, dev)),
			BiasIH:   newParam(uniform([]int{gates * hidden}, b, dev)),
			BiasHH:   newParam(uniform([]int{gates * hidden}, b, dev)),
		}
	}
	return out
}

func rnnParams(ls []RNNLayer) []NamedParam {
	var out []NamedParam
	for l, p := range ls {
		s := "_l" + strconv.Itoa(l)
		out = append(out, NamedParam{"weight_ih" + s, p.WeightIH}, NamedParam{"weight_hh" + s, p.WeightHH},
			NamedParam{"bias_ih" + s, p.BiasIH}, NamedParam{"bias_hh" + s, p.BiasHH})
	}
	return out
}

// rnnInput checks x [L, N, in] (or [N, L, in] batch-first, or [L, in]
// unbatched) and returns it as [L, N, in] with whether it was unbatched.
func rnnInput(op string, x *ember.Tensor, batchFirst bool, input int) (*ember.Tensor, bool) {
	need(op, []string{"x"}, x)
	switch {
	case x.Rank() == 2 && x.Dim(1) == input:
		return x.Unsqueeze(1), true
	case x.Rank() == 3 && x.Dim(2) == input:
		if batchFirst {
			x = x.SwapAxes(0, 1)
		}
		return x, false
	}
	fail(op, x, "input must be [L, N, %d] ([N, L, %d] batch-first) or [L, %d]", input, input, input)
	return nil, false
}

// LSTM is PyTorch's nn.LSTM (unidirectional, with biases, no projection):
// Layers stacked layers over sequences x [L, N, Input] ([N, L, Input] when
// BatchFirst, or [L, Input] unbatched), each step
//
//	i, f, g, o = split(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)
//	c' = σ(f)·c + σ(i)·tanh(g),  h' = σ(o)·tanh(c')
//
// (Hochreiter & Schmidhuber, 1997) with PyTorch's gate order and
// parameter names (weight_ih_l0, ...), initialized U(−1/√H, 1/√H).
type LSTM struct {
	// Layers are the stacked layers, input first.
	Layers []RNNLayer
	// BatchFirst takes and returns [N, L, ...] instead of [L, N, ...].
	BatchFirst bool
	input      int
	hidden     int
}

// NewLSTM makes an LSTM of layers layers with input and hidden sizes. It
// panics with an *ember.Error when a size is not positive.
func NewLSTM(input, hidden, layers int, dev ember.Device) *LSTM {
	return &LSTM{Layers: newRNNLayers("lstm", 4, input, hidden, layers, dev), input: input, hidden: hidden}
}

// Forward returns the last layer's hidden states for every step, [L, N,
// H] (or batch-first / unbatched like x), from zero initial states.
func (m *LSTM) Forward(x *ember.Tensor) *ember.Tensor {
	out, _, _ := m.ForwardState(x, nil, nil)
	return out
}

// ForwardState runs the LSTM from initial states h0 and c0 [Layers, N, H]
// (nil for zeros; [Layers, H] unbatched) and returns the outputs and the
// final states hN, cN of the same shapes. It panics with an *ember.Error
// for mismatched shapes.
func (m *LSTM) ForwardState(x, h0, c0 *ember.Tensor) (out, hN, cN *ember.Tensor) {
	initialized("lstm", "NewLSTM", m != nil && len(m.Layers) > 0, nil)
	seq, unbatched := rnnInput("lstm", x, m.BatchFirst, m.input)
	steps, n, h := seq.Dim(0), seq.Dim(1), m.hidden
	hs, cs := initStates("lstm", h0, len(m.Layers), n, h, unbatched, seq), initStates("lstm", c0, len(m.Layers), n, h, unbatched, seq)
	var lastH, lastC []*ember.Tensor
	layerIn := seq
	for l, p := range m.Layers {
		initialized("lstm", "NewLSTM", true, []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}, p.WeightIH, p.WeightHH, p.BiasIH, p.BiasHH)
		hcur, ccur := hs[l], cs[l]
		// The input projection of every step at once.
		xp := layerIn.Matmul(p.WeightIH.Value.Transpose()).Add(p.BiasIH.Value).Add(p.BiasHH.Value) // [L, N, 4H]
		outs := make([]*ember.Tensor, steps)
		for t := range steps {
			gates := xp.Narrow(0, t, 1).Squeeze(0).Add(hcur.Matmul(p.WeightHH.Value.Transpose()))
			ch := gates.Chunk(4, 1)
			i, f, g, o := ch[0].Sigmoid(), ch[1].Sigmoid(), ch[2].Tanh(), ch[3].Sigmoid()
			ccur = f.Mul(ccur).Add(i.Mul(g))
			hcur = o.Mul(ccur.Tanh())
			outs[t] = hcur
		}
		lastH, lastC = append(lastH, hcur), append(lastC, ccur)
		if steps > 0 {
			layerIn = ember.Stack(outs, 0)
		} else {
			layerIn = ember.Zeros([]int{0, n, h}, seq.Device()).Cast(seq.DType())
		}
	}
	return rnnOutputs(layerIn, lastH, lastC, unbatched, m.BatchFirst)
}

// NamedParameters returns PyTorch's names weight_ih_l{k}, weight_hh_l{k},
// bias_ih_l{k}, bias_hh_l{k} per layer.
func (m *LSTM) NamedParameters() []NamedParam { return rnnParams(m.Layers) }

// GRU is PyTorch's nn.GRU (unidirectional, with biases): each step
//
//	r = σ(W_ir·x + b_ir + W_hr·h + b_hr),  z = σ(W_iz·x + b_iz + W_hz·h + b_hz)
//	n = tanh(W_in·x + b_in + r·(W_hn·h + b_hn)),  h' = (1 − z)·n + z·h
//
// (Cho et al., 2014) with PyTorch's gate order (r, z, n), parameter names
// and initialization; shapes as LSTM.
type GRU struct {
	// Layers are the stacked layers, input first.
	Layers []RNNLayer
	// BatchFirst takes and returns [N, L, ...] instead of [L, N, ...].
	BatchFirst bool
	input      int
	hidden     int
}

// NewGRU makes a GRU of layers layers with input and hidden sizes. It
// panics with an *ember.Error when a size is not positive.
func NewGRU(input, hidden, layers int, dev ember.Device) *GRU {
	return &GRU{Layers: newRNNLayers("gru", 3, input, hidden, layers, dev), input: input, hidden: hidden}
}

// Forward returns the last layer's hidden states for every step from zero
// initial states (shapes as LSTM.Forward).
func (m *GRU) Forward(x *ember.Tensor) *ember.Tensor {
	out, _ := m.ForwardState(x, nil)
	return out
}

// ForwardState runs the GRU from h0 [Layers, N, H] (nil for zeros) and
// returns the outputs and the final state hN.
func (m *GRU) ForwardState(x, h0 *ember.Tensor) (out, hN *ember.Tensor) {
	initialized("gru", "NewGRU", m != nil && len(m.Layers) > 0, nil)
	seq, unbatched := rnnInput("gru", x, m.BatchFirst, m.input)
	steps, n, h := seq.Dim(0), seq.Dim(1), m.hidden
	hs := initStates("gru", h0, len(m.Layers), n, h, unbatched, seq)
	var lastH []*ember.Tensor
	layerIn := seq
	for l, p := range m.Layers {
		initialized("gru", "NewGRU", true, []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}, p.WeightIH, p.WeightHH, p.BiasIH, p.BiasHH)
		hcur := hs[l]
		xp := layerIn.Matmul(p.WeightIH.Value.Transpose()).Add(p.BiasIH.Value) // [L, N, 3H]
		outs := make([]*ember.Tensor, steps)
		for t := range steps {
			xi := xp.Narrow(0, t, 1).Squeeze(0).Chunk(3, 1)
			hh := hcur.Matmul(p.WeightHH.Value.Transpose()).Add(p.BiasHH.Value).Chunk(3, 1)
			r := xi[0].Add(hh[0]).Sigmoid()
			z := xi[1].Add(hh[1]).Sigmoid()
			nn := xi[2].Add(r.Mul(hh[2])).Tanh()
			hcur = z.Neg().AddScalar(1).Mul(nn).Add(z.Mul(hcur))
			outs[t] = hcur
		}
		lastH = append(lastH, hcur)
		if steps > 0 {
			layerIn = ember.Stack(outs, 0)
		} else {
			layerIn = ember.Zeros([]int{0, n, h}, seq.Device()).Cast(seq.DType())
		}
	}
	out, hN, _ = rnnOutputs(layerIn, lastH, nil, unbatched, m.BatchFirst)
	return out, hN
}

// NamedParameters returns PyTorch's names, as LSTM's.
func (m *GRU) NamedParameters() []NamedParam { return rnnParams(m.Layers) }

// initStates splits an initial state [layers, N, H] ([layers, H]
// unbatched) into per-layer [N, H] tensors, zeros when s is nil.
func initStates(op string, s *ember.Tensor, layers, n, h int, unbatched bool, like *ember.Tensor) []*ember.Tensor {
	out := make([]*ember.Tensor, layers)
	if s == nil {
		z := ember.Zeros([]int{n, h}, like.Device()).Cast(like.DType())
		for i := range out {
			out[i] = z
		}
		return out
	}
	if unbatched {
		s = s.Unsqueeze(1)
	}
	if s.Rank() != 3 || s.Dim(0) != layers || s.Dim(1) != n || s.Dim(2) != h {
		fail(op, s, "initial state must be [%d, %d, %d]", layers, n, h)
	}
	for i := range out {
		out[i] = s.Narrow(0, i, 1).Squeeze(0)
	}
	return out
}

// rnnOutputs shapes the outputs [L, N, H] and final states like the input.
func rnnOutputs(out *ember.Tensor, hs, cs []*ember.Tensor, unbatched, batchFirst bool) (o, h, c *ember.Tensor) {
	h = ember.Stack(hs, 0)
	if cs != nil {
		c = ember.Stack(cs, 0)
	}
	switch {
	case unbatched:
		out, h = out.Squeeze(1), h.Squeeze(1)
		if c != nil {
			c = c.Squeeze(1)
		}
	case batchFirst:
		out = out.SwapAxes(0, 1)
	}
	return out, h, c
}
