//go:build linux && (amd64 || arm64)

package ember

// The CUDA backend ("cuda", NVIDIA GPUs, priority 50) loads libcuda,
// NVRTC and cuBLAS at run time through purego, which it needs on Linux;
// elsewhere CUDA(i) is a device whose Init says the backend is not part of
// the build.
import _ "github.com/emberml/ember/backend/cuda"
