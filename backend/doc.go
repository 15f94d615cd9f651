// Package backend defines what an Ember compute backend implements: the
// Backend interface — a handful of device methods plus Supports and Exec,
// through which every operation arrives as an ir.Op value — DeviceID, the
// Driver registry through which backends register themselves like
// database/sql drivers, the device capabilities a backend may offer
// (MemoryManager, PerformanceStater, DeviceDescriber, IndexChecker,
// DivisorChecker), the sentinel errors, and Kernels, the kernel table
// backends dispatch Exec through. The element types and host values
// (DType, TensorData) are package ir's, re-exported here.
//
// Backend packages (backend/flex, backend/cpu, backend/cuda, ...) import
// this package and ir, never the root ember package. The root package
// validates every call and infers each op's output shape (ir.Op.Infer)
// before it reaches a backend, and composes the rest of the user API
// (softmax, losses) from the primitives. A backend executes the base kinds
// and whichever fast-path kinds it has kernels for; ir.Run lowers the
// others with their decompositions.
//
// Decorators such as backend/autodiff wrap any Backend and implement
// Wrapper; As finds a capability or a decorator anywhere in the chain, as
// errors.As does for errors.
//
// Tensor lifetimes follow Go's: a backend whose tensors hold resources
// beyond Go memory (device buffers, remote handles) releases them when its
// own handle object becomes unreachable (runtime.AddCleanup). Decorators
// and the root package hold inner tensors only through the objects they
// wrap, so the last holder at any layer letting go of a tensor is what
// releases it.
package backend
