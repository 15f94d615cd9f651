// Package flex is Ember's portable reference backend: eager kernels in pure
// Go (no assembly, no cgo) that run wherever Go runs, wasm included. It
// executes every base kind of package ir for every dtype in
// backend.AllDTypes, and CumSum for every numeric dtype; the fast-path
// kinds (max pooling, the gradient kernels, the optimizer steps) are left
// to their decompositions into base kinds (ir.Run). It registers itself
// under the name "flex" (priority 10), so it is always available as the
// last-resort device.
//
// Ops arrive as values through Exec, which dispatches through a table of
// kernels indexed by ir.Kind (backend.Kernels), one kernel file per group
// of kinds, each filling in its entries from init. Ops are inferred by the
// caller: kernels take the output shape and dtype from the op (op.Shape,
// op.DType) instead of recomputing them, and keep op.Shape in the tensors
// they return.
//
// Tensors (*Tensor) hold typed storage ([]float64, []float32, []uint16 for
// F16/BF16 bits, []int64 ... []uint8, []bool) with a shape, strides and an
// offset: the host tensors of backend/internal/host, whose accessors this
// package installs so that backend/cpu can run its own kernels on them.
// Storage is never written after an op returns it, so Reshape (when the
// layout allows), Permute, Expand (stride 0), Slice (with step) and Flip
// (negative strides) are zero-copy views that share it.
//
// Semantics follow package ir and Ember's design notes, which follow
// PyTorch: NumPy broadcasting; Max/Min and the reductions propagate NaN, and
// ArgMax/ArgMin return the first NaN's index, ties the lowest index; Round is
// half to even; integer Div truncates, FloorDiv floors, Rem takes the
// dividend's sign and Mod the divisor's; Neg and integer overflow wrap.
// F16 and BF16 compute in float32 and round back to nearest even; Flex32 is
// stored and computed as float32. Float32 sums (Reduce and CumSum)
// accumulate in float64.
//
// Large contiguous or row-structured elementwise work (at least 64K
// elements) is split across runtime.GOMAXPROCS goroutines. Matmul and the
// convolutions run blocked float32/float64 kernels; F16, BF16 and Flex32 go
// through float32, integer dtypes through simple loops.
package flex
