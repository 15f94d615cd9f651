package cpu

import (
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindCast, (*Backend).cast, nil) }

// cast converts In[0] to op.DType with flex's semantics. A contiguous Bool
// tensor cast to F32 or Flex32 (the 0/1 masks of gradients) is converted
// in parallel into a recycled buffer; every other conversion runs on flex.
func (be *Backend) cast(op ir.Op) ir.Outputs {
	if isF32(op.DType) && op.In[0].DType() == backend.Bool {
		if v, ok := host.Bool(op.In[0]); ok {
			if src, ok := v.Contiguous(); ok {
				out := be.f32(len(src))
				if len(src) < serialElems {
					boolToF32(out, src)
				} else {
					forChunks(len(src), func(lo, hi int) { boolToF32(out[lo:hi], src[lo:hi]) })
				}
				return ir.One(host.NewFloat32(op.DType, op.Shape, out))
			}
		}
	}
	return be.flex.Exec(op)
}

// boolToF32 writes 0 or 1 for each element of src.
func boolToF32(out []float32, src []bool) {
	bytes := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(src))), len(src))
	out = out[:len(bytes)]
	for i, b := range bytes {
		out[i] = float32(b) // a Go bool is stored as 0 or 1
	}
}
