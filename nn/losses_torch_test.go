package nn

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// torchCase is one case of testdata/losses_torch.json, written by
// testdata/losses.py from PyTorch: the loss function, its inputs (values,
// shape, dtype, or a plain option value) and PyTorch's result.
type torchCase struct {
	Name     string                     `json:"name"`
	Fn       string                     `json:"fn"`
	Out      []float64                  `json:"out"`
	OutShape []int                      `json:"out_shape"`
	Inputs   map[string]json.RawMessage `json:"inputs"`
}

// TestLossesMatchPyTorch recomputes every case of losses_torch.json
// (cross entropy with every option, NLL, the regression losses, both
// binary cross-entropies, KL divergence, cosine embedding) on the cpu
// device in F64 and compares with PyTorch's values to 1e-10 relative.
func TestLossesMatchPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/losses_torch.json")
	if err != nil {
		t.Fatalf("reading the PyTorch reference (regenerate with python3 testdata/losses.py > testdata/losses_torch.json): %v", err)
	}
	var file struct {
		Torch string      `json:"torch"`
		Cases []torchCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 40 {
		t.Fatalf("only %d cases", len(file.Cases))
	}
	dev := ember.CPU()
	for _, c := range file.Cases {
		tensor := func(k string) *ember.Tensor {
			var v [3]json.RawMessage
			if err := json.Unmarshal(c.Inputs[k], &v); err != nil {
				return nil // "" for an absent optional tensor
			}
			var vals []float64
			var shape []int
			var dt string
			_ = json.Unmarshal(v[0], &vals)
			_ = json.Unmarshal(v[1], &shape)
			_ = json.Unmarshal(v[2], &dt)
			if dt == "torch.int64" {
				ints := make([]int, len(vals))
				for i, f := range vals {
					ints[i] = int(f)
				}
				return ember.FromInts(ints, shape, dev)
			}
			return f64(vals, shape, dev)
		}
		num := func(k string) float64 {
			var f float64
			if err := json.Unmarshal(c.Inputs[k], &f); err != nil {
				t.Fatalf("%s: option %s: %v", c.Name, k, err)
			}
			return f
		}
		var red Reduction
		var rs string
		_ = json.Unmarshal(c.Inputs["reduction"], &rs)
		switch rs {
		case "sum":
			red = ReductionSum
		case "none":
			red = ReductionNone
		case "batchmean":
			red = ReductionBatchMean
		}
		var got *ember.Tensor
		switch c.Fn {
		case "cross_entropy":
			o := CrossEntropyOptions{Reduction: red, Weight: tensor("weight"), LabelSmoothing: num("eps")}
			if ign := int(num("ignore")); ign != -100 {
				o.IgnoreIndex = Index(ign)
			}
			got = CrossEntropyWith(tensor("logits"), tensor("targets"), o)
		case "nll":
			got = NLL(tensor("logp"), tensor("targets"), NLLOptions{Reduction: red, Weight: tensor("weight"), IgnoreIndex: Index(int(num("ignore")))})
		case "mse":
			got = MSEWith(tensor("pred"), tensor("target"), red)
		case "l1":
			got = L1(tensor("pred"), tensor("target"), red)
		case "smooth_l1":
			got = SmoothL1(tensor("pred"), tensor("target"), num("beta"), red)
		case "huber":
			got = Huber(tensor("pred"), tensor("target"), num("delta"), red)
		case "bce":
			got = BinaryCrossEntropy(tensor("probs"), tensor("target"), BCEOptions{Reduction: red, Weight: tensor("weight")})
		case "bce_logits":
			got = BinaryCrossEntropyWithLogits(tensor("logits"), tensor("target"), BCEOptions{Reduction: red, Weight: tensor("weight"), PosWeight: tensor("pos_weight")})
		case "kl_div":
			var lt bool
			_ = json.Unmarshal(c.Inputs["log_target"], &lt)
			got = KLDiv(tensor("input"), tensor("target"), lt, red)
		case "cosine_embedding":
			got = CosineEmbedding(tensor("x1"), tensor("x2"), tensor("y"), num("margin"), red)
		default:
			t.Fatalf("%s: unknown function %q", c.Name, c.Fn)
		}
		if !slices.Equal(got.Shape(), c.OutShape) {
			t.Errorf("%s: shape %v, PyTorch %v", c.Name, got.Shape(), c.OutShape)
			continue
		}
		assertClose(t, c.Name+" (PyTorch "+file.Torch+")", got.Float64s(), c.Out, 1e-10)
	}
}
