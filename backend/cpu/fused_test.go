package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// fusedBuilder builds a FusedProgram, tracking each value's dtype and
// shape (the shape the value has when its op runs alone).
type fusedBuilder struct {
	p      ir.FusedProgram
	inDTs  []ir.DType
	inShp  [][]int
	nodeDT []ir.DType
}

func (b *fusedBuilder) input(dt ir.DType, shape []int) ir.FusedRef {
	b.p.Inputs = append(b.p.Inputs, ir.FusedInput{DType: dt, Shape: shape})
	b.inDTs = append(b.inDTs, dt)
	b.inShp = append(b.inShp, shape)
	return ir.InputRef(len(b.p.Inputs) - 1)
}

func (b *fusedBuilder) node(n ir.FusedNode) ir.FusedRef {
	b.p.Nodes = append(b.p.Nodes, n)
	b.nodeDT = append(b.nodeDT, n.DType)
	return ir.NodeRef(len(b.p.Nodes) - 1)
}

func (b *fusedBuilder) dtype(r ir.FusedRef) ir.DType {
	if r.IsInput() {
		return b.inDTs[r.Index()]
	}
	return b.nodeDT[r.Index()]
}

func (b *fusedBuilder) full(dt ir.DType, v float64) ir.FusedRef {
	return b.node(ir.FusedNode{Kind: ir.KindFull, DType: dt, Value: v})
}

func (b *fusedBuilder) unary(u ir.UnaryOp, x ir.FusedRef) ir.FusedRef {
	return b.node(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(u), DType: b.dtype(x), Args: [3]ir.FusedRef{x}})
}

func (b *fusedBuilder) binary(op ir.BinaryOp, x, y ir.FusedRef) ir.FusedRef {
	dt := b.dtype(x)
	if op.IsComparison() {
		dt = ir.Bool
	}
	return b.node(ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(op), DType: dt, Args: [3]ir.FusedRef{x, y}})
}

func (b *fusedBuilder) where(c, x, y ir.FusedRef) ir.FusedRef {
	return b.node(ir.FusedNode{Kind: ir.KindWhere, DType: b.dtype(x), Args: [3]ir.FusedRef{c, x, y}})
}

func (b *fusedBuilder) cast(x ir.FusedRef, dt ir.DType) ir.FusedRef {
	return b.node(ir.FusedNode{Kind: ir.KindCast, DType: dt, Args: [3]ir.FusedRef{x}})
}

// fusedSpecials are the float values the random inputs mix in: signed
// zeros, ±Inf, quiet and signalling NaNs of both signs with payloads,
// halves (rounding ties), subnormals and values near float32's range.
var fusedSpecials32 = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 1.5, -2.5, 2, 3, -3, 7,
	float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000),
	math.Float32frombits(0x7fc01234), math.Float32frombits(0xff800001),
	1e-40, -3e-39, 3e38, -3e38, 1e-8, 88.7, -104,
}

var fusedSpecials64 = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, -2.5, 2, 3, -3, 7,
	math.Inf(1), math.Inf(-1),
	math.Float64frombits(0x7ff8000000000000), math.Float64frombits(0xfff8000000000000),
	math.Float64frombits(0x7ff8000000001234), math.Float64frombits(0xfff0000000000001),
	5e-324, -1e-310, 1e308, -1.7e308, 1e-8, 709.7, -745,
}

// fusedTensor makes a tensor of dt and shape on be with random values:
// normal values of varying scale, a fifth of them specials.
func fusedTensor(r *rand.Rand, be backend.Backend, dt ir.DType, shape []int) backend.Tensor {
	n := numel(shape)
	var d *ir.TensorData
	switch dt {
	case ir.F32, ir.Flex32:
		v := make([]float32, n)
		for i := range v {
			if r.IntN(5) == 0 {
				v[i] = fusedSpecials32[r.IntN(len(fusedSpecials32))]
			} else {
				v[i] = float32(r.NormFloat64() * math.Pow(4, float64(r.IntN(5)-2)))
			}
		}
		d = ir.FromSlice(v, shape)
		d.DType = dt
	case ir.F64:
		v := make([]float64, n)
		for i := range v {
			if r.IntN(5) == 0 {
				v[i] = fusedSpecials64[r.IntN(len(fusedSpecials64))]
			} else {
				v[i] = r.NormFloat64() * math.Pow(4, float64(r.IntN(5)-2))
			}
		}
		d = ir.FromSlice(v, shape)
	case ir.Bool:
		v := make([]bool, n)
		for i := range v {
			v[i] = r.IntN(2) == 0
		}
		d = ir.FromSlice(v, shape)
	default:
		panic("fusedTensor: dtype " + dt.String())
	}
	return be.FromData(d)
}

// fusedShapes are the iteration shapes of the random programs: rank 0,
// single elements, empty tensors, small shapes and shapes above the
// parallel threshold (several chunks, partial blocks).
var fusedShapes = [][]int{
	{}, {1}, {0}, {3, 0}, {5}, {7, 3}, {2, 1, 4}, {4, 3, 5}, {2, 3, 4, 5}, {1, 6, 1},
	{2049}, {3, 700}, {70001}, {5, 131, 107},
}

// fusedInputShape returns a random shape broadcasting to out: out itself,
// rank 0, a trailing row, a leading column, or size-1 axes anywhere.
func fusedInputShape(r *rand.Rand, out []int) []int {
	s := slices.Clone(out)
	switch r.IntN(6) {
	case 0, 1:
		return s
	case 2:
		return []int{}
	case 3: // trailing axes
		return s[r.IntN(len(s)+1):]
	case 4: // a column: leading axes, then ones
		k := r.IntN(len(s) + 1)
		for i := k; i < len(s); i++ {
			s[i] = 1
		}
		return s
	}
	for i := range s {
		if r.IntN(2) == 0 {
			s[i] = 1
		}
	}
	if len(s) > 0 && r.IntN(2) == 0 {
		s = s[r.IntN(len(s)):] // fewer leading axes
	}
	return s
}

var (
	fusedFloatUnary = []ir.UnaryOp{ir.OpNeg, ir.OpAbs, ir.OpSign, ir.OpExp, ir.OpLog, ir.OpLog1p, ir.OpExpm1,
		ir.OpSqrt, ir.OpRsqrt, ir.OpRecip, ir.OpSin, ir.OpCos, ir.OpTanh, ir.OpSigmoid, ir.OpErf,
		ir.OpFloor, ir.OpCeil, ir.OpRound}
	fusedFloatBinary = []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod,
		ir.OpPow, ir.OpMax, ir.OpMin, ir.OpAtan2, ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe}
	fusedBoolBinary = []ir.BinaryOp{ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpMax, ir.OpMin,
		ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe}
	fusedDTypes    = []ir.DType{ir.F32, ir.Flex32, ir.F64, ir.Bool}
	fusedConstants = []float64{0, 1, -1, 0.5, 1 / math.Sqrt2, 2, -2.5, 3.7, 1e-40, 1e30, 1e300,
		math.Inf(1), math.Inf(-1), math.NaN()}
)

// randomFused builds a random valid program of 1 to 12 nodes over 1 to 4
// inputs, and its inputs on be.
func randomFused(r *rand.Rand, be backend.Backend) (*ir.FusedProgram, []backend.Tensor) {
	var b fusedBuilder
	shape := fusedShapes[r.IntN(len(fusedShapes))]
	b.p.Shape = shape
	main := []ir.DType{ir.F32, ir.Flex32, ir.F64}[r.IntN(3)]
	nin := 1 + r.IntN(4)
	var inputs []backend.Tensor
	var refs []ir.FusedRef
	for i := range nin {
		dt := main
		if i > 0 && r.IntN(4) == 0 {
			dt = fusedDTypes[r.IntN(len(fusedDTypes))]
		}
		s := fusedInputShape(r, shape)
		refs = append(refs, b.input(dt, s))
		inputs = append(inputs, fusedTensor(r, be, dt, s))
	}
	// pick returns a value, preferring recent ones; of dtype dt (a cast of
	// some value, or a constant, when none has it) unless dt is 0 (any
	// float) or 255 (anything).
	const anyFloat, anyDType = ir.DType(0), ir.DType(255)
	pick := func(dt ir.DType) ir.FusedRef {
		var ok []ir.FusedRef
		for _, v := range refs {
			vdt := b.dtype(v)
			if dt == anyDType || vdt == dt || dt == anyFloat && vdt != ir.Bool {
				ok = append(ok, v)
			}
		}
		if len(ok) > 0 && r.IntN(8) != 0 {
			if r.IntN(2) == 0 {
				return ok[len(ok)-1]
			}
			return ok[r.IntN(len(ok))]
		}
		if dt == anyFloat {
			dt = main
		}
		if dt == anyDType {
			dt = fusedDTypes[r.IntN(len(fusedDTypes))]
		}
		var v ir.FusedRef
		if r.IntN(2) == 0 {
			v = b.cast(refs[r.IntN(len(refs))], dt)
		} else {
			v = b.full(dt, fusedConstants[r.IntN(len(fusedConstants))])
		}
		refs = append(refs, v)
		return v
	}
	nodes := 1 + r.IntN(12)
	for len(b.p.Nodes) < nodes {
		var v ir.FusedRef
		switch k := r.IntN(20); {
		case k < 5:
			v = b.unary(fusedFloatUnary[r.IntN(len(fusedFloatUnary))], pick(anyFloat))
		case k < 11:
			x := pick(anyFloat)
			v = b.binary(fusedFloatBinary[r.IntN(len(fusedFloatBinary))], x, pick(b.dtype(x)))
		case k < 13:
			x := pick(ir.Bool)
			if r.IntN(3) == 0 {
				v = b.unary(ir.OpNot, x)
			} else {
				v = b.binary(fusedBoolBinary[r.IntN(len(fusedBoolBinary))], x, pick(ir.Bool))
			}
		case k < 16:
			c := pick(ir.Bool)
			x := pick(anyDType)
			v = b.where(c, x, pick(b.dtype(x)))
		case k < 18:
			v = b.cast(pick(anyDType), fusedDTypes[r.IntN(len(fusedDTypes))])
		default:
			v = b.full(fusedDTypes[r.IntN(len(fusedDTypes))], fusedConstants[r.IntN(len(fusedConstants))])
		}
		refs = append(refs, v)
	}
	last := len(b.p.Nodes) - 1
	b.p.Outputs = []int{last}
	for range r.IntN(3) {
		b.p.Outputs = append(b.p.Outputs, r.IntN(len(b.p.Nodes)))
	}
	if err := b.p.Validate(); err != nil {
		panic(err)
	}
	return &b.p, inputs
}

// sameTensors checks that got and want hold the same dtype, shape and
// bytes. With anyNaN, two NaN elements match whatever their sign and
// payload: when both operands of a binary op are NaN, which one the
// result carries depends on the machine code of the loop that ran it
// (the unfused cpu kernels themselves give different NaNs for one op on
// identical data depending on the operands' layout and size).
func sameTensors(t *testing.T, be *Backend, name string, got, want []backend.Tensor, anyNaN bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", name, len(got), len(want))
	}
	for k := range got {
		g, err := be.ToData(got[k])
		if err != nil {
			t.Fatal(err)
		}
		w, err := be.ToData(want[k])
		if err != nil {
			t.Fatal(err)
		}
		if g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) {
			t.Fatalf("%s: output %d is %v %v, want %v %v", name, k, g.DType, g.Shape, w.DType, w.Shape)
		}
		if string(g.Bytes) == string(w.Bytes) {
			continue
		}
		sz := g.DType.Size()
		for i := 0; i < len(g.Bytes); i += sz {
			if string(g.Bytes[i:i+sz]) == string(w.Bytes[i:i+sz]) {
				continue
			}
			if ge, we := element(g, i/sz), element(w, i/sz); !anyNaN || !math.IsNaN(ge) || !math.IsNaN(we) {
				t.Fatalf("%s: output %d differs first at element %d: % x, want % x (fused %v, unfused %v)",
					name, k, i/sz, g.Bytes[i:i+sz], w.Bytes[i:i+sz], ge, we)
			}
		}
	}
}

// element returns element i of d as a float64 for messages.
func element(d *ir.TensorData, i int) float64 {
	c := &ir.TensorData{DType: d.DType, Shape: []int{1}, Bytes: d.Bytes[i*d.DType.Size() : (i+1)*d.DType.Size()]}
	return c.Convert(ir.F64).Float64s()[0]
}

// describe prints a program for failure messages.
func describe(p *ir.FusedProgram) string {
	var s strings.Builder
	fmt.Fprintf(&s, "shape %v\n", p.Shape)
	for i, in := range p.Inputs {
		fmt.Fprintf(&s, "  in%d: %v %v\n", i, in.DType, in.Shape)
	}
	ref := func(r ir.FusedRef) string {
		if r.IsInput() {
			return fmt.Sprintf("in%d", r.Index())
		}
		return fmt.Sprintf("n%d", r.Index())
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		fmt.Fprintf(&s, "  n%d = %s %v", i, n.Name(), n.DType)
		for a := range n.NumArgs() {
			fmt.Fprintf(&s, " %s", ref(n.Args[a]))
		}
		if n.Kind == ir.KindFull {
			fmt.Fprintf(&s, " %v", n.Value)
		}
		s.WriteByte('\n')
	}
	fmt.Fprintf(&s, "  outputs %v", p.Outputs)
	return s.String()
}

// TestFusedRandomPrograms checks ExecFused against running each node's op
// through Exec (FusedProgram.Run), bit for bit (any NaN matching any NaN,
// see sameTensors), on random programs.
func TestFusedRandomPrograms(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(2024, 5))
	iters := 1500
	if testing.Short() || fusedRace {
		iters = 300
	}
	for it := range iters {
		p, inputs := randomFused(r, be)
		got, ok := be.ExecFused(p, inputs)
		if !ok {
			t.Fatalf("program %d declined:\n%s", it, describe(p))
		}
		want := p.Run(be, inputs)
		name := fmt.Sprintf("program %d:\n%s\n", it, describe(p))
		sameTensors(t, be, name, got, want, true)
		for k, g := range got {
			if !slices.Equal(g.Shape(), p.Shape) || g.DType() != p.Nodes[p.Outputs[k]].DType {
				t.Fatalf("%s: output %d is %v %v", name, k, g.DType(), g.Shape())
			}
		}
	}
}

// TestFusedPrefetchStream runs random programs with every plan
// prefetching its next blocks and streaming its F32 outputs (the paths of
// large plans), and a large gelu chain with the real thresholds, against
// Exec.
func TestFusedPrefetchStream(t *testing.T) {
	be := newTestBackend()
	pmin, smin := fusedPrefetchMin, fusedStreamMin
	defer func() { fusedPrefetchMin, fusedStreamMin = pmin, smin }()
	fusedPrefetchMin, fusedStreamMin = 0, 0
	r := rand.New(rand.NewPCG(31, 7))
	iters := 600
	if testing.Short() || fusedRace {
		iters = 150
	}
	for it := range iters {
		p, inputs := randomFused(r, be)
		got, ok := be.ExecFused(p, inputs)
		if !ok {
			t.Fatalf("program %d declined:\n%s", it, describe(p))
		}
		sameTensors(t, be, fmt.Sprintf("program %d:\n%s\n", it, describe(p)), got, p.Run(be, inputs), true)
	}
	fusedPrefetchMin, fusedStreamMin = pmin, smin
	n := smin + 3*fusedBlock + 37 // both paths, a partial last block
	if fusedRace {
		n = pmin + 3*fusedBlock + 37
	}
	shape := []int{n}
	p := fusedGeluChain(shape)
	inputs := normalInputs(be, 4, shape)
	got, ok := be.ExecFused(p, inputs)
	if !ok {
		t.Fatal("gelu chain declined")
	}
	sameTensors(t, be, "gelu chain", got, p.Run(be, inputs), false)
}

// TestFusedEveryNode runs every node FusesNode accepts, alone and over
// broadcast operands, against Exec.
func TestFusedEveryNode(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(7, 7))
	shape := []int{3, 5, 67}
	shapes := [][]int{shape, {}, {67}, {3, 1, 1}, {3, 1, 67}, {5, 1}}
	floats := []ir.DType{ir.F32, ir.Flex32, ir.F64}
	// anyNaN is set for the binary ops, which may combine two NaNs; every
	// other node's NaNs must match bit for bit.
	run := func(name string, b *fusedBuilder, dts []ir.DType, anyNaN bool) {
		t.Helper()
		for i := range 6 {
			b.p.Inputs = b.p.Inputs[:0]
			var inputs []backend.Tensor
			for k, dt := range dts {
				s := shapes[(i+k)%len(shapes)]
				if i == 0 {
					s = shape
				}
				b.p.Inputs = append(b.p.Inputs, ir.FusedInput{DType: dt, Shape: s})
				inputs = append(inputs, fusedTensor(r, be, dt, s))
			}
			if !be.FusesNode(&b.p.Nodes[0], dts[0]) {
				t.Fatalf("%s: FusesNode is false", name)
			}
			got, ok := be.ExecFused(&b.p, inputs)
			if !ok {
				t.Fatalf("%s: declined", name)
			}
			sameTensors(t, be, fmt.Sprintf("%s, inputs %v", name, b.p.Inputs), got, b.p.Run(be, inputs), anyNaN)
		}
	}
	one := func(n ir.FusedNode) *fusedBuilder {
		return &fusedBuilder{p: ir.FusedProgram{Shape: shape, Nodes: []ir.FusedNode{n}, Outputs: []int{0}}}
	}
	args := [3]ir.FusedRef{ir.InputRef(0), ir.InputRef(1), ir.InputRef(2)}
	for _, dt := range floats {
		for _, u := range fusedFloatUnary {
			run(fmt.Sprintf("%v %v", u, dt), one(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(u), DType: dt, Args: args}), []ir.DType{dt}, false)
		}
		for _, op := range fusedFloatBinary {
			out := dt
			if op.IsComparison() {
				out = ir.Bool
			}
			run(fmt.Sprintf("%v %v", op, dt), one(ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(op), DType: out, Args: args}), []ir.DType{dt, dt}, true)
		}
	}
	run("not", one(ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNot), DType: ir.Bool, Args: args}), []ir.DType{ir.Bool}, false)
	for _, op := range fusedBoolBinary {
		run(fmt.Sprintf("%v bool", op), one(ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(op), DType: ir.Bool, Args: args}), []ir.DType{ir.Bool, ir.Bool}, false)
	}
	for _, dt := range fusedDTypes {
		run(fmt.Sprintf("where %v", dt), one(ir.FusedNode{Kind: ir.KindWhere, DType: dt, Args: args}), []ir.DType{ir.Bool, dt, dt}, false)
		for _, to := range fusedDTypes {
			run(fmt.Sprintf("cast %v to %v", dt, to), one(ir.FusedNode{Kind: ir.KindCast, DType: to, Args: args}), []ir.DType{dt}, false)
		}
		for _, v := range fusedConstants {
			b := one(ir.FusedNode{Kind: ir.KindFull, DType: dt, Value: v})
			got, ok := be.ExecFused(&b.p, nil)
			if !ok {
				t.Fatalf("full %v %v declined", dt, v)
			}
			sameTensors(t, be, fmt.Sprintf("full %v %v", dt, v), got, b.p.Run(be, nil), false)
		}
	}
}

// TestFusedUniform checks programs whose values are partly or wholly
// uniform (rank-0 inputs and constants, evaluated once) and outputs that
// alias inputs, constants or other outputs.
func TestFusedUniform(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(3, 3))
	var b fusedBuilder
	b.p.Shape = []int{4, 40000} // parallel
	x := b.input(ir.F32, []int{4, 40000})
	s := b.input(ir.F32, []int{})
	row := b.input(ir.F32, []int{40000})
	c1 := b.full(ir.F32, 2)
	sc := b.binary(ir.OpMul, s, c1)   // uniform
	e := b.unary(ir.OpExp, sc)        // uniform
	lt := b.binary(ir.OpLt, e, c1)    // uniform Bool
	nb := b.unary(ir.OpNot, lt)       // uniform Bool
	w := b.where(nb, x, row)          // alias of x or row
	y := b.binary(ir.OpAdd, w, e)     // varying
	fx := b.cast(x, ir.Flex32)        // alias of x
	gt := b.binary(ir.OpGt, y, x)     // Bool
	and := b.binary(ir.OpAnd, gt, nb) // gt or false
	or := b.binary(ir.OpOr, lt, gt)   // gt or true
	xor := b.binary(ir.OpXor, gt, nb) // gt or !gt
	rowx := b.cast(row, ir.F64)       // gathered, converted
	b.p.Outputs = []int{y.Index(), fx.Index(), e.Index(), int(and), int(or), int(xor), int(rowx), int(w), int(y), int(c1)}
	for range 4 {
		inputs := []backend.Tensor{
			fusedTensor(r, be, ir.F32, []int{4, 40000}),
			fusedTensor(r, be, ir.F32, []int{}),
			fusedTensor(r, be, ir.F32, []int{40000}),
		}
		got, ok := be.ExecFused(&b.p, inputs)
		if !ok {
			t.Fatal("declined")
		}
		sameTensors(t, be, describe(&b.p), got, b.p.Run(be, inputs), true)
	}
}

// fusedAdam builds Adam's update (ir's AdamStep decomposition) of param,
// grad and moments m and v of shape as a program of three outputs: the
// new param, m and v.
func fusedAdam(shape []int, lr, beta1, beta2, eps float64, step int) *ir.FusedProgram {
	var b fusedBuilder
	b.p.Shape = shape
	theta, g, m, v := b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape), b.input(ir.F32, shape)
	mulS := func(x ir.FusedRef, s float64) ir.FusedRef { return b.binary(ir.OpMul, x, b.full(ir.F32, s)) }
	m = b.binary(ir.OpAdd, mulS(m, beta1), mulS(g, 1-beta1))
	v = b.binary(ir.OpAdd, mulS(v, beta2), mulS(b.binary(ir.OpMul, g, g), 1-beta2))
	bc1 := 1 - math.Pow(beta1, float64(step))
	bc2 := 1 - math.Pow(beta2, float64(step))
	denom := b.binary(ir.OpAdd, b.binary(ir.OpDiv, b.unary(ir.OpSqrt, v), b.full(ir.F32, math.Sqrt(bc2))), b.full(ir.F32, eps))
	theta = b.binary(ir.OpSub, theta, mulS(b.binary(ir.OpDiv, m, denom), lr/bc1))
	b.p.Outputs = []int{theta.Index(), m.Index(), v.Index()}
	return &b.p
}

// TestFusedAdam checks Adam's update as one program of three outputs.
func TestFusedAdam(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(9, 9))
	for _, shape := range [][]int{{5}, {100000}, {300, 7}} {
		p := fusedAdam(shape, 1e-3, 0.9, 0.999, 1e-8, 3)
		inputs := make([]backend.Tensor, 4)
		for i := range inputs {
			inputs[i] = fusedTensor(r, be, ir.F32, shape)
		}
		got, ok := be.ExecFused(p, inputs)
		if !ok {
			t.Fatal("declined")
		}
		sameTensors(t, be, fmt.Sprintf("adam %v", shape), got, p.Run(be, inputs), true)
	}
}

// TestFusedDeclines checks that ExecFused declines what it does not take:
// inputs of another dtype or shape than the program's,
// unsupported nodes and mismatched operand dtypes.
func TestFusedDeclines(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(4, 4))
	prog := func(dt ir.DType, shape []int, n ir.FusedNode) *ir.FusedProgram {
		return &ir.FusedProgram{Shape: shape, Inputs: []ir.FusedInput{{DType: dt, Shape: shape}}, Nodes: []ir.FusedNode{n}, Outputs: []int{0}}
	}
	exp := ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpExp), DType: ir.F32, Args: [3]ir.FusedRef{ir.InputRef(0)}}
	x := fusedTensor(r, be, ir.F32, []int{4, 6})
	if _, ok := be.ExecFused(prog(ir.F32, []int{4, 6}, exp), []backend.Tensor{x}); !ok {
		t.Error("a contiguous input was declined")
	}
	if _, ok := be.ExecFused(prog(ir.F32, []int{6, 4}, exp), []backend.Tensor{x}); ok {
		t.Error("an input of another shape was accepted")
	}
	x64 := fusedTensor(r, be, ir.F64, []int{4, 6})
	if _, ok := be.ExecFused(prog(ir.F32, []int{4, 6}, exp), []backend.Tensor{x64}); ok {
		t.Error("an input of another dtype was accepted")
	}
	xi := be.FromData(ir.FromSlice(make([]int32, 24), []int{4, 6}))
	negI := ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNeg), DType: ir.I32, Args: [3]ir.FusedRef{ir.InputRef(0)}}
	if _, ok := be.ExecFused(prog(ir.I32, []int{4, 6}, negI), []backend.Tensor{xi}); ok {
		t.Error("an I32 program was accepted")
	}
	mixed := &ir.FusedProgram{Shape: []int{4, 6},
		Inputs:  []ir.FusedInput{{DType: ir.F32, Shape: []int{4, 6}}, {DType: ir.Flex32, Shape: []int{4, 6}}},
		Nodes:   []ir.FusedNode{{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), DType: ir.F32, Args: [3]ir.FusedRef{ir.InputRef(0), ir.InputRef(1)}}},
		Outputs: []int{0}}
	if _, ok := be.ExecFused(mixed, []backend.Tensor{x, fusedTensor(r, be, ir.Flex32, []int{4, 6})}); ok {
		t.Error("an F32 + Flex32 node was accepted")
	}
	if _, ok := be.ExecFused(prog(ir.F32, []int{4, 6}, exp), nil); ok {
		t.Error("a missing input was accepted")
	}
}

// TestFusedStridedInputs checks views (a transpose, a stepped slice, a
// flip, a broadcast column of a transpose) read through their strides,
// against the op-by-op run.
func TestFusedStridedInputs(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(5, 5))
	for _, sz := range [][2]int{{4, 6}, {130, 70}, {300, 257}} {
		m, n := sz[0], sz[1]
		x := fusedTensor(r, be, ir.F32, []int{m, n})
		y := fusedTensor(r, be, ir.F32, []int{n, m})
		views := map[string]backend.Tensor{
			"transpose": ir.Permute(be, x, []int{1, 0}),
			"flip":      ir.Flip(be, y, []int{0, 1}),
			"slice":     ir.Slice(be, fusedTensor(r, be, ir.F32, []int{2 * n, m + 3}), []ir.Range{{Start: 1, End: 2 * n, Step: 2}, {Start: 2, End: m + 2, Step: 1}}),
		}
		col := ir.Permute(be, fusedTensor(r, be, ir.F32, []int{1, n}), []int{1, 0}) // [n, 1]
		for name, v := range views {
			if !slices.Equal(v.Shape(), []int{n, m}) {
				t.Fatalf("%s: shape %v", name, v.Shape())
			}
			p := &ir.FusedProgram{Shape: []int{n, m},
				Inputs: []ir.FusedInput{{DType: ir.F32, Shape: []int{n, m}}, {DType: ir.F32, Shape: []int{n, m}}, {DType: ir.F32, Shape: []int{n, 1}}},
				Nodes: []ir.FusedNode{
					{Kind: ir.KindBinary, Sub: uint8(ir.OpMul), DType: ir.F32, Args: [3]ir.FusedRef{ir.InputRef(0), ir.InputRef(1)}},
					{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), DType: ir.F32, Args: [3]ir.FusedRef{ir.NodeRef(0), ir.InputRef(2)}},
					{Kind: ir.KindUnary, Sub: uint8(ir.OpTanh), DType: ir.F32, Args: [3]ir.FusedRef{ir.NodeRef(1)}},
				},
				Outputs: []int{2, 0}}
			inputs := []backend.Tensor{v, y, col}
			got, ok := be.ExecFused(p, inputs)
			if !ok {
				t.Fatalf("%s %dx%d: declined", name, n, m)
			}
			sameTensors(t, be, fmt.Sprintf("%s %dx%d", name, n, m), got, p.Run(be, inputs), true)
		}
	}
}

// TestFusedStridedRank3 checks a rank-3 permuted input (read through the
// strided gather) against the op-by-op run.
func TestFusedStridedRank3(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(6, 6))
	for _, sz := range [][3]int{{3, 4, 5}, {17, 33, 70}} {
		x := ir.Permute(be, fusedTensor(r, be, ir.F32, sz[:]), []int{2, 0, 1})
		sh := x.Shape()
		p := &ir.FusedProgram{Shape: sh,
			Inputs:  []ir.FusedInput{{DType: ir.F32, Shape: sh}},
			Nodes:   []ir.FusedNode{{Kind: ir.KindUnary, Sub: uint8(ir.OpExp), DType: ir.F32, Args: [3]ir.FusedRef{ir.InputRef(0)}}, {Kind: ir.KindBinary, Sub: uint8(ir.OpMul), DType: ir.F32, Args: [3]ir.FusedRef{ir.NodeRef(0), ir.InputRef(0)}}},
			Outputs: []int{1}}
		got, ok := be.ExecFused(p, []backend.Tensor{x})
		if !ok {
			t.Fatalf("%v: declined", sz)
		}
		sameTensors(t, be, fmt.Sprintf("permuted %v", sz), got, p.Run(be, []backend.Tensor{x}), true)
	}
}

// TestFusedFusesNode checks FusesNode's answers on representative nodes.
func TestFusedFusesNode(t *testing.T) {
	be := newTestBackend()
	cases := []struct {
		n    ir.FusedNode
		in   ir.DType
		want bool
	}{
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpErf), DType: ir.F32}, ir.F32, true},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpErf), DType: ir.Flex32}, ir.Flex32, true},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpSin), DType: ir.F64}, ir.F64, true},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNot), DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNot), DType: ir.F32}, ir.F32, false},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNeg), DType: ir.Bool}, ir.Bool, false},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpExp), DType: ir.F16}, ir.F16, false},
		{ir.FusedNode{Kind: ir.KindUnary, Sub: uint8(ir.OpNeg), DType: ir.I32}, ir.I32, false},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpPow), DType: ir.F32}, ir.F32, true},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpLe), DType: ir.Bool}, ir.F32, true},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpLe), DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpAnd), DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpMax), DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), DType: ir.Bool}, ir.Bool, false},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpAnd), DType: ir.F32}, ir.F32, false},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpShl), DType: ir.I64}, ir.I64, false},
		{ir.FusedNode{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), DType: ir.I64}, ir.I64, false},
		{ir.FusedNode{Kind: ir.KindWhere, DType: ir.F32}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindWhere, DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindWhere, DType: ir.I32}, ir.Bool, false},
		{ir.FusedNode{Kind: ir.KindCast, DType: ir.F64}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindCast, DType: ir.Flex32}, ir.F32, true},
		{ir.FusedNode{Kind: ir.KindCast, DType: ir.I32}, ir.F32, false},
		{ir.FusedNode{Kind: ir.KindCast, DType: ir.F32}, ir.BF16, false},
		{ir.FusedNode{Kind: ir.KindFull, DType: ir.Bool}, ir.Bool, true},
		{ir.FusedNode{Kind: ir.KindFull, DType: ir.I64}, ir.I64, false},
	}
	for _, c := range cases {
		if got := be.FusesNode(&c.n, c.in); got != c.want {
			t.Errorf("FusesNode(%s %v, in %v) = %v, want %v", c.n.Name(), c.n.DType, c.in, got, c.want)
		}
	}
}
