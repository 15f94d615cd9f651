package nn

import "github.com/emberml/ember"

// Embedding is a lookup table of num vectors of size dim (PyTorch's
// nn.Embedding): Forward maps integer indices of any shape S to the rows
// [S..., dim]. Weight has shape [num, dim] and is initialized from N(0, 1),
// as PyTorch.
type Embedding struct {
	Weight *Param
	// PaddingIdx, when set, names a row whose lookups carry no gradient
	// (see NewEmbeddingWithPadding).
	PaddingIdx *int
	num        int
	dim        int
}

// NewEmbedding makes an Embedding of num rows of size dim. It panics with
// an *ember.Error when a size is not positive.
func NewEmbedding(num, dim int, dev ember.Device) *Embedding {
	if num <= 0 || dim <= 0 {
		fail("embedding", nil, "sizes must be positive, got num=%d dim=%d", num, dim)
	}
	return &Embedding{
		Weight: newParam(ember.Random([]int{num, dim}, ember.Normal(0, 1), dev.Inner()).ToDevice(dev)),
		num:    num,
		dim:    dim,
	}
}

// Forward looks up the rows named by idx (an integer tensor of any shape,
// values in [0, num)) through IndexSelect and returns [idx.Shape()..., dim].
// It panics with an *ember.Error for non-integer indices or indices out of
// range.
func (e *Embedding) Forward(idx *ember.Tensor) *ember.Tensor {
	need("embedding", []string{"idx"}, idx)
	var w *Param
	if e != nil {
		w = e.Weight
	}
	initialized("embedding", "NewEmbedding", e != nil, []string{"weight"}, w)
	dim := e.dim
	if dim == 0 && w.Value.Rank() == 2 { // a literal Embedding{Weight}
		dim = w.Value.Dim(1)
	}
	if !idx.DType().IsInt() {
		fail("embedding", idx, "indices must be an integer tensor")
	}
	shape := append(idx.Shape(), dim)
	flat := idx.Reshape(-1)
	out := e.Weight.Value.IndexSelect(0, flat)
	if e.PaddingIdx != nil {
		pad := flat.EqScalar(float64(*e.PaddingIdx)).Reshape(-1, 1)
		out = ember.Where(pad, out.Detach(), out)
	}
	return out.Reshape(shape...)
}

// NamedParameters returns "weight".
func (e *Embedding) NamedParameters() []NamedParam {
	return []NamedParam{{"weight", e.Weight}}
}
