package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The GPU tests of ExecFused compare every output, bit for bit, with
// p.Run on the same backend: the nodes run one by one through the unfused
// kernels. They skip without a CUDA device.

// fusedDTypes are the dtypes random programs compute in.
var fusedDTypes = []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16, backend.I32, backend.Bool}

// castDTypes are the dtypes random casts go to: fusedDTypes and a few
// more integer and float kinds.
var castDTypes = append(slices.Clone(fusedDTypes), backend.I8, backend.U8, backend.I64, backend.Flex32)

// randomFusedValue is a random element of dt for random programs: for
// floats a mix of normal values, integers, zeros of both signs, ±Inf,
// NaN, tiny and huge values; for integers small values (zero among them
// unless nonZero) and the extremes; Bool 0 or 1.
func randomFusedValue(rng *rand.Rand, dt backend.DType, nonZero bool) float64 {
	switch {
	case dt == backend.Bool:
		return float64(rng.IntN(2))
	case dt.IsInt():
		lo, hi := ir.IntRange(dt)
		switch r := rng.IntN(20); {
		case r == 0 && !nonZero:
			return 0
		case r == 1 && lo != 0:
			return float64(lo)
		case r == 2 && hi <= 1<<53:
			return float64(hi)
		}
		v := float64(rng.IntN(20) + 1)
		if dt.IsSigned() && rng.IntN(2) == 0 {
			v = -v
		}
		return v
	}
	switch rng.IntN(16) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return 0
	case 4:
		return math.Copysign(0, -1)
	case 5:
		return []float64{1e-40, 1e-310, 3e-8, -2e-45}[rng.IntN(4)]
	case 6:
		return []float64{1e30, -6e4, 3e300, 7e38}[rng.IntN(4)]
	case 7:
		return math.Floor(rng.NormFloat64() * 10)
	}
	return rng.NormFloat64() * 3
}

// randomFusedData returns data of shape and dt from randomFusedValue,
// where some NaNs get random payloads and signs (bits the op-by-op and the
// fused kernel must treat alike).
func randomFusedData(rng *rand.Rand, shape []int, dt backend.DType, nonZero bool) *backend.TensorData {
	d := fromF64(shape, dt, func() float64 { return randomFusedValue(rng, dt, nonZero) })
	if !dt.IsFloat() {
		return d
	}
	size := dt.Size()
	for i := range d.NumElements() {
		if rng.IntN(40) != 0 {
			continue
		}
		b := d.Bytes[i*size : (i+1)*size]
		switch size {
		case 8:
			binary.LittleEndian.PutUint64(b, 0x7ff0000000000000|uint64(rng.IntN(2))<<63|(rng.Uint64()&(1<<52-1)|1))
		case 4:
			binary.LittleEndian.PutUint32(b, 0x7f800000|uint32(rng.IntN(2))<<31|(rng.Uint32()&(1<<23-1)|1))
		case 2:
			if dt == backend.F16 {
				binary.LittleEndian.PutUint16(b, 0x7c00|uint16(rng.IntN(2))<<15|(uint16(rng.Uint32())&(1<<10-1)|1))
			} else {
				binary.LittleEndian.PutUint16(b, 0x7f80|uint16(rng.IntN(2))<<15|(uint16(rng.Uint32())&(1<<7-1)|1))
			}
		}
	}
	return d
}

// randomProgram builds a random program and its inputs on b: 1-4 inputs
// broadcasting to a random iteration shape in assorted layouts (dense,
// dense but misaligned, broadcast, expanded, permuted, sliced, flipped),
// then 1-12 random nodes, 1-3 of them outputs.
type randomProgram struct {
	rng     *rand.Rand
	b       backend.Backend
	g       *progBuilder
	ins     []backend.Tensor
	layout  []string
	nonZero map[ir.FusedRef]bool // values without zeros (integer divisors)
}

func newRandomProgram(b backend.Backend, rng *rand.Rand) *randomProgram {
	r := &randomProgram{rng: rng, b: b, nonZero: map[ir.FusedRef]bool{}}
	var shape []int
	if rng.IntN(6) == 0 {
		shape = [][]int{{3, 4099}, {65537}, {5, 1, 2053}, {2, 3, 4, 515}}[rng.IntN(4)]
	} else {
		dims := []int{1, 2, 3, 4, 5, 7, 8, 13, 16, 33}
		shape = make([]int, rng.IntN(5))
		for i := range shape {
			shape[i] = dims[rng.IntN(len(dims))]
		}
	}
	r.g = newProg(shape)
	main := fusedDTypes[rng.IntN(len(fusedDTypes))]
	for range 1 + rng.IntN(4) {
		dt := main
		if rng.IntN(4) == 0 {
			dt = fusedDTypes[rng.IntN(len(fusedDTypes))]
		}
		r.addInput(dt)
	}
	return r
}

// inputShape is a random shape broadcasting to the iteration shape.
func (r *randomProgram) inputShape() []int {
	shape := r.g.p.Shape
	if r.rng.IntN(10) == 0 {
		return make([]int, r.rng.IntN(len(shape)+1)) // filled with 1 below
	}
	s := slices.Clone(shape[r.rng.IntN(len(shape)+1):])
	for i := range s {
		if r.rng.IntN(3) == 0 {
			s[i] = 1
		}
	}
	return s
}

func (r *randomProgram) addInput(dt backend.DType) {
	b, rng := r.b, r.rng
	shape := r.inputShape()
	for i := range shape {
		if shape[i] == 0 {
			shape[i] = 1
		}
	}
	nonZero := dt.IsInt() && rng.IntN(2) == 0
	var x backend.Tensor
	var how string
	switch k := rng.IntN(8); {
	case k == 0 && len(shape) > 0:
		// A dense view one element into a larger buffer: misaligned for vectors.
		n := backend.NumElements(shape)
		flat := b.FromData(randomFusedData(rng, []int{n + 1}, dt, nonZero))
		x = ir.Reshape(b, ir.Slice(b, flat, []backend.Range{{Start: 1, End: n + 1, Step: 1}}), shape)
		how = "offset"
	case k == 1 && len(shape) > 0:
		// A full-shaped input expanded from size-1 axes.
		small := slices.Clone(shape)
		for i := range small {
			if rng.IntN(2) == 0 {
				small[i] = 1
			}
		}
		x = ir.Expand(b, b.FromData(randomFusedData(rng, small, dt, nonZero)), shape)
		how = fmt.Sprint("expanded from ", small)
	case k >= 2 && k <= 4:
		l := layouts[1+rng.IntN(len(layouts)-1)]
		x = l.view(b, b.FromData(randomFusedData(rng, l.base(shape), dt, nonZero)), shape)
		how = l.name
	default:
		x = b.FromData(randomFusedData(rng, shape, dt, nonZero))
		how = "contiguous"
	}
	ref := r.g.input(dt, shape)
	if nonZero {
		r.nonZero[ref] = true
	}
	r.ins = append(r.ins, x)
	r.layout = append(r.layout, fmt.Sprintf("%v%v %s", dt, shape, how))
}

// values lists the program's values (inputs and nodes) of dt (any when 0).
func (r *randomProgram) values(dt backend.DType) []ir.FusedRef {
	var out []ir.FusedRef
	for i := range r.g.p.Inputs {
		if dt == 0 || r.g.p.Inputs[i].DType == dt {
			out = append(out, ir.InputRef(i))
		}
	}
	for i := range r.g.p.Nodes {
		if dt == 0 || r.g.p.Nodes[i].DType == dt {
			out = append(out, ir.NodeRef(i))
		}
	}
	return out
}

// pick returns a random value of dt (any when 0), making a constant of dt
// when there is none; nonZero asks for a value without zeros.
func (r *randomProgram) pick(dt backend.DType, nonZero bool) ir.FusedRef {
	var vs []ir.FusedRef
	for _, v := range r.values(dt) {
		if !nonZero || r.nonZero[v] {
			vs = append(vs, v)
		}
	}
	if len(vs) > 0 && r.rng.IntN(8) != 0 {
		return vs[r.rng.IntN(len(vs))]
	}
	if dt == 0 {
		dt = fusedDTypes[r.rng.IntN(len(fusedDTypes))]
	}
	if nonZero || r.rng.IntN(2) == 0 || len(r.values(0)) == 0 {
		f := r.g.full(dt, randomFusedValue(r.rng, dt, nonZero))
		r.nonZero[f] = nonZero
		return f
	}
	return r.g.cast(r.pick(0, false), dt)
}

// addNode appends one random node.
func (r *randomProgram) addNode() {
	g, rng := r.g, r.rng
	switch k := rng.IntN(20); {
	case k < 5:
		x := r.pick(0, false)
		dt := g.dtype(x)
		var ops []backend.UnaryOp
		for u := backend.UnaryOp(1); u.Valid(); u++ {
			if fusedOpDefined(&ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(u), DType: dt}, dt) {
				ops = append(ops, u)
			}
		}
		g.unary(ops[rng.IntN(len(ops))], x)
	case k < 13:
		x := r.pick(0, false)
		dt := g.dtype(x)
		var ops []backend.BinaryOp
		for o := backend.BinaryOp(1); o.Valid(); o++ {
			n := ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(o), DType: dt}
			if o.IsComparison() {
				n.DType = backend.Bool
			}
			if fusedOpDefined(&n, dt) {
				ops = append(ops, o)
			}
		}
		o := ops[rng.IntN(len(ops))]
		divides := dt.IsInt() && (o == backend.OpDiv || o == backend.OpFloorDiv || o == backend.OpRem || o == backend.OpMod)
		y := r.pick(dt, divides)
		if rng.IntN(2) == 0 && !divides {
			x, y = y, x
		}
		g.binary(o, x, y)
	case k < 15:
		c := r.pick(backend.Bool, false)
		x := r.pick(0, false)
		g.where(c, x, r.pick(g.dtype(x), false))
	case k < 18:
		g.cast(r.pick(0, false), castDTypes[rng.IntN(len(castDTypes))])
	default:
		dt := castDTypes[rng.IntN(len(castDTypes))]
		g.full(dt, randomFusedValue(rng, dt, false))
	}
}

// build finishes the program with 1-12 nodes and 1-3 outputs (the last
// node among them).
func (r *randomProgram) build() *ir.FusedProgram {
	want := 1 + r.rng.IntN(12)
	for len(r.g.p.Nodes) < want {
		r.addNode()
	}
	last := len(r.g.p.Nodes) - 1
	outs := []ir.FusedRef{ir.NodeRef(last)}
	for range r.rng.IntN(3) {
		outs = append(outs, ir.NodeRef(r.rng.IntN(last+1)))
	}
	return r.g.output(outs...)
}

// describe renders p and its inputs' layouts for failure messages.
func describeFused(p *ir.FusedProgram, layout []string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "shape %v, inputs:", p.Shape)
	for i, l := range layout {
		fmt.Fprintf(&sb, "\n\tx%d: %s", i, l)
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		fmt.Fprintf(&sb, "\n\tv%d = %s %v", i, n.Name(), n.DType)
		for a := range n.NumArgs() {
			r := n.Args[a]
			if r.IsInput() {
				fmt.Fprintf(&sb, " x%d", r.Index())
			} else {
				fmt.Fprintf(&sb, " v%d", r.Index())
			}
		}
		if n.Kind == ir.KindFull {
			fmt.Fprintf(&sb, " %v", n.Value)
		}
	}
	fmt.Fprintf(&sb, "\n\toutputs %v", p.Outputs)
	return sb.String()
}

// checkFused runs p fused and op by op on b and compares every output bit
// for bit; it returns the fused outputs.
func checkFused(t *testing.T, b *Backend, p *ir.FusedProgram, ins []backend.Tensor, what func() string) []backend.Tensor {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatalf("invalid program: %v\n%s", err, what())
	}
	got, ok := b.ExecFused(p, ins)
	if !ok {
		t.Fatalf("ExecFused declined\n%s", what())
	}
	want := p.Run(b, ins)
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for o := range want {
		g, err := b.ToData(got[o])
		if err != nil {
			t.Fatalf("output %d: %v\n%s", o, err, what())
		}
		w, err := b.ToData(want[o])
		if err != nil {
			t.Fatalf("output %d op by op: %v\n%s", o, err, what())
		}
		if g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) {
			t.Fatalf("output %d: %v %v, want %v %v\n%s", o, g.DType, g.Shape, w.DType, w.Shape, what())
		}
		if string(g.Bytes) != string(w.Bytes) {
			size := g.DType.Size()
			bad := 0
			for i := 0; i < len(g.Bytes); i += size {
				if string(g.Bytes[i:i+size]) != string(w.Bytes[i:i+size]) {
					if bad < 4 {
						t.Errorf("output %d (%v) element %d: fused %x (%v), op by op %x (%v)", o, g.DType, i/size,
							g.Bytes[i:i+size], g.Value(i/size), w.Bytes[i:i+size], w.Value(i/size))
					}
					bad++
				}
			}
			t.Errorf("output %d: %d of %d elements differ\n%s", o, bad, g.NumElements(), what())
		}
	}
	return got
}

// TestFusedRandomPrograms checks random programs (random DAGs of 1-12
// nodes over 1-4 inputs of random broadcasts and layouts, values with
// NaN, ±Inf, ±0, tiny and huge numbers) against p.Run bit for bit.
func TestFusedRandomPrograms(t *testing.T) {
	b := gpu(t)
	count := 240
	if testing.Short() {
		count = 40
	}
	for seed := range count {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r := newRandomProgram(b, rand.New(rand.NewPCG(uint64(seed), 0xf05ed)))
			p := r.build()
			checkFused(t, b, p, r.ins, func() string { return describeFused(p, r.layout) })
		})
	}
}

// TestFusedAdam checks the Adam/AdamW update as one program of four inputs
// and three outputs against p.Run (ir's decomposition of KindAdamStep, op
// by op) for F32, F64, F16 and BF16, and for F32 and F64 against the
// backend's hand-written Adam kernel as well.
func TestFusedAdam(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(31, 32))
	updates := []ir.OptimUpdate{
		{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1},
		{LR: 0.02, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.1, Step: 3},
		{LR: 0.03, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.2, Step: 7, Decoupled: true},
	}
	shape := []int{37, 129}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16} {
		for ui, u := range updates {
			for _, l := range layouts[:2] {
				what := func() string { return fmt.Sprint("adam ", dt, " update ", ui, " ", l.name) }
				upload := func(d *backend.TensorData) backend.Tensor { return l.view(b, b.FromData(d), shape) }
				ins := []backend.Tensor{
					upload(nonZero(rng, l.base(shape), dt)),
					upload(nonZero(rng, l.base(shape), dt)),
					upload(nonZero(rng, l.base(shape), dt)),
					upload(fromF64(l.base(shape), dt, func() float64 { return 0.01 + 4*rng.Float64() })),
				}
				got := checkFused(t, b, adamProgram(dt, shape, u), ins, what)
				if !b.Supports(ir.KindAdamStep, dt) {
					continue
				}
				op := ir.Op{Kind: ir.KindAdamStep, Xs: ins, Attrs: &ir.Attrs{Optim: u}}
				if err := op.Infer(); err != nil {
					t.Fatal(err)
				}
				kernel := b.Exec(op)
				for o := range 3 {
					g, err1 := b.ToData(got[o])
					k, err2 := b.ToData(kernel[o])
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if string(g.Bytes) != string(k.Bytes) {
						t.Errorf("%s: output %d differs from the Adam kernel's", what(), o)
					}
				}
			}
		}
	}
}

// fusedVariants lists the variants compiled for p's signature on b.
func fusedVariants(b *Backend, p *ir.FusedProgram) []string {
	v, ok := b.fusedPlans.Load(fusedSignature(p))
	if !ok {
		return nil
	}
	var out []string
	v.(*fusedPlan).kernels.Range(func(k, _ any) bool {
		out = append(out, k.(string))
		return true
	})
	slices.Sort(out)
	return out
}

// TestFusedLayouts runs one program through each loop variant (vectors,
// misaligned, scalars, strided with 32- and 64-bit offsets), checks the
// variant each layout picked and that a second shape reuses the kernel,
// and checks the edge cases: rank 0, no elements, and a layout with more
// than 8 unmergeable axes, which is declined.
func TestFusedLayouts(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(41, 42))
	// x·y + exp(z) - w with y broadcast or not.
	prog := func(shape, yShape []int) *ir.FusedProgram {
		g := newProg(shape)
		x, y, z, w := g.input(backend.F32, shape), g.input(backend.F32, yShape), g.input(backend.F32, shape), g.input(backend.F32, nil)
		s := g.binary(backend.OpAdd, g.binary(backend.OpMul, x, y), g.unary(backend.OpExp, z))
		return g.output(g.binary(backend.OpSub, s, w), g.cast(s, backend.BF16))
	}
	up := func(shape []int) backend.Tensor { return b.FromData(randomFusedData(rng, shape, backend.F32, false)) }
	shape := []int{33, 65}
	cases := []struct {
		name    string
		yShape  []int
		ins     func() []backend.Tensor
		variant string
	}{
		{"vectors", shape, func() []backend.Tensor { return []backend.Tensor{up(shape), up(shape), up(shape), up(nil)} }, "cccs/v4u1"},
		{"misaligned", shape, func() []backend.Tensor {
			n := 33 * 65
			x := ir.Reshape(b, ir.Slice(b, up([]int{n + 1}), []backend.Range{{Start: 1, End: n + 1, Step: 1}}), shape)
			return []backend.Tensor{x, up(shape), up(shape), up(nil)}
		}, "cccs/v1u1"},
		{"scalar", []int{1, 1}, func() []backend.Tensor { return []backend.Tensor{up(shape), up([]int{1, 1}), up(shape), up(nil)} }, "cscs/v4u2"},
		{"strided", []int{65}, func() []backend.Tensor {
			return []backend.Tensor{up(shape), up([]int{65}), ir.Permute(b, up([]int{65, 33}), []int{1, 0}), up(nil)}
		}, "cggs/sint"},
	}
	for _, c := range cases {
		p := prog(shape, c.yShape)
		ins := c.ins()
		checkFused(t, b, p, ins, func() string { return c.name })
		if v := fusedVariants(b, p); !slices.Contains(v, c.variant) {
			t.Errorf("%s: variants %v, want %s among them", c.name, v, c.variant)
		}
	}

	// Another shape of the same signature and layout reuses the kernel.
	p := prog([]int{7, 9, 4}, []int{4})
	before := len(fusedVariants(b, p))
	ins := []backend.Tensor{up([]int{7, 9, 4}), up([]int{4}), ir.Permute(b, up([]int{4, 9, 7}), []int{2, 1, 0}), up(nil)}
	checkFused(t, b, p, ins, func() string { return "second shape" })
	if after := len(fusedVariants(b, p)); after != before {
		t.Errorf("a second shape compiled another kernel (%d variants, were %d)", after, before)
	}

	// 64-bit offsets.
	saved := fusedMax32
	fusedMax32 = 100
	checkFused(t, b, p, ins, func() string { return "64-bit offsets" })
	fusedMax32 = saved
	if v := fusedVariants(b, p); !slices.Contains(v, "cggs/si64") {
		t.Errorf("64-bit offsets: variants %v", v)
	}

	// Rank 0 and no elements.
	p0 := prog([]int{}, []int{})
	checkFused(t, b, p0, []backend.Tensor{up(nil), up(nil), up(nil), up(nil)}, func() string { return "rank 0" })
	pe := prog([]int{3, 0}, []int{0})
	outs, ok := b.ExecFused(pe, []backend.Tensor{up([]int{3, 0}), up([]int{0}), up([]int{3, 0}), up(nil)})
	if !ok || len(outs) != 2 || !slices.Equal(outs[0].Shape(), []int{3, 0}) || outs[1].DType() != backend.BF16 {
		t.Errorf("no elements: %v %v", outs, ok)
	}

	// Programs whose NaN constants differ only in their payloads share a
	// signature; each gets its own constant.
	for _, payload := range []uint64{1, 0xff} {
		g := newProg([]int{16})
		x := g.input(backend.F64, []int{16})
		pn := g.output(g.binary(backend.OpMax, x, g.full(backend.F64, math.Float64frombits(0x7ff8000000000000|payload))))
		xs := []backend.Tensor{b.FromData(randomFusedData(rng, []int{16}, backend.F64, false))}
		checkFused(t, b, pn, xs, func() string { return fmt.Sprintf("NaN payload %#x", payload) })
	}

	// Nine axes that do not merge are declined; p.Run still computes them.
	nine := []int{2, 2, 2, 2, 2, 2, 2, 2, 2}
	rev := []int{8, 7, 6, 5, 4, 3, 2, 1, 0}
	p9 := prog(nine, nine)
	ins9 := []backend.Tensor{up(nine), ir.Permute(b, up(nine), rev), up(nine), up(nil)}
	if _, ok := b.ExecFused(p9, ins9); ok {
		t.Error("a rank-9 strided layout was not declined")
	}
	// Operands that do not match the program are declined.
	if _, ok := b.ExecFused(p9, ins9[:3]); ok {
		t.Error("three inputs for four were not declined")
	}
	bad := slices.Clone(ins9)
	bad[3] = b.FromData(randomFusedData(rng, nil, backend.F64, false))
	if _, ok := b.ExecFused(p9, bad); ok {
		t.Error("an F64 input for an F32 one was not declined")
	}
}

// geluChainSource is a hand-written kernel of gelu(x·a + b)·c on F32, for
// reference in BenchmarkFusedChainCUDA: 16-byte vectors, a grid-stride
// loop, the same rounding as the op-by-op kernels.
var geluChainSource = fmt.Sprintf(`
struct __align__(16) F4 { float x, y, z, w; };
__device__ __forceinline__ float chain(float x, float a, float b, float c) {
	const float t = __fadd_rn(__fmul_rn(x, a), b);
	const float e = erff(__fmul_rn(t, __uint_as_float(0x%08xu)));
	return __fmul_rn(__fmul_rn(t, __fmul_rn(__fadd_rn(e, 1.0f), 0.5f)), c);
}
extern "C" __global__ void ember_bench_gelu_chain(long long n, const float* __restrict__ x, const float* __restrict__ a,
		const float* __restrict__ b, const float* __restrict__ c, float* __restrict__ out) {
	const long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
		const F4 X = ((const F4*)x)[i], A = ((const F4*)a)[i], B = ((const F4*)b)[i], C = ((const F4*)c)[i];
		F4 o;
		o.x = chain(X.x, A.x, B.x, C.x);
		o.y = chain(X.y, A.y, B.y, C.y);
		o.z = chain(X.z, A.z, B.z, C.z);
		o.w = chain(X.w, A.w, B.w, C.w);
		((F4*)out)[i] = o;
	}
	for (long long i = n4 * 4 + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		out[i] = chain(x[i], a[i], b[i], c[i]);
	}
}
`, math.Float32bits(float32(1/math.Sqrt2)))

// BenchmarkFusedChainCUDA measures gelu(x·a + b)·c on 2^24 F32 elements
// (four dense inputs, one output): the fused program (one generated
// kernel), the same program op by op (p.Run: 8 kernels and 3 constants),
// and a hand-written kernel of the chain. It reports the median device
// time of each in ms, the fused kernel's GB/s and the ratios; the three
// results are checked to be equal bit for bit first.
func BenchmarkFusedChainCUDA(bb *testing.B) {
	b := gpu(bb)
	n := 1 << 24
	shape := []int{n}
	p := geluChainProgram(shape)
	dist := backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}
	ins := []backend.Tensor{b.random(shape, backend.F32, dist), b.random(shape, backend.F32, dist), b.random(shape, backend.F32, dist), b.random(shape, backend.F32, dist)}
	hand := b.Kernel("ember_bench_gelu_chain", geluChainSource)
	out := b.Empty(shape, backend.F32)
	runHand := func() {
		b.Launch(hand, grid1(n/4, blockSize), block1, 0, int64(n), ins[0].(*Tensor), ins[1].(*Tensor), ins[2].(*Tensor), ins[3].(*Tensor), out)
	}
	runFused := func() []backend.Tensor {
		outs, ok := b.ExecFused(p, ins)
		if !ok {
			bb.Fatal("ExecFused declined the chain")
		}
		return outs
	}

	fused, err1 := b.ToData(runFused()[0])
	unfused, err2 := b.ToData(p.Run(b, ins)[0])
	runHand()
	handData, err3 := b.ToData(out)
	if err1 != nil || err2 != nil || err3 != nil {
		bb.Fatal(err1, err2, err3)
	}
	if string(fused.Bytes) != string(unfused.Bytes) {
		bb.Fatal("the fused chain differs from the op-by-op chain")
	}
	if string(fused.Bytes) != string(handData.Bytes) {
		bb.Error("the fused chain differs from the hand-written kernel")
	}

	fusedMs := kernelMillis(bb, b, func() { runFused() })
	unfusedMs := kernelMillis(bb, b, func() { p.Run(b, ins) })
	handMs := kernelMillis(bb, b, runHand)
	bb.ReportMetric(fusedMs, "fused_ms")
	bb.ReportMetric(unfusedMs, "unfused_ms")
	bb.ReportMetric(handMs, "hand_ms")
	bb.ReportMetric(float64(5*4*n)/(fusedMs*1e-3)/1e9, "fused_GB/s")
	bb.ReportMetric(fusedMs/handMs, "fused/hand")
	bb.ReportMetric(unfusedMs/fusedMs, "unfused/fused")
	bb.Logf("gelu chain, 2^24 f32: fused %.4f ms, unfused %.4f ms, hand-written %.4f ms (fused/hand %.2f, unfused/fused %.2f)",
		fusedMs, unfusedMs, handMs, fusedMs/handMs, unfusedMs/fusedMs)
}
