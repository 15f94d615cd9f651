// Package host is the contract between the backend that defines host
// tensors (backend/flex) and the backends that run their own kernels on
// them (backend/cpu).
//
// A host tensor is a tensor whose elements live in a Go slice in host
// memory, laid out with a shape, strides and an offset, all counted in
// elements: element (i0, i1, ...) is Data[Offset + i0·Strides[0] +
// i1·Strides[1] + ...]. Strides may be zero (an expanded axis) or negative
// (a flipped axis), and several tensors (views) may share one slice. The
// slice of a tensor is never written after the op that made it returns:
// readers must not modify it, and a tensor made with a New function owns
// the slice it was given.
//
// F32 and Flex32 tensors store []float32, F64 tensors []float64 and Bool
// tensors []bool; the accessors here cover those dtypes, which are the
// ones the optimized kernels run on. Every other op, and every other
// dtype, runs through the defining backend's Exec.
//
// The defining backend installs the accessors from its init function
// (Install); a package that uses them imports that backend, so they are
// set before its own init runs.
package host

import (
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// View is the strided layout of a host tensor with element type T: element
// (i0, i1, ...) of a tensor of shape Shape is
// Data[Offset + Σ ik·Strides[k]]. Data is the whole shared slice; Shape and
// Strides belong to the tensor. None of them may be modified.
type View[T any] struct {
	Data    []T
	Shape   []int
	Strides []int
	Offset  int
}

// Contiguous returns the view's elements in row-major order without
// copying (a sub-slice of exactly the tensor's element count, capacity
// included), or false when the layout is not contiguous.
func (v View[T]) Contiguous() ([]T, bool) {
	if !layout.IsRowMajor(v.Shape, v.Strides) {
		return nil, false
	}
	n := ir.NumElements(v.Shape)
	if n == 0 {
		return nil, true // an empty view's offset may lie past its storage
	}
	return v.Data[v.Offset : v.Offset+n : v.Offset+n], true
}

// Accessors are the host-tensor operations the defining backend provides.
// The view functions report false for a tensor of another dtype or one
// that is not a host tensor. The New functions wrap a contiguous row-major
// slice (len(data) must equal the shape's element count) as a tensor,
// keeping shape and data, which the caller must not modify afterwards.
type Accessors struct {
	Float32    func(t ir.Tensor) (View[float32], bool)                  // F32 and Flex32
	Float64    func(t ir.Tensor) (View[float64], bool)                  // F64
	Bool       func(t ir.Tensor) (View[bool], bool)                     // Bool
	NewFloat32 func(dt ir.DType, shape []int, data []float32) ir.Tensor // F32 or Flex32
	NewFloat64 func(shape []int, data []float64) ir.Tensor              // F64
	NewBool    func(shape []int, data []bool) ir.Tensor                 // Bool
	// MakeFloat32 returns a new zeroed contiguous tensor of dtype dt (F32
	// or Flex32) and shape and its writable elements; small tensors hold
	// them inside their own allocation.
	MakeFloat32 func(dt ir.DType, shape []int) (ir.Tensor, []float32)
	// ContiguousFloat32 is Float32 followed by View.Contiguous, in one call.
	ContiguousFloat32 func(t ir.Tensor) ([]float32, bool)
}

var impl Accessors

// Install sets the accessors. The defining backend calls it once, from
// its init function; a second call panics.
func Install(a Accessors) {
	if impl.Float32 != nil {
		panic("host: accessors installed twice")
	}
	impl = a
}

// Float32 returns the view of an F32 or Flex32 host tensor.
func Float32(t ir.Tensor) (View[float32], bool) { return impl.Float32(t) }

// Float64 returns the view of an F64 host tensor.
func Float64(t ir.Tensor) (View[float64], bool) { return impl.Float64(t) }

// Bool returns the view of a Bool host tensor.
func Bool(t ir.Tensor) (View[bool], bool) { return impl.Bool(t) }

// NewFloat32 wraps data as a contiguous tensor of dtype dt (F32 or Flex32)
// and shape; it panics for another dtype or a length mismatch.
func NewFloat32(dt ir.DType, shape []int, data []float32) ir.Tensor {
	return impl.NewFloat32(dt, shape, data)
}

// ContiguousFloat32 returns the elements of a contiguous F32 or Flex32
// host tensor in row-major order (Float32 followed by View.Contiguous, in
// one call), or false.
func ContiguousFloat32(t ir.Tensor) ([]float32, bool) { return impl.ContiguousFloat32(t) }

// MakeFloat32 returns a new zeroed contiguous tensor of dtype dt (F32 or
// Flex32) and shape together with its elements, for the caller to fill in
// before anyone else sees the tensor. A tensor of at most InlineElems
// elements is one allocation holding its elements, its layout and its
// storage handle.
func MakeFloat32(dt ir.DType, shape []int) (ir.Tensor, []float32) { return impl.MakeFloat32(dt, shape) }

// InlineElems is the most elements MakeFloat32 stores inside the tensor's
// own allocation.
const InlineElems = 8

// NewFloat64 wraps data as a contiguous F64 tensor of shape.
func NewFloat64(shape []int, data []float64) ir.Tensor { return impl.NewFloat64(shape, data) }

// NewBool wraps data as a contiguous Bool tensor of shape.
func NewBool(shape []int, data []bool) ir.Tensor { return impl.NewBool(shape, data) }
