// Package ndarray is a small portable dense-array backend over gonum: it
// executes the base kinds of package ir (creation, elementwise, cast,
// reduce, movement, indexing, matmul and the two convolutions) for every
// dtype, and leaves every other kind to its decomposition into base kinds
// (ir.Run). It registers itself as the single-device driver "ndarray"
// (the device ember.NdArray), with priority 5, below flex's 10, so it is
// never the default device.
//
// Deprecated: ndarray is kept for programs that name it, as Burn keeps its
// NdArray backend; use the flex backend (ember.Flex) or the optimized cpu
// backend (ember.CPU), which run the same ops with the same semantics,
// faster.
//
// A tensor holds its elements in one slice of its storage class: float64
// for every float dtype (F64, F32, Flex32, F16, BF16), each element rounded
// to its dtype after every op (F32 and Flex32 with float32(), F16 and BF16
// through float32 as flex computes them); int64 for the signed integer
// dtypes and uint64 for the unsigned ones, wrapped to the dtype's width
// after every op (which gives the dtype's own two's-complement
// arithmetic); bool for Bool. Permute, Expand, Slice and Flip return
// strided views of their input's slice, which the next op that computes
// with them materializes; Reshape shares a contiguous input's slice. No op
// modifies a slice it did not just make. Movement and indexing work
// through index maps, the same code for every dtype.
//
// Semantics are Ember's (package ir and flex): NumPy broadcasting; Max,
// Min and the reductions propagate NaN, ArgMax/ArgMin give the first NaN's
// index and ties the lowest index; Round is half to even; integer Div
// truncates, FloorDiv floors, Rem takes the dividend's sign and Mod the
// divisor's, and integer overflow wraps; Cast is ir.TensorData.Convert
// (floats to integers truncate and saturate, NaN gives 0). F64 sums add
// pairwise; other float sums and products accumulate in float64. Matmul
// and the convolutions (im2col, col2im) run gonum's Dgemm (blas64) in
// float64 and round once to the dtype; integer products use a plain loop.
// Random draws from a PCG seeded as flex's, giving flex's values.
package ndarray
