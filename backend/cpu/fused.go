package cpu

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

// Fused elementwise programs (backend.Fuser).
//
// ExecFused compiles an ir.FusedProgram into a plan, a list of steps that
// each run one node as a tight typed loop over a block of fusedBlock
// elements, and runs the plan block after block: every input is read once
// and every output written once, while the intermediate values stay in
// per-block scratch buffers that fit the caches. Large programs run their
// blocks in parallel cache-sized chunks on the worker pool (forChunks).
//
// Values live in one of three storage classes (float32 for F32 and
// Flex32, float64 for F64, bool for Bool). During a block a value is
// either uniform (a constant, or computed only from rank-0 inputs and
// constants: evaluated once while compiling, with the same kernels on one
// element) or a run of the block's elements: a slice of a full input, a
// scratch buffer (a node, or a broadcast input gathered for the block) or
// a slice of an output, which the node producing it writes directly.
// Casts between F32 and Flex32, casts to the same dtype and Where with a
// uniform condition are aliases and cost nothing.

var _ backend.Fuser = (*Backend)(nil)

// FusesNode reports whether ExecFused evaluates nodes like n, whose first
// operand has dtype in (n.DType for KindFull): on F32, Flex32 and F64
// every unary op but Not and every binary op but the logical ones and the
// shifts (comparisons giving Bool); on Bool Not, And, Or, Xor, Max, Min
// and the comparisons; Where with a Bool condition and F32, Flex32, F64
// or Bool branches; Cast between any two of F32, Flex32, F64 and Bool;
// Full of those dtypes. Everything else (integer and half dtypes) is
// false.
func (be *Backend) FusesNode(n *ir.FusedNode, in backend.DType) bool {
	return fusesNode(n, in)
}

// fusesNode is FusesNode.
func fusesNode(n *ir.FusedNode, in backend.DType) bool {
	out, ok := fusedClass(n.DType)
	if !ok {
		return false
	}
	switch n.Kind {
	case ir.KindFull:
		return true
	case ir.KindUnary:
		u := ir.UnaryOp(n.Sub)
		if !u.Valid() || in != n.DType {
			return false
		}
		if in == backend.Bool {
			return u == ir.OpNot
		}
		return u != ir.OpNot
	case ir.KindBinary:
		b := ir.BinaryOp(n.Sub)
		c, ok := fusedClass(in)
		if !ok || !b.Valid() || b.IsShift() {
			return false
		}
		if b.IsComparison() {
			return out == clsBool
		}
		if n.DType != in {
			return false
		}
		if c == clsBool {
			return b.IsLogical() || b == ir.OpMax || b == ir.OpMin
		}
		return !b.IsLogical()
	case ir.KindWhere:
		return in == backend.Bool
	case ir.KindCast:
		_, ok := fusedClass(in)
		return ok
	}
	return false
}

// ExecFused evaluates p over inputs in one pass (see backend.Fuser), each
// output bit-identical to running its nodes one by one through Exec (a
// NaN that an op computes from two NaN operands is a NaN whose sign and
// payload may be either operand's, as they are among Exec's own loops).
// It declines (nil, false) a program that is not valid or has an invalid
// shape, holds a node FusesNode rejects or operands of mismatched dtypes,
// or whose inputs are not contiguous host tensors of the dtypes and shapes
// p.Inputs gives.
// Outputs are new contiguous tensors of p.Shape: F32, Flex32 and F64
// buffers from the backend's allocator, Bool as []bool.
func (be *Backend) ExecFused(p *ir.FusedProgram, inputs []backend.Tensor) ([]backend.Tensor, bool) {
	if len(inputs) != len(p.Inputs) || ir.CheckShape(p.Shape) != nil || p.Validate() != nil {
		return nil, false
	}
	pl, ok := compileFused(p, inputs)
	if !ok {
		return nil, false
	}
	shape := slices.Clone(p.Shape)
	outs := make([]backend.Tensor, len(p.Outputs))
	for k, o := range p.Outputs {
		dt := p.Nodes[o].DType
		r := pl.outRefs[k]
		switch r.cls {
		case clsF32:
			t, data := be.newF32(dt, shape, pl.n)
			outs[k], pl.f32.outs[r.idx] = t, data
		case clsF64:
			data := be.f64(pl.n)
			outs[k], pl.f64.outs[r.idx] = host.NewFloat64(shape, data), data
		default:
			data := make([]bool, pl.n)
			outs[k], pl.b.outs[r.idx] = host.NewBool(shape, data), data
		}
	}
	pl.run()
	return outs, true
}

// fcls is a storage class: the element type a value is held in.
type fcls uint8

const (
	clsF32  fcls = iota // float32: F32 and Flex32
	clsF64              // float64: F64
	clsBool             // bool: Bool
	numCls
)

// fusedClass returns the storage class of dt, or false for a dtype fused
// programs do not take.
func fusedClass(dt backend.DType) (fcls, bool) {
	switch dt {
	case backend.F32, backend.Flex32:
		return clsF32, true
	case backend.F64:
		return clsF64, true
	case backend.Bool:
		return clsBool, true
	}
	return 0, false
}

// fsrc says where a value of a block lives.
type fsrc uint8

const (
	srcConst fsrc = iota // uniform: consts[idx]
	srcIn                // a full input: ins[idx][lo:hi]
	srcSlot              // a scratch buffer: slots[idx][:hi-lo]
	srcOut               // an output: outs[idx][lo:hi]
	srcGath              // a broadcast input not gathered yet: gath[idx] (compilation only)
)

// fref locates a value: its storage class, where it lives and its index
// there (while compiling, srcSlot indices are virtual registers).
type fref struct {
	cls fcls
	src fsrc
	idx int32
}

// fop is a step's operation.
type fop uint8

const (
	opGather  fop = iota // dst ← gath[a.idx] at the block
	opCopy               // dst ← a
	opUnary              // dst ← sub(a), floats
	opBinary             // dst ← a sub b, float arithmetic
	opCompare            // dst (Bool) ← a sub b, floats
	opNot                // dst ← !a, Bool
	opLogic              // dst ← a sub b, Bool operands and result
	opWhere              // dst ← c ? a : b
	opCast               // dst ← a converted to dst's class
	opGelu               // dst ← a·((erf(a·b) + c)·d), F32, b, c, d constants (fused_gelu.go)
	opCmpSel             // dst ← (c sub d) ? a : b, F32, c a vector, d uniform (fused_cmpsel.go)
)

// fstep is one loop of a plan.
type fstep struct {
	op         fop
	sub        uint8 // the unary or binary op; for opGelu 1 where its last product is w·a
	dst        fref
	a, b, c, d fref // d: opGelu's third constant
}

// reads returns the operands the step reads and how many there are.
func (st *fstep) reads() ([4]*fref, int) {
	switch st.op {
	case opGather:
		return [4]*fref{}, 0
	case opBinary, opCompare, opLogic:
		return [4]*fref{&st.a, &st.b}, 2
	case opWhere:
		return [4]*fref{&st.c, &st.a, &st.b}, 3
	case opCmpSel:
		return [4]*fref{&st.c, &st.d, &st.a, &st.b}, 4
	}
	return [4]*fref{&st.a}, 1
}

// fbank holds a plan's data of one storage class. The arrays give the
// slices their first elements inside the plan's own allocation.
type fbank[T any] struct {
	consts []T
	ins    [][]T // full inputs, contiguous, of the iteration's size
	gath   []bcastGather[T]
	outs   [][]T
	slots  int // scratch buffers a block needs

	constArr [4]T
	insArr   [4][]T
	outsArr  [2][]T
}

// init points the bank's slices at its arrays.
func (b *fbank[T]) init() {
	b.consts, b.ins, b.outs = b.constArr[:0], b.insArr[:0], b.outsArr[:0]
}

// fplan is a compiled program.
type fplan struct {
	shape   []int // the iteration shape
	n       int   // elements of the iteration
	blk     int   // elements of a block (of a scratch buffer)
	steps   []fstep
	outRefs []fref // output k is outs[outRefs[k].idx] of its class
	f32     fbank[float32]
	f64     fbank[float64]
	b       fbank[bool]
	pf      int  // the step that prefetches the next block's inputs, or -1
	gs      int  // the F32 scratch buffer of gelu steps, or -1
	nt      bool // F32 outputs go through a scratch buffer and streaming stores

	stepsArr   [16]fstep
	outRefsArr [3]fref
}

// fusedBlock is the number of elements a step processes at once: a
// float32 scratch buffer is 8 KiB, so a program's live buffers stay in
// the L1 and L2 caches.
const fusedBlock = 2048

// Plans without transcendental steps (which compute for long per element,
// see slowUnary) take longer blocks, up to fusedBlockMax elements while
// their scratch buffers stay within fusedScratchBytes (an L1 data cache):
// their steps are quick passes, and a block's fixed cost (a call per
// step, per run of a broadcast operand) weighs on them. The MNIST CNN's
// bias-and-ReLU programs over [64, 32, 24, 24] (one float32 scratch
// buffer: blocks of 8192) took 0.27–0.34 ms against 0.31–0.39 with 2048
// (forward; the gradient 0.31–0.34 against 0.30–0.37), in alternating
// runs; a 64 KiB budget (16384) was about as fast for them but slowed the
// fused Adam update (two buffers: 8192 instead of 4096) by 5 %.
const (
	fusedBlockMax     = 16384
	fusedScratchBytes = 32 << 10
)

// fval is a value while compiling: where it lives, and its dtype.
type fval struct {
	r  fref
	dt ir.DType
}

// fnode is what compiling knows of a node beside its value.
type fnode struct {
	live  bool  // an output depends on it
	wrote bool  // its step writes its first output
	out   int32 // 1 + the index of its first output, 0 for none
}

// compiler builds a plan; its arrays hold the slices of small programs.
type compiler struct {
	p     *ir.FusedProgram
	pl    *fplan
	vals  []fval         // inputs, then nodes
	nodes []fnode        // by node
	gathd [numCls][]fref // gathered broadcast inputs by gath index (srcGath: not yet)
	vregs []fcls         // classes of the virtual registers

	valsArr  [24]fval
	nodesArr [16]fnode
	vregsArr [16]fcls
}

// compileFused compiles p over inputs, or returns false when it declines.
func compileFused(p *ir.FusedProgram, inputs []backend.Tensor) (*fplan, bool) {
	n := numel(p.Shape)
	pl := &fplan{shape: p.Shape, n: n, blk: max(1, min(fusedBlock, n))}
	pl.f32.init()
	pl.f64.init()
	pl.b.init()
	pl.steps = pl.stepsArr[:0]
	pl.outRefs = pl.outRefsArr[:0]
	nin := len(p.Inputs)
	var c compiler
	c.p, c.pl = p, pl
	c.vals = sized(c.valsArr[:], nin+len(p.Nodes))
	c.nodes = sized(c.nodesArr[:], len(p.Nodes))
	c.vregs = c.vregsArr[:0]
	for i, in := range p.Inputs {
		r, ok := c.bindInput(in, inputs[i])
		if !ok {
			return nil, false
		}
		c.vals[i] = fval{r, in.DType}
	}
	c.markLive()
	for k := len(p.Outputs) - 1; k >= 0; k-- {
		c.nodes[p.Outputs[k]].out = int32(k + 1)
	}
	for _, o := range p.Outputs {
		cls, _ := fusedClass(p.Nodes[o].DType)
		pl.outRefs = append(pl.outRefs, fref{cls: cls, src: srcOut, idx: int32(pl.addOut(cls))})
	}
	for i := range p.Nodes {
		info := &c.nodes[i]
		if !info.live {
			continue
		}
		var dst *fref
		if info.out > 0 {
			dst = &pl.outRefs[info.out-1]
		}
		r, wrote, ok := c.node(&p.Nodes[i], dst)
		if !ok {
			return nil, false
		}
		info.wrote = wrote
		c.vals[nin+i] = fval{r, p.Nodes[i].DType}
	}
	for k, o := range p.Outputs {
		if info := c.nodes[o]; !info.wrote || int(info.out) != k+1 {
			pl.steps = append(pl.steps, fstep{op: opCopy, dst: pl.outRefs[k], a: c.use(c.vals[nin+o].r)})
		}
	}
	c.fuseGelu()
	c.fuseCmpSel()
	c.allocSlots()
	pl.plan()
	return pl, true
}

// sized returns arr[:n] when n fits, else a new slice of n elements.
func sized[T any](arr []T, n int) []T {
	if n <= len(arr) {
		return arr[:n]
	}
	return make([]T, n)
}

// addOut adds an output of class cls to the plan (its slice is set once
// allocated) and returns its index.
func (pl *fplan) addOut(cls fcls) int {
	switch cls {
	case clsF32:
		pl.f32.outs = append(pl.f32.outs, nil)
		return len(pl.f32.outs) - 1
	case clsF64:
		pl.f64.outs = append(pl.f64.outs, nil)
		return len(pl.f64.outs) - 1
	}
	pl.b.outs = append(pl.b.outs, nil)
	return len(pl.b.outs) - 1
}

// bindInput describes input t, of description in, as a value: a constant
// (one element), a full input or a broadcast input to gather. It returns
// false for a tensor that is not a contiguous host tensor of in's dtype
// and shape.
func (c *compiler) bindInput(in ir.FusedInput, t backend.Tensor) (fref, bool) {
	cls, ok := fusedClass(in.DType)
	if !ok || t == nil || t.DType() != in.DType {
		return fref{}, false
	}
	switch cls {
	case clsF32:
		v, ok := host.Float32(t)
		return bindView(c.pl, &c.pl.f32, &c.gathd[cls], cls, v, ok, in.Shape)
	case clsF64:
		v, ok := host.Float64(t)
		return bindView(c.pl, &c.pl.f64, &c.gathd[cls], cls, v, ok, in.Shape)
	}
	v, ok := host.Bool(t)
	return bindView(c.pl, &c.pl.b, &c.gathd[cls], cls, v, ok, in.Shape)
}

// bindView is bindInput for a host view of element type T.
func bindView[T any](pl *fplan, bank *fbank[T], gathd *[]fref, cls fcls, v host.View[T], ok bool, shape []int) (fref, bool) {
	if !ok || !slices.Equal(v.Shape, shape) {
		return fref{}, false
	}
	data, ok := v.Contiguous()
	if !ok && len(v.Shape) == 2 && v.Shape[0] > 1 && v.Shape[1] > 1 && numel(shape) == pl.n {
		// A strided matrix (a transposed gradient): copied once, tile by
		// tile, into a row-major buffer, since reading it in the
		// iteration's order would touch a cache line per element.
		data = make([]T, pl.n)
		transposeInto(data, v.Data, v.Offset, v.Shape[0], v.Shape[1], v.Strides[0], v.Strides[1])
		ok = true
	}
	if !ok {
		// A strided view (a slice, a flip): gathered through its strides
		// block by block.
		if numel(shape) == 0 {
			return fref{}, false
		}
		bank.gath = append(bank.gath, newStridedGather(v.Data, v.Offset, v.Shape, v.Strides, pl.shape))
		*gathd = append(*gathd, fref{cls: cls, src: srcGath, idx: int32(len(bank.gath) - 1)})
		return (*gathd)[len(*gathd)-1], true
	}
	switch m := numel(shape); {
	case m == pl.n:
		bank.ins = append(bank.ins, data)
		return fref{cls: cls, src: srcIn, idx: int32(len(bank.ins) - 1)}, true
	case m == 1:
		bank.consts = append(bank.consts, data[0])
		return fref{cls: cls, src: srcConst, idx: int32(len(bank.consts) - 1)}, true
	}
	bank.gath = append(bank.gath, newGather(data, shape, pl.shape))
	*gathd = append(*gathd, fref{cls: cls, src: srcGath, idx: int32(len(bank.gath) - 1)})
	return (*gathd)[len(*gathd)-1], true
}

// markLive marks the nodes an output depends on.
func (c *compiler) markLive() {
	p := c.p
	for _, o := range p.Outputs {
		c.nodes[o].live = true
	}
	for i := len(p.Nodes) - 1; i >= 0; i-- {
		if !c.nodes[i].live {
			continue
		}
		n := &p.Nodes[i]
		for a := range n.NumArgs() {
			if r := n.Args[a]; !r.IsInput() {
				c.nodes[r.Index()].live = true
			}
		}
	}
}

// arg returns the value and dtype of operand r.
func (c *compiler) arg(r ir.FusedRef) (fref, ir.DType) {
	i := r.Index()
	if !r.IsInput() {
		i += len(c.p.Inputs)
	}
	return c.vals[i].r, c.vals[i].dt
}

// use returns r ready to be read by a step: a broadcast input is gathered
// (once, by a step placed before its first reader).
func (c *compiler) use(r fref) fref {
	if r.src != srcGath {
		return r
	}
	g := &c.gathd[r.cls][r.idx]
	if g.src == srcGath {
		dst := c.vreg(r.cls)
		c.pl.steps = append(c.pl.steps, fstep{op: opGather, dst: dst, a: r})
		*g = dst
	}
	return *g
}

// vreg returns a new virtual scratch register of class cls.
func (c *compiler) vreg(cls fcls) fref {
	c.vregs = append(c.vregs, cls)
	return fref{cls: cls, src: srcSlot, idx: int32(len(c.vregs) - 1)}
}

// node compiles node n: it returns the node's value, whether a step wrote
// it into *dst (the node's first output, when dst is not nil), and false
// when the node is not one ExecFused takes.
func (c *compiler) node(n *ir.FusedNode, dst *fref) (r fref, wrote, ok bool) {
	cls, ok := fusedClass(n.DType)
	if !ok {
		return fref{}, false, false
	}
	var args [3]fref
	var dts [3]ir.DType
	for a := range n.NumArgs() {
		args[a], dts[a] = c.arg(n.Args[a])
	}
	in := n.DType
	if n.NumArgs() > 0 {
		in = dts[0]
	}
	if !fusesNode(n, in) {
		return fref{}, false, false
	}
	st := fstep{sub: n.Sub}
	switch n.Kind {
	case ir.KindFull:
		return c.pl.constOf(cls, n.Value), false, true
	case ir.KindUnary:
		st.op, st.a = opUnary, args[0]
		if cls == clsBool {
			st.op = opNot
		}
	case ir.KindBinary:
		if dts[1] != dts[0] {
			return fref{}, false, false
		}
		bop := ir.BinaryOp(n.Sub)
		st.a, st.b = args[0], args[1]
		switch {
		case args[0].cls != clsBool && bop.IsComparison():
			st.op = opCompare
		case args[0].cls != clsBool:
			st.op = opBinary
		default:
			st.op = opLogic
			if v, f, ok := c.pl.logicUniform(bop, args[0], args[1]); ok {
				// One operand uniform: the result is a constant, the
				// other operand, or its negation.
				if f != boolNot {
					return v, false, true
				}
				st = fstep{op: opNot, a: v}
			}
		}
	case ir.KindWhere:
		if dts[1] != n.DType || dts[2] != n.DType {
			return fref{}, false, false
		}
		if cond := args[0]; cond.src == srcConst {
			if c.pl.b.consts[cond.idx] {
				return args[1], false, true
			}
			return args[2], false, true
		}
		if args[1] == args[2] {
			return args[1], false, true
		}
		st.op, st.c, st.a, st.b = opWhere, args[0], args[1], args[2]
	case ir.KindCast:
		if args[0].cls == cls {
			return args[0], false, true // F32 and Flex32 share storage
		}
		st.op, st.a = opCast, args[0]
	}
	return c.emit(st, cls, dst)
}

// emit appends step st, whose result has class cls, writing into *dst
// when dst is not nil and else into a new register, and returns the
// result. A step that reads only uniform values is evaluated now and
// gives a constant.
func (c *compiler) emit(st fstep, cls fcls, dst *fref) (fref, bool, bool) {
	refs, k := st.reads()
	uniform := true
	for _, r := range refs[:k] {
		uniform = uniform && r.src == srcConst
	}
	if uniform {
		return c.pl.fold(st, cls), false, true
	}
	runs := c.runsOperand(&st)
	for _, r := range refs[:k] {
		if r != runs {
			*r = c.use(*r)
		}
	}
	wrote := dst != nil
	if wrote {
		st.dst = *dst
	} else {
		st.dst = c.vreg(cls)
	}
	c.pl.steps = append(c.pl.steps, st)
	return st.dst, wrote, true
}

// Results of a Bool operation with one uniform operand, as a function of
// the other.
const (
	boolConst = iota // a constant
	boolCopy         // the operand itself
	boolNot          // its negation
)

// logicUniform simplifies the Bool binary op with operands a and b when
// exactly one of them is uniform: it returns the result's value (a new
// constant, or the other operand) and its form, or false.
func (pl *fplan) logicUniform(op ir.BinaryOp, a, b fref) (fref, int, bool) {
	var s bool
	var v fref
	var f func(x bool) bool
	switch {
	case a.src == srcConst && b.src != srcConst:
		s, v = pl.b.consts[a.idx], b
		f = func(x bool) bool { return boolOp(op, s, x) }
	case b.src == srcConst && a.src != srcConst:
		s, v = pl.b.consts[b.idx], a
		f = func(x bool) bool { return boolOp(op, x, s) }
	default:
		return fref{}, 0, false
	}
	f0, f1 := f(false), f(true)
	switch {
	case f0 == f1:
		pl.b.consts = append(pl.b.consts, f0)
		return fref{cls: clsBool, src: srcConst, idx: int32(len(pl.b.consts) - 1)}, boolConst, true
	case f1:
		return v, boolCopy, true
	}
	return v, boolNot, true
}

// constOf adds the constant v converted to class cls as Full converts it
// (float32(v); v != 0 for Bool, NaN being true) and returns it.
func (pl *fplan) constOf(cls fcls, v float64) fref {
	r := fref{cls: cls, src: srcConst}
	switch cls {
	case clsF32:
		pl.f32.consts = append(pl.f32.consts, float32(v))
		r.idx = int32(len(pl.f32.consts) - 1)
	case clsF64:
		pl.f64.consts = append(pl.f64.consts, v)
		r.idx = int32(len(pl.f64.consts) - 1)
	default:
		pl.b.consts = append(pl.b.consts, v != 0)
		r.idx = int32(len(pl.b.consts) - 1)
	}
	return r
}

// fold evaluates step st, whose operands are all uniform, with the kernels
// the blocks use run on one element, and returns the result as a new
// constant of class cls.
func (pl *fplan) fold(st fstep, cls fcls) fref {
	one := fplan{n: 1, blk: 1}
	one.f32.ins = oneEach(pl.f32.consts)
	one.f64.ins = oneEach(pl.f64.consts)
	one.b.ins = oneEach(pl.b.consts)
	refs, k := st.reads()
	for _, r := range refs[:k] {
		r.src = srcIn
	}
	st.dst = fref{cls: cls, src: srcOut}
	switch cls {
	case clsF32:
		v := make([]float32, 1)
		one.f32.outs = [][]float32{v}
		one.exec(&fenv{}, &st, 0, 1)
		pl.f32.consts = append(pl.f32.consts, v[0])
		return fref{cls: cls, src: srcConst, idx: int32(len(pl.f32.consts) - 1)}
	case clsF64:
		v := make([]float64, 1)
		one.f64.outs = [][]float64{v}
		one.exec(&fenv{}, &st, 0, 1)
		pl.f64.consts = append(pl.f64.consts, v[0])
		return fref{cls: cls, src: srcConst, idx: int32(len(pl.f64.consts) - 1)}
	}
	v := make([]bool, 1)
	one.b.outs = [][]bool{v}
	one.exec(&fenv{}, &st, 0, 1)
	pl.b.consts = append(pl.b.consts, v[0])
	return fref{cls: cls, src: srcConst, idx: int32(len(pl.b.consts) - 1)}
}

// oneEach returns the one-element slices of the elements of s.
func oneEach[T any](s []T) [][]T {
	out := make([][]T, len(s))
	for i := range s {
		out[i] = s[i : i+1 : i+1]
	}
	return out
}

// allocSlots maps the virtual registers of the steps to scratch buffers:
// a buffer is free again after the last step that reads its value, so a
// step may write the buffer of an operand it reads last (the kernels are
// elementwise, so in place is safe).
func (c *compiler) allocSlots() {
	pl := c.pl
	var arr [32]int32
	nv := len(c.vregs)
	buf := sized(arr[:], 2*nv)
	last, phys := buf[:nv], buf[nv:]
	for i := range last {
		last[i] = -1
	}
	for i := range pl.steps {
		refs, k := pl.steps[i].reads()
		for _, r := range refs[:k] {
			if r.src == srcSlot {
				last[r.idx] = int32(i)
			}
		}
	}
	var freeArr [numCls][8]int32
	var free [numCls][]int32
	for k := range free {
		free[k] = freeArr[k][:0]
	}
	var count [numCls]int32
	release := func(v int32) {
		cls := c.vregs[v]
		free[cls] = append(free[cls], phys[v])
	}
	for i := range pl.steps {
		st := &pl.steps[i]
		refs, k := st.reads()
		var done [4]int32
		nd := 0
		for _, r := range refs[:k] {
			if r.src != srcSlot {
				continue
			}
			v := r.idx
			r.idx = phys[v]
			if int(last[v]) == i && !slices.Contains(done[:nd], v) {
				done[nd] = v
				nd++
			}
		}
		for _, v := range done[:nd] {
			release(v)
		}
		if st.dst.src == srcSlot {
			v, cls := st.dst.idx, st.dst.cls
			if f := free[cls]; len(f) > 0 {
				phys[v] = f[len(f)-1]
				free[cls] = f[:len(f)-1]
			} else {
				phys[v] = count[cls]
				count[cls]++
			}
			st.dst.idx = phys[v]
			if int(last[v]) < i {
				release(v) // never read
			}
		}
	}
	pl.f32.slots, pl.f64.slots, pl.b.slots = int(count[clsF32]), int(count[clsF64]), int(count[clsBool])
}
