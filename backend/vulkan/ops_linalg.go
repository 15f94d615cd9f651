//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindMatmul, (*Backend).matmul, nil)
	kernels.Set(ir.KindConv2d, (*Backend).conv2d, nil)
	kernels.Set(ir.KindConvTranspose2d, (*Backend).convTranspose2d, nil)
}

// maxBatchRank is the number of broadcast batch axes the matmul shaders
// take after merging.
const maxBatchRank = 4

// matmul is the kernel of KindMatmul: the batched product of op.In[0]
// [..., m, k] and op.In[1] [..., k, n] with broadcast batch axes. F32 (and
// Flex32) products of at least 64 rows and columns, and every F32 product
// on a software adapter (where a workgroup barrier is costly and the
// register-blocked kernel needs few), run sgemm.comp, the register-blocked
// kernel; the others matmul.comp, tiled in shared memory.
// Operands are read through their strides (transposed views are not
// copied); F32 accumulates in float32, F16 and BF16 in float32 rounded
// once, F64 in double, integers wrap.
func (b *Backend) matmul(op ir.Op) ir.Outputs {
	x, y := tensorOf(op.In[0]), tensorOf(op.In[1])
	out := b.empty("matmul", op.Shape, op.DType)
	b.matmulInto(out, x, y)
	return ir.One(out)
}

// matmulInto queues out = x × y, out contiguous (any offset) of the
// broadcast batch shape and [m, n].
func (b *Backend) matmulInto(out, x, y *Tensor) {
	r := len(out.shape)
	M, N := out.shape[r-2], out.shape[r-1]
	K := x.shape[len(x.shape)-1]
	if out.NumElements() == 0 {
		return
	}
	if K == 0 {
		b.fill(out.buf, out.offset, out.strides, out.shape, out.dtype, 0)
		return
	}
	batchShape := out.shape[:r-2]
	// Per-operand batch strides over the output's batch axes, merged.
	xb := operandOf(&Tensor{shape: x.shape[:len(x.shape)-2], strides: x.strides[:len(x.strides)-2]}, batchShape)
	yb := operandOf(&Tensor{shape: y.shape[:len(y.shape)-2], strides: y.strides[:len(y.strides)-2]}, batchShape)
	bs, bst := collapse(batchShape, []ewOperand{xb, yb})
	ars, acs := x.strides[len(x.strides)-2], x.strides[len(x.strides)-1]
	brs, bcs := y.strides[len(y.strides)-2], y.strides[len(y.strides)-1]
	if M == 1 {
		ars = K // any row stride reads the same elements
	}
	if K == 1 {
		acs, brs = 1, N
	}
	if N == 1 {
		bcs = 1
	}
	if len(bs) > maxBatchRank || neg(ars, acs, brs, bcs) || negAny(bst[0]) || negAny(bst[1]) {
		// Too many independent batch axes, or flipped views: make both
		// operands contiguous over the broadcast batch.
		ex := func(t *Tensor) *Tensor {
			shape := append(append([]int(nil), batchShape...), t.shape[len(t.shape)-2:]...)
			o := operandOf(t, shape)
			return b.contiguous(t.view(shape, o.strides, t.offset))
		}
		b.matmulInto(out, ex(x), ex(y))
		return
	}
	batches := backend.NumElements(batchShape)
	p := make([]uint32, 25)
	p[0], p[1], p[2], p[3], p[4] = uint32(M), uint32(N), uint32(K), uint32(batches), uint32(len(bs))
	for i, s := range bs {
		p[5+i] = uint32(s)
		p[12+i] = uint32(bst[0][i])
		p[19+i] = uint32(bst[1][i])
	}
	p[9], p[10], p[11] = uint32(x.offset), uint32(ars), uint32(acs)
	p[16], p[17], p[18] = uint32(y.offset), uint32(brs), uint32(bcs)
	p[23] = uint32(out.offset)
	z := uint32(min(batches, 65535))
	if isF32Store(x.dtype) && (M >= 64 && N >= 64 || b.d.adapter.Software()) {
		p[24] = sgemmFlags(x.offset, y.offset, ars, acs, brs, bcs, bst)
		b.run("matmul", dispatch{key: pipeKey{name: "sgemm"}, params: p, bufs: []*Buffer{out.buf, x.buf, y.buf},
			groups: [3]uint32{uint32((N + 127) / 128), uint32((M + 127) / 128), z}})
		return
	}
	b.run("matmul", dispatch{key: pipeKey{name: "matmul_" + dtypeName(x.dtype)}, params: p, bufs: []*Buffer{out.buf, x.buf, y.buf},
		groups: [3]uint32{uint32((N + 15) / 16), uint32((M + 15) / 16), z}})
}

// sgemmFlags returns the 16-byte load flags of sgemm.comp: which operand
// axes are contiguous and 4-aligned at every batch.
func sgemmFlags(xoff, yoff, ars, acs, brs, bcs int, bst [][]int) uint32 {
	aligned := func(off int, strides ...int) bool {
		if off%4 != 0 {
			return false
		}
		for _, s := range strides {
			if s%4 != 0 {
				return false
			}
		}
		return true
	}
	var f uint32
	if acs == 1 {
		f |= 1
		if aligned(xoff, append([]int{ars}, bst[0]...)...) {
			f |= 8
		}
	} else if ars == 1 && aligned(xoff, append([]int{acs}, bst[0]...)...) {
		f |= 2
	}
	if bcs == 1 && aligned(yoff, append([]int{brs}, bst[1]...)...) {
		f |= 4
	}
	return f
}

func neg(v ...int) bool { return negAny(v) }

func negAny(v []int) bool {
	for _, s := range v {
		if s < 0 {
			return true
		}
	}
	return false
}

// unsupportedRank is the error of an indexing op on a tensor of more
// axes than the shaders take.
func unsupportedRank(b *Backend, op string, rank int) error {
	return fmt.Errorf("%v: %s: rank %d is above the 8 axes the Vulkan shaders take", b.id, op, rank)
}

// conv2d is the kernel of KindConv2d (PyTorch's conv2d with stride,
// padding, dilation and groups). F32 runs as matrix products (see
// conv2dGemm); the other dtypes with one invocation per output element,
// accumulating over (input channel, kernel row, kernel column) in order in
// the dtype's compute type.
func (b *Backend) conv2d(op ir.Op) ir.Outputs { return b.conv(op, "conv2d") }

// convTranspose2d is the kernel of KindConvTranspose2d (PyTorch's
// conv_transpose2d). F32 runs as a matrix product and a gather (see
// convTranspose2dGemm); the other dtypes with one invocation per output
// element gathering its contributions in order.
func (b *Backend) convTranspose2d(op ir.Op) ir.Outputs { return b.conv(op, "conv_transpose2d") }

func (b *Backend) conv(op ir.Op, name string) ir.Outputs {
	x, w := b.contiguous(tensorOf(op.In[0])), b.contiguous(tensorOf(op.In[1]))
	out := b.empty(name, op.Shape, op.DType)
	n := out.NumElements()
	if n == 0 {
		return ir.One(out)
	}
	o := op.Attrs.Conv
	if isF32Store(x.dtype) {
		if name == "conv2d" {
			b.conv2dGemm(out, x, w, o)
		} else {
			b.convTranspose2dGemm(out, x, w, o)
		}
		return ir.One(out)
	}
	p := []uint32{uint32(n), uint32(x.shape[0]), uint32(x.shape[1]), uint32(x.shape[2]), uint32(x.shape[3]),
		uint32(out.shape[1]), uint32(out.shape[2]), uint32(out.shape[3]), uint32(w.shape[2]), uint32(w.shape[3]),
		uint32(o.Stride[0]), uint32(o.Stride[1]), uint32(o.Padding[0]), uint32(o.Padding[1]),
		uint32(o.Dilation[0]), uint32(o.Dilation[1]), uint32(o.Groups), uint32(x.offset), uint32(w.offset), 0}
	b.run(name, dispatch{key: pipeKey{name: name + "_" + dtypeName(x.dtype)}, params: p,
		bufs: []*Buffer{out.buf, x.buf, w.buf}, groups: b.d.groups1(n)})
	return ir.One(out)
}

// colBytes bounds the patch matrix of a GEMM convolution: the batch is
// processed in chunks whose matrix fits (and one binding holds).
var colBytes = 256 << 20

// convChunk returns the samples per chunk when one sample's matrix takes
// per bytes.
func (b *Backend) convChunk(n, per int) int {
	limit := min(colBytes, int(b.d.maxRange))
	return max(1, min(n, limit/max(per, 1)))
}

// conv2dGemm computes a convolution as im2col and a batched matrix
// product per group: for each sample n and group g, out[n, g] (CoutG ×
// Ho·Wo) = w[g] (CoutG × CinG·kH·kW) × col[n, g], where col holds the
// input patches (shaders/im2col.comp). The product's [N, G, CoutG, Ho·Wo]
// result is out's own layout.
func (b *Backend) conv2dGemm(out, x, w *Tensor, o ir.ConvOptions) {
	N, Cin, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	Cout, kH, kW := w.shape[0], w.shape[2], w.shape[3]
	Ho, Wo := out.shape[2], out.shape[3]
	G := o.Groups
	CinG, CoutG := Cin/G, Cout/G
	K, P := CinG*kH*kW, Ho*Wo
	wv := w.view([]int{G, CoutG, K}, []int{CoutG * K, K, 1}, w.offset)
	chunk := b.convChunk(N, G*K*P*4)
	for n0 := 0; n0 < N; n0 += chunk {
		nc := min(chunk, N-n0)
		col := b.empty("conv2d", []int{nc, G, K, P}, x.dtype)
		cells := nc * G * K * P
		p := []uint32{uint32(cells), uint32(G), uint32(CinG), uint32(H), uint32(W), uint32(kH), uint32(kW), uint32(Ho), uint32(Wo),
			uint32(o.Stride[0]), uint32(o.Stride[1]), uint32(o.Padding[0]), uint32(o.Padding[1]),
			uint32(o.Dilation[0]), uint32(o.Dilation[1]), uint32(x.offset + n0*Cin*H*W), uint32(Cin)}
		b.run("conv2d", dispatch{key: pipeKey{name: "im2col_" + widthName(x.dtype)}, params: p,
			bufs: []*Buffer{col.buf, x.buf}, groups: b.d.groups1(cells)})
		dst := out.view([]int{nc, G, CoutG, P}, layout.RowMajorStrides([]int{nc, G, CoutG, P}), out.offset+n0*Cout*P)
		b.matmulInto(dst, wv, col)
	}
}

// convTranspose2dGemm computes a transposed convolution as a batched
// matrix product and a gather: col[n, g] (CoutG·kH·kW × H·W) = w[g]ᵀ ×
// x[n, g] (w read through its transposed strides), then each output
// element sums the col entries that land on it (shaders/col2im.comp).
func (b *Backend) convTranspose2dGemm(out, x, w *Tensor, o ir.ConvOptions) {
	N, Cin, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	CoutG, kH, kW := w.shape[1], w.shape[2], w.shape[3]
	Ho, Wo := out.shape[2], out.shape[3]
	G := o.Groups
	CinG := Cin / G
	K, Q := CoutG*kH*kW, H*W
	wt := w.view([]int{G, K, CinG}, []int{CinG * K, 1, K}, w.offset)
	chunk := b.convChunk(N, G*K*Q*4)
	for n0 := 0; n0 < N; n0 += chunk {
		nc := min(chunk, N-n0)
		col := b.empty("conv_transpose2d", []int{nc, G, K, Q}, x.dtype)
		xv := x.view([]int{nc, G, CinG, Q}, []int{Cin * Q, CinG * Q, Q, 1}, x.offset+n0*Cin*Q)
		b.matmulInto(col, wt, xv)
		cells := nc * G * CoutG * Ho * Wo
		p := []uint32{uint32(cells), uint32(G), uint32(CoutG), uint32(H), uint32(W), uint32(kH), uint32(kW), uint32(Ho), uint32(Wo),
			uint32(o.Stride[0]), uint32(o.Stride[1]), uint32(o.Padding[0]), uint32(o.Padding[1]),
			uint32(o.Dilation[0]), uint32(o.Dilation[1])}
		dst := &Tensor{buf: out.buf, dtype: out.dtype, offset: out.offset + n0*G*CoutG*Ho*Wo}
		b.run("conv_transpose2d", dispatch{key: pipeKey{name: "col2im_" + dtypeName(x.dtype)}, params: append(p, uint32(dst.offset)),
			bufs: []*Buffer{dst.buf, col.buf}, groups: b.d.groups1(cells)})
	}
}
