package ndarray

import (
	"math"

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
	be.mu.Lock()
	for j := range v {
		v[j] = be.sample(d, op.DType)
	}
	be.mu.Unlock()
	t := fromData(ir.FromSlice(v, op.Shape).Convert(op.DType))
	t.shape = op.Shape
	return t
}

// sample draws one value; be.mu must be held.
func (be *Backend) sample(d ir.Distribution, dt backend.DType) float64 {
	switch d.Kind {
	case ir.DistNormal:
		return d.A + d.B*be.rng.NormFloat64()
	case ir.DistBernoulli:
		return b2f(be.rng.Float64() < d.A)
	}
	if dt == backend.Bool {
		return b2f(be.rng.Float64() < 0.5)
	}
	lo, hi := 0.0, 1.0
	if d.Kind == ir.DistUniform {
		lo, hi = d.A, d.B
	}
	var u float64
	for range 64 {
		u = lo + be.rng.Float64()*(hi-lo)
		if dt.IsInt() {
			u = math.Floor(u)
		}
		if !(hi > lo) || roundTo(dt, u) < hi {
			break
		}
	}
	return u
}

// roundTo rounds x to the nearest value of float dtype dt, once (other
// dtypes: x unchanged).
func roundTo(dt backend.DType, x float64) float64 {
	switch dt {
	case backend.F32, backend.Flex32:
		return float64(float32(x))
	case backend.F16:
		return float64(ir.F16ToFloat32(ir.F16FromFloat64(x)))
	case backend.BF16:
		return float64(ir.BF16ToFloat32(ir.BF16FromFloat64(x)))
	}
	return x
}

func b2f(x bool) float64 {
	if x {
		return 1
	}
	return 0
}
