// Package autodiff is a decorator that adds reverse-mode automatic
// differentiation to any backend.Backend, in the manner of Burn's
// burn-autodiff.
//
// New(inner, checkpointing) returns a *Backend that runs every primitive on
// inner and, when at least one float input is tracked, records a node for
// the output: the node points at its parents' nodes and holds a backward
// function (the op's vector-Jacobian product, computed with inner's own
// primitives). There is no global tape: the graph lives in the tensors, so
// when the program drops the last tensor of a step its whole graph is
// garbage collected. Where inner implements one of the optional gradient
// kernels of package backend (Conv2dWeightGrader for convolution weight
// gradients, SliceScatterer for the adjoint of Slice, ExtremumGrader for
// the max/min reduction gradient), the backward function calls it instead
// of composing the same gradient from primitives. Backend also implements
// backend.MaxPool2der when its inner backend does (SupportsMaxPool2d
// delegates): MaxPool2d runs the inner kernel and records a node whose
// backward is the inner MaxPool2dGrad. Backward(root) sorts the graph reachable from root
// topologically, seeds the root with ones and accumulates each tensor's
// gradient in the tensor's own dtype; the result is a *Gradients keyed by
// tracked tensor.
//
// Only float tensors (F64, F32, Flex32, F16, BF16) are tracked: RequireGrad
// marks a leaf, ops with no tracked input return untracked tensors, and
// integer or Bool outputs (comparisons, ArgMax, casts to ints) are never
// tracked. Creation ops return untracked tensors. NoGrad suspends recording
// process-wide. Gradients are first order only: backward functions run on the
// inner backend and record nothing.
//
// With checkpointing on (the Balanced strategy of Burn), nodes of
// memory-bound ops (elementwise, movement) keep neither their output nor
// their tracked inputs; during Backward they recompute what they need from
// the nearest kept state (a leaf, an untracked constant or the output of a
// compute-bound op, which is always kept). A recomputed value is computed
// once per Backward call and dropped after the last backward step that
// reads it (each value's readers are counted before the pass), so
// recomputation does not bring the memory back during Backward. The
// classification is the table in strategy.go. Gradients are bit-identical with and without
// checkpointing because the inner backend's ops are deterministic.
//
// Sources of the derivative conventions: PyTorch's derivatives.yaml (ties of
// max/min split evenly, rem/mod/floor_divide, pow at a zero base, sign and
// rounding with zero gradient) as stated in the Ember design document.
package autodiff
