package backend

import "github.com/emberml/ember/ir"

// The types below are defined in package ir, the bottom layer of Ember,
// and re-exported here so that backend code can name them without
// importing ir for every signature.

// DType is the element type of a tensor's storage (see ir.DType).
type DType = ir.DType

// FloatDType is the subset of float dtypes (see ir.FloatDType).
type FloatDType = ir.FloatDType

// IntDType is the subset of integer dtypes (see ir.IntDType).
type IntDType = ir.IntDType

// BoolDType says how Bool tensors are stored (see ir.BoolDType).
type BoolDType = ir.BoolDType

// TensorData is a tensor's value on the host (see ir.TensorData).
type TensorData = ir.TensorData

// Range selects Start, Start+Step, ... < End along one axis (see ir.Range).
type Range = ir.Range

// ConvOptions are a 2-d convolution's attributes (see ir.ConvOptions).
type ConvOptions = ir.ConvOptions

// PoolOptions are a 2-d pooling's window attributes (see ir.PoolOptions).
type PoolOptions = ir.PoolOptions

// Distribution is a random distribution (see ir.Distribution).
type Distribution = ir.Distribution

// DistributionKind names a random distribution (see ir.DistributionKind).
type DistributionKind = ir.DistributionKind

// UnaryOp names an elementwise unary primitive (see ir.UnaryOp).
type UnaryOp = ir.UnaryOp

// BinaryOp names an elementwise binary primitive (see ir.BinaryOp).
type BinaryOp = ir.BinaryOp

// ReduceOp names a reduction (see ir.ReduceOp).
type ReduceOp = ir.ReduceOp

// The dtypes (see ir).
const (
	F64    = ir.F64
	F32    = ir.F32
	Flex32 = ir.Flex32
	F16    = ir.F16
	BF16   = ir.BF16
	I64    = ir.I64
	I32    = ir.I32
	I16    = ir.I16
	I8     = ir.I8
	U64    = ir.U64
	U32    = ir.U32
	U16    = ir.U16
	U8     = ir.U8
	Bool   = ir.Bool
)

// The typed dtype subsets and bool stores (see ir).
const (
	FloatF64    = ir.FloatF64
	FloatF32    = ir.FloatF32
	FloatFlex32 = ir.FloatFlex32
	FloatF16    = ir.FloatF16
	FloatBF16   = ir.FloatBF16
	IntI64      = ir.IntI64
	IntI32      = ir.IntI32
	IntI16      = ir.IntI16
	IntI8       = ir.IntI8
	IntU64      = ir.IntU64
	IntU32      = ir.IntU32
	IntU16      = ir.IntU16
	IntU8       = ir.IntU8
	BoolNative  = ir.BoolNative
	BoolU8      = ir.BoolU8
	BoolU32     = ir.BoolU32
)

// The distributions (see ir).
const (
	DistDefault   = ir.DistDefault
	DistUniform   = ir.DistUniform
	DistNormal    = ir.DistNormal
	DistBernoulli = ir.DistBernoulli
)

// The unary ops (see ir).
const (
	OpNeg     = ir.OpNeg
	OpAbs     = ir.OpAbs
	OpSign    = ir.OpSign
	OpExp     = ir.OpExp
	OpLog     = ir.OpLog
	OpLog1p   = ir.OpLog1p
	OpExpm1   = ir.OpExpm1
	OpSqrt    = ir.OpSqrt
	OpRsqrt   = ir.OpRsqrt
	OpRecip   = ir.OpRecip
	OpSin     = ir.OpSin
	OpCos     = ir.OpCos
	OpTanh    = ir.OpTanh
	OpSigmoid = ir.OpSigmoid
	OpErf     = ir.OpErf
	OpFloor   = ir.OpFloor
	OpCeil    = ir.OpCeil
	OpRound   = ir.OpRound
	OpNot     = ir.OpNot
)

// The binary ops (see ir).
const (
	OpAdd      = ir.OpAdd
	OpSub      = ir.OpSub
	OpMul      = ir.OpMul
	OpDiv      = ir.OpDiv
	OpFloorDiv = ir.OpFloorDiv
	OpRem      = ir.OpRem
	OpMod      = ir.OpMod
	OpPow      = ir.OpPow
	OpMax      = ir.OpMax
	OpMin      = ir.OpMin
	OpAtan2    = ir.OpAtan2
	OpEq       = ir.OpEq
	OpNe       = ir.OpNe
	OpLt       = ir.OpLt
	OpLe       = ir.OpLe
	OpGt       = ir.OpGt
	OpGe       = ir.OpGe
	OpAnd      = ir.OpAnd
	OpOr       = ir.OpOr
	OpXor      = ir.OpXor
	OpShl      = ir.OpShl
	OpShr      = ir.OpShr
)

// The reductions (see ir).
const (
	ReduceSum    = ir.ReduceSum
	ReduceProd   = ir.ReduceProd
	ReduceMax    = ir.ReduceMax
	ReduceMin    = ir.ReduceMin
	ReduceArgMax = ir.ReduceArgMax
	ReduceArgMin = ir.ReduceArgMin
)

// AllDTypes lists every valid dtype in declaration order.
var AllDTypes = ir.AllDTypes

// NumElements is the product of the shape's sizes (1 for rank 0).
func NumElements(shape []int) int { return ir.NumElements(shape) }

// Promote returns the dtype two operands are converted to (ir.Promote).
func Promote(a, b DType) DType { return ir.Promote(a, b) }

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, error) { return ir.ParseDType(s) }

// NewTensorData wraps bytes as TensorData after checking their length.
func NewTensorData(shape []int, dt DType, b []byte) (*TensorData, error) {
	return ir.NewTensorData(shape, dt, b)
}

// PoolOutputSize returns the pooled spatial size [Ho, Wo] (ir.PoolOutputSize).
func PoolOutputSize(h, w int, o PoolOptions) [2]int { return ir.PoolOutputSize(h, w, o) }

// BF16FromFloat32 rounds to the nearest bfloat16, ties to even.
func BF16FromFloat32(f float32) uint16 { return ir.BF16FromFloat32(f) }

// BF16ToFloat32 returns a bfloat16's exact value.
func BF16ToFloat32(b uint16) float32 { return ir.BF16ToFloat32(b) }

// BF16FromFloat64 rounds to the nearest bfloat16, ties to even.
func BF16FromFloat64(f float64) uint16 { return ir.BF16FromFloat64(f) }

// F16FromFloat32 rounds to the nearest binary16, ties to even.
func F16FromFloat32(f float32) uint16 { return ir.F16FromFloat32(f) }

// F16ToFloat32 returns a binary16's exact value.
func F16ToFloat32(h uint16) float32 { return ir.F16ToFloat32(h) }

// F16FromFloat64 rounds to the nearest binary16, ties to even.
func F16FromFloat64(f float64) uint16 { return ir.F16FromFloat64(f) }
