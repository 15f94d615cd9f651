package flex

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindCast, (*Backend).cast, nil) }

// cast converts In[0] to op.DType. Floats to floats round to nearest even
// (F64 to F16/BF16 rounds once, not through float32). Floats to integers
// truncate toward zero and saturate at the target's range, NaN giving 0
// (PyTorch leaves out-of-range casts undefined; this is Rust's `as`, which
// Burn uses). Integers to narrower integers wrap (two's complement, as Go
// and PyTorch). Anything to Bool is x != 0 (NaN is true); Bool is 0 or 1.
// A cast between dtypes of one storage (F32 and Flex32, or to the same
// dtype) is a view.
func (be *Backend) cast(op ir.Op) ir.Outputs { return ir.One(castTensor(asTensor(op.In[0]), op.DType)) }

// castTensor converts t to dt (see cast).
func castTensor(t *Tensor, dt backend.DType) *Tensor {
	if t.dtype == dt || (isF32Store(t.dtype) && isF32Store(dt)) {
		return &Tensor{dtype: dt, shape: t.shape, strides: t.strides, offset: t.offset, data: t.data}
	}
	return newTensor(dt, t.shape, castStorage(t.dense(), t.dtype, dt))
}

// isF32Store reports whether dt is stored as float32 (F32 and Flex32).
func isF32Store(dt backend.DType) bool { return dt == backend.F32 || dt == backend.Flex32 }

// isHalf reports whether dt is F16 or BF16 (stored as uint16 bits).
func isHalf(dt backend.DType) bool { return dt == backend.F16 || dt == backend.BF16 }

// castStorage converts dense storage of dtype from to dtype to.
func castStorage(s storage, from, to backend.DType) storage {
	if from == to || (isF32Store(from) && isF32Store(to)) {
		return s
	}
	switch {
	case isHalf(from):
		f := decodeHalf(from, ints[uint16](s))
		if isF32Store(to) {
			return f // already the result: no second copy
		}
		s = f
	case from == backend.Bool:
		b := bools(s)
		u := make(ivec[uint8], len(b))
		for i, v := range b {
			if v {
				u[i] = 1
			}
		}
		if to == backend.U8 {
			return ist(u)
		}
		s = ist(u)
	}
	return s.(numeric).castTo(to)
}

// decodeHalf widens F16 or BF16 bits to float32 storage (exact).
func decodeHalf(dt backend.DType, s ivec[uint16]) *fvec[float32] {
	out := make(fvec[float32], len(s))
	dec := ir.DecodeF16
	if dt == backend.BF16 {
		dec = ir.DecodeBF16
	}
	parallelFor(len(s), func(lo, hi int) { dec(out[lo:hi], s[lo:hi]) })
	return &out
}

// encodeHalf rounds float32 values to F16 or BF16 bits, nearest even.
func encodeHalf(dt backend.DType, s []float32) *ivec[uint16] {
	out := make(ivec[uint16], len(s))
	enc := ir.EncodeF16
	if dt == backend.BF16 {
		enc = ir.EncodeBF16
	}
	parallelFor(len(s), func(lo, hi int) { enc(out[lo:hi], s[lo:hi]) })
	return &out
}

// toHalf rounds numbers to F16 or BF16 bits once (float32 sources directly,
// others from their float64 value).
func toHalf[S number](dt backend.DType, src []S) *ivec[uint16] {
	if f, ok := any(src).([]float32); ok {
		return encodeHalf(dt, f)
	}
	out := make(ivec[uint16], len(src))
	enc := backend.F16FromFloat64
	if dt == backend.BF16 {
		enc = backend.BF16FromFloat64
	}
	parallelFor(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = enc(float64(src[i]))
		}
	})
	return &out
}

// convertT converts with Go's conversion (floats round to nearest even,
// integers wrap).
func convertT[S, D number](src []S) []D {
	out := make([]D, len(src))
	parallelFor(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = D(src[i])
		}
	})
	return out
}

// intLimits returns the smallest and largest value of D.
func intLimits[D integer]() (lo, hi D) {
	hi = 1
	for {
		n := hi<<1 | 1
		if n <= hi {
			break
		}
		hi = n
	}
	var zero D
	if ^zero < 0 {
		lo = -hi - 1
	}
	return lo, hi
}

// floatToInt truncates toward zero, saturating at D's range; NaN gives 0.
func floatToInt[S float, D integer](src []S) []D {
	dmin, dmax := intLimits[D]()
	lo, hi := float64(dmin), float64(dmax)
	out := make([]D, len(src))
	parallelFor(len(src), func(a, b int) {
		for i := a; i < b; i++ {
			x := math.Trunc(float64(src[i]))
			switch {
			case x != x:
				out[i] = 0
			case x <= lo:
				out[i] = dmin
			case x >= hi:
				out[i] = dmax
			default:
				out[i] = D(x)
			}
		}
	})
	return out
}

// nonzero returns x != 0 elementwise.
func nonzero[T number](src []T) *bvec {
	out := make(bvec, len(src))
	for i, v := range src {
		out[i] = v != 0
	}
	return &out
}

func (p *fvec[T]) castTo(dt backend.DType) storage {
	s := *p
	switch dt {
	case backend.F64:
		return fst(convertT[T, float64](s))
	case backend.F32, backend.Flex32:
		return fst(convertT[T, float32](s))
	case backend.F16, backend.BF16:
		return toHalf(dt, []T(s))
	case backend.I64:
		return ist(floatToInt[T, int64](s))
	case backend.I32:
		return ist(floatToInt[T, int32](s))
	case backend.I16:
		return ist(floatToInt[T, int16](s))
	case backend.I8:
		return ist(floatToInt[T, int8](s))
	case backend.U64:
		return ist(floatToInt[T, uint64](s))
	case backend.U32:
		return ist(floatToInt[T, uint32](s))
	case backend.U16:
		return ist(floatToInt[T, uint16](s))
	case backend.U8:
		return ist(floatToInt[T, uint8](s))
	}
	return nonzero([]T(s))
}

func (p *ivec[T]) castTo(dt backend.DType) storage {
	s := *p
	switch dt {
	case backend.F64:
		return fst(convertT[T, float64](s))
	case backend.F32, backend.Flex32:
		return fst(convertT[T, float32](s))
	case backend.F16, backend.BF16:
		return toHalf(dt, []T(s))
	case backend.I64:
		return ist(convertT[T, int64](s))
	case backend.I32:
		return ist(convertT[T, int32](s))
	case backend.I16:
		return ist(convertT[T, int16](s))
	case backend.I8:
		return ist(convertT[T, int8](s))
	case backend.U64:
		return ist(convertT[T, uint64](s))
	case backend.U32:
		return ist(convertT[T, uint32](s))
	case backend.U16:
		return ist(convertT[T, uint16](s))
	case backend.U8:
		return ist(convertT[T, uint8](s))
	}
	return nonzero([]T(s))
}

func (p *bvec) castTo(dt backend.DType) storage { return castStorage(p, backend.Bool, dt) }

// computeOperand returns the storage arithmetic reads for t, with its
// strides and offset: t's own storage, or for F16/BF16 a dense float32
// copy.
func computeOperand(t *Tensor) (storage, []int, int) {
	if isHalf(t.dtype) {
		return decodeHalf(t.dtype, ints[uint16](t.dense())), layout.RowMajorStrides(t.shape), 0
	}
	return t.data, t.strides, t.offset
}

// fromCompute wraps contiguous compute storage as a tensor of dt, rounding
// float32 back to F16/BF16 bits when dt is a half type.
func fromCompute(dt backend.DType, shape []int, s storage) *Tensor {
	if isHalf(dt) {
		if f, ok := s.(*fvec[float32]); ok {
			s = encodeHalf(dt, *f)
		}
	}
	return newTensor(dt, shape, s)
}
