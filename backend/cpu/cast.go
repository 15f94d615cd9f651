package cpu

import (
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// Cast converts x to dt with flex's semantics (see backend.Backend.Cast).
// A contiguous Bool tensor cast to F32 or Flex32 (the 0/1 masks of
// gradients) is converted in parallel into a recycled buffer; every other
// conversion runs on flex.
func (be *Backend) Cast(x backend.Tensor, dt backend.DType) backend.Tensor {
	t := flex.AsTensor(x)
	if t.DType() == backend.Bool && isF32(dt) {
		if src, ok := t.ContiguousBool(); ok {
			out := be.f32(len(src))
			bytes := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(src))), len(src))
			forChunks(len(src), func(lo, hi int) {
				o := out[lo:hi]
				for i, b := range bytes[lo:hi] {
					o[i] = float32(b) // a Go bool is stored as 0 or 1
				}
			})
			return flex.NewFloat32(dt, append([]int(nil), t.Shape()...), out)
		}
	}
	return be.Backend.Cast(x, dt)
}
