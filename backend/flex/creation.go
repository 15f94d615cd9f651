package flex

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// allocStorage makes zeroed storage for n elements of dt.
func allocStorage(dt backend.DType, n int) storage {
	switch dt {
	case backend.F64:
		return fst(make([]float64, n))
	case backend.F32, backend.Flex32:
		return fst(make([]float32, n))
	case backend.F16, backend.BF16, backend.U16:
		return ist(make([]uint16, n))
	case backend.I64:
		return ist(make([]int64, n))
	case backend.I32:
		return ist(make([]int32, n))
	case backend.I16:
		return ist(make([]int16, n))
	case backend.I8:
		return ist(make([]int8, n))
	case backend.U64:
		return ist(make([]uint64, n))
	case backend.U32:
		return ist(make([]uint32, n))
	case backend.U8:
		return ist(make([]uint8, n))
	}
	return bst(make([]bool, n))
}

// fullStorage makes n elements of dt equal to value converted as Cast does.
func fullStorage(dt backend.DType, n int, value float64) storage {
	one := castStorage(fst([]float64{value}), backend.F64, dt)
	out := one.alloc(n)
	out.copyFrom(one, []int{n}, []int{1}, 0, []int{0}, 0)
	return out
}

func init() {
	kernels.Set(ir.KindFull, (*Backend).full, nil)
	kernels.Set(ir.KindArange, (*Backend).arange, nil)
	kernels.Set(ir.KindRandom, (*Backend).random, nil)
}

// full makes a tensor of op.Shape filled with op.Scalars[0] converted to
// op.DType (floats round to nearest even, integers truncate toward zero and
// saturate, Bool is value != 0).
func (be *Backend) full(op ir.Op) ir.Outputs {
	return ir.One(newTensor(op.DType, op.Shape, fullStorage(op.DType, numel(op.Shape), op.Scalars[0])))
}

// arange makes the rank-1 tensor [start, start+step, ..., start+(n-1)*step]
// of op.Shape [n]. In the exact integer form (Ints: start, step; see
// ir.ArangeInts) each element is computed in int64, exactly (inference has
// checked that every element fits op.DType); otherwise (Scalars: start,
// step) each element is computed in float64 and converted to op.DType as
// Cast does.
func (be *Backend) arange(op ir.Op) ir.Outputs {
	if start, step, ok := ir.ArangeInts(&op); ok {
		vals := make(ivec[int64], op.Shape[0])
		for i := range vals {
			vals[i] = start + int64(i)*step // exact: wrapping arithmetic, and the true value fits int64
		}
		return ir.One(newTensor(op.DType, op.Shape, castStorage(ist(vals), backend.I64, op.DType)))
	}
	start, step := op.Scalars[0], op.Scalars[1]
	vals := make(fvec[float64], op.Shape[0])
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	return ir.One(newTensor(op.DType, op.Shape, castStorage(fst(vals), backend.F64, op.DType)))
}

// random samples a tensor of op.Shape and op.DType from the distribution
// op.Sub with parameters op.Scalars (A, B), using the backend's generator
// (see Seed), element by element in row-major order:
//   - DistDefault, DistUniform: uniform on [A, B) ([0, 1) for Default),
//     resampled when rounding to the dtype would reach B; integer dtypes
//     get the floor of the sample (integers in [A, B)); Bool gets
//     Bernoulli(0.5);
//   - DistNormal: mean A, standard deviation B, converted as Cast does;
//   - DistBernoulli: 1 with probability A, else 0.
func (be *Backend) random(op ir.Op) ir.Outputs {
	dist := ir.Distribution{Kind: ir.DistributionKind(op.Sub), A: op.Scalars[0], B: op.Scalars[1]}
	dt := op.DType
	vals := make(fvec[float64], numel(op.Shape))
	be.mu.Lock()
	for i := range vals {
		vals[i] = be.sample(dist, dt)
	}
	be.mu.Unlock()
	return ir.One(newTensor(dt, op.Shape, castStorage(fst(vals), backend.F64, dt)))
}

// sample draws one value; be.mu must be held.
func (be *Backend) sample(d backend.Distribution, dt backend.DType) float64 {
	switch d.Kind {
	case backend.DistNormal:
		return d.A + d.B*be.rng.NormFloat64()
	case backend.DistBernoulli:
		return b2f(be.rng.Float64() < d.A)
	}
	if dt == backend.Bool {
		return b2f(be.rng.Float64() < 0.5)
	}
	lo, hi := 0.0, 1.0
	if d.Kind == backend.DistUniform {
		lo, hi = d.A, d.B
	}
	var u float64
	for try := 0; try < 64; try++ {
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

// roundTo rounds x to the nearest value of float dtype dt (other dtypes:
// x unchanged).
func roundTo(dt backend.DType, x float64) float64 {
	switch dt {
	case backend.F32, backend.Flex32:
		return float64(float32(x))
	case backend.F16:
		return float64(backend.F16ToFloat32(backend.F16FromFloat64(x)))
	case backend.BF16:
		return float64(backend.BF16ToFloat32(backend.BF16FromFloat64(x)))
	}
	return x
}
