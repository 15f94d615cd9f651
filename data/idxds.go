package data

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// DType returns the ember dtype holding t's elements exactly: U8, I8,
// I16, I32, F32 or F64, or 0 (no valid dtype) for an unknown code.
func (t IDXType) DType() ember.DType {
	switch t {
	case IDXUint8:
		return ember.U8
	case IDXInt8:
		return ember.I8
	case IDXInt16:
		return ember.I16
	case IDXInt32:
		return ember.I32
	case IDXFloat32:
		return ember.F32
	case IDXFloat64:
		return ember.F64
	}
	return 0
}

// TensorData returns the array as ember.TensorData of shape Dims and
// dtype Type.DType(), its elements converted from the file's big-endian
// order to little-endian (uint8 data is shared, not copied). It panics if
// Type is unknown or Data's length disagrees with Dims, which ReadIDX
// never returns.
func (x *IDX) TensorData() *ember.TensorData {
	dt := x.Type.DType()
	if !dt.Valid() || len(x.Data) != x.Len()*x.Type.Size() {
		panic(fmt.Sprintf("data: IDX.TensorData: %v %v with %d bytes", x.Type, x.Dims, len(x.Data)))
	}
	td := &ember.TensorData{Shape: append([]int(nil), x.Dims...), DType: dt}
	sz := x.Type.Size()
	if sz == 1 {
		td.Bytes = x.Data
		return td
	}
	td.Bytes = make([]byte, len(x.Data))
	for i := 0; i < len(x.Data); i += sz {
		for k := range sz {
			td.Bytes[i+k] = x.Data[i+sz-1-k]
		}
	}
	return td
}

// float64At returns element i as a float64 (exact for every IDX type).
func (x *IDX) float64At(i int) float64 {
	be := binary.BigEndian
	switch x.Type {
	case IDXUint8:
		return float64(x.Data[i])
	case IDXInt8:
		return float64(int8(x.Data[i]))
	case IDXInt16:
		return float64(int16(be.Uint16(x.Data[2*i:])))
	case IDXInt32:
		return float64(int32(be.Uint32(x.Data[4*i:])))
	case IDXFloat32:
		return float64(math.Float32frombits(be.Uint32(x.Data[4*i:])))
	}
	return math.Float64frombits(be.Uint64(x.Data[8*i:]))
}

// IDXOptions configures ReadIDXPair. The zero value reads features as F32
// (unscaled) and integer targets as I64 class indices.
type IDXOptions struct {
	// FeatureDType is the features' dtype; 0 means F32. Any dtype is
	// accepted when Scale is 1: the conversion must then be exact
	// (ember.TensorData.TryConvert); with another Scale it must be F64,
	// F32, F16 or BF16.
	FeatureDType ember.DType
	// Scale multiplies every feature value (in float64, then rounded to
	// FeatureDType); 0 means 1. For example 1.0/255 maps bytes to [0, 1].
	Scale float64
	// TargetDType is the targets' dtype; 0 means I64 for an integer IDX
	// file (class indices) and F32 for a float one. The conversion must
	// be exact.
	TargetDType ember.DType
	// Limits bound what each file may hold (see ReadIDXWith).
	Limits IDXLimits
}

// ReadIDXPair reads a dataset from two IDX files (plain or gzip), any
// pair with the same leading size n: features [n, ...] and targets [n]
// (scalar targets, such as class labels) or [n, ...]. MNIST is such a
// pair (images [n 28 28] uint8, labels [n] uint8), and so are Fashion-
// MNIST, KMNIST and EMNIST. Errors: those of ReadIDXFileWith; a leading
// size that differs between the files, a conversion that would lose
// information, a value out of the range of FeatureDType, and options that
// do not fit (wrap ErrFormat unless they are the options' fault).
func ReadIDXPair(featuresPath, targetsPath string, o IDXOptions) (*TensorDataset, error) {
	scale := o.Scale
	if scale == 0 {
		scale = 1
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("data: ReadIDXPair: Scale %v, want a finite number", o.Scale)
	}
	fdt := orDefault(o.FeatureDType)
	if !fdt.Valid() || scale != 1 && !csvFloat(fdt) {
		return nil, fmt.Errorf("data: ReadIDXPair: FeatureDType %v with Scale %v: want a valid dtype, a float one (f64, f32, f16, bf16) to scale", o.FeatureDType, scale)
	}
	if o.TargetDType != 0 && !o.TargetDType.Valid() {
		return nil, fmt.Errorf("data: ReadIDXPair: TargetDType %v is not a valid dtype", o.TargetDType)
	}
	fx, err := ReadIDXFileWith(featuresPath, o.Limits)
	if err != nil {
		return nil, err
	}
	tx, err := ReadIDXFileWith(targetsPath, o.Limits)
	if err != nil {
		return nil, err
	}
	if fx.Dims[0] != tx.Dims[0] {
		return nil, formatErr(targetsPath, "%d targets for %d examples in %s", tx.Dims[0], fx.Dims[0], featuresPath)
	}
	features, err := convertIDX(fx, fdt, scale)
	if err != nil {
		return nil, formatErr(featuresPath, "%v", err)
	}
	tdt := o.TargetDType
	if tdt == 0 {
		tdt = ember.I64
		if tx.Type == IDXFloat32 || tx.Type == IDXFloat64 {
			tdt = ember.F32
		}
	}
	targets, err := convertIDX(tx, tdt, 1)
	if err != nil {
		return nil, formatErr(targetsPath, "%v", err)
	}
	return newTensorDataset([]string{featuresPath}, []*ember.TensorData{features}, []*ember.TensorData{targets})
}

// convertIDX returns x as tensor data of dtype dt, each value multiplied
// by scale (which needs a float dt).
func convertIDX(x *IDX, dt ember.DType, scale float64) (*ember.TensorData, error) {
	if scale == 1 {
		td := x.TensorData()
		if td.DType == dt {
			return td, nil
		}
		return td.TryConvert(dt)
	}
	n := x.Len()
	out := make([]byte, 0, n*dt.Size())
	for i := range n {
		var ok bool
		if out, ok = appendFloat(out, dt, x.float64At(i)*scale); !ok {
			return nil, fmt.Errorf("element %d (%v) times %v is out of the range of %v", i, x.float64At(i), scale, dt)
		}
	}
	return &ember.TensorData{Shape: append([]int(nil), x.Dims...), DType: dt, Bytes: out}, nil
}
