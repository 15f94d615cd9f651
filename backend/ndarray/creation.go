package ndarray

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// full makes a tensor of op.Shape filled with op.Scalars[0] converted to
// op.DType as Cast converts an F64.
func (be *Backend) full(op ir.Op) *Tensor { return filled(op.Shape, op.DType, op.Scalars[0]) }

// arange makes the rank-1 tensor [start, start+step, ..., start+(n-1)·step]
// of op.Shape [n]. In the exact integer form (Ints: start, step; see
// ir.ArangeInts) every element is computed in int64 (inference has checked
// that it fits op.DType); otherwise (Scalars: start, step) in float64. The
// values are then converted to op.DType as Cast does.
func (be *Backend) arange(op ir.Op) *Tensor {
	var d *backend.TensorData
	if start, step, ok := ir.ArangeInts(&op); ok {
		v := make([]int64, op.Shape[0])
		for j := range v {
			v[j] = start + int64(j)*step
		}
		d = ir.FromSlice(v, op.Shape)
	} else {
		v := make([]float64, op.Shape[0])
		for j := range v {
			v[j] = op.Scalars[0] + float64(j)*op.Scalars[1]
		}
		d = ir.FromSlice(v, op.Shape)
	}
	t := fromData(d.Convert(op.DType))
	t.shape = op.Shape
	return t
}

// random samples a tensor of op.Shape and op.DType from the distribution
// op.Sub with parameters op.Scalars (A, B), drawing from the backend's
// generator (see Seed) element by element in row-major order, as flex
// does (the same seed gives flex's values):
//   - DistDefault, DistUniform: uniform on [A, B) ([0, 1) for Default),
//     redrawn (up to 64 times) when rounding to the dtype would reach B;
//     integer dtypes get the floor of the sample (integers in [A, B));
//     Bool gets Bernoulli(0.5);
//   - DistNormal: mean A, standard deviation B;
//   - DistBernoulli: 1 with probability A, else 0.
//
// The float64 samples are converted to op.DType as Cast does.
func (be *Backend) random(op ir.Op) *Tensor {
	d := ir.Distribution{Kind: ir.DistributionKind(op.Sub), A: op.Scalars[0], B: op.Scalars[1]}
	v := make([]float64, ir.NumElements(op.Shape))
	be.rng.Sample(v, d, op.DType)
	t := fromData(ir.FromSlice(v, op.Shape).Convert(op.DType))
	t.shape = op.Shape
	return t
}
