package flex

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// Flex tensors are the host tensors of backend/internal/host: this file
// installs the accessors through which backends built on flex (cpu) read
// their storage and wrap the buffers they compute, so that every op they
// do not accelerate still runs here, through Exec.

func init() {
	host.Install(host.Accessors{
		Float32:           float32View,
		Float64:           float64View,
		Bool:              boolView,
		NewFloat32:        newHostFloat32,
		NewFloat64:        func(shape []int, data []float64) ir.Tensor { return newHost(backend.F64, shape, fvec[float64](data)) },
		NewBool:           func(shape []int, data []bool) ir.Tensor { return newHost(backend.Bool, shape, bvec(data)) },
		ContiguousFloat32: contiguousFloat32,
		MakeFloat32:       makeFloat32,
	})
}

// makeFloat32 is makeTensor for float32 storage with its small case
// written out: the cpu backend makes every small float result with it.
func makeFloat32(dt ir.DType, shape []int) (ir.Tensor, []float32) {
	if !isF32Store(dt) {
		panic(fmt.Sprintf("flex: host.MakeFloat32 with dtype %v", dt))
	}
	n := numel(shape)
	if n > host.InlineElems {
		return makeTensor[fvec[float32]](dt, shape)
	}
	a := &tensorInline[fvec[float32], float32]{}
	a.hdr = a.buf[:n:n]
	a.t.initContiguous(dt, shape, &a.hdr)
	return &a.t, a.hdr
}

// tensorInline is a small tensor allocated together with its storage
// handle and its elements.
type tensorInline[S ~[]E, E any] struct {
	t   Tensor
	hdr S
	buf [host.InlineElems]E
}

// makeTensor returns a new zeroed contiguous tensor of shape and its
// elements: for at most host.InlineElems elements, one allocation.
func makeTensor[S ~[]E, P interface {
	*S
	storage
}, E any](dt ir.DType, shape []int) (*Tensor, S) {
	n := numel(shape)
	if n > host.InlineElems {
		s := S(make([]E, n))
		return newTensorOf[S, P](dt, shape, s), s
	}
	a := &tensorInline[S, E]{}
	a.hdr = a.buf[:n:n]
	a.t.initContiguous(dt, shape, P(&a.hdr))
	return &a.t, a.hdr
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

// contiguousFloat32 returns the row-major elements of a contiguous flex
// tensor whose storage holds float32.
func contiguousFloat32(x ir.Tensor) ([]float32, bool) {
	if t, ok := x.(*Tensor); ok {
		if s, ok := t.data.(*fvec[float32]); ok && layout.IsRowMajor(t.shape, t.strides) {
			n := numel(t.shape)
			if n == 0 {
				return nil, true // an empty view's offset may lie past its storage
			}
			return (*s)[t.offset : t.offset+n : t.offset+n], true
		}
	}
	return nil, false
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
