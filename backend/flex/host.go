package flex

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

// Flex tensors are the host tensors of backend/internal/host: this file
// installs the accessors through which backends built on flex (cpu) read
// their storage and wrap the buffers they compute, so that every op they
// do not accelerate still runs here, through Exec.

func init() {
	host.Install(host.Accessors{
		Float32:    float32View,
		Float64:    float64View,
		Bool:       boolView,
		NewFloat32: newHostFloat32,
		NewFloat64: func(shape []int, data []float64) ir.Tensor { return newHost(backend.F64, shape, fvec[float64](data)) },
		NewBool:    func(shape []int, data []bool) ir.Tensor { return newHost(backend.Bool, shape, bvec(data)) },
	})
}

// float32View returns the view of a flex tensor whose storage holds
// float32 (F32 and Flex32).
func float32View(x ir.Tensor) (host.View[float32], bool) {
	if t, ok := x.(*Tensor); ok {
		if s, ok := t.data.(*fvec[float32]); ok {
			return host.View[float32]{Data: *s, Shape: t.shape, Strides: t.strides, Offset: t.offset}, true
		}
	}
	return host.View[float32]{}, false
}

// float64View returns the view of an F64 flex tensor.
func float64View(x ir.Tensor) (host.View[float64], bool) {
	if t, ok := x.(*Tensor); ok {
		if s, ok := t.data.(*fvec[float64]); ok {
			return host.View[float64]{Data: *s, Shape: t.shape, Strides: t.strides, Offset: t.offset}, true
		}
	}
	return host.View[float64]{}, false
}

// boolView returns the view of a Bool flex tensor.
func boolView(x ir.Tensor) (host.View[bool], bool) {
	if t, ok := x.(*Tensor); ok {
		if s, ok := t.data.(*bvec); ok {
			return host.View[bool]{Data: *s, Shape: t.shape, Strides: t.strides, Offset: t.offset}, true
		}
	}
	return host.View[bool]{}, false
}

func newHostFloat32(dt ir.DType, shape []int, data []float32) ir.Tensor {
	if !isF32Store(dt) {
		panic(fmt.Sprintf("flex: host.NewFloat32 with dtype %v", dt))
	}
	return newHost(dt, shape, fvec[float32](data))
}

// newHost wraps a contiguous slice after checking its length; the tensor
// and its storage handle are one allocation.
func newHost[S ~[]E, P interface {
	*S
	storage
}, E any](dt ir.DType, shape []int, s S) *Tensor {
	if n := numel(shape); n != len(s) {
		panic(fmt.Sprintf("flex: %d elements for shape %v", len(s), shape))
	}
	return newTensorOf[S, P](dt, shape, s)
}
