package ndarray

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// FromData copies host data (ir.TensorData: little-endian, row-major;
// Bool bytes other than 0 are true) into a new tensor. It panics with an
// error when the number of bytes does not match the shape and dtype.
func (be *Backend) FromData(data *backend.TensorData) backend.Tensor {
	if n, err := ir.NumBytes(data.Shape, data.DType); err != nil || n != len(data.Bytes) || !data.DType.Valid() {
		panic(fmt.Errorf("ndarray: from data: shape %v of %v with %d bytes", data.Shape, data.DType, len(data.Bytes)))
	}
	return fromData(data)
}

// fromData decodes valid data (ir.As converts exactly to the class's Go
// type).
func fromData(data *backend.TensorData) *Tensor {
	t := &Tensor{dtype: data.DType, shape: append([]int{}, data.Shape...)}
	switch classOf(data.DType) {
	case floatClass:
		t.f = ir.As[float64](data)
	case intClass:
		t.i = ir.As[int64](data)
	case uintClass:
		t.u = ir.As[uint64](data)
	default:
		t.b = ir.As[bool](data)
	}
	return t
}

// ToData copies x to the host as ir.TensorData (contiguous row-major
// little-endian bytes, Bool as 0/1 bytes). The error is always nil: the
// backend runs every op eagerly.
func (be *Backend) ToData(x backend.Tensor) (*backend.TensorData, error) {
	return toData(asTensor(x)), nil
}

// toData encodes t as data of its own dtype: the class's values, exact in
// the dtype, converted by ir.TensorData.Convert.
func toData(t *Tensor) *backend.TensorData {
	var d *backend.TensorData
	switch classOf(t.dtype) {
	case floatClass:
		d = ir.FromSlice(t.f, t.shape)
	case intClass:
		d = ir.FromSlice(t.i, t.shape)
	case uintClass:
		d = ir.FromSlice(t.u, t.shape)
	default:
		d = ir.FromSlice(t.b, t.shape)
	}
	if d.DType == t.dtype {
		return d
	}
	return d.Convert(t.dtype)
}

// cast converts In[0] to op.DType with ir.TensorData.Convert's semantics,
// Ember's Cast: floats to floats round to nearest even, once; integers to
// floats round correctly; floats to integers truncate toward zero and
// saturate at the target's range, NaN giving 0; integers to integers wrap
// (two's complement); anything to Bool is x != 0 (NaN is true); Bool is 0
// or 1.
func (be *Backend) cast(op ir.Op) *Tensor {
	t := asTensor(op.In[0])
	if t.dtype == op.DType {
		return t
	}
	out := fromData(toData(t).Convert(op.DType))
	out.shape = op.Shape
	return out
}

// scalar returns value converted to dt as Cast converts an F64 (Full's and
// Pad's fill value), as a one-element tensor.
func scalar(value float64, dt backend.DType) *Tensor {
	return fromData(ir.FromSlice([]float64{value}, nil).Convert(dt))
}

// filled returns a tensor of shape and dt whose every element is value
// converted as Cast converts an F64.
func filled(shape []int, dt backend.DType, value float64) *Tensor {
	one, n := scalar(value, dt), ir.NumElements(shape)
	return &Tensor{dtype: dt, shape: shape, f: repeat(one.f, n), i: repeat(one.i, n), u: repeat(one.u, n), b: repeat(one.b, n)}
}
