// Package autodiff is a decorator that adds reverse-mode automatic
// differentiation to any backend.Backend, in the manner of Burn's
// burn-autodiff.
//
// New(inner, checkpointing) returns a *Backend, itself a backend.Backend
// (Unwrap returns inner). Ops arrive as values through Exec: autodiff
// replaces each tracked input by its primal (the inner backend's tensor),
// runs the op on inner with ir.Run (so a kind inner has no kernel for is
// lowered below autodiff, as one recorded op) and, when at least one input
// is tracked and an output has a float dtype, records a node: the op
// itself, with only the inputs its gradient rule reads kept, the parents
// (each a node and one of its outputs), the input shapes and the outputs
// the rule reads. Each float output is returned as a tracked tensor that
// refers to (node, output index); other outputs, and every result without a
// tracked input, are inner tensors. There is no global tape: the graph
// lives in the tensors, so when the program drops the last tensor of a
// step its whole graph is garbage collected. Recording a tracked op costs
// two allocations (the node, with room for three inputs inline, and the
// output tensor) and no closure.
//
// Gradient rules are a table indexed by ir.Kind, one entry registered by
// the file of each kind's group (elementwise.go, reduce.go, movement.go,
// index.go, linalg.go, pool.go, scan.go): which inputs and outputs the rule
// reads, and its vector-Jacobian product, written with ir's builders on
// inner, so backward functions record nothing (gradients are first order).
// Rules that need a fast path use its kind and let ir.Run pick the inner
// kernel or the decomposition: the max/min reduction gradient is
// ir.KindExtremumGrad, the adjoint of Slice ir.KindSliceScatter, the
// convolution weight gradients ir.KindConv2dWeightGrad and the max-pooling
// gradient ir.KindMaxPool2dGrad. Those kinds, the optimizer steps and the
// creation kinds are run untracked. The cumulative sum's gradient is the
// reverse cumulative sum of the output gradient.
//
// Supports(k, dt) is true for a kind with a gradient rule that is a base
// kind or that inner supports for dt, and for the kinds run untracked. A
// fast-path kind that inner lacks (max pooling on flex) is thus lowered by
// the caller above autodiff, which records the base ops of its
// decomposition; with a kernel it is recorded as one op.
//
// Backward(root) sorts the graph reachable from root topologically, seeds
// the root with ones and gives each node's rule the gradients of its
// outputs (nil for an output that received none), adding the input
// gradients to the parents' in input order and in each tensor's own dtype;
// the result is a *Gradients keyed by tracked tensor.
//
// Only float tensors (F64, F32, Flex32, F16, BF16) are tracked: RequireGrad
// marks a leaf, ops with no tracked input return untracked tensors, and
// integer or Bool outputs (comparisons, ArgMax, casts to ints) are never
// tracked. NoGrad suspends recording on the calling goroutine.
//
// With checkpointing on (the Balanced strategy of Burn), nodes of
// memory-bound kinds (ir.Spec.Cost == ir.MemoryBound: elementwise,
// movement) keep neither their outputs nor their tracked inputs; during
// Backward their op is run again on inner, its inputs refilled from the
// kept constants and the parents' values, recursively back to the nearest
// kept state (a leaf, an untracked constant or the output of a
// compute-bound op, which is always kept). A recomputed value is computed
// once per Backward call and dropped after the last backward step that
// reads it (each value's readers are counted before the pass), so
// recomputation does not bring the memory back during Backward. The
// classification is ir's Spec table (Classify reads it). Gradients are
// bit-identical with and without checkpointing because the inner backend's
// ops are deterministic.
//
// Sources of the derivative conventions: PyTorch's derivatives.yaml (ties of
// max/min split evenly, rem/mod/floor_divide, pow at a zero base, sign and
// rounding with zero gradient) as stated in the Ember design document.
package autodiff
