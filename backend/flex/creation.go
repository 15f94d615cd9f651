package flex

import (
	"math"

	"github.com/emberml/ember/backend"
)

// allocStorage makes zeroed storage for n elements of dt.
func allocStorage(dt backend.DType, n int) storage {
	switch dt {
	case backend.F64:
		return make(fvec[float64], n)
	case backend.F32, backend.Flex32:
		return make(fvec[float32], n)
	case backend.F16, backend.BF16, backend.U16:
		return make(ivec[uint16], n)
	case backend.I64:
		return make(ivec[int64], n)
	case backend.I32:
		return make(ivec[int32], n)
	case backend.I16:
		return make(ivec[int16], n)
	case backend.I8:
		return make(ivec[int8], n)
	case backend.U64:
		return make(ivec[uint64], n)
	case backend.U32:
		return make(ivec[uint32], n)
	case backend.U8:
		return make(ivec[uint8], n)
	}
	return make(bvec, n)
}

// fullStorage makes n elements of dt equal to value converted as Cast does.
func fullStorage(dt backend.DType, n int, value float64) storage {
	one := castStorage(fvec[float64]{value}, backend.F64, dt)
	out := one.alloc(n)
	out.copyFrom(one, []int{n}, []int{1}, 0, []int{0}, 0)
	return out
}

// Full makes a tensor of shape filled with value converted to dt (floats
// round to nearest even, integers truncate toward zero and saturate, Bool
// is value != 0).
func (be *Backend) Full(shape []int, dt backend.DType, value float64) backend.Tensor {
	return newTensor(dt, shape, fullStorage(dt, numel(shape), value))
}

// Arange makes the rank-1 tensor [start, start+step, ..., start+(n-1)*step]:
// each element is computed in float64 and converted to dt as Cast does.
func (be *Backend) Arange(start, step float64, n int, dt backend.DType) backend.Tensor {
	vals := make(fvec[float64], n)
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	return newTensor(dt, []int{n}, castStorage(vals, backend.F64, dt))
}

// Random samples a tensor of shape and dt from dist with the backend's
// generator (see Seed), element by element in row-major order:
//   - DistDefault, DistUniform: uniform on [A, B) ([0, 1) for Default),
//     resampled when rounding to dt would reach B; integer dtypes get
//     floor of the sample (integers in [A, B)); Bool gets Bernoulli(0.5);
//   - DistNormal: mean A, standard deviation B, converted as Cast does;
//   - DistBernoulli: 1 with probability A, else 0.
func (be *Backend) Random(shape []int, dt backend.DType, dist backend.Distribution) backend.Tensor {
	vals := make(fvec[float64], numel(shape))
	be.mu.Lock()
	for i := range vals {
		vals[i] = be.sample(dist, dt)
	}
	be.mu.Unlock()
	return newTensor(dt, shape, castStorage(vals, backend.F64, dt))
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
