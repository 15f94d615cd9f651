//go:build linux && (amd64 || arm64)

package vulkan

import (
	"github.com/emberml/ember/backend"
)

// The elementwise family (unary, binary, compare, where, cast, copy, fill)
// shares one operand layout (shaders/ew.glsl): up to three inputs and an
// output, each a view (offset and strides) over the output's shape. Before
// a dispatch the shape is collapsed: axes of size 1 are dropped and
// neighbouring axes merged where every operand's strides allow, so a
// contiguous operation becomes rank 1 and runs on the fast path
// (contiguous or broadcast-scalar operands, 16-byte vectors for 4-byte
// elements).

// ewMaxRank is the rank the shaders take; higher ranks are split over
// their leading axes into several dispatches.
const ewMaxRank = 8

// ewOperand is one operand of an elementwise dispatch: its buffer, its
// offset and its strides over the output's shape (0 on broadcast axes).
type ewOperand struct {
	buf     *Buffer
	offset  int
	strides []int
}

// operandOf returns t broadcast to shape (NumPy rules: leading axes and
// size-1 axes get stride 0).
func operandOf(t *Tensor, shape []int) ewOperand {
	st := make([]int, len(shape))
	lead := len(shape) - len(t.shape)
	for i := range t.shape {
		if t.shape[i] != 1 || shape[lead+i] == 1 {
			st[lead+i] = t.strides[i]
		}
	}
	return ewOperand{buf: t.buf, offset: t.offset, strides: st}
}

// collapse drops size-1 axes and merges neighbouring axes that every
// operand walks as one, returning the new shape and strides.
func collapse(shape []int, ops []ewOperand) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(ops))
	for a, s := range shape {
		if s == 1 {
			continue
		}
		if len(cs) > 0 {
			last := len(cs) - 1
			merge := true
			for k := range ops {
				if cst[k][last] != ops[k].strides[a]*s {
					merge = false
					break
				}
			}
			if merge {
				cs[last] *= s
				for k := range ops {
					cst[k][last] = ops[k].strides[a]
				}
				continue
			}
		}
		cs = append(cs, s)
		for k := range ops {
			cst[k] = append(cst[k], ops[k].strides[a])
		}
	}
	return cs, cst
}

// ewDispatches returns the dispatches of shader variant key over shape for
// ops (the output first), with extra kernel parameters appended at
// EW_EXTRA (49). n = 0 gives none. 16-byte vector accesses are used on
// GPUs only: a software adapter runs each invocation as one lane of a CPU
// vector, where a 16-byte access per lane becomes a slower gather.
func (d *device) ewDispatches(key pipeKey, shape []int, ops []ewOperand, elemSize int, extra ...uint32) []dispatch {
	n := backend.NumElements(shape)
	if n == 0 {
		return nil
	}
	cs, cst := collapse(shape, ops)
	vecSize := elemSize
	if d.adapter.Software() {
		vecSize = 0
	}
	bufs := make([]*Buffer, len(ops))
	for k, o := range ops {
		bufs[k] = o.buf
	}
	var out []dispatch
	var rec func(depth int, offs []int)
	rec = func(lead int, offs []int) {
		if len(cs)-lead <= ewMaxRank {
			out = append(out, dispatch{key: key, bufs: bufs,
				params: ewParams(cs[lead:], cst, lead, offs, vecSize, extra), groups: d.groups1(backend.NumElements(cs[lead:]))})
			return
		}
		for i := 0; i < cs[lead]; i++ {
			next := make([]int, len(offs))
			for k := range offs {
				next[k] = offs[k] + i*cst[k][lead]
			}
			rec(lead+1, next)
		}
	}
	offs := make([]int, len(ops))
	for k, o := range ops {
		offs[k] = o.offset
	}
	rec(0, offs)
	return out
}

// ewParams writes the P words of ew.glsl for the collapsed shape (axes
// from lead on) and operand strides and offsets.
func ewParams(shape []int, strides [][]int, lead int, offs []int, elemSize int, extra []uint32) []uint32 {
	p := make([]uint32, 49+len(extra))
	n := backend.NumElements(shape)
	p[0] = uint32(n)
	p[1] = uint32(len(shape))
	for i, s := range shape {
		p[5+i] = uint32(s)
	}
	contig, vec := true, elemSize == 4
	var scalars uint32
	for k := range strides {
		st := strides[k][lead:]
		p[13+9*k] = uint32(offs[k])
		zero, unit := true, len(st) <= 1
		for i, s := range st {
			p[14+9*k+i] = uint32(int32(s))
			if s != 0 {
				zero = false
			}
		}
		if len(st) == 1 && st[0] != 1 {
			unit = false
		}
		switch {
		case len(st) == 0 || (k > 0 && zero):
			if k > 0 {
				scalars |= 1 << k
			}
		case unit:
		default:
			contig = false
		}
		if offs[k]%4 != 0 && (k == 0 || !zero) {
			vec = false
		}
	}
	if contig {
		p[2] = 1
	}
	p[3] = scalars
	if contig && vec {
		p[4] = 1
	}
	copy(p[49:], extra)
	return p
}

// widthName returns the suffix of the bit-copy variants for dt ("w32").
func widthName(dt backend.DType) string {
	switch storageSize(dt) {
	case 8:
		return "w64"
	case 4:
		return "w32"
	case 2:
		return "w16"
	}
	return "w8"
}

// dtypeName returns the suffix of the per-dtype variants for dt (Flex32
// runs the F32 variants).
func dtypeName(dt backend.DType) string {
	if dt == backend.Flex32 {
		return "f32"
	}
	return dt.String()
}

// contiguous returns t when it is contiguous, else a contiguous copy.
func (b *Backend) contiguous(t *Tensor) *Tensor {
	if t.IsContiguous() {
		return t
	}
	out := b.empty("contiguous", t.shape, t.dtype)
	b.copyInto(out.buf, out.offset, out.strides, t)
	return out
}

// copyInto queues the copy of t (any layout) into the view of dst with
// offset and strides over t's shape.
func (b *Backend) copyInto(dst *Buffer, offset int, strides []int, t *Tensor) {
	ops := []ewOperand{{buf: dst, offset: offset, strides: strides}, operandOf(t, t.shape)}
	b.run("copy", b.d.ewDispatches(pipeKey{name: "copy_" + widthName(t.dtype)}, t.shape, ops, storageSize(t.dtype), 0)...)
}

// fill queues writing the bit pattern bits (the low storageSize(dt)*8
// bits) to the view of dst with offset and strides over shape.
func (b *Backend) fill(dst *Buffer, offset int, strides, shape []int, dt backend.DType, bits uint64) {
	ops := []ewOperand{{buf: dst, offset: offset, strides: strides}, {buf: nil, strides: make([]int, len(shape))}}
	b.run("fill", b.d.ewDispatches(pipeKey{name: "copy_" + widthName(dt)}, shape, ops, storageSize(dt), 1, uint32(bits), uint32(bits>>32))...)
}
