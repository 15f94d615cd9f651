package ember

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/emberml/ember/backend"
)

// Every device type the Device constructors name is a registered driver,
// so that parsing, enumeration and messages take backend names from the
// registry alone. The types whose backend is not part of this build are
// registered here as placeholders: they list no devices and their Open
// explains what is missing. A real backend registered under the same name
// replaces its placeholder (backend.Placeholder), whichever initializes
// first.
var placeholderBackends = []struct {
	name, hint string
	single     bool
}{
	{"rocm", "", false},
	{"wgpu", "", false},
	{"vulkan", "", false},
	{"metal", graphicsHint("metal"), false},
	{"webgpu", graphicsHint("webgpu"), false},
	{"libtorch", " (it needs the libtorch build tag and cgo)", true},
}

// graphicsHint says why a graphics-API backend without an implementation
// here cannot run on this platform: Metal exists on Apple's systems only,
// WebGPU in browsers (js/wasm) only.
func graphicsHint(name string) string {
	switch {
	case name == "metal" && runtime.GOOS != "darwin" && runtime.GOOS != "ios":
		return fmt.Sprintf(", and this platform (%s/%s) has no Metal, Apple's graphics API; use Vulkan or WGPU", runtime.GOOS, runtime.GOARCH)
	case name == "webgpu" && runtime.GOOS != "js":
		return fmt.Sprintf(", and this platform (%s/%s) has no WebGPU, the browsers' graphics API; use Vulkan or WGPU", runtime.GOOS, runtime.GOARCH)
	}
	return ""
}

func init() {
	for _, p := range placeholderBackends {
		backend.RegisterPlaceholder(p.name, missingDriver{why: "the " + p.name + " backend is not part of this build" + p.hint, single: p.single})
	}
}

// missingDriver is the placeholder driver of a backend this build lacks.
type missingDriver struct {
	why    string
	single bool
}

// SingleDevice reports whether the backend has one device (libtorch),
// which prints without an index.
func (m missingDriver) SingleDevice() bool { return m.single }

// Open reports ErrBackendUnavailable with the reason.
func (m missingDriver) Open(id backend.DeviceID) (backend.Backend, error) {
	return nil, fmt.Errorf("%w: %s", ErrBackendUnavailable, m.why)
}

// Devices lists none.
func (missingDriver) Devices() []backend.DeviceID { return nil }

// Priority is the lowest.
func (missingDriver) Priority() int { return 0 }

// Placeholder reports true: a real driver of the same name replaces it.
func (missingDriver) Placeholder() bool { return true }

// The states of the two single-device CPU backends, looked up once (CPU()
// and Flex() are called often).
var (
	cpuOnce, flexOnce sync.Once
	cpuSt, flexSt     *deviceState
)

func cpuState() *deviceState {
	cpuOnce.Do(func() { cpuSt = stateFor(backend.DeviceID{Type: "cpu"}) })
	return cpuSt
}

func flexState() *deviceState {
	flexOnce.Do(func() { flexSt = stateFor(backend.DeviceID{Type: "flex"}) })
	return flexSt
}
