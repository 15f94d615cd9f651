package nn

import (
	"math"

	"github.com/emberml/ember"
)

// RMSNorm normalizes over the last axis by the root mean square (Zhang &
// Sennrich, "Root Mean Square Layer Normalization", 2019; PyTorch's
// nn.RMSNorm with normalized_shape = [dim]): for x [..., dim]
//
//	y = x / √(mean(x²) + eps) · weight
//
// with weight [dim] initialized to ones. Eps defaults to 1e-6 here; PyTorch's
// default (None) is the dtype's machine epsilon. Forward is ember's
// Tensor.RMSNorm (one kernel on devices that have one).
type RMSNorm struct {
	Weight *Param
	// Eps is added to the mean square before the square root.
	Eps float64
	dim int
}

// NewRMSNorm makes an RMSNorm over a last axis of size dim with Eps 1e-6.
// It panics with an *ember.Error when dim is not positive.
func NewRMSNorm(dim int, dev ember.Device) *RMSNorm {
	if dim <= 0 {
		fail("rms_norm", nil, "dim must be positive, got %d", dim)
	}
	return &RMSNorm{Weight: newParam(ember.Ones([]int{dim}, dev)), Eps: 1e-6, dim: dim}
}

// Forward normalizes x [..., dim]. It panics with an *ember.Error when the
// last axis is not dim.
func (l *RMSNorm) Forward(x *ember.Tensor) *ember.Tensor {
	need("rms_norm", []string{"x"}, x)
	var w *Param
	if l != nil {
		w = l.Weight
	}
	initialized("rms_norm", "NewRMSNorm", l != nil, []string{"weight"}, w)
	dim := l.dim
	if dim == 0 && w.Value.Rank() == 1 {
		dim = w.Value.Dim(0)
	}
	if x.Rank() == 0 || x.Dim(-1) != dim {
		fail("rms_norm", x, "input's last axis must have size %d", dim)
	}
	return x.RMSNorm([]int{dim}, ember.NormParams{Weight: w.Value}, l.Eps)
}

// NamedParameters returns "weight".
func (l *RMSNorm) NamedParameters() []NamedParam { return []NamedParam{{"weight", l.Weight}} }

// GroupNorm normalizes x [N, C, ...] over groups of channels (Wu & He,
// "Group Normalization", 2018; PyTorch's nn.GroupNorm): the C channels
// split into Groups groups of C/Groups, each (sample, group) normalized by
// its mean and biased variance over its channels and positions, then
// scaled and shifted per channel by weight and bias [C] (ones and zeros
// initially):
//
//	y = (x − mean_g) / √(var_g + eps) · weight_c + bias_c
type GroupNorm struct {
	Weight, Bias *Param
	// Groups is the number of channel groups; it divides the channels.
	Groups int
	// Eps is added to the variance before the square root (default 1e-5).
	Eps      float64
	channels int
}

// NewGroupNorm makes a GroupNorm of groups groups over channels channels.
// It panics with an *ember.Error when a size is not positive or groups
// does not divide channels.
func NewGroupNorm(groups, channels int, dev ember.Device) *GroupNorm {
	if groups <= 0 || channels <= 0 || channels%groups != 0 {
		fail("group_norm", nil, "groups %d must be positive and divide channels %d", groups, channels)
	}
	return &GroupNorm{Weight: newParam(ember.Ones([]int{channels}, dev)), Bias: newParam(ember.Zeros([]int{channels}, dev)),
		Groups: groups, Eps: 1e-5, channels: channels}
}

// Forward normalizes x [N, C, ...]. It panics with an *ember.Error when x
// has rank < 2 or C is not the layer's channels.
func (g *GroupNorm) Forward(x *ember.Tensor) *ember.Tensor {
	need("group_norm", []string{"x"}, x)
	var w, b *Param
	if g != nil {
		w, b = g.Weight, g.Bias
	}
	initialized("group_norm", "NewGroupNorm", g != nil, []string{"weight", "bias"}, w, b)
	c := g.channels
	if c == 0 && w.Value.Rank() == 1 {
		c = w.Value.Dim(0)
	}
	if x.Rank() < 2 || x.Dim(1) != c {
		fail("group_norm", x, "input must be [N, %d, ...]", c)
	}
	if g.Groups <= 0 || c%g.Groups != 0 {
		fail("group_norm", x, "groups %d must be positive and divide channels %d", g.Groups, c)
	}
	shape := x.Shape()
	per := c / g.Groups // channels per group, times the positions
	for _, s := range shape[2:] {
		per *= s
	}
	xg := x.Reshape(shape[0], g.Groups, per) // [N, G, C/G·positions]
	y := xg.LayerNorm([]int{per}, ember.NormParams{}, g.Eps).Reshape(shape...)
	bshape := make([]int, len(shape))
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[1] = c
	return y.Mul(w.Value.Reshape(bshape...)).Add(b.Value.Reshape(bshape...))
}

// NamedParameters returns "weight" and "bias".
func (g *GroupNorm) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", g.Weight}, {"bias", g.Bias}}
}

// MultiHeadAttention is PyTorch's nn.MultiheadAttention with
// batch_first=true and bias: queries [B, Lq, E] attend to keys and values
// [B, Lk, E] through Heads heads of size E/Heads (Vaswani et al.,
// "Attention Is All You Need", 2017):
//
//	head_h = softmax(Q_h·K_hᵀ/√d + mask)·V_h,  out = concat(heads)·W_oᵀ + b_o
//
// with Q = q·W_qᵀ + b_q and likewise K and V. InProj is [3E, E] (PyTorch's
// in_proj_weight, rows q, k, v), InBias [3E], OutProj [E, E] and OutBias
// [E], initialized as PyTorch (Xavier-uniform projections, zero biases).
type MultiHeadAttention struct {
	InProj, InBias, OutProj, OutBias *Param
	// Heads is the number of heads; it divides the embedding size.
	Heads int
	embed int
}

// NewMultiHeadAttention makes attention over embeddings of size embed with
// heads heads. It panics with an *ember.Error when a size is not positive
// or heads does not divide embed.
func NewMultiHeadAttention(embed, heads int, dev ember.Device) *MultiHeadAttention {
	if embed <= 0 || heads <= 0 || embed%heads != 0 {
		fail("multi_head_attention", nil, "heads %d must be positive and divide the embedding size %d", heads, embed)
	}
	b := math.Sqrt(6 / float64(embed+3*embed)) // Xavier over [3E, E]
	bo := math.Sqrt(6 / float64(2*embed))
	return &MultiHeadAttention{
		InProj:  newParam(uniform([]int{3 * embed, embed}, b, dev)),
		InBias:  newParam(ember.Zeros([]int{3 * embed}, dev)),
		OutProj: newParam(uniform([]int{embed, embed}, bo, dev)),
		OutBias: newParam(ember.Zeros([]int{embed}, dev)),
		Heads:   heads,
		embed:   embed,
	}
}

// Attend computes the attention of query [B, Lq, E] over key and value
// [B, Lk, E] and returns [B, Lq, E]. mask, when not nil, is a Bool tensor
// broadcastable to [B, Heads, Lq, Lk] that is true where attention is NOT
// allowed (PyTorch's boolean attn_mask), such as CausalMask(Lq, dev); a
// row with every position masked gives NaN, as PyTorch. It panics with an
// *ember.Error for mismatched shapes.
func (m *MultiHeadAttention) Attend(query, key, value, mask *ember.Tensor) *ember.Tensor {
	const op = "multi_head_attention"
	need(op, []string{"query", "key", "value"}, query, key, value)
	var ps [4]*Param
	if m != nil {
		ps = [4]*Param{m.InProj, m.InBias, m.OutProj, m.OutBias}
	}
	initialized(op, "NewMultiHeadAttention", m != nil, []string{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}, ps[:]...)
	e := ps[0].Value.Dim(1)
	if query.Rank() != 3 || key.Rank() != 3 || value.Rank() != 3 || query.Dim(2) != e || key.Dim(2) != e || value.Dim(2) != e ||
		key.Dim(1) != value.Dim(1) || query.Dim(0) != key.Dim(0) || key.Dim(0) != value.Dim(0) {
		fail(op, query, "query [B, Lq, %d], key and value [B, Lk, %d] must agree", e, e)
	}
	h := m.Heads
	if h <= 0 || e%h != 0 {
		fail(op, query, "heads %d must be positive and divide the embedding size %d", h, e)
	}
	d := e / h
	w := ps[0].Value
	bias := ps[1].Value
	proj := func(x *ember.Tensor, i int) *ember.Tensor {
		wi := w.Narrow(0, i*e, e)
		bi := bias.Narrow(0, i*e, e)
		y := x.Matmul(wi.Transpose()).Add(bi) // [B, L, E]
		return y.Reshape(x.Dim(0), x.Dim(1), h, d).Permute(0, 2, 1, 3)
	}
	q, k, v := proj(query, 0), proj(key, 1), proj(value, 2) // [B, H, L, d]
	scores := q.Matmul(k.Transpose()).MulScalar(1 / math.Sqrt(float64(d)))
	if mask != nil {
		if mask.DType() != ember.Bool {
			fail(op, mask, "mask must be a Bool tensor (true = not allowed)")
		}
		scores = scores.MaskFill(mask, math.Inf(-1))
	}
	att := scores.Softmax(-1).Matmul(v) // [B, H, Lq, d]
	out := att.Permute(0, 2, 1, 3).Reshape(query.Dim(0), query.Dim(1), e)
	return out.Matmul(ps[2].Value.Transpose()).Add(ps[3].Value)
}

// Forward is self-attention: Attend(x, x, x, nil).
func (m *MultiHeadAttention) Forward(x *ember.Tensor) *ember.Tensor { return m.Attend(x, x, x, nil) }

// NamedParameters returns PyTorch's state-dict names: "in_proj_weight",
// "in_proj_bias", "out_proj.weight" and "out_proj.bias".
func (m *MultiHeadAttention) NamedParameters() []NamedParam {
	return []NamedParam{{"in_proj_weight", m.InProj}, {"in_proj_bias", m.InBias}, {"out_proj.weight", m.OutProj}, {"out_proj.bias", m.OutBias}}
}

// CausalMask returns the Bool mask [n, n] that is true above the diagonal
// (position i may not attend to j > i), for MultiHeadAttention.Attend; it
// is ember.TrilMask([n, n], 0).
func CausalMask(n int, dev ember.Device) *ember.Tensor {
	return ember.TrilMask([]int{n, n}, 0, dev.Inner())
}
