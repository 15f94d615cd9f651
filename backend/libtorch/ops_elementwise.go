//go:build libtorch && cgo

package libtorch

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindFull, (*Backend).full, nil)
	kernels.Set(ir.KindArange, (*Backend).arange, nil)
	kernels.Set(ir.KindRandom, (*Backend).random, nil)
	kernels.Set(ir.KindUnary, (*Backend).unary, nil)
	kernels.Set(ir.KindBinary, (*Backend).binary, nil)
	kernels.Set(ir.KindWhere, (*Backend).where, nil)
	kernels.Set(ir.KindCast, (*Backend).cast, nil)
}

// converted returns v converted to dt as Cast converts a float64 (floats
// round to nearest even once, integers truncate toward zero, Bool is
// v != 0), as the shim's lt_full and lt_pad take it: an exactly
// representable float64 for float dtypes and Bool, an int64 for integer
// dtypes. Inference has checked that v fits an integer dtype.
func converted(v float64, dt backend.DType) (float64, int64) {
	switch dt {
	case backend.F32, backend.Flex32:
		return float64(float32(v)), 0
	case backend.F16:
		return float64(backend.F16ToFloat32(backend.F16FromFloat64(v))), 0
	case backend.BF16:
		return float64(backend.BF16ToFloat32(backend.BF16FromFloat64(v))), 0
	case backend.Bool:
		if v != 0 {
			return 1, 0
		}
		return 0, 0
	case backend.F64:
		return v, 0
	}
	return 0, int64(math.Trunc(v))
}

// full makes a tensor of op.Shape filled with op.Scalars[0] converted to
// op.DType (see converted).
func (b *Backend) full(op ir.Op) ir.Outputs {
	f, i := converted(op.Scalars[0], op.DType)
	shape := int64s(op.Shape)
	var out C.lt_out
	check("full", C.lt_full(b.dev, C.int(op.DType), ptr(shape), C.int(len(shape)), C.double(f), C.int64_t(i), &out))
	return ir.One(wrap(out, op.Shape, op.DType))
}

// arange makes [start, start+step, ...] of op.Shape [n]: in the exact
// integer form (ir.ArangeInts) computed in int64, otherwise start + i·step
// in float64, then converted to op.DType as Cast converts.
func (b *Backend) arange(op ir.Op) ir.Outputs {
	n := C.int64_t(op.Shape[0])
	var out C.lt_out
	if start, step, ok := ir.ArangeInts(&op); ok {
		check("arange", C.lt_arange_int(b.dev, C.int(op.DType), n, C.int64_t(start), C.int64_t(step), &out))
	} else {
		check("arange", C.lt_arange_float(b.dev, C.int(op.DType), n, C.double(op.Scalars[0]), C.double(op.Scalars[1]), &out))
	}
	return ir.One(wrap(out, op.Shape, op.DType))
}

// random samples op.Shape from the distribution op.Sub with parameters
// op.Scalars with the backend's generator, in float64 on the host, then
// converts as Cast does: uniform draws on [A, B) ([0, 1) for Default) are
// resampled when rounding to the dtype would reach B, integer dtypes take
// their floor, Bool is Bernoulli(0.5); normal has mean A and standard
// deviation B; Bernoulli is 1 with probability A.
func (b *Backend) random(op ir.Op) ir.Outputs {
	shape := int64s(op.Shape)
	var out C.lt_out
	st := C.lt_random(b.gen, b.dev, C.int(op.DType), ptr(shape), C.int(len(shape)), C.int(op.Sub),
		C.double(op.Scalars[0]), C.double(op.Scalars[1]), &out)
	runtime.KeepAlive(b)
	check("random", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// unary applies op.Sub to In[0] (see the shim: F16/BF16 in float32,
// rounding ops the identity on integers, Not logical on Bool and bitwise on
// integers).
func (b *Backend) unary(op ir.Op) ir.Outputs {
	x := asTensor(op.In[0])
	var out C.lt_out
	st := C.lt_unary(C.int(op.Sub), x.h, &out)
	runtime.KeepAlive(x)
	check(ir.UnaryOp(op.Sub).String(), st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// binary applies op.Sub to In[0] and In[1], broadcast (integer division
// by zero panics with an *Error).
func (b *Backend) binary(op ir.Op) ir.Outputs {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	var out C.lt_out
	st := C.lt_binary(C.int(op.Sub), x.h, y.h, &out)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	check(ir.BinaryOp(op.Sub).String(), st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// where selects In[1] where In[0] holds, else In[2], broadcast.
func (b *Backend) where(op ir.Op) ir.Outputs {
	c, x, y := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	var out C.lt_out
	st := C.lt_where(c.h, x.h, y.h, &out)
	runtime.KeepAlive(c)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	check("where", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}

// cast converts In[0] to op.DType as package flex does: floats to floats
// round to nearest even once, floats to integers truncate toward zero and
// saturate (NaN gives 0), integers wrap, anything to Bool is x != 0. F32
// and Flex32 share a storage: a cast between them is a view.
func (b *Backend) cast(op ir.Op) ir.Outputs {
	x := asTensor(op.In[0])
	var out C.lt_out
	st := C.lt_cast(x.h, C.int(op.DType), &out)
	runtime.KeepAlive(x)
	check("cast", st)
	return ir.One(wrap(out, op.Shape, op.DType))
}
