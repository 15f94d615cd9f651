// Package cpu is Ember's optimized CPU backend. It registers itself as
// "cpu" (priority 20, above flex) and is built on the portable flex
// backend (backend/flex): it shares flex's tensors, which it reads and
// makes through the host-tensor contract of backend/internal/host, and
// every op its own kernels do not take runs on flex through flex's Exec,
// with identical semantics.
//
// Exec dispatches through the backend's own table of kernels indexed by
// ir.Kind (backend.Kernels), filled in from init by each kernel file.
// Kernels for base kinds hand an op they decline (another dtype, a layout
// they do not take) to flex; kernels for fast-path kinds lower it with the
// kind's decomposition (ir.Spec.Decompose) on this backend. Supports
// reports the table's kinds for the dtypes they accept, and flex's for the
// rest. The kernels:
//
//   - Matmul in F32/Flex32/F64 on the packed SIMD GEMM of internal/gemm
//     (AVX-512 or AVX2+FMA assembly, batched, broadcast batch axes,
//     transposed views passed as transposed operands without copying, small
//     products read in place on one goroutine); F16 and BF16 through
//     float32.
//   - Conv2d, ConvTranspose2d (which autodiff also uses for the input
//     gradients of both) and Conv2dWeightGrad in float32 with unit stride
//     and enough channels for a vector (the MNIST CNN's layers among
//     them) as direct, implicit-GEMM convolutions (convdirect*.go): the
//     offset-table tile kernels of internal/gemm (Stile, Sdot) read image
//     rows and channel vectors where they lie, so no column matrix is
//     built; results do not depend on the worker count. Float32 conv2d
//     and conv_transpose2d with 5×5 kernels, unit stride, one group and
//     at least 16 channels each way run as Winograd F(4×4, 5×5)
//     convolutions instead (convwino*.go, internal/winograd: 64
//     multiplications per 4×4 tile and channel pair instead of 400; their
//     rounding error is larger, up to about 4e-6 of max(|y|, Σ|x·w|, 1)
//     on random inputs; results holding Inf or NaN are computed again on
//     the direct kernels; WinogradEnv switches them off, or with "all"
//     also runs the weight gradient of such a conv2d on the dual
//     algorithm F(5×5, 4×4), less precise for weights whose terms cancel
//     and for inputs with rare large values, hence opt-in). Other shapes and
//     dtypes use im2col/col2im plus the GEMM, the images of a batch spread
//     over the workers and small images batched side by side into one
//     product.
//   - The gradient kinds that have decompositions in ir:
//     Conv2dWeightGrad (outside the direct path one GEMM per group and
//     image batch, per-worker partial sums added in a fixed order),
//     SliceScatter (the adjoint of Slice, as in a pooling window's
//     gradient) and ExtremumGrad (the max/min reduction gradient in one
//     fused pass), for the float dtypes.
//   - MaxPool2d and MaxPool2dGrad in F32, Flex32 and F64: direct loops over
//     the N·C planes (AVX2 kernels for contiguous float32 2×2 windows of
//     stride 2), bit-identical to the decompositions (strided views, Cat,
//     ReduceMax, and their gradient).
//   - Float32 elementwise Add, Sub, Mul, Div, Max, Min, the comparisons,
//     Where, Neg, Abs, Exp, Log, Sqrt, Rsqrt, Recip, Tanh, Sigmoid and Erf
//     (a vector erf bit-identical to math.Erf's rounded result), the
//     Bool to F32 Cast, and the Sum/Max/Min reductions along the last axis
//     (and full reductions), on contiguous operands broadcast as a full
//     tensor, a trailing row, a leading column, a middle block (a
//     per-channel bias) or a scalar, in cache-sized chunks on the
//     persistent worker pool of internal/workers; Cat of F32/F64 strided
//     views.
//
// Outputs of these kernels come from a recycling allocator: buffers return
// to size-class free lists through a finalizer once no tensor or view uses
// them, so training loops reuse memory instead of allocating, and garbage
// collections become rarer. The backend also measures its own throughput
// (backend.PerformanceStater) for `ember devices --stats`.
//
// Numerics follow flex (and so PyTorch): float32 sums accumulate in
// float64, transcendental functions compute in float64 and round once,
// Max/Min propagate NaN. Products and convolutions use fused multiply-adds
// in float32, so they differ from flex by rounding only.
package cpu
