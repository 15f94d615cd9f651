package cpu

import (
	"math"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindAdamStep, (*Backend).adamStep, optimDType)
	kernels.Set(ir.KindSGDStep, (*Backend).sgdStep, optimDType)
}

// optimDType reports the dtypes of the optimizer kernels: F32, Flex32 and
// F64. The others (F16, BF16) are lowered with the kinds' decompositions.
func optimDType(dt backend.DType) bool { return isF32(dt) || dt == backend.F64 }

// Adam modes: how the weight decay enters (ir's decomposeAdamStep).
const (
	adamPlain     = iota // no decay
	adamL2               // g ← g + θ·λ
	adamDecoupled        // θ ← θ·(1 − lr·λ)
)

// adamScalars are the constants of one Adam update in the order the
// kernels read them: the decoupled decay factor 1 − lr·λ, λ, β₁, 1 − β₁,
// β₂, 1 − β₂, √(1 − β₂ᵗ), ε and lr / (1 − β₁ᵗ), computed in float64 as
// ir's decomposition computes them (each is then converted to the dtype).
type adamScalars [9]float64

// adamConstants returns u's constants and mode.
func adamConstants(u *ir.OptimUpdate) (adamScalars, int) {
	t := float64(u.Step)
	s := adamScalars{
		1 - u.LR*u.WeightDecay, u.WeightDecay,
		u.Beta1, 1 - u.Beta1, u.Beta2, 1 - u.Beta2,
		math.Sqrt(1 - math.Pow(u.Beta2, t)), u.Eps, u.LR / (1 - math.Pow(u.Beta1, t)),
	}
	mode := adamPlain
	switch {
	case u.Decoupled:
		mode = adamDecoupled
	case u.WeightDecay != 0:
		mode = adamL2
	}
	return s, mode
}

// adamStep is the kernel of ir.KindAdamStep: one Adam or AdamW update
// (op.Attrs.Optim) of the parameter op.Xs[0] with gradient op.Xs[1] and
// moments op.Xs[2] and op.Xs[3], four F32, Flex32 or F64 tensors of one
// shape in any layout (see optimInputs: a transposed matrix, as a matmul
// weight gradient is, is read tile by tile), returning Outputs{param, m,
// v}, contiguous, of that shape and dtype. Each element goes through the
// operations of ir's decomposition in their order, each rounded to the
// dtype (no fused multiply-add; the AVX2 loop's vector operations round as
// the scalar ones), so the result is bit for bit the decomposition's.
// Large tensors are split into chunks on the worker pool. Operands that
// are not host tensors are lowered with the decomposition.
func (be *Backend) adamStep(op ir.Op) ir.Outputs {
	u := &op.Attrs.Optim
	n := numel(op.Shape)
	s, mode := adamConstants(u)
	if in, ok := optimInputs(op.Xs, op.Shape, be.f32); ok {
		pt, po := be.newF32(op.DType, op.Shape, n)
		mt, mo := be.newF32(op.DType, op.Shape, n)
		vt, vo := be.newF32(op.DType, op.Shape, n)
		var c [9]float32
		for i, x := range s {
			c[i] = float32(x)
		}
		in.run(n, func(lo, hi int, x *[4][]float32) {
			adamF32(po[lo:hi], mo[lo:hi], vo[lo:hi], x[0], x[1], x[2], x[3], &c, mode)
		})
		return ir.Outputs{pt, mt, vt}
	}
	if in, ok := optimInputs(op.Xs, op.Shape, be.f64); ok {
		po, mo, vo := be.f64(n), be.f64(n), be.f64(n)
		c := [9]float64(s)
		in.run(n, func(lo, hi int, x *[4][]float64) {
			adamF64(po[lo:hi], mo[lo:hi], vo[lo:hi], x[0], x[1], x[2], x[3], &c, mode)
		})
		return ir.Outputs{wrap(op.DType, op.Shape, po), wrap(op.DType, op.Shape, mo), wrap(op.DType, op.Shape, vo)}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// adamF32 runs the float32 Adam update of ir's decomposition on p, g, m, v
// (one length, that of po) into po, mo, vo with constants c (adamScalars
// rounded to float32): the bulk on AVX2 where the CPU has it, the rest in
// Go.
func adamF32(po, mo, vo, p, g, m, v []float32, c *[9]float32, mode int) {
	k := adamF32Vec(po, mo, vo, p, g, m, v, c, mode)
	adamF32Go(po[k:], mo[k:], vo[k:], p[k:], g[k:], m[k:], v[k:], c, mode)
}

// adamF64 is adamF32 for float64.
func adamF64(po, mo, vo, p, g, m, v []float64, c *[9]float64, mode int) {
	k := adamF64Vec(po, mo, vo, p, g, m, v, c, mode)
	adamF64Go(po[k:], mo[k:], vo[k:], p[k:], g[k:], m[k:], v[k:], c, mode)
}

// adamF32Go is the scalar Adam update. Every product is converted to
// float32 explicitly before it is added, which the Go specification
// requires to round it: no platform may fuse it into a multiply-add.
func adamF32Go(po, mo, vo, p, g, m, v []float32, c *[9]float32, mode int) {
	n := len(po)
	mo, vo, p, g, m, v = mo[:n], vo[:n], p[:n], g[:n], m[:n], v[:n]
	decay, wd, b1, omb1, b2, omb2, sbc2, eps, step := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
	for i := range po {
		th, gr := p[i], g[i]
		switch mode {
		case adamDecoupled:
			th = float32(th * decay)
		case adamL2:
			gr = gr + float32(th*wd)
		}
		mi := float32(m[i]*b1) + float32(gr*omb1)
		vi := float32(v[i]*b2) + float32(float32(gr*gr)*omb2)
		den := float32(float32(math.Sqrt(float64(vi)))/sbc2) + eps
		po[i] = th - float32(float32(mi/den)*step)
		mo[i], vo[i] = mi, vi
	}
}

// adamF64Go is adamF32Go for float64.
func adamF64Go(po, mo, vo, p, g, m, v []float64, c *[9]float64, mode int) {
	n := len(po)
	mo, vo, p, g, m, v = mo[:n], vo[:n], p[:n], g[:n], m[:n], v[:n]
	decay, wd, b1, omb1, b2, omb2, sbc2, eps, step := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
	for i := range po {
		th, gr := p[i], g[i]
		switch mode {
		case adamDecoupled:
			th = float64(th * decay)
		case adamL2:
			gr = gr + float64(th*wd)
		}
		mi := float64(m[i]*b1) + float64(gr*omb1)
		vi := float64(v[i]*b2) + float64(float64(gr*gr)*omb2)
		den := float64(math.Sqrt(vi)/sbc2) + eps
		po[i] = th - float64(float64(mi/den)*step)
		mo[i], vo[i] = mi, vi
	}
}

// SGD modes: which terms of ir's decomposeSGDStep an update has.
const (
	sgdDecay    = 1 << iota // g ← g + θ·λ
	sgdMomentum             // b ← b·μ + g (b ← g without a buffer)
	sgdBuffer               // a momentum buffer is given
	sgdNesterov             // g ← g + b·μ, else g ← b
)

// sgdStep is the kernel of ir.KindSGDStep: one SGD update (op.Attrs.Optim:
// learning rate, weight decay λ, momentum μ, Nesterov) of the parameter
// op.In[0] with gradient op.In[1] and momentum buffer op.In[2] (nil on a
// first step), F32, Flex32 or F64 tensors of one shape in any layout (see
// optimInputs), returning Outputs{param, buffer} (buffer nil when μ = 0;
// without decay on a first step it is the gradient itself, as in the
// decomposition). Each element goes through the operations of ir's
// decomposition in their order, each rounded to the dtype, so the result
// is bit for bit the decomposition's; large tensors are split into chunks
// on the worker pool. Operands that are not host tensors are lowered with
// the decomposition.
func (be *Backend) sgdStep(op ir.Op) ir.Outputs {
	u := &op.Attrs.Optim
	n := numel(op.Shape)
	mode := 0
	if u.WeightDecay != 0 {
		mode |= sgdDecay
	}
	if u.Momentum != 0 {
		mode |= sgdMomentum
		if op.In[2] != nil {
			mode |= sgdBuffer
		}
		if u.Nesterov {
			mode |= sgdNesterov
		}
	}
	// Without decay and buffer the new buffer is the gradient itself.
	aliasGrad := mode&(sgdMomentum|sgdBuffer|sgdDecay) == sgdMomentum
	xs := op.In[:2]
	if mode&sgdBuffer != 0 {
		xs = op.In[:3]
	}
	if in, ok := optimInputs(xs, op.Shape, be.f32); ok {
		pt, po := be.newF32(op.DType, op.Shape, n)
		var bt ir.Tensor
		var bo []float32
		switch {
		case aliasGrad:
			bt = op.In[1]
		case mode&sgdMomentum != 0:
			bt, bo = be.newF32(op.DType, op.Shape, n)
		}
		c := [3]float32{float32(u.LR), float32(u.WeightDecay), float32(u.Momentum)}
		in.run(n, func(lo, hi int, x *[4][]float32) {
			po, bo := po[lo:hi], subslice(bo, lo, hi)
			k := sgdF32Vec(po, bo, x[0], x[1], x[2], &c, mode)
			sgdChunk(po[k:], subslice(bo, k, len(bo)), x[0][k:], x[1][k:], subslice(x[2], k, len(x[2])), &c, mode)
		})
		return ir.Outputs{pt, bt}
	}
	if in, ok := optimInputs(xs, op.Shape, be.f64); ok {
		po := be.f64(n)
		var bt ir.Tensor
		var bo []float64
		switch {
		case aliasGrad:
			bt = op.In[1]
		case mode&sgdMomentum != 0:
			bo = be.f64(n)
			bt = wrap(op.DType, op.Shape, bo)
		}
		c := [3]float64{u.LR, u.WeightDecay, u.Momentum}
		in.run(n, func(lo, hi int, x *[4][]float64) {
			po, bo := po[lo:hi], subslice(bo, lo, hi)
			k := sgdF64Vec(po, bo, x[0], x[1], x[2], &c, mode)
			sgdChunk(po[k:], subslice(bo, k, len(bo)), x[0][k:], x[1][k:], subslice(x[2], k, len(x[2])), &c, mode)
		})
		return ir.Outputs{wrap(op.DType, op.Shape, po), bt}
	}
	return ir.SpecOf(op.Kind).Decompose(op, be)
}

// subslice is s[lo:hi], or nil for a nil s.
func subslice[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// sgdChunk runs the SGD update of mode on p, g and the buffer b (nil
// without sgdBuffer) into po and the new buffer bo (nil without
// sgdMomentum or when it is the gradient itself) with constants c = lr,
// λ, μ rounded to T, in Go (the AVX2 loops run the bulk where the CPU has
// them). Every product is converted to T explicitly before it is added,
// so no platform fuses it into a multiply-add.
func sgdChunk[T float](po, bo, p, g, b []T, c *[3]T, mode int) {
	n := len(po)
	p, g = p[:n], g[:n]
	if mode&sgdBuffer != 0 {
		b = b[:n]
	}
	if bo != nil {
		bo = bo[:n]
	}
	lr, wd, mu := c[0], c[1], c[2]
	for i := range po {
		gr := g[i]
		if mode&sgdDecay != 0 {
			gr = gr + T(p[i]*wd)
		}
		if mode&sgdMomentum != 0 {
			bi := gr
			if mode&sgdBuffer != 0 {
				bi = T(b[i]*mu) + gr
			}
			if bo != nil {
				bo[i] = bi
			}
			if mode&sgdNesterov != 0 {
				gr = gr + T(bi*mu)
			} else {
				gr = bi
			}
		}
		po[i] = p[i] - T(gr*lr)
	}
}
