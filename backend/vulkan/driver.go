//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"
	"sync"

	"github.com/emberml/ember/backend"
)

func init() {
	backend.Register("vulkan", driver{typ: "vulkan"})
	backend.Register("wgpu", driver{typ: "wgpu"})
}

// driver opens Vulkan backends under the type names "vulkan" and "wgpu"
// (on Linux the portable graphics API is Vulkan: both reach the same
// adapters and share each adapter's device).
type driver struct{ typ string }

var (
	backendsMu sync.Mutex
	backends   = map[backend.DeviceID]*Backend{}
)

// Open returns the backend of id: the adapter its Kind and Index select
// (see selectAdapter), opened once per process and shared by every
// DeviceID that selects it. The error wraps backend.ErrBackendUnavailable
// and says why (no loader, no adapter of that kind, a missing feature,
// Existing).
func (dr driver) Open(id backend.DeviceID) (backend.Backend, error) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b, ok := backends[id]; ok {
		return b, nil
	}
	unavailable := func(err error) (backend.Backend, error) {
		return nil, fmt.Errorf("%v: %w: %w", id, backend.ErrBackendUnavailable, err)
	}
	a, err := selectAdapter(id)
	if err != nil {
		return unavailable(err)
	}
	d, err := openDevice(a)
	if err != nil {
		return unavailable(err)
	}
	b := &Backend{id: id, d: d}
	backends[id] = b
	return b, nil
}

// Devices lists every usable adapter as a DeviceID of this type
// (vulkan:discrete:0, vulkan:cpu:0, ...); nil without a message when the
// loader is missing or lists none.
func (dr driver) Devices() []backend.DeviceID {
	as, err := Adapters()
	if err != nil {
		return nil
	}
	var out []backend.DeviceID
	for _, a := range as {
		if a.Unusable == nil && (a.Kind != "cpu" || a.Index == 0) && a.Kind != "other" {
			out = append(out, a.ID(dr.typ))
		}
	}
	return out
}

// Priority is 30: below cuda and rocm, above cpu.
func (driver) Priority() int { return 30 }

// DevicePriority is Priority for hardware adapters and 5 for a software
// adapter (lavapipe, VK_PHYSICAL_DEVICE_TYPE_CPU): Vulkan on the CPU is
// slower than the cpu backend, so it never displaces it as the default
// device (backend.DevicePrioritizer). Vulkan(DefaultKind) still selects
// the software adapter where it is the only one.
func (dr driver) DevicePriority(id backend.DeviceID) int {
	if id.Kind == "cpu" {
		return 5
	}
	return dr.Priority()
}
