package autodiff

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
)

// newInner returns the backend the tests wrap: by default the portable
// pure-Go flex backend, which implements none of the optional gradient
// kernels, so the composed gradients are tested.
var newInner = func() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) }

// TestFastPathGradients reruns the convolution, movement and reduction
// gradient checks (finite differences, checkpointing bit-identity) over the
// cpu backend, whose Conv2dWeightGrad, SliceScatter and ExtremumGrad
// replace the composed weight gradient, Slice adjoint and max/min
// gradient.
func TestFastPathGradients(t *testing.T) {
	inner := cpu.New(backend.DeviceID{Type: "cpu"})
	var _ backend.Conv2dWeightGrader = inner
	var _ backend.SliceScatterer = inner
	var _ backend.ExtremumGrader = inner
	saved := newInner
	newInner = func() backend.Backend { return inner }
	defer func() { newInner = saved }()
	t.Run("conv", TestConvGradients)
	t.Run("movement", TestMovementGradients)
	t.Run("reduce", TestReduceGradients)
	t.Run("max-ties", TestReduceMaxTies)
}
