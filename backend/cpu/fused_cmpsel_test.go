package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// planOps counts the steps of each kind in the plan of p over inputs, and
// the binary steps that read an operand run by run.
func planOps(t *testing.T, p *ir.FusedProgram, inputs []backend.Tensor) (ops map[fop]int, runs int) {
	t.Helper()
	pl, ok := compileFused(p, inputs)
	if !ok {
		t.Fatalf("declined:\n%s", describe(p))
	}
	ops = map[fop]int{}
	for _, st := range pl.steps {
		ops[st.op]++
		if st.op == opBinary && (st.a.src == srcGath || st.b.src == srcGath) {
			runs++
		}
	}
	return ops, runs
}

// TestFusedCmpSel checks the compare-and-select step against running the
// comparison and the Where through Exec, bit for bit: every comparison,
// the uniform operand on either side, each branch a vector (a full input,
// a broadcast one, a computed value) or a constant, on inputs mixing NaNs,
// signed zeros, infinities and subnormals, over lengths with vector tails
// and several blocks.
func TestFusedCmpSel(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(7, 8))
	cmps := []ir.BinaryOp{ir.OpEq, ir.OpNe, ir.OpLt, ir.OpLe, ir.OpGt, ir.OpGe}
	for _, shape := range [][]int{{5}, {17}, {3, 700}, {2, 9, 4099}} {
		for _, op := range cmps {
			for _, s := range []float64{0, -1.5, 1e-40} {
				for branches := range 6 {
					for _, flip := range []bool{false, true} {
						var b fusedBuilder
						b.p.Shape = shape
						x := b.input(ir.F32, shape)
						g := b.input(ir.F32, shape)
						row := b.input(ir.F32, shape[len(shape)-1:])
						k := b.full(ir.F32, s)
						var mask ir.FusedRef
						if flip {
							mask = b.binary(op, k, x)
						} else {
							mask = b.binary(op, x, k)
						}
						var out ir.FusedRef
						switch branches {
						case 0: // ReLU
							out = b.where(mask, b.full(ir.F32, 0), x)
						case 1: // ReLU's gradient
							out = b.where(mask, b.full(ir.F32, 0), g)
						case 2:
							out = b.where(mask, g, b.full(ir.F32, -2))
						case 3:
							out = b.where(mask, g, row)
						case 4:
							out = b.where(mask, b.full(ir.F32, 3), b.full(ir.F32, -0.0))
						default:
							out = b.where(mask, b.unary(ir.OpNeg, x), g)
						}
						b.p.Outputs = []int{out.Index()}
						inputs := []backend.Tensor{
							fusedTensor(r, be, ir.F32, shape), fusedTensor(r, be, ir.F32, shape),
							fusedTensor(r, be, ir.F32, shape[len(shape)-1:]),
						}
						name := fmt.Sprintf("%v %v s=%v flip=%v branches %d", shape, op, s, flip, branches)
						if ops, _ := planOps(t, &b.p, inputs); branches != 4 && (ops[opCmpSel] != 1 || ops[opCompare] != 0 || ops[opWhere] != 0) {
							t.Fatalf("%s: plan has %v, want one compare-and-select step", name, ops)
						}
						got, ok := be.ExecFused(&b.p, inputs)
						if !ok {
							t.Fatalf("%s: declined", name)
						}
						sameTensors(t, be, name, got, b.p.Run(be, inputs), false)
					}
				}
			}
		}
	}
}

// TestFusedCmpSelKept checks that a comparison whose mask is read twice,
// or is an output, stays a comparison, and the results still match Exec.
func TestFusedCmpSelKept(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(9, 10))
	shape := []int{3, 1000}
	for out := range 2 {
		var b fusedBuilder
		b.p.Shape = shape
		x := b.input(ir.F32, shape)
		mask := b.binary(ir.OpGt, x, b.full(ir.F32, 0.5))
		y := b.where(mask, x, b.full(ir.F32, 0))
		if out == 0 {
			z := b.where(mask, b.full(ir.F32, 1), b.full(ir.F32, 2))
			b.p.Outputs = []int{b.binary(ir.OpAdd, y, z).Index()}
		} else {
			b.p.Outputs = []int{y.Index(), mask.Index()}
		}
		inputs := []backend.Tensor{fusedTensor(r, be, ir.F32, shape)}
		if ops, _ := planOps(t, &b.p, inputs); ops[opCmpSel] != 0 || ops[opCompare] != 1 {
			t.Fatalf("case %d: plan has %v, want the comparison kept", out, ops)
		}
		got, ok := be.ExecFused(&b.p, inputs)
		if !ok {
			t.Fatalf("case %d: declined", out)
		}
		sameTensors(t, be, fmt.Sprintf("case %d", out), got, b.p.Run(be, inputs), false)
	}
}

// TestFusedBroadcastRuns checks binary steps that read a broadcast operand
// run by run (a per-channel bias of [N, C, H, W], a column of a matrix,
// with runs shorter and longer than a block and crossing block and chunk
// boundaries) against Exec, for F32 and F64, the broadcast operand on
// either side, and the CNN's bias-and-ReLU programs and their gradients.
func TestFusedBroadcastRuns(t *testing.T) {
	be := newTestBackend()
	r := rand.New(rand.NewPCG(11, 12))
	cases := []struct{ shape, bshape []int }{
		{[]int{3, 5, 24, 24}, []int{1, 5, 1, 1}},
		{[]int{64, 7, 8, 8}, []int{1, 7, 1, 1}},
		{[]int{2, 3, 4099}, []int{2, 3, 1}},
		{[]int{4, 6, 17}, []int{6, 1}},
		{[]int{9, 3000}, []int{9, 1}},
		{[]int{5, 16}, []int{5, 1}},
	}
	for _, c := range cases {
		for _, dt := range []ir.DType{ir.F32, ir.F64} {
			for _, op := range []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpPow} {
				for _, left := range []bool{false, true} {
					var b fusedBuilder
					b.p.Shape = c.shape
					x := b.input(dt, c.shape)
					bias := b.input(dt, c.bshape)
					var y ir.FusedRef
					if left {
						y = b.binary(op, bias, x)
					} else {
						y = b.binary(op, x, bias)
					}
					b.p.Outputs = []int{b.unary(ir.OpNeg, y).Index()}
					inputs := []backend.Tensor{fusedTensor(r, be, dt, c.shape), fusedTensor(r, be, dt, c.bshape)}
					name := fmt.Sprintf("%v %v by %v, %v, bias first %v", dt, c.shape, c.bshape, op, left)
					if ops, runs := planOps(t, &b.p, inputs); runs != 1 || ops[opGather] != 0 {
						t.Fatalf("%s: plan has %v and %d run-by-run steps, want one and no gather", name, ops, runs)
					}
					got, ok := be.ExecFused(&b.p, inputs)
					if !ok {
						t.Fatalf("%s: declined", name)
					}
					sameTensors(t, be, name, got, b.p.Run(be, inputs), true)
				}
			}
		}
	}
	for _, shape := range [][]int{{64, 32, 24, 24}, {64, 64, 8, 8}, {3, 5, 7, 9}} {
		for _, grad := range []bool{false, true} {
			p := biasReluProgram(shape, grad)
			inputs := []backend.Tensor{fusedTensor(r, be, ir.F32, shape), fusedTensor(r, be, ir.F32, []int{1, shape[1], 1, 1})}
			if grad {
				inputs = append(inputs, fusedTensor(r, be, ir.F32, shape))
			}
			name := fmt.Sprintf("bias and ReLU %v, gradient %v", shape, grad)
			wantRuns := 1
			if shape[2]*shape[3] < minScalarRun {
				wantRuns = 0
			}
			if ops, runs := planOps(t, p, inputs); ops[opCmpSel] != 1 || runs != wantRuns {
				t.Fatalf("%s: plan has %v and %d run-by-run steps", name, ops, runs)
			}
			got, ok := be.ExecFused(p, inputs)
			if !ok {
				t.Fatalf("%s: declined", name)
			}
			sameTensors(t, be, name, got, p.Run(be, inputs), true)
		}
	}
}
