package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// ToDevice moves every parameter and buffer of m to dev in place, like
// PyTorch's module.to(device): each Param's Value is replaced by a copy on
// dev (Tensor.ToDevice of its detached value). On an autodiff device the
// float parameters become fresh tracked leaves there, so the moved module
// trains; buffers stay untracked. Build optimizers after moving (their
// state lives on the device of the parameters they were built on). It
// returns the *ember.Error or device error of the first tensor that could
// not be moved, with the parameter's name; m may then be partly moved.
func ToDevice(m Module, dev ember.Device) error {
	if m == nil {
		return fmt.Errorf("nn: ToDevice: nil module")
	}
	move := func(ps []NamedParam, trainable bool) error {
		for _, np := range ps {
			p := np.Param
			if p == nil || p.Value == nil {
				return fmt.Errorf("nn: ToDevice: parameter %q has no value", np.Name)
			}
			var v *ember.Tensor
			if err := ember.Try(func() {
				v = p.Value.Detach().ToDevice(dev)
				if trainable && dev.IsAutodiff() && v.DType().IsFloat() {
					v = v.RequireGrad()
				}
			}); err != nil {
				return fmt.Errorf("nn: ToDevice: parameter %q: %w", np.Name, err)
			}
			p.Value = v
		}
		return nil
	}
	if err := move(m.NamedParameters(), true); err != nil {
		return err
	}
	return move(NamedBuffers(m), false)
}
