package cuda

import (
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

func init() {
	backend.Register("cuda", driver{})
}

// driver opens CUDA backends; registered as "cuda" with priority 50.
type driver struct{}

var (
	openMu sync.Mutex
	opened = map[int]*Backend{}
)

// Open returns the backend of GPU id.Index (one per index per process).
// The error wraps backend.ErrBackendUnavailable and says which library is
// missing or which CUDA error occurred.
func (driver) Open(id backend.DeviceID) (backend.Backend, error) {
	openMu.Lock()
	defer openMu.Unlock()
	b, ok := opened[id.Index]
	if !ok {
		var err error
		if b, err = Open(id.Index); err != nil {
			return nil, err
		}
		opened[id.Index] = b
	}
	return b, nil
}

var (
	_ backend.Backend           = (*Backend)(nil)
	_ backend.MemoryManager     = (*Backend)(nil)
	_ backend.PerformanceStater = (*Backend)(nil)
	_ backend.DeviceDescriber   = (*Backend)(nil)
	_ backend.IndexChecker      = (*Backend)(nil)
	_ backend.DivisorChecker    = (*Backend)(nil)
)

// Devices lists every GPU the driver reports (cuda:0, cuda:1, ...); nil
// without a message when libcuda.so.1 is missing or reports no device.
func (driver) Devices() []backend.DeviceID {
	n, err := DeviceCount()
	if err != nil {
		return nil
	}
	out := make([]backend.DeviceID, n)
	for i := range out {
		out[i] = backend.DeviceID{Type: "cuda", Index: i}
	}
	return out
}

// Priority is 50: CUDA is preferred over every other local backend.
func (driver) Priority() int { return 50 }

// DeviceCount returns the number of CUDA GPUs, or an error when libcuda.so.1
// cannot be loaded or initialized.
func DeviceCount() (int, error) {
	if err := cu.Load(); err != nil {
		return 0, err
	}
	return cu.DeviceCount()
}

// DeviceInfo returns GPU i's name and memory in bytes (for `ember
// devices`), without creating a context. The error names the missing
// library or the CUDA error.
func DeviceInfo(i int) (name string, totalBytes uint64, err error) {
	if err := cu.Load(); err != nil {
		return "", 0, err
	}
	d, err := cu.DeviceGet(i)
	if err != nil {
		return "", 0, err
	}
	if name, err = cu.DeviceName(d); err != nil {
		return "", 0, err
	}
	totalBytes, err = cu.DeviceTotalMem(d)
	return name, totalBytes, err
}
