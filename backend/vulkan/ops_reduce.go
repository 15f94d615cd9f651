//go:build linux && (amd64 || arm64)

package vulkan

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindReduce, (*Backend).reduce, nil) }

// reduceItems is the number of work items a reduction pass aims for: a
// short output with a long axis is cut into chunks of the axis, reduced in
// further passes.
const reduceItems = 16384

// reduce is the kernel of KindReduce: op.Sub along op.Axis of op.In[0]
// (PyTorch's sum/prod/amax/amin/argmax/argmin with dim and keepdim).
// Semantics are backend/flex's (shaders/reduce.comp): float sums and
// products accumulate in double, integers wrap, Max/Min and the Arg ops
// propagate NaN with the first NaN's index and take the lowest index on
// ties; on Bool, Sum is "any" and Prod "all". An empty axis gives 0 (Sum)
// and 1 (Prod).
func (b *Backend) reduce(op ir.Op) ir.Outputs {
	x := b.contiguous(tensorOf(op.In[0]))
	r := ir.ReduceOp(op.Sub)
	if x.dtype == backend.Bool {
		switch r {
		case backend.ReduceSum:
			r = backend.ReduceMax
		case backend.ReduceProd:
			r = backend.ReduceMin
		}
	}
	out := b.empty(op.Name(), op.Shape, op.DType)
	outer := backend.NumElements(x.shape[:op.Axis])
	R := x.shape[op.Axis]
	inner := backend.NumElements(x.shape[op.Axis+1:])
	if outer*inner == 0 {
		return ir.One(out)
	}
	key := pipeKey{name: "reduce_" + dtypeName(x.dtype), c1: uint32(r)}
	accSize := 8 // double for floats, the widest integers otherwise
	var ds []dispatch
	var partIn, partInIdx *Buffer
	fromP := 0
	for {
		L, C := R, 1
		if R > 64 && outer*inner < reduceItems {
			L = max(64, (R*outer*inner+reduceItems-1)/reduceItems)
			C = (R + L - 1) / L
		}
		final := C == 1
		p := []uint32{uint32(outer * C * inner), uint32(outer), uint32(R), uint32(inner), uint32(L), uint32(C),
			uint32(fromP), 1, uint32(x.offset), 0}
		var partOut, partOutIdx *Buffer
		if final {
			p[7] = 0
		} else {
			n := uint64(outer * C * inner)
			var err error
			partOut, err = b.d.newBuffer(n*uint64(accSize), false)
			b.must(op.Name(), err)
			partOutIdx, err = b.d.newBuffer(n*8, false)
			b.must(op.Name(), err)
		}
		ds = append(ds, dispatch{key: key, params: p, bufs: []*Buffer{out.buf, x.buf, partIn, partInIdx, partOut, partOutIdx},
			groups: b.d.groups1(outer * C * inner)})
		if final {
			break
		}
		partIn, partInIdx, fromP, R = partOut, partOutIdx, 1, C
	}
	b.run(op.Name(), ds...)
	return ir.One(out)
}
