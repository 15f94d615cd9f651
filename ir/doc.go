// Package ir is the bottom layer of Ember: the element types (DType and its
// promotion rules), host tensor values (TensorData), and operations as
// values.
//
// Every primitive is one Kind with one Spec — its name, group, checkpointing
// cost class, number of inputs and outputs, the Infer function that
// validates an Op and computes its output shape and dtype, and, for kinds
// that are not base kinds, the Decompose function that lowers it into other
// kinds. The same Op value flows from the user's call in the root package,
// through every decorator (autodiff records it), to the backend that
// executes it, so that any consumer of an op stream (a recorder, a fuser,
// a client shipping ops to a server) sees one uniform value. Shape arithmetic
// (broadcasting, convolution and pooling output sizes, padding) lives here
// once; backends receive the output shape in Op.Shape.
//
// Dispatch has one rule (Run): an executor runs the kinds it Supports; for
// any other kind the caller lowers the op with its Spec.Decompose, whose
// sub-ops go through Run again. Base kinds (creation, elementwise, cast,
// reduce, movement, indexing, matmul, convolutions) have no decomposition:
// every backend executes them. Fast paths (fused Adam and SGD steps, max
// pooling and its gradient, the convolution weight gradient, slice
// scatter, the extremum gradient) and newer primitives (CumSum) are
// ordinary kinds with a decomposition, so a backend gains them by adding a
// kernel and loses nothing by lacking one.
//
// Ops, graphs of ops and TensorData have a versioned CBOR encoding
// (encode.go), with validation on decode, for anything that stores or
// ships op streams.
//
// # Adding a primitive
//
// A new primitive touches at most these eight files, tests included
// (CumSum, added this way, touched exactly these):
//
//  1. ir/<group>.go: the Kind constant (the next free value below
//     NumKinds, never renumbered), its Spec registered in init, Infer and,
//     unless every backend gets a kernel, Decompose (ir/scan.go);
//  2. backend/flex/<group>.go: the portable kernel, registered in the flex
//     kernel table from init (backend/flex/scan.go); backend/cpu runs it
//     through flex;
//  3. backend/cuda/ops_<group>.go: the CUDA kernel's source and its
//     registration, if it has one (backend/cuda/ops_scan.go), and
//  4. backend/cuda/kernels_gen_test.go: its source added to the list of
//     kernel sources that are compiled offline;
//  5. backend/autodiff/<group>.go: the gradient rule, registered in the
//     rule table from init (backend/autodiff/scan.go);
//  6. ops_<group>.go in the root package: the public method that builds the
//     op (ops_scan.go);
//  7. table_<group>_test.go: the cross-backend table test against a
//     float64 reference (table_scan_test.go);
//  8. grad_test.go: finite-difference and hand-worked gradient cases.
//
// Nothing else changes: validation, shapes, the checkpointing class, the
// CBOR encoding (the round-trip test covers every registered kind), the
// fallback on backends without a kernel and every decorator follow from
// the Spec (a kind with sub-ops, as Unary, declares their range in
// Spec.FirstSub and Spec.Subs). A backend without a kernel (steps 2 to 4
// skipped) runs the decomposition.
package ir
