package cpu

import (
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

// Host-tensor access for the kernels of this package, generic over the
// two float element types (see backend/internal/host).

// float is the element type of the float kernels.
type float interface{ float32 | float64 }

// view returns the strided view of a float host tensor whose storage holds
// T (float32: F32 and Flex32; float64: F64), or false.
func view[T float](t ir.Tensor) (host.View[T], bool) {
	var z T
	if _, ok := any(z).(float32); ok {
		v, ok := host.Float32(t)
		return any(v).(host.View[T]), ok
	}
	v, ok := host.Float64(t)
	return any(v).(host.View[T]), ok
}

// wrap returns a contiguous tensor of dtype dt (F32 or Flex32 for float32,
// F64 for float64) holding data, which it keeps, as it keeps shape.
func wrap[T float](dt ir.DType, shape []int, data []T) ir.Tensor {
	switch d := any(data).(type) {
	case []float32:
		return host.NewFloat32(dt, shape, d)
	default:
		return host.NewFloat64(shape, any(data).([]float64))
	}
}
