package ember

import "github.com/emberml/ember/backend"

// DType is the element type of a tensor; see backend.DType for the list and
// backend.Promote for the promotion rules (PyTorch's, stated once there).
type DType = backend.DType

// FloatDType is the subset of float dtypes (F64, F32, Flex32, F16, BF16).
type FloatDType = backend.FloatDType

// IntDType is the subset of integer dtypes (I64 ... U8).
type IntDType = backend.IntDType

// BoolDType says how Bool tensors are stored (Native, U8 or U32).
type BoolDType = backend.BoolDType

// TensorData is a tensor's value on the host (shape, dtype, little-endian
// bytes); see backend.TensorData.
type TensorData = backend.TensorData

// Distribution is a random distribution for Random; build it with Uniform,
// Normal, Bernoulli or DefaultDistribution.
type Distribution = backend.Distribution

// Range selects Start, Start+Step, ... < End along one axis (see Tensor.Slice).
type Range = backend.Range

// ConvOptions are a 2-d convolution's stride, padding, dilation, groups and
// output padding (PyTorch's names); zero values mean stride 1, padding 0,
// dilation 1, groups 1.
type ConvOptions = backend.ConvOptions

// The dtypes.
const (
	F64    = backend.F64
	F32    = backend.F32
	Flex32 = backend.Flex32
	F16    = backend.F16
	BF16   = backend.BF16
	I64    = backend.I64
	I32    = backend.I32
	I16    = backend.I16
	I8     = backend.I8
	U64    = backend.U64
	U32    = backend.U32
	U16    = backend.U16
	U8     = backend.U8
	Bool   = backend.Bool
)

// The bool stores.
const (
	BoolNative = backend.BoolNative
	BoolU8     = backend.BoolU8
	BoolU32    = backend.BoolU32
)

// DefaultDistribution is uniform on [0, 1).
func DefaultDistribution() Distribution { return Distribution{Kind: backend.DistDefault} }

// Uniform is uniform on [low, high).
func Uniform(low, high float64) Distribution {
	return Distribution{Kind: backend.DistUniform, A: low, B: high}
}

// Normal is normal with the given mean and standard deviation.
func Normal(mean, std float64) Distribution {
	return Distribution{Kind: backend.DistNormal, A: mean, B: std}
}

// Bernoulli is 1 with probability p, else 0.
func Bernoulli(p float64) Distribution { return Distribution{Kind: backend.DistBernoulli, A: p} }

// PromoteTypes returns the dtype two operands are converted to before a
// binary op (backend.Promote).
func PromoteTypes(a, b DType) DType { return backend.Promote(a, b) }

// The float dtypes as FloatDType and the int dtypes as IntDType values, for
// DeviceConfig.
const (
	FloatF64    = backend.FloatF64
	FloatF32    = backend.FloatF32
	FloatFlex32 = backend.FloatFlex32
	FloatF16    = backend.FloatF16
	FloatBF16   = backend.FloatBF16
	IntI64      = backend.IntI64
	IntI32      = backend.IntI32
	IntI16      = backend.IntI16
	IntI8       = backend.IntI8
	IntU64      = backend.IntU64
	IntU32      = backend.IntU32
	IntU16      = backend.IntU16
	IntU8       = backend.IntU8
)
