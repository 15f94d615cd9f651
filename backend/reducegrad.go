package backend

// ExtremumGrader is implemented by backends with a direct kernel for the
// gradient of Reduce with ReduceMax or ReduceMin. Decorators such as
// backend/autodiff use it, when the inner backend has it, instead of
// composing the gradient from Binary (OpEq), Cast, Reduce (Sum), Binary
// (OpDiv) and Binary (OpMul).
type ExtremumGrader interface {
	// ExtremumGrad returns the gradient with respect to x of
	// y = Reduce(ReduceMax or ReduceMin, x, axis, true) for the output
	// gradient g: along axis, each element of x equal to y gets
	// g/count, where count is the number of such elements in its lane
	// (ties share the gradient evenly, PyTorch's amax/amin backward), and
	// every other element 0. The result must equal, bit for bit, the
	// composition Mul(Div(g, Sum(Cast(Eq(x, y)), axis)), Cast(Eq(x, y)))
	// computed in x's dtype; in particular a lane whose y is NaN (no
	// element equals it, count 0) gets NaN everywhere. x has a float
	// dtype; y and g have x's dtype and x's shape with axis of size 1.
	// Arguments are validated by the caller.
	ExtremumGrad(x, y, g Tensor, axis int) Tensor
}
