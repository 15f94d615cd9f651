// Package backend defines what an Ember compute backend implements: the
// Backend interface over a small set of primitive ops (creation,
// elementwise unary/binary/where, cast, reductions, movement, matmul and
// convolution), the DType set and its promotion rules, TensorData (host
// values), DeviceID, the Driver registry through which backends register
// themselves like database/sql drivers, and the sentinel errors.
//
// Backend packages (backend/flex, backend/cpu, backend/cuda, ...) import
// this package and never the root ember package; the root package
// validates every call (shapes, dtypes, axes, devices) before it reaches a
// backend, and composes the rest of the user API (softmax, losses, pooling)
// from these primitives. Decorators such as backend/autodiff wrap any
// Backend.
package backend
