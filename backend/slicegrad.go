package backend

// SliceScatterer is implemented by backends with a direct kernel for the
// adjoint of Slice. Decorators such as backend/autodiff use it, when the
// inner backend has it, for the gradient of Slice instead of composing it
// from Reshape, Pad and Slice (several full-size copies per stepped axis).
type SliceScatterer interface {
	// SliceScatter returns a new tensor of shape, src's dtype, that is zero
	// except at the positions Slice(·, ranges) selects, which hold src
	// (PyTorch's slice_scatter of src into zeros, over every axis at once).
	// src's shape is the sliced shape: axis i has ranges[i].Len() elements.
	// ranges has one entry per axis of shape, with Step >= 1 and Start/End
	// clamped to [0, shape[i]] as for Slice. src has a float dtype.
	// Arguments are validated by the caller.
	SliceScatter(src Tensor, shape []int, ranges []Range) Tensor
}
