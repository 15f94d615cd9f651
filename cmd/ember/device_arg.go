package main

import "github.com/emberml/ember"

// kindConstructors are the graphics-API backends whose bare type name the
// command accepts as a device: "vulkan" is Vulkan(DefaultKind), the
// backend's preferred adapter (or the one EMBER_WGPU_DEFAULT_DEVICE
// names), as PyTorch's "cuda" names the current CUDA device.
var kindConstructors = map[string]func(ember.DeviceKind) ember.Device{
	"vulkan": ember.Vulkan, "wgpu": ember.WGPU, "metal": ember.Metal, "webgpu": ember.WebGPU,
}

// parseDeviceArg parses a --device value or EMBER_DEVICE: any name
// ember.ParseDevice accepts (with "+autodiff" suffixes), or the bare type
// of a graphics-API backend ("vulkan", "wgpu", "metal", "webgpu"), which
// selects its DefaultKind adapter.
func parseDeviceArg(name string) (ember.Device, error) {
	if ctor, ok := kindConstructors[name]; ok {
		return ctor(ember.DefaultKind), nil
	}
	return ember.ParseDevice(name)
}
