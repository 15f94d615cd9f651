package nn

import (
	"fmt"

	"github.com/emberml/ember"
)

// ToDType converts every float parameter and buffer of m to the float
// dtype dt in place, like PyTorch's module.to(dtype) (module.double(),
// module.half()): each float Param's Value is replaced by its detached
// value cast to dt (Tensor.Cast, rounding to nearest even), on the same
// device; on an autodiff device the parameters become fresh tracked
// leaves, so the converted module trains. Integer and Bool buffers (such
// as BatchNorm's num_batches_tracked) keep their dtype. Build optimizers
// after converting: their state has the dtype of the parameters they were
// built on.
//
// For mixed-precision training keep the parameters in F32 and run the
// model on an autocast device instead (ember.Device.Autocast); ToDType is
// for training or inference wholly in another precision (F64 for
// reference runs, BF16 or F16 weights for inference).
//
// It returns an error for a nil module, a dtype that is not a float dtype,
// or the *ember.Error of the first tensor that could not be converted
// (such as a dtype its device does not support), with the parameter's
// name; m may then be partly converted.
func ToDType(m Module, dt ember.DType) error {
	if m == nil {
		return fmt.Errorf("nn: ToDType: nil module")
	}
	if !dt.IsFloat() {
		return fmt.Errorf("nn: ToDType: %v is not a float dtype (want f64, f32, flex32, f16 or bf16)", dt)
	}
	convert := func(ps []NamedParam, trainable bool) error {
		for _, np := range ps {
			p := np.Param
			if p == nil || p.Value == nil {
				return fmt.Errorf("nn: ToDType: parameter %q has no value", np.Name)
			}
			if !p.Value.DType().IsFloat() || p.Value.DType() == dt {
				continue
			}
			var v *ember.Tensor
			if err := ember.Try(func() {
				v = p.Value.Detach().Cast(dt)
				if trainable && v.Device().IsAutodiff() {
					v = v.RequireGrad()
				}
			}); err != nil {
				return fmt.Errorf("nn: ToDType: parameter %q: %w", np.Name, err)
			}
			p.Value = v
		}
		return nil
	}
	if err := convert(m.NamedParameters(), true); err != nil {
		return err
	}
	return convert(NamedBuffers(m), false)
}
