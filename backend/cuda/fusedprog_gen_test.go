package cuda

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/nvrtc"
	"github.com/emberml/ember/ir"
)

// These tests need no GPU: they check the fused kernels' generated source,
// the layout classification and the plan's type checks; the GPU tests are
// in fusedprog_test.go.

// progBuilder assembles an ir.FusedProgram node by node.
type progBuilder struct{ p ir.FusedProgram }

func newProg(shape []int) *progBuilder { return &progBuilder{p: ir.FusedProgram{Shape: shape}} }

func (g *progBuilder) input(dt backend.DType, shape []int) ir.FusedRef {
	g.p.Inputs = append(g.p.Inputs, ir.FusedInput{DType: dt, Shape: shape})
	return ir.InputRef(len(g.p.Inputs) - 1)
}

func (g *progBuilder) dtype(r ir.FusedRef) backend.DType { return fusedValueDType(&g.p, r) }

func (g *progBuilder) add(n ir.FusedNode) ir.FusedRef {
	g.p.Nodes = append(g.p.Nodes, n)
	return ir.NodeRef(len(g.p.Nodes) - 1)
}

func (g *progBuilder) full(dt backend.DType, v float64) ir.FusedRef {
	return g.add(ir.FusedNode{Kind: ir.KindFull, DType: dt, Value: v})
}

func (g *progBuilder) unary(u backend.UnaryOp, x ir.FusedRef) ir.FusedRef {
	return g.add(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(u), DType: g.dtype(x), Args: [3]ir.FusedRef{x}})
}

func (g *progBuilder) binary(o backend.BinaryOp, x, y ir.FusedRef) ir.FusedRef {
	dt := g.dtype(x)
	if o.IsComparison() {
		dt = backend.Bool
	}
	return g.add(ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(o), DType: dt, Args: [3]ir.FusedRef{x, y}})
}

func (g *progBuilder) where(c, x, y ir.FusedRef) ir.FusedRef {
	return g.add(ir.FusedNode{Kind: ir.KindWhere, DType: g.dtype(x), Args: [3]ir.FusedRef{c, x, y}})
}

func (g *progBuilder) cast(x ir.FusedRef, dt backend.DType) ir.FusedRef {
	return g.add(ir.FusedNode{Kind: ir.KindCast, DType: dt, Args: [3]ir.FusedRef{x}})
}

func (g *progBuilder) output(rs ...ir.FusedRef) *ir.FusedProgram {
	for _, r := range rs {
		g.p.Outputs = append(g.p.Outputs, r.Index())
	}
	return &g.p
}

// geluChainProgram is gelu(x·a + b)·c over four F32 inputs of shape, with
// gelu(t) = t·((erf(t·(1/√2)) + 1)·0.5).
func geluChainProgram(shape []int) *ir.FusedProgram {
	g := newProg(shape)
	x, a, b, c := g.input(backend.F32, shape), g.input(backend.F32, shape), g.input(backend.F32, shape), g.input(backend.F32, shape)
	t := g.binary(backend.OpAdd, g.binary(backend.OpMul, x, a), b)
	e := g.unary(backend.OpErf, g.binary(backend.OpMul, t, g.full(backend.F32, 1/math.Sqrt2)))
	gelu := g.binary(backend.OpMul, t, g.binary(backend.OpMul, g.binary(backend.OpAdd, e, g.full(backend.F32, 1)), g.full(backend.F32, 0.5)))
	return g.output(g.binary(backend.OpMul, gelu, c))
}

// adamProgram is the Adam/AdamW update of ir's decomposition of
// KindAdamStep as one program over param, grad, m and v (dt, shape),
// giving the new param, m and v.
func adamProgram(dt backend.DType, shape []int, u ir.OptimUpdate) *ir.FusedProgram {
	g := newProg(shape)
	theta, gr, m, v := g.input(dt, shape), g.input(dt, shape), g.input(dt, shape), g.input(dt, shape)
	mulS := func(x ir.FusedRef, s float64) ir.FusedRef { return g.binary(backend.OpMul, x, g.full(dt, s)) }
	if u.Decoupled {
		theta = mulS(theta, 1-u.LR*u.WeightDecay)
	} else if u.WeightDecay != 0 {
		gr = g.binary(backend.OpAdd, gr, mulS(theta, u.WeightDecay))
	}
	m = g.binary(backend.OpAdd, mulS(m, u.Beta1), mulS(gr, 1-u.Beta1))
	v = g.binary(backend.OpAdd, mulS(v, u.Beta2), mulS(g.binary(backend.OpMul, gr, gr), 1-u.Beta2))
	bc1 := 1 - math.Pow(u.Beta1, float64(u.Step))
	bc2 := 1 - math.Pow(u.Beta2, float64(u.Step))
	den := g.binary(backend.OpAdd, g.binary(backend.OpDiv, g.unary(backend.OpSqrt, v), g.full(dt, math.Sqrt(bc2))), g.full(dt, u.Eps))
	theta = g.binary(backend.OpSub, theta, mulS(g.binary(backend.OpDiv, m, den), u.LR/bc1))
	return g.output(theta, m, v)
}

// mixedProgram touches every node kind and dtype family: BF16 and F16
// arithmetic, casts between them, F64, I32 and Bool ops, comparisons,
// Where and constants; inputs x (BF16, shape), y (I32, [shape[1]]) and
// z (F64, []).
func mixedProgram(shape []int) *ir.FusedProgram {
	g := newProg(shape)
	x := g.input(backend.BF16, shape)
	y := g.input(backend.I32, shape[1:])
	z := g.input(backend.F64, nil)
	s := g.binary(backend.OpAdd, x, g.full(backend.BF16, 0.1))
	e := g.unary(backend.OpExp, s)
	h := g.cast(e, backend.F16)
	h2 := g.binary(backend.OpMul, h, h)
	f := g.cast(h2, backend.F32)
	d := g.binary(backend.OpPow, g.cast(f, backend.F64), z)
	iy := g.binary(backend.OpShl, y, g.full(backend.I32, 3))
	iy = g.binary(backend.OpFloorDiv, iy, y)
	c := g.binary(backend.OpLt, g.cast(iy, backend.F64), d)
	nb := g.unary(backend.OpNot, c)
	b := g.binary(backend.OpXor, nb, g.full(backend.Bool, 1))
	w := g.where(b, d, g.unary(backend.OpNeg, d))
	return g.output(w, g.cast(w, backend.BF16), iy)
}

var fusedEntry = regexp.MustCompile(`extern "C" __global__ void (\w+)\(`)

// bodyLines returns the node lines of the generated body function.
func bodyLines(t *testing.T, src string) []string {
	t.Helper()
	i := strings.Index(src, "void body(")
	if i < 0 {
		t.Fatal("no body function")
	}
	body := src[i:]
	body = body[:strings.Index(body, "\n}\n")]
	var lines []string
	for _, l := range strings.Split(body, "\n")[1:] {
		if j := strings.Index(l, "//"); j >= 0 {
			l = l[:j]
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// fusedSpecs renders p in every loop variant.
func fusedSpecs(p *ir.FusedProgram) []fusedSpec {
	cls := func(c byte) []byte {
		b := make([]byte, len(p.Inputs))
		for i := range b {
			b[i] = c
		}
		if len(b) > 1 {
			b[len(b)-1] = fusedScalar
		}
		return b
	}
	specs := []fusedSpec{
		{p: p, classes: cls(fusedContig), vec: 4, unroll: 1},
		{p: p, classes: cls(fusedContig), vec: 1, unroll: 4},
		{p: p, classes: cls(fusedGeneral), idx: "int"},
		{p: p, classes: cls(fusedGeneral), idx: "i64"},
	}
	sig := p.Signature()
	for i := range specs {
		specs[i].name = fusedKernelName(sig, specs[i].variant())
	}
	return specs
}

// TestFusedSource checks the generated kernels of representative programs:
// one entry point named after the kernel, no template residue, one line
// per node built from the unfused kernels' device functions, float add,
// sub, mul and div as round-to-nearest intrinsics (no operator the
// compiler could contract into a multiply-add), every F32/F64 node value
// through opq, Full's constants read from the parameters.
func TestFusedSource(t *testing.T) {
	progs := map[string]struct {
		p    *ir.FusedProgram
		want []string
	}{
		"gelu": {geluChainProgram([]int{1 << 20}), []string{
			"const float v0 = opq((float)(__fmul_rn((x0), (x1))), Z);",
			"const float v1 = opq((float)(__fadd_rn((v0), (x2))), Z);",
			"const float v2 = k0;",
			"const float v4 = opq((float)(un_float<float>(15, (v3))), Z);",
			"y0 = v10;",
		}},
		"adam": {adamProgram(backend.F64, []int{7, 9}, ir.OptimUpdate{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, Step: 2}), []string{
			"__dmul_rn(", "__dadd_rn(", "__ddiv_rn(", "__dsub_rn(",
			"opq((double)(un_float<double>(8, ",
			"y0 = ", "y1 = ", "y2 = ",
		}},
		"mixed": {mixedProgram([]int{3, 5}), []string{
			"const u16 v1 = f32_to_bf16(__fadd_rn(bf16_to_f32(x0), bf16_to_f32(v0)));",
			"const u16 v2 = f32_to_bf16(un_float<float>(4, bf16_to_f32(v1)));",
			"const u16 v3 = cast_bf16_f16(v2);",
			"const u16 v4 = f32_to_f16(__fmul_rn(f16_to_f32(v3), f16_to_f32(v3)));",
			"const float v5 = opq(cast_f16_f32(v4), Z);",
			"opq((double)(bin_float<double>(8, (v6), (x2))), Z);",
			"bin_int<i32>(21, x1, v8);",
			fmt.Sprintf("div_chk<i32>(5, v9, x1, S, %du);", uint32(backend.I32)),
			"cmp<double>(14, (v11), (v7));",
			"un_bool(19, v12);",
			"bin_bool(20, v13, v14);",
			"opq((v15 ? v7 : v16), Z);",
			"cast_f64_bf16(v17);",
		}},
	}
	opsRe := regexp.MustCompile(`[-+*/]`)
	for name, pc := range progs {
		if err := pc.p.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := fusedCheck(pc.p, fusedOpDefined); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		names := map[string]bool{}
		for _, s := range fusedSpecs(pc.p) {
			src := fusedSource(s)
			what := name + " " + s.variant()
			if m := fusedEntry.FindAllStringSubmatch(src, -1); len(m) != 1 || m[0][1] != s.name {
				t.Errorf("%s: entry points %v, want %s", what, m, s.name)
			}
			if names[s.name] {
				t.Errorf("%s: kernel name %s used by another variant", what, s.name)
			}
			names[s.name] = true
			if strings.Contains(src, "%!") || strings.Contains(src, "<nil>") {
				t.Errorf("%s: formatting residue", what)
			}
			for _, w := range pc.want {
				if !strings.Contains(src, w) {
					t.Errorf("%s: no %q in\n%s", what, w, src[len(prelude):])
				}
			}
			lines := bodyLines(t, src)
			nodeLines := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "const ") {
					nodeLines++
				}
				if opsRe.MatchString(l) {
					t.Errorf("%s: arithmetic operator in node code %q", what, l)
				}
			}
			if nodeLines != len(pc.p.Nodes) {
				t.Errorf("%s: %d node lines for %d nodes", what, nodeLines, len(pc.p.Nodes))
			}
			for i := range pc.p.Nodes {
				n := &pc.p.Nodes[i]
				l := lines[i]
				if fusedOpaque(n.DType) && n.Kind != ir.KindFull && !strings.Contains(l, "= opq(") && !(n.Kind == ir.KindCast && fusedCastFunc(fusedValueDType(pc.p, n.Args[0]), n.DType) == "") {
					t.Errorf("%s: F32/F64 node %d not through opq: %q", what, i, l)
				}
			}
			if s.idx != "" && !strings.Contains(src, "typedef "+s.idx+" IDX;") {
				t.Errorf("%s: index type not %s", what, s.idx)
			}
			if s.idx == "" && !strings.Contains(src, "#define VEC "+string(rune('0'+s.vec))) {
				t.Errorf("%s: vector width not %d", what, s.vec)
			}
		}
		// The kernel depends on the signature, not on the shapes.
		other := *pc.p
		other.Shape = append([]int{2}, pc.p.Shape...)
		if other.Signature() != pc.p.Signature() {
			t.Errorf("%s: the signature depends on the shape", name)
		}
	}
}

// TestFusedFullBits checks the constants' bits against Full's conversion
// done another way (the half-precision helpers and Go's conversions).
func TestFusedFullBits(t *testing.T) {
	cases := []struct {
		dt   backend.DType
		v    float64
		want uint64
	}{
		{backend.F32, 1 / math.Sqrt2, uint64(math.Float32bits(float32(1 / math.Sqrt2)))},
		{backend.F64, -math.Pi, math.Float64bits(-math.Pi)},
		{backend.F64, math.Inf(-1), math.Float64bits(math.Inf(-1))},
		{backend.F16, 1.0 / 3, uint64(backend.F16FromFloat64(1.0 / 3))},
		{backend.BF16, -2.7, uint64(backend.BF16FromFloat64(-2.7))},
		{backend.I32, -7, uint64(uint32(0xfffffff9))},
		{backend.I8, -1, 0xff},
		{backend.I64, -5, uint64(math.MaxUint64 - 4)},
		{backend.U16, 65535, 0xffff},
		{backend.Bool, 2.5, 1},
		{backend.Bool, 0, 0},
	}
	for _, c := range cases {
		if got := fusedFullBits(c.dt, c.v); got != c.want {
			t.Errorf("full %v %v: bits %#x, want %#x", c.dt, c.v, got, c.want)
		}
	}
}

// fakeTensor is a tensor without storage, for layout classification.
func fakeTensor(dt backend.DType, shape, strides []int) *Tensor {
	return &Tensor{shape: shape, strides: strides, dtype: dt}
}

// TestFusedLayout checks the input classes and the merged strided layout
// on hand-worked examples.
func TestFusedLayout(t *testing.T) {
	shape := []int{4, 3, 5}
	dense := fakeTensor(backend.F32, shape, []int{15, 5, 1})
	scalar0 := fakeTensor(backend.F32, nil, nil)
	scalar1 := fakeTensor(backend.F32, []int{1, 1}, []int{7, 3})
	expanded := fakeTensor(backend.F32, shape, []int{0, 0, 0}) // one element, broadcast
	row := fakeTensor(backend.F32, []int{5}, []int{1})         // broadcast over [4, 3]
	col := fakeTensor(backend.F32, []int{4, 1, 1}, []int{1, 1, 1})
	perm := fakeTensor(backend.F32, shape, []int{1, 4, 12}) // permuted
	l, ok := fusedLayoutOf(shape, []*Tensor{dense, scalar0, scalar1, expanded})
	if !ok || string(l.classes) != "csss" || len(l.gen) != 0 {
		t.Fatalf("dense and scalars: %q %v", l.classes, ok)
	}
	l, ok = fusedLayoutOf(shape, []*Tensor{dense, row, col, perm, scalar0})
	if !ok || string(l.classes) != "cgggs" || !slices.Equal(l.gen, []int{1, 2, 3}) {
		t.Fatalf("general: %q %v %v", l.classes, l.gen, ok)
	}
	// No two axes merge: the row reads [0 0 1], the column [1 0 0].
	if !slices.Equal(l.shape, shape) || !l.fits32 {
		t.Errorf("merged shape %v (fits32 %v), want %v", l.shape, l.fits32, shape)
	}
	wantSt := [][]int{{0, 0, 1}, {1, 0, 0}, {1, 4, 12}}
	for g := range wantSt {
		if !slices.Equal(l.strides[g], wantSt[g]) {
			t.Errorf("general input %d: strides %v, want %v", g, l.strides[g], wantSt[g])
		}
	}
	// A row broadcast over leading axes merges them: [12, 5] with strides [0, 1].
	l, ok = fusedLayoutOf(shape, []*Tensor{row, dense})
	if !ok || string(l.classes) != "gc" || !slices.Equal(l.shape, []int{12, 5}) || !slices.Equal(l.strides[0], []int{0, 1}) {
		t.Errorf("row: %q %v %v %v", l.classes, l.shape, l.strides, ok)
	}
	// A flipped input has negative strides; 32-bit offsets are bounded by fusedMax32.
	flip := fakeTensor(backend.F32, []int{12, 5}, []int{-5, 1})
	defer func(v int) { fusedMax32 = v }(fusedMax32)
	fusedMax32 = 40
	l, ok = fusedLayoutOf([]int{12, 5}, []*Tensor{flip})
	if !ok || string(l.classes) != "g" || !slices.Equal(l.strides[0], []int{-5, 1}) || l.fits32 {
		t.Errorf("flip: %q %v %v fits32 %v", l.classes, l.strides, ok, l.fits32)
	}
	fusedMax32 = 60
	if l, _ = fusedLayoutOf([]int{12, 5}, []*Tensor{flip}); !l.fits32 {
		t.Errorf("flip: 60 elements reaching offsets up to 59 do not fit 60")
	}
	// Inputs that do not broadcast, and more than 8 unmergeable axes, are declined.
	if _, ok := fusedLayoutOf(shape, []*Tensor{fakeTensor(backend.F32, []int{2, 5}, []int{5, 1})}); ok {
		t.Error("a [2 5] input over [4 3 5] was accepted")
	}
	big := make([]int, 9)
	st := make([]int, 9)
	for i := range big {
		big[i], st[i] = 2, 1<<(2*i) // gaps everywhere: nothing merges
	}
	if _, ok := fusedLayoutOf(big, []*Tensor{fakeTensor(backend.U8, big, st)}); ok {
		t.Error("a rank-9 strided input was accepted")
	}
}

// TestFusedCheck checks FusesNode's domain and the plan's type checks.
func TestFusedCheck(t *testing.T) {
	b := &Backend{ccMajor: 9}
	yes := []struct {
		n  ir.FusedNode
		in backend.DType
	}{
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpErf), DType: backend.BF16}, backend.BF16},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpNot), DType: backend.I32}, backend.I32},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpShr), DType: backend.U8}, backend.U8},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpGe), DType: backend.Bool}, backend.F16},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpMax), DType: backend.Bool}, backend.Bool},
		{ir.FusedNode{Kind: ir.KindWhere, DType: backend.F64}, backend.Bool},
		{ir.FusedNode{Kind: ir.KindCast, DType: backend.BF16}, backend.U64},
		{ir.FusedNode{Kind: ir.KindFull, DType: backend.Flex32}, backend.Flex32},
	}
	for _, c := range yes {
		if !b.FusesNode(&c.n, c.in) {
			t.Errorf("%s on %v giving %v is not fused", c.n.Name(), c.in, c.n.DType)
		}
	}
	no := []struct {
		n  ir.FusedNode
		in backend.DType
	}{
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpNot), DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpExp), DType: backend.I32}, backend.I32},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: 200, DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpAtan2), DType: backend.I64}, backend.I64},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpShl), DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpAdd), DType: backend.Bool}, backend.Bool},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpLt), DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindWhere, DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindReduce, DType: backend.F32}, backend.F32},
		{ir.FusedNode{Kind: ir.KindCast, DType: backend.DType(99)}, backend.F32},
	}
	for _, c := range no {
		if b.FusesNode(&c.n, c.in) {
			t.Errorf("%s on %v giving %v is fused", c.n.Name(), c.in, c.n.DType)
		}
	}
	old := &Backend{ccMajor: 7}
	half := ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpExp), DType: backend.F16}
	if old.FusesNode(&half, backend.F16) {
		t.Error("F16 is fused below compute capability 8.0")
	}

	bad := map[string]*ir.FusedProgram{}
	g := newProg([]int{3})
	x, y := g.input(backend.F32, []int{3}), g.input(backend.F64, []int{3})
	bad["mixed dtypes"] = g.output(g.add(ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(backend.OpAdd), DType: backend.F32, Args: [3]ir.FusedRef{x, y}}))
	g = newProg([]int{3})
	x = g.input(backend.F32, []int{3})
	bad["float condition"] = g.output(g.add(ir.FusedNode{Kind: ir.KindWhere, DType: backend.F32, Args: [3]ir.FusedRef{x, x, x}}))
	g = newProg([]int{3})
	x = g.input(backend.F32, []int{3})
	bad["forward reference"] = g.output(g.add(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpExp), DType: backend.F32, Args: [3]ir.FusedRef{ir.NodeRef(0)}}))
	g = newProg([]int{3})
	x = g.input(backend.F32, []int{3})
	g.unary(backend.OpExp, x)
	bad["no outputs"] = &g.p
	for what, p := range bad {
		if err := fusedCheck(p, b.FusesNode); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	for _, p := range []*ir.FusedProgram{geluChainProgram([]int{8}), mixedProgram([]int{2, 3}), adamProgram(backend.BF16, []int{4}, ir.OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Step: 1})} {
		if err := fusedCheck(p, b.FusesNode); err != nil {
			t.Errorf("%s: %v", p.Signature(), err)
		}
	}
}

// TestFusedPlan checks the per-signature plan: constants' bits, programs
// that differ only in their constants' values (NaN payloads included),
// which share the plan and its kernels but each run with its own bits,
// and programs it declines.
func TestFusedPlan(t *testing.T) {
	b := &Backend{ccMajor: 9}
	p := geluChainProgram([]int{8})
	pl := b.fusedPlanOf(p)
	want := []uint64{uint64(math.Float32bits(float32(1 / math.Sqrt2))), uint64(math.Float32bits(1)), uint64(math.Float32bits(0.5))}
	if got := pl.constsOf(p); !pl.ok || pl.nconsts != 3 || !slices.Equal(got, want) {
		t.Errorf("gelu plan: ok %v, %d constants %x (want 3: %x)", pl.ok, pl.nconsts, got, want)
	}
	if b.fusedPlanOf(geluChainProgram([]int{3, 5})) != pl {
		t.Error("another shape made another plan")
	}
	constProg := func(v float64) *ir.FusedProgram {
		g := newProg([]int{4})
		x := g.input(backend.F64, []int{4})
		return g.output(g.binary(backend.OpMax, x, g.full(backend.F64, v)))
	}
	nan1, nan2 := math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0x7ff80000000000ff)
	progs := []*ir.FusedProgram{constProg(2.5), constProg(-1e300), constProg(nan1), constProg(nan2), constProg(2.5)}
	pc := b.fusedPlanOf(progs[0])
	if !pc.ok {
		t.Fatal("constant plan declined")
	}
	for i, q := range progs {
		if b.fusedPlanOf(q) != pc {
			t.Errorf("program %d: another constant value made another plan", i)
		}
		got := pc.constsOf(q)
		w := uint64(0)
		for j := range q.Nodes {
			if q.Nodes[j].Kind == ir.KindFull {
				w = math.Float64bits(q.Nodes[j].Value)
			}
		}
		if len(got) != 1 || got[0] != w {
			t.Errorf("program %d: constant bits %x, want %x", i, got, w)
		}
	}
	if p1, p2 := progs[2], progs[3]; fusedSignature(p1) != fusedSignature(p2) || p1.Signature() == p2.Signature() {
		t.Error("fusedSignature must drop the constants' values, ir's Signature keep them")
	}
	// F32 constants store float32 bits (Full's conversion).
	g := newProg([]int{4})
	x := g.input(backend.F32, []int{4})
	p32 := g.output(g.binary(backend.OpMul, x, g.full(backend.F32, 0.1)))
	if got := b.fusedPlanOf(p32).constsOf(p32); len(got) != 1 || got[0] != uint64(math.Float32bits(0.1)) {
		t.Errorf("F32 constant bits %x", got)
	}
	g = newProg([]int{4})
	x = g.input(backend.F32, []int{4})
	declined := g.output(g.add(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(backend.OpNot), DType: backend.F32, Args: [3]ir.FusedRef{x}}))
	if pl := b.fusedPlanOf(declined); pl.ok {
		t.Error("a plan for Not on F32")
	}
	if _, ok := b.ExecFused(declined, []backend.Tensor{fakeTensor(backend.F32, []int{4}, []int{1})}); ok {
		t.Error("ExecFused ran Not on F32")
	}
}

// TestFusedSourcesCompile compiles the generated kernels with NVRTC for
// sm_90 when the library loads (no GPU is needed), so that a source the
// generator renders wrongly fails here and not first on a device.
func TestFusedSourcesCompile(t *testing.T) {
	if err := nvrtc.Load(); err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	progs := []*ir.FusedProgram{
		geluChainProgram([]int{64}),
		mixedProgram([]int{3, 5}),
		adamProgram(backend.F32, []int{9}, ir.OptimUpdate{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1, WeightDecay: 0.01, Decoupled: true}),
		adamProgram(backend.BF16, []int{9}, ir.OptimUpdate{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1}),
	}
	// Every dtype through every unary and binary op it takes, and casts
	// between all pairs.
	for _, dt := range backend.AllDTypes {
		g := newProg([]int{4})
		x, y := g.input(dt, []int{4}), g.input(dt, []int{4})
		var outs []ir.FusedRef
		for u := backend.UnaryOp(1); u.Valid(); u++ {
			n := ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(u), DType: dt}
			if fusedOpDefined(&n, dt) {
				outs = append(outs, g.unary(u, x))
			}
		}
		for o := backend.BinaryOp(1); o.Valid(); o++ {
			n := ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(o), DType: dt}
			if o.IsComparison() {
				n.DType = backend.Bool
			}
			if fusedOpDefined(&n, dt) {
				outs = append(outs, g.binary(o, x, y))
			}
		}
		for _, to := range backend.AllDTypes {
			outs = append(outs, g.cast(x, to))
		}
		outs = append(outs, g.full(dt, 1))
		progs = append(progs, g.output(outs...))
	}
	var specs []fusedSpec
	for i, p := range progs {
		all := fusedSpecs(p)
		if i >= 4 {
			all = []fusedSpec{all[0], all[3]} // vectors and 64-bit offsets
		}
		specs = append(specs, all...)
	}
	work := make(chan fusedSpec)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				if _, err := nvrtc.Compile(fusedSource(s), s.name, compileOptions(90, false), false); err != nil {
					t.Errorf("%s %s: %v", s.p.Signature(), s.variant(), err)
				}
			}
		}()
	}
	for _, s := range specs {
		work <- s
	}
	close(work)
	wg.Wait()
}

// TestFusedVectorBudget checks the flat kernel's unrolling on hand-worked
// cases: one dense F32 input and output take 4-element vectors, 4 of
// them per thread for short programs, fewer once nodes × 16 elements
// exceed fusedInlineBudget (512), never fewer than one vector.
func TestFusedVectorBudget(t *testing.T) {
	in := fakeTensor(backend.F32, []int{1024}, []int{1})
	out := fakeTensor(backend.F32, []int{1024}, []int{1})
	for _, c := range []struct{ nodes, unroll int }{{1, 4}, {11, 4}, {32, 4}, {33, 2}, {64, 2}, {65, 1}, {300, 1}} {
		vec, unroll := fusedVector([]byte{fusedContig}, []*Tensor{in}, []*Tensor{out}, c.nodes)
		if vec != 4 || unroll != c.unroll {
			t.Errorf("%d nodes: vec %d unroll %d, want 4 and %d", c.nodes, vec, unroll, c.unroll)
		}
	}
}
