//go:build linux && (amd64 || arm64)

package vk

import (
	"fmt"
	"unsafe"
)

// InstanceAPI is a VkInstance with its instance-level entry points.
type InstanceAPI struct {
	Handle Instance

	destroy, enumPhysical, getProperties, getProperties2  uintptr
	getFeatures2, getMemoryProperties, getQueueFamilies   uintptr
	enumDeviceExtensions, createDevice, getDeviceProcAddr uintptr
}

// InstanceVersion returns the loader's Vulkan version
// (vkEnumerateInstanceVersion; 1.0 when the loader predates it).
func InstanceVersion() uint32 {
	if pEnumerateInstanceVersion == 0 {
		return MakeAPIVersion(1, 0, 0)
	}
	var v uint32
	if call(pEnumerateInstanceVersion, uintptr(unsafe.Pointer(&v))) != Success {
		return MakeAPIVersion(1, 0, 0)
	}
	return v
}

// CreateInstance creates a Vulkan instance for the application named app
// asking for apiVersion, without layers or extensions, and resolves the
// instance-level entry points.
func CreateInstance(app string, apiVersion uint32) (*InstanceAPI, error) {
	name := cstr(app)
	ai := &ApplicationInfo{SType: StructureTypeApplicationInfo, PApplicationName: &name[0],
		PEngineName: &name[0], APIVersion: apiVersion}
	ci := &InstanceCreateInfo{SType: StructureTypeInstanceCreateInfo, PApplicationInfo: ai}
	var h Instance
	if err := check("vkCreateInstance", call(pCreateInstance, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&h)))); err != nil {
		return nil, err
	}
	in := &InstanceAPI{Handle: h}
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&in.destroy, "vkDestroyInstance"}, {&in.enumPhysical, "vkEnumeratePhysicalDevices"},
		{&in.getProperties, "vkGetPhysicalDeviceProperties"}, {&in.getProperties2, "vkGetPhysicalDeviceProperties2"},
		{&in.getFeatures2, "vkGetPhysicalDeviceFeatures2"}, {&in.getMemoryProperties, "vkGetPhysicalDeviceMemoryProperties"},
		{&in.getQueueFamilies, "vkGetPhysicalDeviceQueueFamilyProperties"},
		{&in.enumDeviceExtensions, "vkEnumerateDeviceExtensionProperties"},
		{&in.createDevice, "vkCreateDevice"}, {&in.getDeviceProcAddr, "vkGetDeviceProcAddr"},
	} {
		if *s.p = instanceProc(h, s.name); *s.p == 0 {
			in.Destroy()
			return nil, fmt.Errorf("the Vulkan loader lacks %s (Vulkan 1.1 or newer is needed)", s.name)
		}
	}
	return in, nil
}

// Destroy destroys the instance.
func (in *InstanceAPI) Destroy() {
	if in.destroy != 0 {
		callVoid(in.destroy, uintptr(in.Handle), 0)
	} else if p := instanceProc(in.Handle, "vkDestroyInstance"); p != 0 {
		callVoid(p, uintptr(in.Handle), 0)
	}
}

// PhysicalDevices lists the physical devices in the loader's order.
func (in *InstanceAPI) PhysicalDevices() ([]PhysicalDevice, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", call(in.enumPhysical, uintptr(in.Handle), uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]PhysicalDevice, n)
	if err := check("vkEnumeratePhysicalDevices", call(in.enumPhysical, uintptr(in.Handle), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))); err != nil {
		return nil, err
	}
	return out[:n], nil
}

// Properties returns vkGetPhysicalDeviceProperties.
func (in *InstanceAPI) Properties(pd PhysicalDevice) *PhysicalDeviceProperties {
	p := new(PhysicalDeviceProperties)
	callVoid(in.getProperties, uintptr(pd), uintptr(unsafe.Pointer(p)))
	return p
}

// DriverProperties returns the driver's name and description
// (VkPhysicalDeviceDriverProperties) and the subgroup size.
func (in *InstanceAPI) DriverProperties(pd PhysicalDevice) (*PhysicalDeviceDriverProperties, uint32) {
	d := &PhysicalDeviceDriverProperties{SType: StructureTypePhysicalDeviceDriverProps}
	sg := &PhysicalDeviceSubgroupProperties{SType: StructureTypePhysicalDeviceSubgroupProps, PNext: uintptr(unsafe.Pointer(d))}
	p := &PhysicalDeviceProperties2{SType: StructureTypePhysicalDeviceProperties2, PNext: uintptr(unsafe.Pointer(sg))}
	callVoid(in.getProperties2, uintptr(pd), uintptr(unsafe.Pointer(p)))
	keep(d, sg)
	return d, sg.SubgroupSize
}

// Features holds a physical device's core, Vulkan 1.1 and Vulkan 1.2
// feature flags.
type Features struct {
	Core PhysicalDeviceFeatures2
	V11  PhysicalDeviceVulkan11Features
	V12  PhysicalDeviceVulkan12Features
}

// Features returns vkGetPhysicalDeviceFeatures2 with the Vulkan 1.1 and
// 1.2 feature structs chained.
func (in *InstanceAPI) Features(pd PhysicalDevice) *Features {
	f := new(Features)
	f.Chain()
	callVoid(in.getFeatures2, uintptr(pd), uintptr(unsafe.Pointer(&f.Core)))
	return f
}

// Chain sets the structure types and links Core -> V11 -> V12, as
// vkGetPhysicalDeviceFeatures2 and VkDeviceCreateInfo.pNext take them. f
// must not move while the chain is in use (heap-allocate it).
func (f *Features) Chain() {
	f.Core.SType = StructureTypePhysicalDeviceFeatures2
	f.V11.SType = StructureTypePhysicalDeviceVulkan11Feat
	f.V12.SType = StructureTypePhysicalDeviceVulkan12Feat
	f.Core.PNext = uintptr(unsafe.Pointer(&f.V11))
	f.V11.PNext = uintptr(unsafe.Pointer(&f.V12))
	f.V12.PNext = 0
}

// MemoryProperties returns vkGetPhysicalDeviceMemoryProperties.
func (in *InstanceAPI) MemoryProperties(pd PhysicalDevice) *PhysicalDeviceMemoryProperties {
	m := new(PhysicalDeviceMemoryProperties)
	callVoid(in.getMemoryProperties, uintptr(pd), uintptr(unsafe.Pointer(m)))
	return m
}

// QueueFamilies returns vkGetPhysicalDeviceQueueFamilyProperties.
func (in *InstanceAPI) QueueFamilies(pd PhysicalDevice) []QueueFamilyProperties {
	var n uint32
	callVoid(in.getQueueFamilies, uintptr(pd), uintptr(unsafe.Pointer(&n)), 0)
	if n == 0 {
		return nil
	}
	out := make([]QueueFamilyProperties, n)
	callVoid(in.getQueueFamilies, uintptr(pd), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&out[0])))
	return out[:n]
}

// DeviceExtensions lists the names of the device's extensions.
func (in *InstanceAPI) DeviceExtensions(pd PhysicalDevice) ([]string, error) {
	var n uint32
	if err := check("vkEnumerateDeviceExtensionProperties", call(in.enumDeviceExtensions, uintptr(pd), 0, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	props := make([]ExtensionProperties, n)
	if err := check("vkEnumerateDeviceExtensionProperties", call(in.enumDeviceExtensions, uintptr(pd), 0, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&props[0])))); err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i := range props[:n] {
		out = append(out, props[i].Name())
	}
	return out, nil
}

// CreateDevice creates a logical device with one queue of family, the
// features in f (chained; nil: none) and the named extensions, and
// resolves the device-level entry points.
func (in *InstanceAPI) CreateDevice(pd PhysicalDevice, family uint32, f *Features, extensions []string) (*DeviceAPI, error) {
	prio := new(float32)
	*prio = 1
	qi := &DeviceQueueCreateInfo{SType: StructureTypeDeviceQueueCreateInfo, QueueFamilyIndex: family, QueueCount: 1, PQueuePriorities: prio}
	ci := &DeviceCreateInfo{SType: StructureTypeDeviceCreateInfo, QueueCreateInfoCount: 1, PQueueCreateInfos: qi}
	var names [][]byte
	var ptrs []*byte
	for _, e := range extensions {
		b := cstr(e)
		names = append(names, b)
		ptrs = append(ptrs, &b[0])
	}
	if len(ptrs) > 0 {
		ci.EnabledExtensionCount = uint32(len(ptrs))
		ci.PPEnabledExtensionNames = &ptrs[0]
	}
	if f != nil {
		f.Chain()
		ci.PNext = uintptr(unsafe.Pointer(&f.Core))
	}
	var h Device
	err := check("vkCreateDevice", call(in.createDevice, uintptr(pd), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&h))))
	keep(prio, qi, names, ptrs, f)
	if err != nil {
		return nil, err
	}
	return newDeviceAPI(in, h)
}

// deviceProc returns vkGetDeviceProcAddr(d, name).
func (in *InstanceAPI) deviceProc(d Device, name string) uintptr {
	b := cstr(name)
	r, _, _ := syscallN(in.getDeviceProcAddr, uintptr(d), uintptr(unsafe.Pointer(&b[0])))
	return r
}
