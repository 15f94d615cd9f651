package ember_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// edgeCase is one case of testdata/grad_edges.json (written by
// testdata/grad_edges.py from PyTorch, float64): the op's inputs, the
// upstream weights w of the loss Σ w·y, the forward values and the
// gradients of every input.
type edgeCase struct {
	Name     string             `json:"name"`
	Op       string             `json:"op"`
	Attrs    map[string]any     `json:"attrs"`
	Shape    []int              `json:"shape"`
	Inputs   [][]edgeValue      `json:"inputs"`
	Weights  []edgeValue        `json:"weights"`
	OutShape []int              `json:"out_shape"`
	Out      []edgeValue        `json:"out"`
	Grads    [][]edgeValue      `json:"grads"`
	Extra    map[string]float64 `json:"-"`
}

// edgeValue is a float64 written as a JSON number or as "nan", "inf",
// "-inf" or "-0".
type edgeValue float64

func (v *edgeValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "nan":
			*v = edgeValue(math.NaN())
		case "inf":
			*v = edgeValue(math.Inf(1))
		case "-inf":
			*v = edgeValue(math.Inf(-1))
		case "-0":
			*v = edgeValue(math.Copysign(0, -1))
		default:
			return fmt.Errorf("bad value %q", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*v = edgeValue(f)
	return nil
}

func f64Tensor(vals []edgeValue, shape []int, dev ember.Device) *ember.Tensor {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(v)))
	}
	return ember.FromData(&ember.TensorData{Shape: shape, DType: ember.F64, Bytes: b}, dev)
}

// edgeOp applies case c's op to xs.
func edgeOp(t *testing.T, c *edgeCase, xs []*ember.Tensor, dev ember.Device) *ember.Tensor {
	a := func(k string) float64 { return c.Attrs[k].(float64) }
	x := xs[0]
	switch c.Op {
	case "relu":
		return x.Relu()
	case "abs":
		return x.Abs()
	case "sign":
		return x.Sign()
	case "neg":
		return x.Neg()
	case "exp":
		return x.Exp()
	case "tanh":
		return x.Tanh()
	case "sigmoid":
		return x.Sigmoid()
	case "erf":
		return x.Erf()
	case "sin":
		return x.Sin()
	case "cos":
		return x.Cos()
	case "floor":
		return x.Floor()
	case "ceil":
		return x.Ceil()
	case "round":
		return x.Round()
	case "square":
		return x.Square()
	case "gelu":
		return x.Gelu()
	case "silu":
		return x.Silu()
	case "sqrt":
		return x.Sqrt()
	case "log":
		return x.Log()
	case "rsqrt":
		return x.Rsqrt()
	case "recip":
		return x.Recip()
	case "leaky_relu":
		return x.LeakyRelu(a("slope"))
	case "clamp":
		return x.Clamp(a("min"), a("max"))
	case "clamp_min":
		return x.ClampMin(a("min"))
	case "clamp_max":
		return x.ClampMax(a("max"))
	case "pow":
		return x.Pow(xs[1])
	case "pow_scalar":
		return x.PowScalar(a("p"))
	case "div":
		return x.Div(xs[1])
	case "mul":
		return x.Mul(xs[1])
	case "maximum":
		return x.Maximum(xs[1])
	case "minimum":
		return x.Minimum(xs[1])
	case "softmax":
		return x.Softmax(-1)
	case "log_softmax":
		return x.LogSoftmax(-1)
	case "logsumexp":
		return x.LogSumExp(-1, false)
	case "amax":
		return x.MaxAxis(-1, false)
	case "amin":
		return x.MinAxis(-1, false)
	case "max":
		return x.Max()
	case "std":
		return x.Std(0, 1, false)
	case "var":
		return x.Var(0, 1, false)
	case "mean":
		return x.Mean()
	case "prod":
		return x.Prod()
	case "cross_entropy":
		var tg []int64
		for _, v := range c.Attrs["targets"].([]any) {
			tg = append(tg, int64(v.(float64)))
		}
		return nn.CrossEntropy(x, ember.FromInts(tg, []int{len(tg)}, dev))
	case "cumsum":
		return x.CumSum(0)
	case "atan2":
		return x.Atan2(xs[1])
	case "where":
		var cond []bool
		for _, v := range c.Attrs["cond"].([]any) {
			cond = append(cond, v.(bool))
		}
		return ember.Where(ember.FromBools(cond, []int{len(cond)}, dev), x, xs[1])
	case "where_log":
		return ember.Where(x.GtScalar(0), x.ClampMin(1e-300).Log(), x.MulScalar(0).Detach())
	case "index_select":
		var idx []int64
		for _, v := range c.Attrs["index"].([]any) {
			idx = append(idx, int64(v.(float64)))
		}
		return x.IndexSelect(0, ember.FromInts(idx, []int{len(idx)}, dev))
	case "matmul":
		return x.Matmul(xs[1])
	case "max_pool2d":
		k, s := int(a("kernel")), int(a("stride"))
		return x.MaxPool2d(ember.PoolOptions{Kernel: [2]int{k, k}, Stride: [2]int{s, s}})
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// edgeClose compares got with PyTorch's want: NaN with NaN, infinities
// exactly, finite values within 1e-12 relative (1e-12 absolute near 0).
func edgeClose(got, want float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// TestGradientEdges checks forward values and gradients of ops at their
// boundary cases (±0, ±∞, NaN, ties, rows with no finite entry) against
// PyTorch's, on every local device: the loss Σ w·y with PyTorch's
// weights w.
func TestGradientEdges(t *testing.T) {
	raw, err := os.ReadFile("testdata/grad_edges.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Torch string     `json:"torch"`
		Cases []edgeCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	var devs []ember.Device
	seen := map[string]bool{}
	for _, d := range append(ember.Enumerate(), ember.Flex(), ember.CPU()) {
		if !seen[d.String()] && d.Init() == nil {
			seen[d.String()] = true
			devs = append(devs, d.Autodiff())
		}
	}
	for _, dev := range devs {
		for i := range file.Cases {
			c := &file.Cases[i]
			t.Run(dev.String()+"/"+c.Name, func(t *testing.T) {
				xs := make([]*ember.Tensor, len(c.Inputs))
				for j, in := range c.Inputs {
					xs[j] = f64Tensor(in, c.Shape, dev).RequireGrad()
				}
				y := edgeOp(t, c, xs, dev)
				w := f64Tensor(c.Weights, c.OutShape, dev)
				for k, got := range y.Float64s() {
					want := float64(c.Out[k])
					if !edgeClose(got, want) || (c.Op == "sign" && want == 0 && math.Signbit(got) != math.Signbit(want)) {
						t.Errorf("out[%d] = %v, PyTorch %v (input %v)", k, got, want, c.Inputs[0][k%len(c.Inputs[0])])
					}
				}
				g := y.Mul(w).Sum().Backward()
				for j, want := range c.Grads {
					gx := g.Of(xs[j])
					if gx == nil {
						t.Errorf("input %d received no gradient", j)
						continue
					}
					for k, got := range gx.Float64s() {
						if !edgeClose(got, float64(want[k])) {
							t.Errorf("grad %d [%d] = %v, PyTorch %v (input %v)", j, k, got, float64(want[k]), float64(c.Inputs[j][k]))
						}
					}
				}
			})
		}
	}
}
