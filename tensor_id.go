package ember

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TensorID names a tensor by number on devices that refer to tensors that
// way (capture devices; see Tensor.ID). The zero id names no tensor.
type TensorID = ir.TensorID

// ID returns the number that names x on a device that names tensors by
// number. On a capture device it is the id the device gave x (never 0,
// never reused on that device), which is what CaptureScope.Complete takes
// as a boundary and what x is called in the captured graph; a remote
// device's tensors report the number their server knows them by. Through
// autodiff
// it is the id of x's value (its primal), so a tracked tensor and its
// untracked value (Detach, Inner) share an id, and a gradient
// (Gradients.Of) has the id of the tensor that the backward ops produced.
// On devices that do not name tensors by number (cpu, flex, cuda, ...)
// it returns 0. It panics with an *Error for a nil *Tensor.
//
// The number comes from the backend tensor through
// backend.NumberedTensor, which any backend that names tensors by number
// implements.
func (x *Tensor) ID() TensorID {
	x.need("id", "x")
	t := x.t
	if x.dev.autodiff {
		t = x.dev.ad().Primal(t)
	}
	if n, ok := t.(backend.NumberedTensor); ok {
		return n.TensorID()
	}
	return 0
}
