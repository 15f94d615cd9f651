package flex

import "github.com/emberml/ember/backend"

func init() {
	backend.Register("flex", NewDriver("flex", 10))
}

// Driver opens flex backends; it implements backend.Driver. The same
// backend can be registered under several names (the root package also
// registers it as "cpu" when no optimized CPU backend is built).
type Driver struct {
	typeName string
	priority int
}

// NewDriver returns a driver whose single device has DeviceID{Type:
// typeName} and whose DefaultDevice priority is priority (flex uses 10).
func NewDriver(typeName string, priority int) backend.Driver {
	return &Driver{typeName: typeName, priority: priority}
}

// Open returns a new flex backend for id; it never fails.
func (d *Driver) Open(id backend.DeviceID) (backend.Backend, error) { return New(id), nil }

// Devices returns the one device, DeviceID{Type: typeName}.
func (d *Driver) Devices() []backend.DeviceID {
	return []backend.DeviceID{{Type: d.typeName}}
}

// Priority is the priority given to NewDriver.
func (d *Driver) Priority() int { return d.priority }

// SingleDevice reports true: the backend has one device, named by its type
// alone ("flex", not "flex:0").
func (d *Driver) SingleDevice() bool { return true }
