//go:build linux && (amd64 || arm64)

package vulkan

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
)

// Adapter describes one Vulkan physical device as the loader lists it
// (an "adapter" in WebGPU's terms): its kind ("discrete", "integrated",
// "virtual", "cpu" or "other"), its index among the adapters of that
// kind, in the loader's order, its name and driver, and its device-local
// memory in bytes. Unusable says why the backend cannot run on it (a
// Vulkan version or feature it lacks), nil when it can.
type Adapter struct {
	Kind     string
	Index    int
	Name     string
	Driver   string
	API      string
	Memory   uint64
	Unusable error

	pd       vk.PhysicalDevice
	props    *vk.PhysicalDeviceProperties
	features *vk.Features
	exts     []string
	memProps *vk.PhysicalDeviceMemoryProperties
	subgroup uint32
}

// Software reports whether the adapter runs on the CPU
// (VK_PHYSICAL_DEVICE_TYPE_CPU: Mesa's lavapipe, SwiftShader).
func (a *Adapter) Software() bool { return a.Kind == "cpu" }

// ID returns the adapter's DeviceID for backend typ ("vulkan" or "wgpu").
func (a *Adapter) ID(typ string) backend.DeviceID {
	return backend.DeviceID{Type: typ, Kind: a.Kind, Index: a.Index}
}

// LibraryEnv names the environment variable that overrides the loader
// library Open loads (default libvulkan.so.1).
const LibraryEnv = "EMBER_VULKAN_LIBRARY"

var (
	instOnce sync.Once
	inst     *vk.InstanceAPI
	adapters []*Adapter
	instErr  error
)

// minAPI is the Vulkan version the backend needs (1.2: the Vulkan 1.1 and
// 1.2 feature structs, SPIR-V 1.5).
var minAPI = vk.MakeAPIVersion(1, 2, 0)

// Adapters loads the Vulkan loader, creates the process's instance and
// lists its physical devices; the error says why Vulkan is unavailable
// (no loader, no driver, a loader older than 1.2). The list is made once
// per process.
func Adapters() ([]*Adapter, error) {
	instOnce.Do(func() { adapters, instErr = listAdapters() })
	return adapters, instErr
}

func listAdapters() ([]*Adapter, error) {
	if err := vk.Load(os.Getenv(LibraryEnv)); err != nil {
		return nil, err
	}
	if v := vk.InstanceVersion(); v < minAPI {
		return nil, fmt.Errorf("the Vulkan loader has version %s; Vulkan 1.2 or newer is needed", vk.APIVersionString(v))
	}
	var err error
	inst, err = vk.CreateInstance("ember", vk.MakeAPIVersion(1, 3, 0))
	if err != nil {
		return nil, fmt.Errorf("creating a Vulkan instance (is a Vulkan driver installed? Debian: mesa-vulkan-drivers): %w", err)
	}
	pds, err := inst.PhysicalDevices()
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	var out []*Adapter
	for _, pd := range pds {
		p := inst.Properties(pd)
		a := &Adapter{pd: pd, props: p, Name: p.Name(), API: vk.APIVersionString(p.APIVersion)}
		a.Kind = kindName(p.DeviceType)
		a.Index = counts[a.Kind]
		counts[a.Kind]++
		a.memProps = inst.MemoryProperties(pd)
		for i := range a.memProps.MemoryHeapCount {
			if h := a.memProps.MemoryHeaps[i]; h.Flags&vk.MemoryHeapDeviceLocal != 0 {
				a.Memory = max(a.Memory, h.Size)
			}
		}
		if p.APIVersion < minAPI {
			a.Unusable = fmt.Errorf("%s supports Vulkan %s; 1.2 or newer is needed", a.Name, a.API)
			out = append(out, a)
			continue
		}
		drv, sg := inst.DriverProperties(pd)
		a.Driver = strings.TrimSpace(cString(drv.DriverName[:]) + " " + cString(drv.DriverInfo[:]))
		a.subgroup = sg
		a.features = inst.Features(pd)
		a.exts, _ = inst.DeviceExtensions(pd)
		a.Unusable = a.checkFeatures()
		out = append(out, a)
	}
	return out, nil
}

// checkFeatures returns why the backend cannot run on a: it needs 64-bit
// integers (indices are I64), double precision (float functions are
// computed in double, as backend/flex computes them), 8- and 16-bit
// storage buffers (Bool, the 8- and 16-bit dtypes) and a compute queue.
func (a *Adapter) checkFeatures() error {
	var missing []string
	f := a.features
	if f.Core.Features[vk.FeatureShaderInt64] == 0 {
		missing = append(missing, "shaderInt64")
	}
	if f.Core.Features[vk.FeatureShaderFloat64] == 0 {
		missing = append(missing, "shaderFloat64")
	}
	if f.V12.Bools[vk.Feature12StorageBuffer8BitAccess] == 0 {
		missing = append(missing, "storageBuffer8BitAccess")
	}
	if f.V11.Bools[vk.Feature11StorageBuffer16BitAccess] == 0 {
		missing = append(missing, "storageBuffer16BitAccess")
	}
	if _, ok := a.computeFamily(); !ok {
		missing = append(missing, "a compute queue")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s, which the Vulkan backend needs", a.Name, strings.Join(missing, ", "))
	}
	return nil
}

// computeFamily returns the queue family the backend submits to: one
// with compute, preferring a compute-only family (an asynchronous compute
// queue) over a graphics one.
func (a *Adapter) computeFamily() (uint32, bool) {
	fams := inst.QueueFamilies(a.pd)
	best, ok := uint32(0), false
	for i, f := range fams {
		if f.QueueFlags&vk.QueueCompute == 0 || f.QueueCount == 0 {
			continue
		}
		if !ok || f.QueueFlags&vk.QueueGraphics == 0 {
			best, ok = uint32(i), true
		}
	}
	return best, ok
}

// HasF64 reports whether shaders on the adapter can use double precision
// (shaderFloat64).
func (a *Adapter) HasF64() bool {
	return a.features != nil && a.features.Core.Features[vk.FeatureShaderFloat64] != 0
}

// HasF16 reports whether the adapter has shaderFloat16.
func (a *Adapter) HasF16() bool {
	return a.features != nil && a.features.V12.Bools[vk.Feature12ShaderFloat16] != 0
}

// HasExtension reports whether the adapter has the device extension name.
func (a *Adapter) HasExtension(name string) bool { return slices.Contains(a.exts, name) }

func kindName(t uint32) string {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGPU:
		return "discrete"
	case vk.PhysicalDeviceTypeIntegratedGPU:
		return "integrated"
	case vk.PhysicalDeviceTypeVirtualGPU:
		return "virtual"
	case vk.PhysicalDeviceTypeCPU:
		return "cpu"
	}
	return "other"
}

func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// defaultOrder is the preference of DefaultKind: hardware first, the
// software adapter last.
var defaultOrder = []string{"discrete", "integrated", "virtual", "other", "cpu"}

// selectAdapter returns the adapter a DeviceID names: the Index-th usable
// adapter of its Kind ("cpu" has one, index 0), or for Kind "default"
// the first usable adapter in defaultOrder. "existing" (an adapter the
// program created itself, Burn's WgpuDevice::Existing) is not supported.
func selectAdapter(id backend.DeviceID) (*Adapter, error) {
	if id.Kind == "existing" {
		return nil, fmt.Errorf("Existing(%d) is not supported by the Vulkan backend: it creates its own VkInstance and VkDevice and cannot adopt one made by the program; use DiscreteGPU, IntegratedGPU, VirtualGPU, KindCPU or DefaultKind", id.Index)
	}
	as, err := Adapters()
	if err != nil {
		return nil, err
	}
	switch id.Kind {
	case "default", "":
		var why []string
		for _, k := range defaultOrder {
			for _, a := range as {
				if a.Kind != k {
					continue
				}
				if a.Unusable == nil {
					return a, nil
				}
				why = append(why, a.Unusable.Error())
			}
		}
		if len(as) == 0 {
			return nil, fmt.Errorf("the Vulkan loader lists no adapter (install a driver; Debian: mesa-vulkan-drivers)")
		}
		return nil, fmt.Errorf("no usable Vulkan adapter: %s", strings.Join(why, "; "))
	}
	var list []string
	for _, a := range as {
		list = append(list, fmt.Sprintf("%s:%d (%s)", a.Kind, a.Index, a.Name))
		if a.Kind == id.Kind && a.Index == id.Index {
			if a.Unusable != nil {
				return nil, a.Unusable
			}
			return a, nil
		}
	}
	have := "none"
	if len(list) > 0 {
		have = strings.Join(list, ", ")
	}
	return nil, fmt.Errorf("no %s adapter with index %d (adapters: %s)", id.Kind, id.Index, have)
}
