package autodiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// normInners are the inner backends the normalization gradients are
// checked over: flex, which has no kernels for them (autodiff records
// each as one node, its decomposition runs below autodiff and the
// gradient kinds are lowered too), and cpu, which runs them as kernels.
var normInners = map[string]func() backend.Backend{
	"flex": func() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) },
	"cpu":  func() backend.Backend { return cpu.New(backend.DeviceID{Type: "cpu"}) },
}

// recordedAs fails unless y is the output of one node of kind k (or
// recording is off: gradCheck evaluates its finite differences under
// NoGrad).
func recordedAs(t *testing.T, y backend.Tensor, k ir.Kind) {
	t.Helper()
	if recordingOff() {
		return
	}
	if n, ok := y.(*tensor); !ok || n.node.op.Kind != k {
		t.Fatalf("recorded as %T, want one %v node", y, k)
	}
}

// TestNormGradients checks the gradient rules of Softmax, LogSoftmax,
// LogSumExp, LayerNorm and RMSNorm against central finite differences
// (and the checkpointed gradients against the plain ones, bit for bit),
// each applied after a memory-bound op so that its input has a parent,
// over flex and cpu: along the last, a middle and the first axis, with
// weight and bias tracked, untracked or absent, and over several trailing
// axes.
func TestNormGradients(t *testing.T) {
	for name, inner := range normInners {
		t.Run(name, func(t *testing.T) {
			saved := newInner
			newInner = inner
			defer func() { newInner = saved }()
			r := rand.New(rand.NewPCG(21, 22))
			for _, c := range []struct {
				k     ir.Kind
				shape []int
				axis  int
				keep  bool
			}{
				{ir.KindSoftmax, []int{3, 5}, 1, false}, {ir.KindSoftmax, []int{2, 4, 3}, 1, false},
				{ir.KindLogSoftmax, []int{3, 5}, 1, false}, {ir.KindLogSoftmax, []int{4, 3}, 0, false},
				{ir.KindLogSumExp, []int{3, 5}, 1, false}, {ir.KindLogSumExp, []int{2, 4, 3}, 1, true},
			} {
				in := randIn(r, c.shape, 0.2, 2, true)
				gradCheck(t, fmt.Sprintf("%v %v axis %d", c.k, c.shape, c.axis), []input{in}, func(b *Backend, xs []backend.Tensor) backend.Tensor {
					y := exec(b, ir.Op{Kind: c.k, Axis: c.axis, KeepDim: c.keep, In: [3]ir.Tensor{ir.Neg(b, xs[0])}})[0]
					recordedAs(t, y, c.k)
					return y
				})
			}
			for _, k := range []ir.Kind{ir.KindLayerNorm, ir.KindRMSNorm} {
				for _, c := range []struct {
					shape []int
					axis  int
				}{{[]int{3, 6}, 1}, {[]int{2, 3, 4}, 1}} {
					ns := c.shape[c.axis:]
					// mode: which of weight and bias are present and tracked.
					for _, mode := range []string{"x", "x w b", "x const-w const-b", "w b", "x w", "b"} {
						if k == ir.KindRMSNorm && (mode == "b" || mode == "w b" || mode == "x w b" || mode == "x const-w const-b") {
							continue
						}
						x := randIn(r, c.shape, 0.2, 2, true)
						w := randIn(r, ns, 0.5, 1.5, true)
						bias := randIn(r, ns, 0.1, 1, true)
						x.track = mode != "w b" && mode != "b"
						ins := []input{x}
						hasW, hasB := mode != "x" && mode != "b", mode == "x w b" || mode == "x const-w const-b" || mode == "w b" || mode == "b"
						if hasW {
							w.track = mode != "x const-w const-b"
							ins = append(ins, w)
						}
						if hasB {
							bias.track = mode != "x const-w const-b"
							ins = append(ins, bias)
						}
						gradCheck(t, fmt.Sprintf("%v %v axis %d %s", k, c.shape, c.axis, mode), ins, func(b *Backend, xs []backend.Tensor) backend.Tensor {
							op := ir.Op{Kind: k, Axis: c.axis, Scalars: [2]float64{1e-3}, In: [3]ir.Tensor{ir.Neg(b, xs[0])}}
							i := 1
							if hasW {
								op.In[1] = xs[i]
								i++
							}
							if hasB {
								op.In[2] = xs[i]
							}
							y := exec(b, op)[0]
							recordedAs(t, y, k)
							return y
						})
					}
				}
			}
		})
	}
}

// TestNormGradientsAgree checks that the gradients of Softmax and
// LayerNorm over cpu (the gradient kinds' kernels) agree with those over
// flex (their decompositions) to float64 rounding: the rules emit the same
// gradient kinds on every inner backend.
func TestNormGradientsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randIn(r, []int{4, 9}, 0.1, 3, true)
	w := randIn(r, []int{9}, 0.5, 1.5, true)
	bias := randIn(r, []int{9}, 0.1, 1, true)
	f := func(b *Backend, xs []backend.Tensor) backend.Tensor {
		y := exec(b, ir.Op{Kind: ir.KindLayerNorm, Axis: 1, Scalars: [2]float64{1e-5}, In: [3]ir.Tensor{xs[0], xs[1], xs[2]}})[0]
		return exec(b, ir.Op{Kind: ir.KindSoftmax, Axis: 1, In: [3]ir.Tensor{y}})[0]
	}
	var got [2][][]float64
	for i, name := range []string{"flex", "cpu"} {
		saved := newInner
		newInner = normInners[name]
		_, got[i] = analytic(t, false, []input{x, w, bias}, f)
		newInner = saved
	}
	for j := range got[0] {
		checkVals(t, fmt.Sprintf("input %d cpu vs flex", j), got[1][j], got[0][j], 1e-13)
	}
}
