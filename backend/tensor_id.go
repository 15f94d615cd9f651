package backend

import "github.com/emberml/ember/ir"

// NumberedTensor is implemented by the tensors of backends that name
// tensors by number rather than by storage: the capture recorder, whose
// graphs refer to tensors by ir.TensorID, and clients that ship ops to a
// server holding the storage. The root package's Tensor.ID reports the
// number through this interface, so users can name a tensor in a graph's
// boundary lists; tensors of other backends do not implement it (their ID
// is 0).
type NumberedTensor interface {
	// TensorID is the tensor's number, unique on its device and never 0.
	TensorID() ir.TensorID
}
