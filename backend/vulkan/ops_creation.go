//go:build linux && (amd64 || arm64)

package vulkan

import (
	"math"

	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindFull, (*Backend).full, nil)
	kernels.Set(ir.KindArange, (*Backend).arange, nil)
	kernels.Set(ir.KindRandom, (*Backend).random, nil)
}

// full is the kernel of KindFull: op.Shape filled with op.Scalars[0]
// converted to op.DType as Cast converts a float64.
func (b *Backend) full(op ir.Op) ir.Outputs {
	out := b.empty("full", op.Shape, op.DType)
	b.fill(out.buf, 0, out.strides, out.shape, out.dtype, scalarBits(op.Scalars[0], op.DType))
	return ir.One(out)
}

// arange is the kernel of KindArange: [start, start+step, ...] of
// op.Shape [n], each element computed exactly in int64 (the integer form,
// ir.ArangeInts) or in float64 and converted as Cast does, as
// backend/flex computes it.
func (b *Backend) arange(op ir.Op) ir.Outputs {
	out := b.empty("arange", op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	p := make([]uint32, 6)
	p[0] = uint32(n)
	if start, step, ok := ir.ArangeInts(&op); ok {
		p[1] = 1
		put64(p[2:], uint64(start))
		put64(p[4:], uint64(step))
	} else {
		put64(p[2:], math.Float64bits(op.Scalars[0]))
		put64(p[4:], math.Float64bits(op.Scalars[1]))
	}
	b.run("arange", dispatch{key: pipeKey{name: "arange", c2: uint32(op.DType)}, params: p, bufs: []*Buffer{out.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}

// random is the kernel of KindRandom: op.Shape sampled from the
// distribution op.Sub with parameters op.Scalars by the device's Philox
// stream (shaders/random.comp; Seed makes it reproducible).
func (b *Backend) random(op ir.Op) ir.Outputs {
	out := b.empty("random", op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	seed, off := b.nextPhilox(uint64(n))
	p := make([]uint32, 10)
	p[0] = uint32(n)
	p[1] = uint32(op.Sub)
	put64(p[2:], seed)
	put64(p[4:], off)
	put64(p[6:], math.Float64bits(op.Scalars[0]))
	put64(p[8:], math.Float64bits(op.Scalars[1]))
	b.run("random", dispatch{key: pipeKey{name: "random", c2: uint32(op.DType)}, params: p, bufs: []*Buffer{out.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}

// put64 stores v as two little-endian words.
func put64(p []uint32, v uint64) {
	p[0] = uint32(v)
	p[1] = uint32(v >> 32)
}
