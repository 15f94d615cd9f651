package cuda

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	copyStrided = copyStridedKernel
	kernels.Set(ir.KindUnary, (*Backend).unary, nil)
	kernels.Set(ir.KindBinary, (*Backend).binary, nil)
	kernels.Set(ir.KindWhere, (*Backend).where, nil)
	kernels.Set(ir.KindCast, execCast, nil)
}

// elemCall describes one elementwise launch: the kernel family (its name
// prefix, unique per apply and types), the C types of the inputs and the
// output, apply's source and the runtime op code.
type elemCall struct {
	fam    string
	opName string // the op's name when contiguous kernels are generated per op (float dtypes), else ""
	tin    []string
	tout   string
	apply  string
	op     int
	key    elemKey // identifies the call for the kernel caches (zero: uncached)
	// status: the kernel takes the backend's status word as its last
	// parameter (the integer divisions report a zero divisor there).
	status bool
}

// elemKey identifies an elemCall: its kind (unary, binary, where, copy),
// dtype and op (where and copy: the element size in op).
type elemKey struct {
	kind uint8
	dt   backend.DType
	op   int32
}

const (
	elemUnary uint8 = iota + 1
	elemBinary
	elemWhere
	elemCopy
)

// elemCalls memoizes the elemCall of every key: building one renders
// names and apply sources (string work that a tiny op would pay per call).
var elemCalls sync.Map // elemKey -> elemCall

func memoCall(k elemKey, build func() elemCall) elemCall {
	if c, ok := elemCalls.Load(k); ok {
		return c.(elemCall)
	}
	c := build()
	c.key = k
	elemCalls.Store(k, c)
	return c
}

// elemVariant is one compiled kernel of an elemCall: contiguous, or
// strided with 32- or 64-bit indexing.
type elemVariant struct {
	key     elemKey
	variant uint8
}

// unaryCall is the launch of Unary(op) on dt.
func unaryCall(dt backend.DType, op backend.UnaryOp) elemCall {
	return memoCall(elemKey{elemUnary, dt, int32(op)}, func() elemCall {
		c := ctypeOf(dt)
		return elemCall{fam: "unary_" + c.Name, tin: []string{c.S}, tout: c.S, apply: unaryApply(dt), op: int(op), opName: perOp(dt, op.String())}
	})
}

// perOp returns op for float dtypes, whose contiguous kernels are
// generated per op, and "" for the others.
func perOp(dt backend.DType, op string) string {
	if dt.IsFloat() {
		return op
	}
	return ""
}

// binaryCall is the launch of Binary(op) on dt (comparisons: the compare
// kernel, giving Bool).
func binaryCall(dt backend.DType, op backend.BinaryOp) elemCall {
	return memoCall(elemKey{elemBinary, dt, int32(op)}, func() elemCall {
		c := ctypeOf(dt)
		if op.IsComparison() {
			return elemCall{fam: "compare_" + c.Name, tin: []string{c.S, c.S}, tout: "u8", apply: binaryApply(dt, true), op: int(op), opName: perOp(dt, op.String())}
		}
		if isIntDivision(dt, op) {
			return elemCall{fam: "divide_" + c.Name, tin: []string{c.S, c.S}, tout: c.S, apply: divideApply(dt), op: int(op), status: true}
		}
		return elemCall{fam: "binary_" + c.Name, tin: []string{c.S, c.S}, tout: c.S, apply: binaryApply(dt, false), op: int(op), opName: perOp(dt, op.String())}
	})
}

// isIntDivision reports whether op on dt is an integer division (Div,
// FloorDiv, Rem or Mod on an integer dtype), whose kernels check the
// divisor on the device.
func isIntDivision(dt backend.DType, op backend.BinaryOp) bool {
	switch op {
	case backend.OpDiv, backend.OpFloorDiv, backend.OpRem, backend.OpMod:
		return dt.IsInt()
	}
	return false
}

// whereCall is the launch of Where on elements of size bytes.
func whereCall(size int) elemCall {
	return memoCall(elemKey{elemWhere, 0, int32(size)}, func() elemCall {
		bits := bitsType(size)
		return elemCall{fam: "where_" + bits, tin: []string{"u8", bits, bits}, tout: bits, apply: whereApply}
	})
}

// copyCall is the launch of a strided copy of elements of size bytes.
func copyCall(size int) elemCall {
	return memoCall(elemKey{elemCopy, 0, int32(size)}, func() elemCall {
		bits := bitsType(size)
		return elemCall{fam: "copy_" + bits, tin: []string{bits}, tout: bits, apply: copyApply}
	})
}

// elementwise runs c over shape: out (with strides outSt, any layout)
// receives apply(op, ins...), input i read with strides inSt[i] (0 on
// broadcast axes). Contiguous launches (all operands dense or scalar and
// 16-byte aligned) take the vectorized kernel, the others the strided one.
func (b *Backend) elementwise(c elemCall, shape []int, out *Tensor, outSt []int, ins []*Tensor, inSt [][]int) {
	n := backend.NumElements(shape)
	if n == 0 {
		return
	}
	if b.elementwiseFlat(c, shape, n, out, outSt, ins, inSt) {
		return
	}
	strides := append([][]int{outSt}, inSt...)
	ptrs := []uint64{out.Ptr()}
	sizes := []int{out.dtype.Size()}
	for _, t := range ins {
		ptrs = append(ptrs, t.Ptr())
		sizes = append(sizes, t.dtype.Size())
	}
	sh, st := collapse(shape, strides)
	splitLeading(sh, st, ptrs, sizes, func(sh []int, st [][]int, ptrs []uint64) {
		b.elementwiseLaunch(c, sh, st, ptrs, sizes)
	})
}

// Strides of a flattened operand: dense, or one broadcast scalar.
var (
	flatDense  = []int{1}
	flatScalar = []int{0}
)

// elementwiseFlat launches c as one flat loop without building layouts when
// the output is dense and every input is dense or a broadcast scalar (the
// common case of elementwise ops on fresh tensors); it reports false
// otherwise.
func (b *Backend) elementwiseFlat(c elemCall, shape []int, n int, out *Tensor, outSt []int, ins []*Tensor, inSt [][]int) bool {
	if len(ins) > 3 {
		return false
	}
	if f := flatStrides(shape, outSt); f == nil || f[0] == 0 && n > 1 {
		return false // not dense (a zero-stride output has one element)
	}
	var st [4][]int
	var ptrs [4]uint64
	var sizes [4]int
	st[0], ptrs[0], sizes[0] = flatDense, out.Ptr(), out.dtype.Size()
	for k, t := range ins {
		f := flatStrides(shape, inSt[k])
		if f == nil {
			return false
		}
		st[k+1], ptrs[k+1], sizes[k+1] = f, t.Ptr(), t.dtype.Size()
	}
	m := len(ins) + 1
	b.elementwiseLaunch(c, []int{n}, st[:m], ptrs[:m], sizes[:m])
	return true
}

// flatStrides returns flatDense when st walks shape row-major without
// gaps, flatScalar when every stride is 0, else nil.
func flatStrides(shape, st []int) []int {
	want, zero := 1, true
	for i := len(shape) - 1; i >= 0; i-- {
		if st[i] != 0 {
			zero = false
		}
		if shape[i] != 1 && st[i] != want {
			want = -1
		}
		if want > 0 {
			want *= shape[i]
		}
	}
	switch {
	case zero:
		return flatScalar
	case want > 0:
		return flatDense
	}
	return nil
}

func (b *Backend) elementwiseLaunch(c elemCall, sh []int, st [][]int, ptrs []uint64, sizes []int) {
	n := backend.NumElements(sh)
	vec := elemVec(sizes...)
	contig := len(sh) <= 1
	var sc [3]int32
	for k := range st {
		s := 1
		if len(sh) == 1 {
			s = st[k][0]
		}
		switch {
		case s == 0 && k > 0:
			sc[k-1] = 1
		case s != 1 || ptrs[k]%uint64(vec*sizes[k]) != 0:
			contig = false
		}
	}
	var p [4]uint64
	copy(p[:], ptrs)
	var a argPack
	if contig {
		k := b.elemKernel(c, 0, func() (string, func() string) { return elemSource(c, true, "", vec) })
		a.i64(int64(n))
		a.i32(int32(c.op))
		for _, v := range p {
			a.u64(v)
		}
		for _, v := range sc {
			a.i32(v)
		}
		if c.status {
			a.u64(b.statusWord())
		}
		b.launchPacked(k, grid1(n/vec, blockSize*elemUnroll), block1, 0, a.bytes())
		return
	}
	idx, variant := "i64", uint8(2)
	if fits32(sh, st) {
		idx, variant = "int", 1
	}
	k := b.elemKernel(c, variant, func() (string, func() string) { return elemSource(c, false, idx, vec) })
	a.blob(layoutBlob(sh, st))
	a.i32(int32(c.op))
	for _, v := range p {
		a.u64(v)
	}
	if c.status {
		a.u64(b.statusWord())
	}
	b.launchPacked(k, grid1(n, blockSize), block1, 0, a.bytes())
}

// elemKernel returns variant (0 contiguous, 1 and 2 strided with 32- and
// 64-bit indices) of c's kernels, cached per backend by c's key; src gives
// the kernel's name and source on first use.
func (b *Backend) elemKernel(c elemCall, variant uint8, src func() (string, func() string)) *Kernel {
	vk := elemVariant{c.key, variant}
	if c.key.kind != 0 {
		if k, ok := b.elemKernels.Load(vk); ok {
			return k.(*Kernel)
		}
	}
	name, gen := src()
	k := b.kernel(name, gen)
	if c.key.kind != 0 {
		b.elemKernels.Store(vk, k)
	}
	return k
}

// elemSource returns the name of c's contiguous kernel (vector width vec)
// or strided kernel (index type idx), and a function rendering its source.
func elemSource(c elemCall, contig bool, idx string, vec int) (string, func() string) {
	tin := [3]string{"u8", "u8", "u8"}
	copy(tin[:], c.tin)
	spec := elemSpec{T0: tin[0], T1: tin[1], T2: tin[2], TO: c.tout, Nin: len(c.tin), Apply: c.apply, Vec: vec, Contig: contig, IDX: idx, Status: c.status}
	switch {
	case contig && c.opName != "":
		spec.Name, spec.Op = "ember_"+c.fam+"_"+c.opName+"_c", c.op
	case contig:
		spec.Name = "ember_" + c.fam + "_c"
	case idx == "int":
		spec.Name = "ember_" + c.fam + "_s32"
	default:
		spec.Name = "ember_" + c.fam + "_s64"
	}
	return spec.Name, func() string { return render(elemTmpl, spec) }
}

// copyStridedKernel copies src into dst (equal shapes and dtypes, any
// strides for both; dst's elements must not overlap one another). It is
// the backend's copyStrided.
func copyStridedKernel(b *Backend, dst, src *Tensor) {
	b.elementwise(copyCall(src.dtype.Size()), dst.shape, dst, dst.strides, []*Tensor{src}, [][]int{src.strides})
}

// unary is the kernel of KindUnary: op.Sub applied elementwise to op.In[0]
// (any layout), giving a contiguous tensor of op.Shape and op.DType (x's).
// Semantics are backend/flex's: floats compute in float for F32/F16/BF16
// and double for F64 and round once to the dtype; on integers Neg and Abs
// wrap, Floor/Ceil/Round are the identity and float-only ops go through
// double and truncate with saturation; on Bool, Not negates.
func (b *Backend) unary(op ir.Op) ir.Outputs {
	t := tensorOf(op.In[0])
	out := b.emptyOf(op.Shape, op.DType)
	b.elementwise(unaryCall(t.dtype, ir.UnaryOp(op.Sub)), out.shape, out, out.strides, []*Tensor{t}, [][]int{t.strides})
	return ir.One(out)
}

// binary is the kernel of KindBinary: op.Sub applied elementwise to
// op.In[0] and op.In[1] (equal dtypes, NumPy broadcasting to op.Shape, any
// layouts), giving a contiguous tensor of op.DType (their dtype, or Bool
// for comparisons). Semantics are backend/flex's: float Add, Sub, Mul, Div,
// Max and Min run in the dtype's compute type (float for F32/F16/BF16),
// FloorDiv, Rem, Mod, Pow and Atan2 in double; Max and Min propagate NaN;
// integers wrap, Div truncates, FloorDiv floors, Rem takes the dividend's
// sign and Mod the divisor's (MIN / -1 wraps to MIN as in Go); on Bool,
// arithmetic acts on 0/1 (Add is Or, Mul is And, Sub is Xor). The integer
// divisions check their divisors on the device (ChecksDivisorsOnDevice): a
// zero divisor gives 0 in that element and makes the next Sync or read
// fail with an error naming the op (see statusError).
func (b *Backend) binary(op ir.Op) ir.Outputs {
	x, y := tensorOf(op.In[0]), tensorOf(op.In[1])
	out := b.emptyOf(op.Shape, op.DType)
	shape := out.shape
	b.elementwise(binaryCall(x.dtype, ir.BinaryOp(op.Sub)), shape, out, out.strides, []*Tensor{x, y},
		[][]int{broadcastStrides(x, shape), broadcastStrides(y, shape)})
	return ir.One(out)
}

// where is the kernel of KindWhere: op.In[1]'s element where op.In[0]
// (Bool) is true, else op.In[2]'s; the three broadcast to op.Shape (NumPy)
// and the result has op.DType, the dtype of the two values (PyTorch's
// where). Values are copied bit for bit.
func (b *Backend) where(op ir.Op) ir.Outputs {
	c, x, y := tensorOf(op.In[0]), tensorOf(op.In[1]), tensorOf(op.In[2])
	out := b.emptyOf(op.Shape, op.DType)
	shape := out.shape
	b.elementwise(whereCall(x.dtype.Size()), shape, out, out.strides, []*Tensor{c, x, y},
		[][]int{broadcastStrides(c, shape), broadcastStrides(x, shape), broadcastStrides(y, shape)})
	return ir.One(out)
}

// execCast is the kernel of KindCast: op.In[0] converted to op.DType.
func execCast(b *Backend, op ir.Op) ir.Outputs { return ir.One(b.cast(tensorOf(op.In[0]), op.DType)) }
