package train

import (
	"math"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// TestUpdateUnscalesBeforeClipping checks the order of update's F16 step
// against PyTorch's recipe (scale, backward, unscale_, clip_grad_norm_,
// step, update), worked in float64 from the scaled gradients: the norm it
// reports is that of the unscaled gradients (clipping the scaled ones
// would report 1024 times it), and an SGD step with rate 1 moves each
// parameter by its unscaled gradient times maxNorm/norm.
func TestUpdateUnscalesBeforeClipping(t *testing.T) {
	adev := ember.CPU().Autodiff()
	adev.Seed(3)
	amp := adev.Autocast(ember.F16)
	lin := nn.NewLinear(4, 2, adev)
	params := lin.NamedParameters()
	x := ember.Randn([]int{8, 4}, adev.Inner()).ToDevice(amp)
	y := ember.Randn([]int{8, 2}, adev.Inner()).AddScalar(3).ToDevice(adev)
	loss := func() *ember.Tensor { return nn.MSE(lin.Forward(x), y) }

	const scale = 1024
	scaler := optim.NewGradScaler(params, optim.GradScalerConfig{InitScale: scale})
	grads := scaler.Scale(loss()).Backward()
	var ref, before [][]float64
	norm2 := 0.0
	for _, p := range params {
		g := grads.Of(p.Param.Value).Float64s()
		for i := range g {
			g[i] /= scale
			norm2 += g[i] * g[i]
		}
		ref = append(ref, g)
		before = append(before, p.Param.Value.Float64s())
	}
	norm := math.Sqrt(norm2)
	if !(norm > 0) {
		t.Fatalf("gradient norm %v", norm)
	}
	maxNorm := norm / 4

	opt := optim.NewSGD(params, optim.SGDConfig{LR: 1})
	stepped, gotScale, gn := update(loss(), params, opt, scaler, maxNorm, 0)
	if !stepped || gotScale != scale || gn == nil {
		t.Fatalf("update: stepped %v, scale %v, norm %v; want a step at scale %d with a norm", stepped, gotScale, gn, scale)
	}
	if got := gn.Item(); math.Abs(got-norm) > 1e-6*norm {
		t.Fatalf("reported norm %v, the unscaled gradients' %v", got, norm)
	}
	coef := maxNorm / (norm + 1e-6) // PyTorch's clip_grad_norm_
	for k, p := range params {
		after := p.Param.Value.Float64s()
		for i := range after {
			want := before[k][i] - ref[k][i]*coef
			if math.Abs(after[i]-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s[%d] = %v after the step, want %v", p.Name, i, after[i], want)
			}
		}
	}
}
