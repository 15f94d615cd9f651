package cuda

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The fused-program family: one kernel evaluates a whole ir.FusedProgram
// (a DAG of elementwise nodes) per element, reading each input once and
// writing each output once. A kernel is generated per program signature
// (ir.FusedProgram.Signature) and per input layout:
//
//   - each input is contiguous over the iteration shape (read at the
//     element's row-major index), a scalar (one element, read once per
//     thread) or general (read at the offset its strides give the
//     element's coordinates; strides and shape are kernel parameters);
//   - a program without general inputs runs the flat loop: VEC elements
//     per operand in one 16-byte load or store when every dense pointer is
//     aligned (VEC 1 otherwise), UNROLL vectors per thread in flight, in a
//     grid-stride loop, the last n % VEC elements one by one;
//   - a program with general inputs runs the strided loop, with 32-bit
//     offsets when every offset fits (cheaper divisions), else 64-bit.
//
// Each node is computed by the code the unfused kernel of its op runs
// (the prelude's un_float, bin_int, cmp, ..., the cast family's castExpr,
// the value Full stores), in the node's dtype, and rounded to the node's
// storage type (F16 and BF16 after every node), so a fused program gives
// the unfused op-by-op results bit for bit. Two rules keep the compiler
// from merging work across nodes, which the unfused kernels, separated by
// memory, cannot do:
//
//   - float add, sub, mul and div are the round-to-nearest intrinsics
//     (__fadd_rn, __dmul_rn, ...), which are never contracted into a
//     fused multiply-add (NVRTC contracts a*b+c by default);
//   - the value of every F32, Flex32 and F64 node that computes
//     something (all but constants and identity casts) passes through
//     opq, an exclusive or with a kernel parameter that is 0, which the
//     compiler cannot see through: no multiply inside one node's math
//     function is contracted with an add of the next, and no node is
//     folded with another (a cast pair, a double negation) in a way that
//     changes NaN bits. It costs one integer instruction per node. F16
//     and BF16 values need none: the conversion to storage after every
//     node already separates them.
//
// Compiling with -fmad=false instead would not do: the unfused kernels
// are compiled with NVRTC's default -fmad=true, so a math function whose
// code has a contractable multiply-add could round differently here.
//
// Full's constants are kernel parameters too (the bits Full stores), not
// literals, so that nothing is constant-folded at compile time.
//
// A program with integer divisions (Div, FloorDiv, Rem, Mod on integers)
// checks its divisors as the unfused kernel does (div_chk): its parameter
// block ends with the backend's status word, passed to body as S, and a
// zero divisor gives 0 and is reported there (ops_status.go).

// Input layout classes.
const (
	fusedContig  byte = 'c'
	fusedScalar  byte = 's'
	fusedGeneral byte = 'g'
)

// fusedSpec is what one fused kernel's source depends on: the program's
// signature (its nodes, outputs and input dtypes; shapes are not read),
// the input classes and the loop variant.
type fusedSpec struct {
	name    string
	p       *ir.FusedProgram
	classes []byte // one of fusedContig, fusedScalar, fusedGeneral per input
	vec     int    // flat loop: elements per vector (1: no vectors)
	unroll  int    // flat loop: vectors in flight per thread
	idx     string // strided loop (some input general): "int" or "i64"
}

// variant is the part of the kernel key that is not the signature.
func (s *fusedSpec) variant() string {
	if s.idx != "" {
		return string(s.classes) + "/s" + s.idx
	}
	return fmt.Sprintf("%s/v%du%d", s.classes, s.vec, s.unroll)
}

// fusedKernelName names the kernel of signature sig in variant: the
// program's text is too long for a symbol, so the name holds a hash.
func fusedKernelName(sig, variant string) string {
	h := sha256.Sum256([]byte(sig + "\x00" + variant))
	return "ember_fused_" + hex.EncodeToString(h[:10])
}

// fusedValueDType returns the dtype of operand r of p.
func fusedValueDType(p *ir.FusedProgram, r ir.FusedRef) backend.DType {
	if r.IsInput() {
		return p.Inputs[r.Index()].DType
	}
	return p.Nodes[r.Index()].DType
}

// fusedCheck returns an error when p is not a program the generator
// takes: operands out of range or out of order, operand dtypes that do
// not fit the node (unary and binary operands of the node's dtype or,
// for comparisons, of one dtype with a Bool result; a Bool condition and
// values of the node's dtype for Where), or a node fuses rejects (fuses
// sees the node and its first operand's dtype).
func fusedCheck(p *ir.FusedProgram, fuses func(n *ir.FusedNode, in backend.DType) bool) error {
	for i := range p.Inputs {
		if _, ok := ctypes[p.Inputs[i].DType]; !ok {
			return fmt.Errorf("input %d has dtype %v", i, p.Inputs[i].DType)
		}
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		var dt [3]backend.DType
		for a := range n.NumArgs() {
			r := n.Args[a]
			if r.IsInput() && r.Index() >= len(p.Inputs) || !r.IsInput() && r.Index() >= i {
				return fmt.Errorf("node %d (%s): operand %d refers to %d", i, n.Name(), a, r)
			}
			dt[a] = fusedValueDType(p, r)
		}
		in := n.DType
		if n.NumArgs() > 0 {
			in = dt[0]
		}
		if !fuses(n, in) {
			return fmt.Errorf("node %d (%s on %v giving %v) is not fused", i, n.Name(), in, n.DType)
		}
		ok := true
		switch n.Kind {
		case ir.KindUnary:
			ok = dt[0] == n.DType
		case ir.KindBinary:
			ok = dt[0] == dt[1] && (n.DType == dt[0] || ir.BinaryOp(n.Sub).IsComparison() && n.DType == backend.Bool)
		case ir.KindWhere:
			ok = dt[0] == backend.Bool && dt[1] == n.DType && dt[2] == n.DType
		}
		if !ok {
			return fmt.Errorf("node %d (%s) has operands %v and dtype %v", i, n.Name(), dt[:n.NumArgs()], n.DType)
		}
	}
	if len(p.Outputs) == 0 {
		return fmt.Errorf("no outputs")
	}
	for _, o := range p.Outputs {
		if o < 0 || o >= len(p.Nodes) {
			return fmt.Errorf("output node %d out of range", o)
		}
	}
	return nil
}

// fusedOpDefined reports whether the node is an op ir's inference accepts
// on operands of dtype in: the ops the unfused kernels define, on the
// dtypes they are defined for.
func fusedOpDefined(n *ir.FusedNode, in backend.DType) bool {
	switch n.Kind {
	case ir.KindFull:
		return in == n.DType
	case ir.KindCast:
		return true
	case ir.KindWhere:
		return in == backend.Bool
	case ir.KindUnary:
		u := ir.UnaryOp(n.Sub)
		switch {
		case !u.Valid() || in != n.DType:
			return false
		case u == ir.OpNot:
			return !in.IsFloat()
		case in == backend.Bool:
			return false
		case u.FloatOnly():
			return in.IsFloat()
		}
		return true
	case ir.KindBinary:
		o := ir.BinaryOp(n.Sub)
		switch {
		case !o.Valid():
			return false
		case o.IsComparison():
			return n.DType == backend.Bool
		case n.DType != in:
			return false
		case o.IsLogical():
			return !in.IsFloat()
		case o.IsShift():
			return in.IsInt()
		case in == backend.Bool:
			return o == ir.OpMax || o == ir.OpMin
		case o == ir.OpAtan2:
			return in.IsFloat()
		}
		return true
	}
	return false
}

// fusedDivides reports whether p has an integer division node, whose
// kernel takes the status word.
func fusedDivides(p *ir.FusedProgram) bool {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Kind == ir.KindBinary && n.NumArgs() == 2 && isIntDivision(fusedValueDType(p, n.Args[0]), ir.BinaryOp(n.Sub)) {
			return true
		}
	}
	return false
}

// fusedRN are the round-to-nearest intrinsics of float add, sub, mul and
// div, by compute type.
var fusedRN = map[string]map[ir.BinaryOp]string{
	"float":  {ir.OpAdd: "__fadd_rn", ir.OpSub: "__fsub_rn", ir.OpMul: "__fmul_rn", ir.OpDiv: "__fdiv_rn"},
	"double": {ir.OpAdd: "__dadd_rn", ir.OpSub: "__dsub_rn", ir.OpMul: "__dmul_rn", ir.OpDiv: "__ddiv_rn"},
}

// fusedCastFunc is the name of the device function converting src to dst
// values, "" when the cast is the identity (equal dtypes, F32 and Flex32),
// as Backend.cast returns a view then.
func fusedCastFunc(src, dst backend.DType) string {
	if src == dst || isF32(src) && isF32(dst) {
		return ""
	}
	return "cast_" + ctypeOf(src).Name + "_" + ctypeOf(dst).Name
}

// fusedCastSource defines fusedCastFunc(src, dst): the conversion of the
// cast kernel (castSource), on one value.
func fusedCastSource(src, dst backend.DType) string {
	s, d := ctypeOf(src), ctypeOf(dst)
	return fmt.Sprintf("__device__ __forceinline__ %s %s(%s raw) {\n\tconst %s v = %s;\n\treturn %s;\n}\n",
		d.S, fusedCastFunc(src, dst), s.S, s.C, ld(s, "raw"), castExpr(src, dst))
}

// fusedOpaque reports whether the generator passes values of dt through
// opq: F32, Flex32 and F64, whose storage is the compute type (F16 and
// BF16 values are rounded by a conversion the compiler cannot merge with
// the math around it; integers and Bool have no contraction).
func fusedOpaque(dt backend.DType) bool {
	return dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64
}

// fusedExpr renders node n's value from its operands' expressions args
// (of the operands' storage types; in is the first operand's dtype) and,
// for KindFull, the name k of its constant.
func fusedExpr(n *ir.FusedNode, in backend.DType, args [3]string, k string) string {
	a, b := args[0], args[1]
	var e string
	switch n.Kind {
	case ir.KindFull:
		return k
	case ir.KindCast:
		f := fusedCastFunc(in, n.DType)
		if f == "" {
			return a
		}
		e = f + "(" + a + ")"
	case ir.KindWhere:
		e = "(" + a + " ? " + b + " : " + args[2] + ")"
	case ir.KindUnary:
		c := ctypeOf(in)
		op := fmt.Sprint(n.Sub)
		switch c.Kind {
		case 'f':
			e = st(c, "un_float<"+c.C+">("+op+", "+ld(c, a)+")")
		case 'i':
			e = "un_int<" + c.S + ">(" + op + ", " + a + ")"
		default:
			e = "un_bool(" + op + ", " + a + ")"
		}
	case ir.KindBinary:
		c := ctypeOf(in)
		o := ir.BinaryOp(n.Sub)
		op := fmt.Sprint(n.Sub)
		switch {
		case c.Kind == 'b':
			e = "bin_bool(" + op + ", " + a + ", " + b + ")"
		case o.IsComparison() && c.Kind == 'f':
			e = "cmp<" + c.C + ">(" + op + ", " + ld(c, a) + ", " + ld(c, b) + ")"
		case o.IsComparison():
			e = "cmp<" + c.S + ">(" + op + ", " + a + ", " + b + ")"
		case c.Kind == 'f' && fusedRN[c.C][o] != "":
			e = st(c, fusedRN[c.C][o]+"("+ld(c, a)+", "+ld(c, b)+")")
		case c.Kind == 'f':
			e = st(c, "bin_float<"+c.C+">("+op+", "+ld(c, a)+", "+ld(c, b)+")")
		case isIntDivision(in, o):
			e = fmt.Sprintf("div_chk<%s>(%s, %s, %s, S, %du)", c.S, op, a, b, uint32(in))
		default:
			e = "bin_int<" + c.S + ">(" + op + ", " + a + ", " + b + ")"
		}
	default:
		panic(fmt.Sprintf("cuda: fused node kind %v", n.Kind))
	}
	if fusedOpaque(n.DType) {
		e = "opq(" + e + ", Z)"
	}
	return e
}

// fusedFullBits returns the bits Full stores for value in dt (as
// Backend.full: TensorData's conversion of the float64), zero-extended.
func fusedFullBits(dt backend.DType, value float64) uint64 {
	one := &backend.TensorData{Shape: []int{1}, DType: backend.F64, Bytes: binary.LittleEndian.AppendUint64(nil, math.Float64bits(value))}
	var w [8]byte
	copy(w[:], one.Convert(dt).Bytes)
	return binary.LittleEndian.Uint64(w[:])
}

// fusedConstExpr renders the value of dt held in the 64-bit parameter
// word w (Full's bits, zero-extended).
func fusedConstExpr(dt backend.DType, w string) string {
	c := ctypeOf(dt)
	switch c.S {
	case "float":
		return "__uint_as_float((u32)" + w + ")"
	case "double":
		return "__longlong_as_double((i64)" + w + ")"
	}
	return "(" + c.S + ")" + w
}

// fusedCommon follows the prelude in every fused kernel.
const fusedCommon = `
// opq returns x, through an exclusive or with z (0 at run time, a kernel
// parameter): the compiler cannot see that the result is x, so nothing
// computing x is merged with what uses it.
__device__ __forceinline__ float opq(float x, u64 z) { return __uint_as_float(__float_as_uint(x) ^ (u32)z); }
__device__ __forceinline__ double opq(double x, u64 z) { return __longlong_as_double(__double_as_longlong(x) ^ (i64)z); }
`

// fusedSource renders the kernel s.name of spec s.
func fusedSource(s fusedSpec) string {
	p := s.p
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }
	sb.WriteString(prelude)
	sb.WriteString(fusedCommon)

	// Conversions of the cast nodes.
	casts := map[string]bool{}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Kind != ir.KindCast {
			continue
		}
		src := fusedValueDType(p, n.Args[0])
		if f := fusedCastFunc(src, n.DType); f != "" && !casts[f] {
			casts[f] = true
			sb.WriteString(fusedCastSource(src, n.DType))
		}
	}

	ni, no := len(p.Inputs), len(p.Outputs)
	ng, nk := 0, 0
	for _, c := range s.classes {
		if c == fusedGeneral {
			ng++
		}
	}
	for i := range p.Nodes {
		if p.Nodes[i].Kind == ir.KindFull {
			nk++
		}
	}
	inT := func(i int) string { return ctypeOf(p.Inputs[i].DType).S }
	outT := func(o int) string { return ctypeOf(p.Nodes[p.Outputs[o]].DType).S }

	// The parameter block (every member 8 bytes; see fusedParams).
	w("\nstruct __align__(8) FP {\n\ti64 n;\n")
	if s.idx != "" {
		w("\ti64 rank, shape[%d], st[%d][%d];\n", maxRank, ng, maxRank)
	}
	if ni > 0 {
		w("\tu64 in[%d];\n", ni)
	}
	w("\tu64 out[%d];\n", no)
	if nk > 0 {
		w("\tu64 k[%d];\n", nk)
	}
	w("\tu64 zero;\n")
	divides := fusedDivides(p)
	if divides {
		w("\tu64 status;\n")
	}
	w("};\n")

	// body computes every node of one element: Z is 0, S the status word
	// (programs with integer divisions), k* the constants, x* the inputs'
	// values, y* the outputs.
	var params []string
	params = append(params, "const u64 Z")
	if divides {
		params = append(params, "u32* const S")
	}
	kq := 0
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Kind == ir.KindFull {
			params = append(params, fmt.Sprintf("const %s k%d", ctypeOf(n.DType).S, kq))
			kq++
		}
	}
	for i := range ni {
		params = append(params, fmt.Sprintf("const %s x%d", inT(i), i))
	}
	for o := range no {
		params = append(params, fmt.Sprintf("%s& y%d", outT(o), o))
	}
	w("__device__ __forceinline__ void body(%s) {\n", strings.Join(params, ", "))
	ref := func(r ir.FusedRef) string {
		if r.IsInput() {
			return fmt.Sprintf("x%d", r.Index())
		}
		return fmt.Sprintf("v%d", r.Index())
	}
	kq = 0
	for i := range p.Nodes {
		n := &p.Nodes[i]
		var args [3]string
		for a := range n.NumArgs() {
			args[a] = ref(n.Args[a])
		}
		in := n.DType
		if n.NumArgs() > 0 {
			in = fusedValueDType(p, n.Args[0])
		}
		k := ""
		if n.Kind == ir.KindFull {
			k = fmt.Sprintf("k%d", kq)
			kq++
		}
		w("\tconst %s v%d = %s; // %s\n", ctypeOf(n.DType).S, i, fusedExpr(n, in, args, k), n.Name())
	}
	for o, j := range p.Outputs {
		w("\ty%d = v%d;\n", o, j)
	}
	w("}\n")

	// The kernel's prologue: pointers, scalars and constants.
	var pro strings.Builder
	fmt.Fprintf(&pro, "\tconst u64 Z = P.zero;\n")
	if divides {
		fmt.Fprintf(&pro, "\tu32* const S = (u32*)P.status;\n")
	}
	kq = 0
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Kind == ir.KindFull {
			fmt.Fprintf(&pro, "\tconst %s k%d = %s;\n", ctypeOf(n.DType).S, kq, fusedConstExpr(n.DType, fmt.Sprintf("P.k[%d]", kq)))
			kq++
		}
	}
	for i := range ni {
		if s.classes[i] == fusedScalar {
			fmt.Fprintf(&pro, "\tconst %s s%d = ((const %s*)P.in[%d])[0];\n", inT(i), i, inT(i), i)
		} else {
			fmt.Fprintf(&pro, "\tconst %s* __restrict__ a%d = (const %s*)P.in[%d];\n", inT(i), i, inT(i), i)
		}
	}
	for o := range no {
		fmt.Fprintf(&pro, "\t%s* __restrict__ y%d = (%s*)P.out[%d];\n", outT(o), o, outT(o), o)
	}
	consts := make([]string, 0, nk+2)
	consts = append(consts, "Z")
	if divides {
		consts = append(consts, "S")
	}
	for q := range nk {
		consts = append(consts, fmt.Sprintf("k%d", q))
	}
	// call renders body's call with input i read by in(i) and output o
	// written to out(o).
	call := func(in func(i int) string, out func(o int) string) string {
		args := append([]string(nil), consts...)
		for i := range ni {
			if s.classes[i] == fusedScalar {
				args = append(args, fmt.Sprintf("s%d", i))
			} else {
				args = append(args, in(i))
			}
		}
		for o := range no {
			args = append(args, out(o))
		}
		return "body(" + strings.Join(args, ", ") + ");"
	}

	if s.idx != "" {
		fusedStrided(&sb, s, pro.String(), call)
	} else {
		fusedFlat(&sb, s, pro.String(), call, inT, outT)
	}
	return sb.String()
}

// fusedFlat writes the flat kernel of s (no general input).
func fusedFlat(sb *strings.Builder, s fusedSpec, pro string, call func(in func(int) string, out func(int) string) string, inT, outT func(int) string) {
	p := s.p
	w := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	w("#define VEC %d\n#define UNROLL %d\n", s.vec, s.unroll)
	types := map[string]bool{}
	vecType := func(t string) {
		if !types[t] {
			types[t] = true
			w("struct alignas(VEC * sizeof(%s)) V_%s { %s v[VEC]; };\n", t, t, t)
		}
	}
	for i := range p.Inputs {
		if s.classes[i] == fusedContig {
			vecType(inT(i))
		}
	}
	for o := range p.Outputs {
		vecType(outT(o))
	}
	w("extern \"C\" __global__ void %s(FP P) {\n%s", s.name, pro)
	w("\tconst i64 n = P.n;\n\tconst i64 nv = n / VEC;\n")
	w("\tconst i64 step = (i64)gridDim.x * blockDim.x * UNROLL;\n")
	w("\tfor (i64 base = (i64)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < nv; base += step) {\n")
	for i := range p.Inputs {
		if s.classes[i] == fusedContig {
			w("\t\tV_%s r%d[UNROLL];\n", inT(i), i)
		}
	}
	w("#pragma unroll\n\t\tfor (int u = 0; u < UNROLL; u++) {\n")
	w("\t\t\tconst i64 j = base + (i64)u * blockDim.x;\n\t\t\tif (j < nv) {\n")
	for i := range p.Inputs {
		if s.classes[i] == fusedContig {
			w("\t\t\t\tr%d[u] = ((const V_%s*)a%d)[j];\n", i, inT(i), i)
		}
	}
	w("\t\t\t}\n\t\t}\n")
	w("#pragma unroll\n\t\tfor (int u = 0; u < UNROLL; u++) {\n")
	w("\t\t\tconst i64 j = base + (i64)u * blockDim.x;\n\t\t\tif (j < nv) {\n")
	for o := range p.Outputs {
		w("\t\t\t\tV_%s o%d;\n", outT(o), o)
	}
	w("#pragma unroll\n\t\t\t\tfor (int l = 0; l < VEC; l++) {\n\t\t\t\t\t%s\n\t\t\t\t}\n",
		call(func(i int) string { return fmt.Sprintf("r%d[u].v[l]", i) }, func(o int) string { return fmt.Sprintf("o%d.v[l]", o) }))
	for o := range p.Outputs {
		w("\t\t\t\t((V_%s*)y%d)[j] = o%d;\n", outT(o), o, o)
	}
	w("\t\t\t}\n\t\t}\n\t}\n")
	w("\tconst i64 t = nv * VEC + (i64)blockIdx.x * blockDim.x + threadIdx.x;\n")
	w("\tif (t < n) {\n\t\t%s\n\t}\n}\n",
		call(func(i int) string { return fmt.Sprintf("a%d[t]", i) }, func(o int) string { return fmt.Sprintf("y%d[t]", o) }))
}

// fusedStrided writes the strided kernel of s (some input general).
func fusedStrided(sb *strings.Builder, s fusedSpec, pro string, call func(in func(int) string, out func(int) string) string) {
	w := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	var gen []int // the general inputs, in parameter order
	for i, c := range s.classes {
		if c == fusedGeneral {
			gen = append(gen, i)
		}
	}
	w("typedef %s IDX;\n", s.idx)
	w("extern \"C\" __global__ void %s(FP P) {\n%s", s.name, pro)
	w("\tconst int rank = (int)P.rank;\n")
	w("\tfor (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < P.n; e += (i64)gridDim.x * blockDim.x) {\n")
	var decl []string
	for _, i := range gen {
		decl = append(decl, fmt.Sprintf("o%d = 0", i))
	}
	w("\t\tIDX %s;\n", strings.Join(decl, ", "))
	w("\t\tif (rank == 1) {\n")
	for g, i := range gen {
		w("\t\t\to%d = (IDX)e * (IDX)P.st[%d][0];\n", i, g)
	}
	w("\t\t} else {\n\t\t\tIDX r = (IDX)e;\n#pragma unroll\n\t\t\tfor (int d = %d; d >= 0; d--) {\n", maxRank-1)
	w("\t\t\t\tif (d < rank) {\n\t\t\t\t\tconst IDX sz = (IDX)P.shape[d];\n\t\t\t\t\tconst IDX c = r %% sz;\n\t\t\t\t\tr /= sz;\n")
	for g, i := range gen {
		w("\t\t\t\t\to%d += c * (IDX)P.st[%d][d];\n", i, g)
	}
	w("\t\t\t\t}\n\t\t\t}\n\t\t}\n")
	w("\t\t%s\n\t}\n}\n", call(func(i int) string {
		if s.classes[i] == fusedGeneral {
			return fmt.Sprintf("a%d[o%d]", i, i)
		}
		return fmt.Sprintf("a%d[e]", i)
	}, func(o int) string { return fmt.Sprintf("y%d[e]", o) }))
}
