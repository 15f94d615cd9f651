//go:build libtorch && cgo

package libtorch

import "github.com/emberml/ember/backend"

// Priority is the driver's DefaultDevice priority: below flex's 10, so
// that a build with the libtorch tag never picks libtorch by default.
const Priority = 5

func init() { backend.Register("libtorch", Driver{}) }

// Driver opens libtorch backends; it implements backend.Driver and
// backend.SingleDeviceDriver (the CPU device is named "libtorch").
type Driver struct{}

// Open returns a new backend for id (see New).
func (Driver) Open(id backend.DeviceID) (backend.Backend, error) { return New(id) }

// Devices lists the CPU device ("libtorch"), then the CUDA devices
// ("libtorch:cuda:N") and the MPS device ("libtorch:mps:0") where this
// libtorch build has them and the machine too.
func (Driver) Devices() []backend.DeviceID {
	ids := []backend.DeviceID{{Type: "libtorch"}}
	for i := range cudaCount() {
		ids = append(ids, backend.DeviceID{Type: "libtorch", Kind: "cuda", Index: i})
	}
	if hasMPS() {
		ids = append(ids, backend.DeviceID{Type: "libtorch", Kind: "mps"})
	}
	return ids
}

// Priority returns Priority.
func (Driver) Priority() int { return Priority }

// SingleDevice reports true: the CPU device prints as "libtorch", the
// others with their kind ("libtorch:cuda:0").
func (Driver) SingleDevice() bool { return true }
