package flex

import (
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
	be.rng.Sample(vals, dist, dt)
	return ir.One(newTensor(dt, op.Shape, castStorage(fst(vals), backend.F64, dt)))
}
