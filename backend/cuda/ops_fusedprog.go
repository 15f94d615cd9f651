package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

var _ backend.Fuser = (*Backend)(nil)

// maxFusedParams is the largest parameter block a fused kernel takes
// (CUDA's limit on the parameters of a kernel); programs needing more
// are declined.
const maxFusedParams = 4096

// fusedMax32 bounds the element count and the offsets of strided fused
// kernels with 32-bit indexing (a variable so that tests reach the 64-bit
// kernels on small tensors).
var fusedMax32 = math.MaxInt32

// FusesNode reports whether ExecFused evaluates nodes like n whose first
// operand has dtype in (n.DType for KindFull) (backend.Fuser): every
// unary, binary, where, cast and full node ir's inference accepts, on
// every dtype this device stores (F16 and BF16 from compute capability
// 8.0), each computed exactly as the unfused kernel of its op computes it.
func (b *Backend) FusesNode(n *ir.FusedNode, in backend.DType) bool {
	if _, ok := ctypes[n.DType]; !ok || !b.SupportsDType(n.DType) {
		return false
	}
	if _, ok := ctypes[in]; !ok || !b.SupportsDType(in) {
		return false
	}
	return fusedOpDefined(n, in)
}

// ExecFused evaluates p over inputs in one generated kernel and returns
// one new contiguous tensor of p.Shape per p.Outputs (backend.Fuser).
// inputs are this backend's tensors of p.Inputs' dtypes and shapes, in
// any layout: each input that is dense over the iteration shape is read
// at the element's index, one holding a single element (or broadcast from
// one) is read once, and any other (broadcast, permuted, sliced, flipped)
// through its strides. Every value is bit for bit the result of running
// the nodes one by one on this backend (p.Run): each node is computed by
// the code of its op's own kernel, in its dtype, rounded to its dtype
// after every node (see kernels_fusedprog.go).
//
// The kernel is generated per program signature (the nodes, outputs and
// dtypes; neither shapes nor the constants' values, which are kernel
// parameters) and input layout, and cached by them. A kernel not built
// yet is compiled by tiers (see FusedTiering): found in the disk cache, it
// is loaded at once; otherwise ExecFused declines (ok false) and counts
// the program, and once its signature and layout have been seen
// Threshold times NVRTC compiles the kernel on a background worker while
// the caller keeps running the program op by op (ir.FusedProgram.Run),
// which gives the same bits. With FusedTiering.Sync (EMBER_CUDA_SYNC_COMPILE=1)
// and while the backend records a graph, the kernel is compiled on the
// calling goroutine at the first call instead.
//
// ok is also false, and nothing is queued, when the backend declines p: a
// node FusesNode rejects, operands not of p's dtypes and shapes or not
// CUDA tensors, more than 8 axes left after merging the general inputs'
// axes, or a parameter block over 4 KiB. A failed compilation panics as
// Exec does, at the first call that needs the kernel (for a background
// compilation: the first call of the program after it failed); so does a
// failed launch. While the backend records a graph, ExecFused keeps its
// inputs for the graph and a panic makes EndGraph fail, as Exec's.
func (b *Backend) ExecFused(p *ir.FusedProgram, inputs []backend.Tensor) ([]backend.Tensor, bool) {
	if len(inputs) != len(p.Inputs) {
		return nil, false
	}
	plan := b.fusedPlanOf(p)
	if !plan.ok {
		return nil, false
	}
	ts := make([]*Tensor, len(inputs))
	for i, x := range inputs {
		t, ok := x.(*Tensor)
		if !ok || t.dtype != p.Inputs[i].DType || !slices.Equal(t.shape, p.Inputs[i].Shape) {
			return nil, false
		}
		ts[i] = t
	}
	if r := b.rec.Load(); r != nil {
		for _, t := range ts {
			r.pin(t)
		}
		defer r.recordPanic("fused program")
	}
	lay, ok := fusedLayoutOf(p.Shape, ts)
	if !ok {
		return nil, false
	}
	words := fusedParamWords(len(lay.gen) > 0, len(lay.gen), len(ts), len(p.Outputs), plan.nconsts, plan.divides)
	if 8*words > maxFusedParams {
		return nil, false
	}
	shape := slices.Clone(p.Shape)
	outs := make([]*Tensor, len(p.Outputs))
	res := make([]backend.Tensor, len(p.Outputs))
	for o, j := range p.Outputs {
		outs[o] = b.emptyOf(shape, p.Nodes[j].DType)
		res[o] = outs[o]
	}
	n := backend.NumElements(shape)
	if n == 0 {
		return res, true
	}
	spec := fusedSpec{p: p, classes: lay.classes}
	var grid [3]uint32
	if len(lay.gen) > 0 {
		spec.idx = "i64"
		if lay.fits32 {
			spec.idx = "int"
		}
		grid = grid1(n, blockSize)
	} else {
		spec.vec, spec.unroll = fusedVector(lay.classes, ts, outs, len(p.Nodes))
		grid = grid1(n/spec.vec, blockSize*spec.unroll)
	}
	k, ok := b.fusedKernel(plan, &spec)
	if !ok {
		for _, t := range outs {
			b.Release(t) // nothing was queued on them
		}
		return nil, false
	}
	consts := plan.constsOf(p)
	var status []uint64
	if plan.divides {
		status = []uint64{b.statusWord()}
	}
	params := fusedParams(words, n, &lay, ts, outs, consts, status)
	b.launchPacked(k, grid, block1, 0, params)
	runtime.KeepAlive(ts)
	return res, true
}

// fusedPlan is what the backend keeps per program signature: whether it
// runs such programs, the bits of the constants it last ran with, and
// its kernels by variant.
type fusedPlan struct {
	ok      bool
	divides bool            // the program has integer divisions: its kernels take the status word
	nconsts int             // its constants (Full nodes)
	kernels sync.Map        // variant -> *Kernel
	probed  sync.Map        // variant -> struct{}: looked up in the disk cache (fusedKernel)
	sig     string          // the signature (fusedSignature)
	p       ir.FusedProgram // a program of the signature (its shapes unused)

	// last holds the constants' values (float64 bits) and the bits they
	// store, of the last program run, so that a program repeating its
	// constants converts none (see constsOf).
	last atomic.Pointer[fusedConstBits]
}

// fusedConstBits pairs the values of a program's constants (their
// float64 bits) with the bits Full stores for them.
type fusedConstBits struct {
	values, bits []uint64
}

// fusedSignature is what a fused kernel's source depends on: p's
// signature (ir.FusedProgram.Signature) without the constants' values,
// which the kernels take as parameters. Programs that differ only in
// their shapes and constants (a learning rate, a scale) share a plan and
// its kernels.
func fusedSignature(p *ir.FusedProgram) string {
	var sb strings.Builder
	sb.Grow(16 * (len(p.Inputs) + len(p.Nodes)))
	for _, in := range p.Inputs {
		sb.WriteString(in.DType.String())
		sb.WriteByte(',')
	}
	sb.WriteByte('|')
	for i := range p.Nodes {
		n := &p.Nodes[i]
		sb.WriteString(strconv.Itoa(int(n.Kind)))
		sb.WriteByte('.')
		sb.WriteString(strconv.Itoa(int(n.Sub)))
		sb.WriteByte('.')
		sb.WriteString(n.DType.String())
		for a := range n.NumArgs() {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(int(n.Args[a])))
		}
		sb.WriteByte(';')
	}
	sb.WriteByte('|')
	for _, o := range p.Outputs {
		sb.WriteString(strconv.Itoa(o))
		sb.WriteByte(',')
	}
	return sb.String()
}

// fusedPlanOf returns the plan of p's signature, making it on first use.
func (b *Backend) fusedPlanOf(p *ir.FusedProgram) *fusedPlan {
	sig := fusedSignature(p)
	if v, ok := b.fusedPlans.Load(sig); ok {
		return v.(*fusedPlan)
	}
	plan := &fusedPlan{sig: sig}
	if fusedCheck(p, b.FusesNode) == nil {
		plan.ok = true
		plan.p = ir.FusedProgram{
			Inputs:  slices.Clone(p.Inputs),
			Nodes:   slices.Clone(p.Nodes),
			Outputs: slices.Clone(p.Outputs),
		}
		for i := range plan.p.Inputs {
			plan.p.Inputs[i].Shape = nil // the source does not depend on shapes
		}
		plan.divides = fusedDivides(p)
		for i := range p.Nodes {
			if p.Nodes[i].Kind == ir.KindFull {
				plan.nconsts++
			}
		}
	}
	v, _ := b.fusedPlans.LoadOrStore(sig, plan)
	return v.(*fusedPlan)
}

// constsOf returns the bits of p's constants (p is of pl's signature),
// converting them only when their values differ from the last call's.
func (pl *fusedPlan) constsOf(p *ir.FusedProgram) []uint64 {
	last := pl.last.Load()
	if last != nil {
		k := 0
		for i := range p.Nodes {
			if n := &p.Nodes[i]; n.Kind == ir.KindFull {
				if math.Float64bits(n.Value) != last.values[k] {
					last = nil
					break
				}
				k++
			}
		}
		if last != nil {
			return last.bits
		}
	}
	c := &fusedConstBits{bits: fusedConsts(p)}
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Kind == ir.KindFull {
			c.values = append(c.values, math.Float64bits(n.Value))
		}
	}
	pl.last.Store(c)
	return c.bits
}

// fusedConsts returns the bits of p's constants (its KindFull nodes), in
// node order.
func fusedConsts(p *ir.FusedProgram) []uint64 {
	var c []uint64
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Kind == ir.KindFull {
			c = append(c, fusedFullBits(n.DType, n.Value))
		}
	}
	return c
}

// kernel returns the plan's kernel of spec's variant (spec.p may be any
// program of the signature), generating and compiling it on the calling
// goroutine on first use.
func (pl *fusedPlan) kernel(b *Backend, spec *fusedSpec) *Kernel {
	variant := spec.variant()
	if k, ok := pl.kernels.Load(variant); ok {
		return k.(*Kernel)
	}
	s := pl.spec(spec, variant)
	k := b.Kernel(s.name, fusedSource(s))
	pl.kernels.Store(variant, k)
	b.fusedStats.sync.Add(1)
	return k
}

// spec returns spec over the plan's own program (immutable, unlike the
// caller's) with the kernel's name, for a build that outlives the call.
func (pl *fusedPlan) spec(spec *fusedSpec, variant string) fusedSpec {
	s := *spec
	s.p = &pl.p
	s.name = fusedKernelName(pl.sig, variant)
	return s
}

// fusedLayout is how a fused kernel reads its inputs for one call.
type fusedLayout struct {
	classes []byte  // per input: fusedContig, fusedScalar or fusedGeneral
	gen     []int   // the general inputs
	shape   []int   // the iteration shape with axes merged (general inputs only)
	strides [][]int // per general input, its strides over shape
	fits32  bool    // every offset and the element count fit the 32-bit kernel
}

// fusedLayoutOf classifies the inputs ins over the iteration shape; ok is
// false when an input does not broadcast to shape or more than maxRank
// axes remain after merging.
func fusedLayoutOf(shape []int, ins []*Tensor) (l fusedLayout, ok bool) {
	l.classes = make([]byte, len(ins))
	var gst [][]int
	for i, t := range ins {
		off := len(shape) - len(t.shape)
		if off < 0 {
			return l, false
		}
		for a, d := range t.shape {
			if d != 1 && d != shape[off+a] {
				return l, false
			}
		}
		st := broadcastStrides(t, shape)
		switch f := flatStrides(shape, st); {
		case f == nil:
			l.classes[i] = fusedGeneral
			l.gen = append(l.gen, i)
			gst = append(gst, st)
		case f[0] == 0:
			l.classes[i] = fusedScalar
		default:
			l.classes[i] = fusedContig
		}
	}
	if len(l.gen) == 0 {
		return l, true
	}
	sh, st := collapse(shape, append([][]int{layout.RowMajorStrides(shape)}, gst...))
	if len(sh) > maxRank {
		return l, false
	}
	l.shape, l.strides = sh, st[1:]
	l.fits32 = backend.NumElements(sh) <= fusedMax32
	for _, s := range l.strides {
		span := 0
		for d, n := range sh {
			span += (n - 1) * abs(s[d])
		}
		if span > fusedMax32 {
			l.fits32 = false
		}
	}
	return l, true
}

// fusedInlineBudget bounds the node evaluations a flat kernel's unrolled
// loop inlines (nodes × elements per thread): a long program's body is
// not unrolled as far, which keeps its compilation short (NVRTC's time
// grows with the inlined code; a long body has work enough in flight).
const fusedInlineBudget = 512

// fusedVector returns the vector width and unrolling of a flat kernel of
// nodes nodes: 16 bytes of the widest dense operand when every dense
// pointer is aligned to its vector (else 1), and enough vectors per
// thread to keep about four dense loads in flight, at most 16 elements
// per thread (the body is inlined once per element) and at most
// fusedInlineBudget node evaluations.
func fusedVector(classes []byte, ins, outs []*Tensor, nodes int) (vec, unroll int) {
	var sizes []int
	dense := 0
	for i, t := range ins {
		if classes[i] == fusedContig {
			sizes = append(sizes, t.dtype.Size())
			dense++
		}
	}
	for _, t := range outs {
		sizes = append(sizes, t.dtype.Size())
	}
	vec = elemVec(sizes...)
	for i, t := range ins {
		if classes[i] == fusedContig && t.Ptr()%uint64(vec*t.dtype.Size()) != 0 {
			vec = 1
		}
	}
	for _, t := range outs {
		if t.Ptr()%uint64(vec*t.dtype.Size()) != 0 {
			vec = 1
		}
	}
	unroll = max(1, 4/max(dense, 1))
	for unroll > 1 && (vec*unroll > 16 || vec*unroll*nodes > fusedInlineBudget) {
		unroll /= 2
	}
	return vec, unroll
}

// fusedParamWords is the size in 8-byte words of the parameter block
// (struct FP in fusedSource; status: it ends with the status word).
func fusedParamWords(strided bool, ng, ni, no, nk int, status bool) int {
	w := 1 + ni + no + nk + 1
	if status {
		w++
	}
	if strided {
		w += 1 + maxRank + ng*maxRank
	}
	return w
}

// fusedParams packs struct FP: n, [rank, shape, strides], input and
// output pointers, constants, zero, [the status word's address] (status
// holds it for programs with integer divisions, else is empty).
func fusedParams(words, n int, l *fusedLayout, ins, outs []*Tensor, consts, status []uint64) []byte {
	buf := make([]byte, 0, 8*words)
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	put(uint64(n))
	if len(l.gen) > 0 {
		put(uint64(len(l.shape)))
		for d := range maxRank {
			if d < len(l.shape) {
				put(uint64(l.shape[d]))
			} else {
				put(1)
			}
		}
		for _, st := range l.strides {
			for d := range maxRank {
				if d < len(st) {
					put(uint64(int64(st[d])))
				} else {
					put(0)
				}
			}
		}
	}
	for _, t := range ins {
		put(t.Ptr())
	}
	for _, t := range outs {
		put(t.Ptr())
	}
	for _, c := range consts {
		put(c)
	}
	put(0)
	for _, v := range status {
		put(v)
	}
	if len(buf) != 8*words {
		panic(fmt.Sprintf("cuda: fused parameter block of %d bytes, want %d", len(buf), 8*words))
	}
	return buf
}
