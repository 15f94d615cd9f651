// Package vulkan is Ember's GPU backend through Vulkan compute shaders. It
// loads the Vulkan loader (libvulkan.so.1, or the file
// EMBER_VULKAN_LIBRARY names) at run time with purego, so it builds with
// CGO_ENABLED=0 and the binary runs on machines without Vulkan (the
// backend then lists no device). It registers the device types "vulkan"
// and "wgpu" (on Linux the portable graphics API is Vulkan: both reach the
// same adapters); outside Linux on amd64 and arm64 both types list no
// device and Init says the backend cannot run there.
//
// # Adapters
//
// Every physical device the loader lists is an adapter of a kind:
// "discrete", "integrated", "virtual", "cpu" (a software rasterizer such as
// Mesa's lavapipe) or "other". A DeviceID selects one by kind and index
// ("vulkan:discrete:0" is the first discrete GPU in the loader's order,
// "vulkan:cpu:0" the software adapter); Kind "default" takes the first
// usable adapter of discrete, integrated, virtual, other and cpu, in that
// order, and "existing" (an adapter the program created itself) is not
// supported. The backend needs Vulkan 1.2, 64-bit integers (shaderInt64),
// 8- and 16-bit storage buffers and double precision (shaderFloat64);
// Adapters lists what each adapter lacks. The driver's priority is 30
// (below cuda and rocm, above cpu), except for software adapters: their
// priority is 5 (backend.DevicePrioritizer), so lavapipe never becomes the
// automatic DefaultDevice in place of the faster cpu backend, while
// Vulkan(DefaultKind) still selects it where it is the only adapter.
//
// # Execution
//
// One Backend per DeviceID; the backends naming one adapter share its
// device: one compute queue, a caching allocator, pipelines and command
// batches. Operations record dispatches into the current batch (one
// command buffer, descriptor pool and parameter block), each followed by
// a global memory barrier, so work runs in program order; a batch is
// submitted with a fence when it holds 256 dispatches or its dispatches
// bind 256 MiB (the device then runs large operations while the next are
// recorded), on Flush, and before anything waits (Sync, ToData). Sync waits for every fence; a lost
// device (VK_ERROR_DEVICE_LOST) is reported as an error wrapping
// backend.ErrExecution and stays: every later operation fails with it.
// Uploads go through host-visible staging buffers and copy commands;
// reads copy straight from memory the host sees (integrated and software
// adapters) or through a staging buffer.
//
// # Shaders
//
// Kernels are GLSL compute shaders (shaders/*.comp), compiled by glslc into
// SPIR-V variants (one per dtype or element width) by go generate, which
// runs internal/spirv/gen; the .spv files are committed and embedded, and
// a test checks that regenerating them gives the same bytes. The op is a
// specialization constant, so each pipeline is compiled by the driver for
// one op; pipelines are cached per shader and constants, and the
// driver's pipeline cache is kept under os.UserCacheDir()/ember/vulkan
// (EMBER_VULKAN_CACHE=0 turns that off).
//
// Every base kind has a kernel (elementwise, cast, reductions, movement,
// gather/scatter/index-select, matmul, conv2d and conv-transpose2d,
// creation and random); the fast-path kinds are lowered by their
// ir.Spec.Decompose. Semantics are backend/flex's: float functions are
// computed in double and rounded once (shaders/dmath.glsl ports Go's
// math), F16 and BF16 are stored as 16 bits and computed in float32 with
// round-to-nearest-even conversions that are bit-exact with package ir's,
// casts truncate and saturate, integer division follows Go, Max/Min and
// the Arg reductions propagate NaN, reductions and scatter-add sum in a
// fixed order (results are deterministic). F32 matmuls of at least 64
// rows and columns (every F32 matmul on a software adapter) run a
// register-blocked kernel (128×128 blocks, 8×8 per invocation, 16-byte
// loads); the others a shared-memory tiled one. F32 convolutions run as
// matrix products (im2col; the transposed weight and col2im), the other
// dtypes' one invocation per output element.
//
// Memory comes from a caching allocator with the cuda backend's sliced
// pools (backend.MemoryManager): pages of VkDeviceMemory, each with one
// VkBuffer, carved into 256-byte-aligned slices bound as storage-buffer
// ranges. A tensor is limited to the largest range the device binds
// (maxStorageBufferRange: 128 MiB on lavapipe, 4 GiB on most GPUs).
package vulkan

//go:generate go run ./internal/spirv/gen -src shaders -out spv
