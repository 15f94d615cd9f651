//go:build linux && (amd64 || arm64)

package vulkan

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindGather, (*Backend).gather, nil)
	kernels.Set(ir.KindScatterAdd, (*Backend).scatterAdd, nil)
	kernels.Set(ir.KindIndexSelect, (*Backend).indexSelect, nil)
}

// The indexing kernels take indices the caller has checked (the root
// package checks them on the host for this backend, which is not a
// backend.IndexChecker); the shaders clamp them so that no program can
// read outside a buffer.

// gather is the kernel of KindGather (PyTorch's gather): out has the
// index's shape and out[p] = x[p with axis coordinate index[p]].
func (b *Backend) gather(op ir.Op) ir.Outputs {
	x, ix := b.contiguous(tensorOf(op.In[0])), b.contiguous(tensorOf(op.In[1]))
	out := b.empty("gather", op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	rank := len(ix.shape)
	if rank > 8 {
		panic(unsupportedRank(b, "gather", rank))
	}
	p := make([]uint32, 23)
	p[0], p[1], p[2] = uint32(n), uint32(rank), uint32(op.Axis)
	for i := range rank {
		p[3+i] = uint32(ix.shape[i])
		p[11+i] = uint32(x.strides[i])
	}
	p[19], p[20], p[21], p[22] = uint32(x.offset), uint32(x.shape[op.Axis]), uint32(ix.offset), 0
	b.run("gather", dispatch{key: pipeKey{name: "gather_" + widthName(x.dtype)}, params: p,
		bufs: []*Buffer{out.buf, x.buf, ix.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}

// indexSelect is the kernel of KindIndexSelect (PyTorch's index_select):
// the entries of x along op.Axis named by the rank-1 index.
func (b *Backend) indexSelect(op ir.Op) ir.Outputs {
	x, ix := b.contiguous(tensorOf(op.In[0])), b.contiguous(tensorOf(op.In[1]))
	out := b.empty("index_select", op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	inner := backend.NumElements(x.shape[op.Axis+1:])
	p := []uint32{uint32(n), uint32(inner), uint32(ix.shape[0]), uint32(x.shape[op.Axis]), uint32(x.offset), uint32(ix.offset), 0}
	b.run("index_select", dispatch{key: pipeKey{name: "index_select_" + widthName(x.dtype)}, params: p,
		bufs: []*Buffer{out.buf, x.buf, ix.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}

// scatterAdd is the kernel of KindScatterAdd (PyTorch's scatter_add): a
// copy of x with src[p] added at p with axis coordinate index[p]. Each
// output element sums its contributions in the order of the index axis
// (deterministic, as the sequential reference); F16 and BF16 accumulate
// in float32 and round once, integers wrap, Bool ors.
func (b *Backend) scatterAdd(op ir.Op) ir.Outputs {
	x := b.contiguous(tensorOf(op.In[0]))
	ix, src := b.contiguous(tensorOf(op.In[1])), b.contiguous(tensorOf(op.In[2]))
	out := b.empty("scatter_add", op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	rank := len(x.shape)
	if rank > 8 {
		panic(unsupportedRank(b, "scatter_add", rank))
	}
	p := make([]uint32, 23)
	p[0], p[1], p[2] = uint32(n), uint32(rank), uint32(op.Axis)
	for i := range rank {
		p[3+i] = uint32(x.shape[i])
		p[11+i] = uint32(ix.shape[i])
	}
	p[19], p[20], p[21], p[22] = uint32(x.offset), uint32(ix.offset), uint32(src.offset), 0
	b.run("scatter_add", dispatch{key: pipeKey{name: "scatter_add_" + dtypeName(x.dtype)}, params: p,
		bufs: []*Buffer{out.buf, x.buf, ix.buf, src.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}
