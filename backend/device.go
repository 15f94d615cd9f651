package backend

import (
	"fmt"
	"sort"
	"sync"
)

// DeviceID identifies one device of one backend. Type is the backend's
// registered name ("flex", "cpu", "cuda", "vulkan", "remote+ws", ...); Index
// is the device's index within that backend (0 for single-device backends);
// Kind is the adapter kind for graphics-API backends ("discrete",
// "integrated", "virtual", "cpu", "default", "existing"), empty otherwise;
// Addr is the server address for remote devices, empty otherwise.
type DeviceID struct {
	Type  string
	Index int
	Kind  string
	Addr  string
}

// String prints the parseable device name: "flex", "cpu", "cuda:1",
// "vulkan:discrete:0", "remote+ws://host:3000/0". Device 0 of a type whose
// registered driver is a SingleDeviceDriver prints as the bare type name.
func (id DeviceID) String() string {
	switch {
	case id.Addr != "":
		return fmt.Sprintf("%s://%s/%d", id.Type, id.Addr, id.Index)
	case id.Kind != "":
		return fmt.Sprintf("%s:%s:%d", id.Type, id.Kind, id.Index)
	case id.Index == 0:
		if d, ok := Lookup(id.Type); ok {
			if s, ok := d.(SingleDeviceDriver); ok && s.SingleDevice() {
				return id.Type
			}
		}
	}
	return fmt.Sprintf("%s:%d", id.Type, id.Index)
}

// SingleDeviceDriver is implemented by drivers whose backend has exactly
// one device (cpu, flex): its DeviceID prints as the bare type name, "cpu"
// rather than "cpu:0".
type SingleDeviceDriver interface {
	// SingleDevice reports whether the backend has exactly one device.
	SingleDevice() bool
}

// Driver creates backends of one type, as database/sql's drivers create
// connections. A backend package registers its driver in an init function;
// a third party can register its own under a new name.
type Driver interface {
	// Open initializes the device (loads libraries, creates contexts,
	// connects) and returns its backend, or an error that says why the
	// device cannot run. The root package calls Open at most once per
	// DeviceID and caches the result, including a failure.
	Open(id DeviceID) (Backend, error)
	// Devices lists the devices of this type present on this machine
	// (nil when none, or when the backend's library is missing).
	Devices() []DeviceID
	// Priority orders backends for DefaultDevice: the highest present
	// backend wins (cuda 50, rocm 40, vulkan 30, cpu 20, flex 10).
	Priority() int
}

// DevicePrioritizer is implemented by drivers whose devices differ in
// priority: DefaultDevice and Enumerate rank each device by
// DevicePriority(id) instead of the driver's Priority. The Vulkan driver
// ranks a software adapter (lavapipe, a CPU running Vulkan) below the cpu
// backend this way, so that it is never the automatic default.
type DevicePrioritizer interface {
	// DevicePriority returns the priority of device id, one of the
	// driver's Devices.
	DevicePriority(id DeviceID) int
}

// PriorityOf returns the priority of device id of driver d: its
// DevicePriority where d is a DevicePrioritizer, else d.Priority().
func PriorityOf(d Driver, id DeviceID) int {
	if p, ok := d.(DevicePrioritizer); ok {
		return p.DevicePriority(id)
	}
	return d.Priority()
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a driver available under name. It panics if name is
// already registered by another real driver, or d is nil, as
// database/sql.Register does; a placeholder (see Placeholder) registered
// under name is replaced.
func Register(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("ember/backend: Register driver is nil")
	}
	if old, dup := drivers[name]; dup && !isPlaceholder(old) {
		panic("ember/backend: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Placeholder is implemented by the drivers the root package registers
// for the device types its constructors name but this build lacks (their
// Open says so). A real driver registered under the same name replaces
// the placeholder, whatever the order of package initialization.
type Placeholder interface {
	Placeholder() bool
}

func isPlaceholder(d Driver) bool {
	p, ok := d.(Placeholder)
	return ok && p.Placeholder()
}

// RegisterPlaceholder registers d under name unless a driver is already
// registered there (d must be a Placeholder).
func RegisterPlaceholder(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if !isPlaceholder(d) {
		panic("ember/backend: RegisterPlaceholder with a driver that is not a placeholder")
	}
	if _, ok := drivers[name]; !ok {
		drivers[name] = d
	}
}

// Lookup returns the driver registered under name.
func Lookup(name string) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[name]
	return d, ok
}

// Drivers returns the sorted names of the registered drivers.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
