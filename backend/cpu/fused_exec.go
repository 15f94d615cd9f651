package cpu

import (
	"sync"
	"unsafe"

	"github.com/emberml/ember/backend"
)

// fenv holds the scratch buffers of one goroutine running a plan's blocks,
// fusedBlock elements (or the plan's size, when smaller) each.
type fenv struct {
	s32 [][]float32
	s64 [][]float64
	sb  [][]bool
}

// lane is typed access to a plan's values of one storage class during a
// block.
type lane[T any] struct {
	bank  *fbank[T]
	slots [][]T
}

// get returns the elements [lo, hi) of value r: a slice, or (scalar true)
// the one uniform value.
func (l lane[T]) get(r fref, lo, hi int) (s []T, x T, scalar bool) {
	switch r.src {
	case srcConst:
		return nil, l.bank.consts[r.idx], true
	case srcIn:
		return l.bank.ins[r.idx][lo:hi], x, false
	case srcSlot:
		return l.slots[r.idx][:hi-lo], x, false
	}
	return l.bank.outs[r.idx][lo:hi], x, false
}

// vec returns the elements [lo, hi) of value r, which is not uniform.
func (l lane[T]) vec(r fref, lo, hi int) []T {
	s, _, _ := l.get(r, lo, hi)
	return s
}

// run evaluates the plan into its outputs: serially when it is small, in
// parallel chunks of blocks otherwise.
func (pl *fplan) run() {
	switch {
	case pl.n == 0:
	case pl.n < serialElems:
		pl.runChunk(0, pl.n)
	default:
		forChunks(pl.n, pl.runChunk)
	}
}

// runChunk evaluates elements [lo, hi) block by block.
func (pl *fplan) runChunk(lo, hi int) {
	sc := fusedScratch.Get().(*fscratch)
	e := sc.setup(pl)
	for b := lo; b < hi; b += pl.blk {
		bh := min(b+pl.blk, hi)
		for i := range pl.steps {
			st := &pl.steps[i]
			switch {
			case i == pl.pf && bh < hi:
				pl.execPrefetching(e, st, b, bh, min(bh+pl.blk, hi))
			case pl.nt && st.dst.src == srcOut && st.dst.cls == clsF32:
				pl.execStreaming(e, st, b, bh)
			default:
				pl.exec(e, st, b, bh)
			}
		}
	}
	fusedScratch.Put(sc)
}

// Overlapping memory with computation. Blocks of a large plan stream
// their full inputs from memory, and a step that computes for long per
// element (a transcendental unary op: erf, exp, tanh, ...) leaves memory
// idle while it runs, since the hardware prefetchers follow the loads,
// which stop. So the first such step runs on a block in pfPieces pieces,
// and before each piece the next block's full inputs are prefetched, a
// pfPieces-th at a time: their loads then overlap the computation. Large
// F32 outputs are written with streaming (non-temporal) stores from a
// scratch buffer, which saves reading each output line before writing
// it.
const pfPieces = 16

// The plan sizes (elements) from which blocks prefetch (1 MiB of float32
// an input) and outputs stream (ntMin, 16 MiB of float32); tests lower
// them to run every program through both paths, benchmarks raise them to
// compare.
var (
	fusedPrefetchMin = 1 << 18
	fusedStreamMin   = ntMin
)

// plan chooses the prefetching step and whether outputs stream, once the
// steps and scratch buffers are final; gelu steps take one more F32
// scratch buffer (for geluGo), an output that streams one more after it.
func (pl *fplan) plan() {
	pl.gs = -1
	for i := range pl.steps {
		if pl.steps[i].op == opGelu {
			pl.gs = pl.f32.slots
			pl.f32.slots++
			break
		}
	}
	pl.pf = -1
	if pl.n >= fusedPrefetchMin && len(pl.f32.ins)+len(pl.f64.ins)+len(pl.b.ins) > 0 {
		for i := range pl.steps {
			if st := &pl.steps[i]; st.op == opUnary && slowUnary(backend.UnaryOp(st.sub)) || st.op == opGelu {
				pl.pf = i
				break
			}
		}
	}
	if pl.n >= fusedStreamMin && streamable() && len(pl.f32.outs) > 0 {
		pl.nt = true
		pl.f32.slots++
	}
	pl.blk = pl.blockLen()
}

// blockLen returns the block length of the plan: fusedBlock, or a longer
// one (a power of two, at most fusedBlockMax) for plans without
// transcendental steps whose scratch buffers stay within
// fusedScratchBytes; never more than the plan's size.
func (pl *fplan) blockLen() int {
	blk := fusedBlock
	if pl.gs < 0 && !pl.hasSlowStep() {
		perElem := 4*pl.f32.slots + 8*pl.f64.slots + pl.b.slots
		for blk < fusedBlockMax && 2*blk*perElem <= fusedScratchBytes {
			blk *= 2
		}
	}
	return max(1, min(blk, pl.n))
}

// hasSlowStep reports whether a step of the plan is a transcendental
// unary op.
func (pl *fplan) hasSlowStep() bool {
	for i := range pl.steps {
		if st := &pl.steps[i]; st.op == opUnary && slowUnary(backend.UnaryOp(st.sub)) {
			return true
		}
	}
	return false
}

// slowUnary reports whether op is a transcendental function, which takes
// many cycles an element (a vector or scalar polynomial, or math's
// functions).
func slowUnary(op backend.UnaryOp) bool {
	switch op {
	case backend.OpExp, backend.OpLog, backend.OpLog1p, backend.OpExpm1, backend.OpSin,
		backend.OpCos, backend.OpTanh, backend.OpSigmoid, backend.OpErf:
		return true
	}
	return false
}

// execPrefetching runs step st, a unary op or a gelu, over the block [lo, hi) in
// pfPieces pieces, each after prefetching its share of [hi, next) of
// every full input.
func (pl *fplan) execPrefetching(e *fenv, st *fstep, lo, hi, next int) {
	n := hi - lo
	per := (n + pfPieces - 1) / pfPieces
	share := (next - hi + pfPieces - 1) / pfPieces
	for q := range pfPieces {
		if a, b := hi+q*share, min(hi+(q+1)*share, next); a < b {
			pl.prefetchInputs(a, b)
		}
		if p0, p1 := q*per, min((q+1)*per, n); p0 < p1 {
			if st.op == opGelu {
				pl.geluPart(e, st, lo, hi, p0, p1)
			} else {
				pl.unaryPart(e, st, lo, hi, p0, p1)
			}
		}
	}
}

// prefetchInputs prefetches elements [a, b) of every full input.
func (pl *fplan) prefetchInputs(a, b int) {
	for _, in := range pl.f32.ins {
		prefetch(unsafe.Pointer(&in[a]), 4*(b-a))
	}
	for _, in := range pl.f64.ins {
		prefetch(unsafe.Pointer(&in[a]), 8*(b-a))
	}
	for _, in := range pl.b.ins {
		prefetch(unsafe.Pointer(&in[a]), b-a)
	}
}

// execStreaming runs step st, whose result is an F32 output, over the
// block [lo, hi) into the last F32 scratch buffer, and stores that into
// the output with streaming stores.
func (pl *fplan) execStreaming(e *fenv, st *fstep, lo, hi int) {
	tmp := *st
	tmp.dst = fref{cls: clsF32, src: srcSlot, idx: int32(pl.f32.slots - 1)}
	pl.exec(e, &tmp, lo, hi)
	storeStream(pl.f32.outs[st.dst.idx][lo:hi], e.s32[pl.f32.slots-1][:hi-lo])
}

// fscratch is the backing memory of an fenv, recycled across runs.
type fscratch struct {
	f32 []float32
	f64 []float64
	b   []bool
	env fenv
}

var fusedScratch = sync.Pool{New: func() any { return new(fscratch) }}

// setup carves the scratch buffers pl needs from sc.
func (sc *fscratch) setup(pl *fplan) *fenv {
	sc.env.s32 = carve(&sc.f32, sc.env.s32[:0], pl.f32.slots, pl.blk)
	sc.env.s64 = carve(&sc.f64, sc.env.s64[:0], pl.f64.slots, pl.blk)
	sc.env.sb = carve(&sc.b, sc.env.sb[:0], pl.b.slots, pl.blk)
	return &sc.env
}

// carve appends k buffers of blk elements from *buf (grown when short) to
// slots.
func carve[T any](buf *[]T, slots [][]T, k, blk int) [][]T {
	if need := k * blk; len(*buf) < need {
		*buf = make([]T, need)
	}
	for i := range k {
		slots = append(slots, (*buf)[i*blk:(i+1)*blk:(i+1)*blk])
	}
	return slots
}

// exec runs step st over the block [lo, hi) with scratch e.
func (pl *fplan) exec(e *fenv, st *fstep, lo, hi int) {
	l32 := lane[float32]{&pl.f32, e.s32}
	l64 := lane[float64]{&pl.f64, e.s64}
	lb := lane[bool]{&pl.b, e.sb}
	switch st.op {
	case opGather:
		switch st.dst.cls {
		case clsF32:
			pl.f32.gath[st.a.idx].at(l32.vec(st.dst, lo, hi), lo)
		case clsF64:
			pl.f64.gath[st.a.idx].at(l64.vec(st.dst, lo, hi), lo)
		default:
			pl.b.gath[st.a.idx].at(lb.vec(st.dst, lo, hi), lo)
		}
	case opCopy:
		switch st.dst.cls {
		case clsF32:
			copyStep(l32, st, lo, hi)
		case clsF64:
			copyStep(l64, st, lo, hi)
		default:
			copyStep(lb, st, lo, hi)
		}
	case opUnary:
		pl.unaryPart(e, st, lo, hi, 0, hi-lo)
	case opBinary:
		switch {
		case st.a.src == srcGath || st.b.src == srcGath:
			if st.dst.cls == clsF32 {
				binaryRuns(l32, st, lo, hi, binary32)
			} else {
				binaryRuns(l64, st, lo, hi, binaryT[float64])
			}
		case st.dst.cls == clsF32:
			binaryStep32(l32, st, lo, hi)
		default:
			binaryStep(l64, st, lo, hi)
		}
	case opCompare:
		o := lb.vec(st.dst, lo, hi)
		if st.a.cls == clsF32 {
			compareStep(l32, o, st, lo, hi)
		} else {
			compareStep(l64, o, st, lo, hi)
		}
	case opNot:
		notBool(lb.vec(st.dst, lo, hi), lb.vec(st.a, lo, hi))
	case opLogic:
		logicBool(backend.BinaryOp(st.sub), lb.vec(st.dst, lo, hi), lb.vec(st.a, lo, hi), lb.vec(st.b, lo, hi))
	case opWhere:
		c := lb.vec(st.c, lo, hi)
		switch st.dst.cls {
		case clsF32:
			whereStep(l32, c, st, lo, hi, selectF32)
		case clsF64:
			whereStep(l64, c, st, lo, hi, selectF64)
		default:
			whereStep(lb, c, st, lo, hi, selectBool)
		}
	case opCast:
		castStep(l32, l64, lb, st, lo, hi)
	case opGelu:
		pl.geluPart(e, st, lo, hi, 0, hi-lo)
	case opCmpSel:
		o := l32.vec(st.dst, lo, hi)
		xs, xv, xScalar := l32.get(st.a, lo, hi)
		ys, yv, yScalar := l32.get(st.b, lo, hi)
		cmpSelF32(backend.BinaryOp(st.sub), o, l32.vec(st.c, lo, hi), pl.f32.consts[st.d.idx], xs, xv, xScalar, ys, yv, yScalar)
	}
}

// unaryPart runs unary step st on elements [p0, p1) of the block [lo,
// hi).
func (pl *fplan) unaryPart(e *fenv, st *fstep, lo, hi, p0, p1 int) {
	u := backend.UnaryOp(st.sub)
	if st.dst.cls == clsF32 {
		l32 := lane[float32]{&pl.f32, e.s32}
		o, a := l32.vec(st.dst, lo, hi)[p0:p1], l32.vec(st.a, lo, hi)[p0:p1]
		switch {
		case u == backend.OpSqrt:
			fusedSqrt(o, a)
		case fastUnary(u):
			unaryF32(u, o, a)
		default:
			unaryFloat(u, o, a)
		}
		return
	}
	l64 := lane[float64]{&pl.f64, e.s64}
	unaryF64(u, l64.vec(st.dst, lo, hi)[p0:p1], l64.vec(st.a, lo, hi)[p0:p1])
}

// copyStep stores value st.a into st.dst (an output).
func copyStep[T any](l lane[T], st *fstep, lo, hi int) {
	o := l.vec(st.dst, lo, hi)
	s, x, scalar := l.get(st.a, lo, hi)
	if !scalar {
		copy(o, s)
		return
	}
	for i := range o {
		o[i] = x
	}
}

// binaryStep32 runs a float32 arithmetic step on the float32 loops of the
// binary kernel and their AVX forms (fused_amd64.s).
func binaryStep32(l lane[float32], st *fstep, lo, hi int) {
	as, ax, aScalar := l.get(st.a, lo, hi)
	bs, bx, bScalar := l.get(st.b, lo, hi)
	binary32(backend.BinaryOp(st.sub), l.vec(st.dst, lo, hi), as, ax, aScalar, bs, bx, bScalar)
}

// binary32 sets o = a op b for float32 operands, each a slice of o's
// length or (scalar true) one value, as binaryStep32 does.
func binary32(op backend.BinaryOp, o, as []float32, ax float32, aScalar bool, bs []float32, bx float32, bScalar bool) {
	if !fastArith(op) {
		binarySlow(op, o, as, ax, aScalar, bs, bx, bScalar)
		return
	}
	switch {
	case !aScalar && !bScalar && op == backend.OpAdd:
		addF32(o, as, bs, len(o))
	case !aScalar && !bScalar:
		fusedVV(op, o, as, bs)
	case !aScalar:
		fusedVS(op, o, as, bx)
	default:
		fusedSV(op, o, ax, bs)
	}
}

// binaryStep runs a float arithmetic step of element type T.
func binaryStep[T float](l lane[T], st *fstep, lo, hi int) {
	as, ax, aScalar := l.get(st.a, lo, hi)
	bs, bx, bScalar := l.get(st.b, lo, hi)
	binaryT(backend.BinaryOp(st.sub), l.vec(st.dst, lo, hi), as, ax, aScalar, bs, bx, bScalar)
}

// binaryT sets o = a op b for operands of element type T, each a slice
// of o's length or (scalar true) one value, as binaryStep does.
func binaryT[T float](op backend.BinaryOp, o, as []T, ax T, aScalar bool, bs []T, bx T, bScalar bool) {
	if !fastArith(op) {
		binarySlow(op, o, as, ax, aScalar, bs, bx, bScalar)
		return
	}
	switch {
	case !aScalar && !bScalar:
		binVVT(op, o, as, bs)
	case !aScalar:
		binVST(op, o, as, bx)
	default:
		binSVT(op, o, ax, bs)
	}
}

// compareStep runs a float comparison step into o.
func compareStep[T float](l lane[T], o []bool, st *fstep, lo, hi int) {
	op := backend.BinaryOp(st.sub)
	as, ax, aScalar := l.get(st.a, lo, hi)
	bs, bx, bScalar := l.get(st.b, lo, hi)
	switch {
	case !aScalar && !bScalar:
		cmpVVT(op, o, as, bs)
	case !aScalar:
		cmpVST(op, o, as, bx)
	default:
		cmpVST(flipCompare(op), o, bs, ax)
	}
}

// whereStep runs a Where step of element type T with condition c, through
// sel.
func whereStep[T any](l lane[T], c []bool, st *fstep, lo, hi int, sel func(o []T, c []bool, as []T, ax T, aScalar bool, bs []T, bx T, bScalar bool)) {
	o := l.vec(st.dst, lo, hi)
	as, ax, aScalar := l.get(st.a, lo, hi)
	bs, bx, bScalar := l.get(st.b, lo, hi)
	sel(o, c, as, ax, aScalar, bs, bx, bScalar)
}

// castStep runs a conversion between storage classes.
func castStep(l32 lane[float32], l64 lane[float64], lb lane[bool], st *fstep, lo, hi int) {
	switch st.a.cls {
	case clsF32:
		a := l32.vec(st.a, lo, hi)
		if st.dst.cls == clsF64 {
			convertFloat(l64.vec(st.dst, lo, hi), a)
		} else {
			floatToBool(lb.vec(st.dst, lo, hi), a)
		}
	case clsF64:
		a := l64.vec(st.a, lo, hi)
		if st.dst.cls == clsF32 {
			convertFloat(l32.vec(st.dst, lo, hi), a)
		} else {
			floatToBool(lb.vec(st.dst, lo, hi), a)
		}
	default:
		a := lb.vec(st.a, lo, hi)
		if st.dst.cls == clsF32 {
			boolToF32(l32.vec(st.dst, lo, hi), a)
		} else {
			boolToFloat(l64.vec(st.dst, lo, hi), a)
		}
	}
}
