package ndarray

import "github.com/emberml/ember/backend"

// Priority is the driver's DefaultDevice priority, below flex's 10 (and
// every other backend's), so that ndarray is never the default device.
const Priority = 5

func init() { backend.Register("ndarray", Driver{}) }

// Driver opens ndarray backends; it implements backend.Driver and is
// registered under the name "ndarray", replacing the root package's
// placeholder.
type Driver struct{}

// Open returns a new ndarray backend for id; it never fails.
func (Driver) Open(id backend.DeviceID) (backend.Backend, error) { return New(id), nil }

// Devices returns the one device, DeviceID{Type: "ndarray"}.
func (Driver) Devices() []backend.DeviceID { return []backend.DeviceID{{Type: "ndarray"}} }

// Priority returns Priority (5).
func (Driver) Priority() int { return Priority }

// SingleDevice reports true: the backend has one device, named by its type
// alone ("ndarray", not "ndarray:0").
func (Driver) SingleDevice() bool { return true }
