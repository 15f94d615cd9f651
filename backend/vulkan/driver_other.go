//go:build !(linux && (amd64 || arm64))

package vulkan

import (
	"fmt"
	"runtime"

	"github.com/emberml/ember/backend"
)

func init() {
	backend.Register("vulkan", unavailable{"vulkan"})
	backend.Register("wgpu", unavailable{"wgpu"})
}

// unavailable is the driver of the "vulkan" and "wgpu" types where the
// backend cannot run: it lists no device and Open says why.
type unavailable struct{ typ string }

// Open reports backend.ErrBackendUnavailable: the backend loads
// libvulkan.so.1 through purego on Linux (amd64, arm64) only.
func (u unavailable) Open(id backend.DeviceID) (backend.Backend, error) {
	return nil, fmt.Errorf("%v: %w: the %s backend runs on Linux (amd64, arm64), where it loads libvulkan.so.1; this build is for %s/%s",
		id, backend.ErrBackendUnavailable, u.typ, runtime.GOOS, runtime.GOARCH)
}

// Devices lists none.
func (unavailable) Devices() []backend.DeviceID { return nil }

// Priority is 30, as on Linux.
func (unavailable) Priority() int { return 30 }
