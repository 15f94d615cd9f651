package ember

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/emberml/ember/backend"
)

// DeviceKind selects a GPU adapter for the graphics-API backends (WGPU,
// Vulkan, Metal, WebGPU), as Burn's WgpuDevice: DiscreteGPU(i),
// IntegratedGPU(i), VirtualGPU(i), KindCPU, DefaultKind or Existing(id).
type DeviceKind struct {
	name  string
	index int
}

// DiscreteGPU is the i-th discrete GPU.
func DiscreteGPU(i DeviceIndex) DeviceKind { return DeviceKind{"discrete", i.resolve()} }

// IntegratedGPU is the i-th integrated GPU.
func IntegratedGPU(i DeviceIndex) DeviceKind { return DeviceKind{"integrated", i.resolve()} }

// VirtualGPU is the i-th virtual GPU.
func VirtualGPU(i DeviceIndex) DeviceKind { return DeviceKind{"virtual", i.resolve()} }

// Existing names a device already created by the program, by its id.
func Existing(id int) DeviceKind {
	if id < 0 {
		panic(&Error{Op: "device", Msg: fmt.Sprintf("device index must be non-negative (got %d)", id)})
	}
	return DeviceKind{"existing", id}
}

var (
	// KindCPU is a software (CPU) adapter of the graphics API.
	KindCPU = DeviceKind{"cpu", 0}
	// DefaultKind is the backend's preferred adapter, or the one named by
	// EMBER_WGPU_DEFAULT_DEVICE, spelled like the variants ("discrete:0",
	// "integrated:1", "virtual:0", "cpu", "existing:3").
	DefaultKind = DeviceKind{"default", 0}
)

// String prints "discrete:0", "cpu", "default", ...
func (k DeviceKind) String() string {
	if k.name == "cpu" || k.name == "default" {
		return k.name
	}
	return k.name + ":" + strconv.Itoa(k.index)
}

func kindDevice(typ string, k DeviceKind) Device {
	if k.name == "" {
		k = DefaultKind
	}
	if k.name == "default" {
		if env := os.Getenv("EMBER_WGPU_DEFAULT_DEVICE"); env != "" {
			if parsed, err := parseKind(env); err == nil {
				k = parsed
			} else {
				fmt.Fprintf(os.Stderr, "ember: ignoring EMBER_WGPU_DEFAULT_DEVICE: %v\n", err)
			}
		}
	}
	return deviceFor(backend.DeviceID{Type: typ, Kind: k.name, Index: k.index})
}

// parseKind parses an EMBER_WGPU_DEFAULT_DEVICE value, spelled like the
// DeviceKind variants print: "discrete:0", "integrated:1", "virtual:0",
// "existing:3" (an index without sign or leading zeros), "cpu" or
// "default" (no index). Anything else is an error naming s.
func parseKind(s string) (DeviceKind, error) {
	name, idx, hasIdx := strings.Cut(s, ":")
	k, err := parseKindParts(name, idx, hasIdx, false)
	if err != nil {
		return DeviceKind{}, fmt.Errorf("device kind %q: %w", s, err)
	}
	return k, nil
}

// DeviceType names a backend type for Enumerate. RemoteWebSocketType(addr)
// names the devices of one Ember server.
type DeviceType struct {
	name string
	addr string
}

// The local device types.
var (
	TypeCPU      = DeviceType{name: "cpu"}
	TypeCUDA     = DeviceType{name: "cuda"}
	TypeROCm     = DeviceType{name: "rocm"}
	TypeWGPU     = DeviceType{name: "wgpu"}
	TypeVulkan   = DeviceType{name: "vulkan"}
	TypeMetal    = DeviceType{name: "metal"}
	TypeWebGPU   = DeviceType{name: "webgpu"}
	TypeFlex     = DeviceType{name: "flex"}
	TypeNdArray  = DeviceType{name: "ndarray"}
	TypeLibTorch = DeviceType{name: "libtorch"}
)

// RemoteWebSocketType names the devices hosted by the Ember server at addr
// (spelled as RemoteWebSocket takes it: "ws://host:3000", "host:3000",
// "wss://host"). Enumerate connects to the server and lists every device
// it hosts.
func RemoteWebSocketType(addr string) DeviceType {
	id := webSocketID(addr, 0)
	return DeviceType{name: id.Type, addr: id.Addr}
}

// String returns the backend type name ("cuda", "remote+ws://host:3000").
func (t DeviceType) String() string {
	if t.addr != "" {
		return t.name + "://" + t.addr
	}
	return t.name
}

// Devices is a list of devices, as Enumerate returns.
type Devices []Device

// Autodiff returns the devices with autodiff enabled (panics if one already has it).
func (ds Devices) Autodiff() Devices {
	out := make(Devices, len(ds))
	for i, d := range ds {
		out[i] = d.Autodiff()
	}
	return out
}

// Configure applies cfg to every device and returns the errors joined (a
// device that fails does not stop the others).
func (ds Devices) Configure(cfg DeviceConfig) error {
	var errs []error
	for _, d := range ds {
		if err := d.Configure(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// Enumerate lists the present devices of the given types (all registered
// local types when none is given), ordered by backend priority (best
// first) then index. Devices whose backend is missing are not listed. A
// remote type (RemoteWebSocketType, RemoteQUICType) connects to its server
// and lists every device the server hosts, in the server's index order,
// after the local ones (none when the server cannot be reached).
func Enumerate(filter ...DeviceType) Devices {
	names := backend.Drivers()
	var remotes []DeviceType
	if len(filter) > 0 {
		names = names[:0:0]
		for _, t := range filter {
			if t.addr != "" {
				remotes = append(remotes, t)
				continue
			}
			names = append(names, t.name)
		}
	}
	type entry struct {
		prio int
		id   backend.DeviceID
	}
	var es []entry
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		drv, ok := backend.Lookup(n)
		if !ok {
			continue
		}
		for _, id := range drv.Devices() {
			es = append(es, entry{backend.PriorityOf(drv, id), id})
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].prio != es[j].prio {
			return es[i].prio > es[j].prio
		}
		return es[i].id.Index < es[j].id.Index
	})
	out := make(Devices, len(es))
	for i, e := range es {
		out[i] = deviceFor(e.id)
	}
	for _, t := range remotes {
		out = append(out, remoteDevices(t)...)
	}
	return out
}

// DeviceInfo describes a device's hardware: model name and memory in bytes
// (0 where unknown).
type DeviceInfo = backend.DeviceInfo

// Info returns the device's hardware description: the driver's model name
// and memory for GPUs ("NVIDIA H200", 150 GB), the host's memory for the
// CPU backends. It returns the device's init error when it cannot run.
func (d Device) Info() (DeviceInfo, error) {
	st, err := d.tryStack(false)
	if err != nil {
		return DeviceInfo{}, err
	}
	if dd, ok := backend.As[backend.DeviceDescriber](st.top); ok {
		return dd.DeviceInfo(), nil
	}
	return DeviceInfo{Name: d.ID().Type}, nil
}
