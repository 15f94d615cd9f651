//go:build linux && (amd64 || arm64)

package vk

import (
	"testing"
	"unsafe"
)

// TestLayout checks the size and chosen member offsets of every struct
// passed to the loader against what gcc computes from vulkan_core.h
// (Vulkan 1.3.239, x86-64 and AArch64 LP64): a Go struct that differs from
// its C declaration would corrupt the driver's reads silently.
func TestLayout(t *testing.T) {
	var l PhysicalDeviceLimits
	var pp PhysicalDeviceProperties
	var m PhysicalDeviceMemoryProperties
	var c ComputePipelineCreateInfo
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"VkApplicationInfo", unsafe.Sizeof(ApplicationInfo{}), 48},
		{"VkInstanceCreateInfo", unsafe.Sizeof(InstanceCreateInfo{}), 64},
		{"VkPhysicalDeviceLimits", unsafe.Sizeof(PhysicalDeviceLimits{}), 504},
		{"VkPhysicalDeviceProperties", unsafe.Sizeof(PhysicalDeviceProperties{}), 824},
		{"VkPhysicalDeviceLimits.maxStorageBufferRange", unsafe.Offsetof(l.MaxStorageBufferRange), 28},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupCount", unsafe.Offsetof(l.MaxComputeWorkGroupCount), 220},
		{"VkPhysicalDeviceLimits.minStorageBufferOffsetAlignment", unsafe.Offsetof(l.MinStorageBufferOffsetAlignment), 328},
		{"VkPhysicalDeviceLimits.timestampPeriod", unsafe.Offsetof(l.TimestampPeriod), 424},
		{"VkPhysicalDeviceLimits.nonCoherentAtomSize", unsafe.Offsetof(l.NonCoherentAtomSize), 496},
		{"VkPhysicalDeviceProperties.limits", unsafe.Offsetof(pp.Limits), 296},
		{"VkPhysicalDeviceProperties.sparseProperties", unsafe.Offsetof(pp.SparseProperties), 800},
		{"VkPhysicalDeviceDriverProperties", unsafe.Sizeof(PhysicalDeviceDriverProperties{}), 536},
		{"VkPhysicalDeviceSubgroupProperties", unsafe.Sizeof(PhysicalDeviceSubgroupProperties{}), 32},
		{"VkPhysicalDeviceProperties2", unsafe.Sizeof(PhysicalDeviceProperties2{}), 840},
		{"VkPhysicalDeviceFeatures2", unsafe.Sizeof(PhysicalDeviceFeatures2{}), 240},
		{"VkPhysicalDeviceFeatures.shaderFloat64", 4 * FeatureShaderFloat64, 156},
		{"VkPhysicalDeviceFeatures.shaderInt16", 4 * FeatureShaderInt16, 164},
		{"VkPhysicalDeviceVulkan11Features", unsafe.Sizeof(PhysicalDeviceVulkan11Features{}), 64},
		{"VkPhysicalDeviceVulkan12Features", unsafe.Sizeof(PhysicalDeviceVulkan12Features{}), 208},
		{"VkPhysicalDeviceVulkan12Features.storageBuffer8BitAccess", 16 + 4*Feature12StorageBuffer8BitAccess, 24},
		{"VkPhysicalDeviceVulkan12Features.shaderFloat16", 16 + 4*Feature12ShaderFloat16, 44},
		{"VkPhysicalDeviceVulkan12Features.timelineSemaphore", 16 + 4*Feature12TimelineSemaphore, 164},
		{"VkPhysicalDeviceVulkan12Features.shaderInt8", 16 + 4*Feature12ShaderInt8, 48},
		{"VkPhysicalDeviceMemoryProperties", unsafe.Sizeof(m), 520},
		{"VkPhysicalDeviceMemoryProperties.memoryHeapCount", unsafe.Offsetof(m.MemoryHeapCount), 260},
		{"VkPhysicalDeviceMemoryProperties.memoryHeaps", unsafe.Offsetof(m.MemoryHeaps), 264},
		{"VkQueueFamilyProperties", unsafe.Sizeof(QueueFamilyProperties{}), 24},
		{"VkExtensionProperties", unsafe.Sizeof(ExtensionProperties{}), 260},
		{"VkDeviceQueueCreateInfo", unsafe.Sizeof(DeviceQueueCreateInfo{}), 40},
		{"VkDeviceCreateInfo", unsafe.Sizeof(DeviceCreateInfo{}), 72},
		{"VkBufferCreateInfo", unsafe.Sizeof(BufferCreateInfo{}), 56},
		{"VkMemoryRequirements", unsafe.Sizeof(MemoryRequirements{}), 24},
		{"VkMemoryAllocateInfo", unsafe.Sizeof(MemoryAllocateInfo{}), 32},
		{"VkShaderModuleCreateInfo", unsafe.Sizeof(ShaderModuleCreateInfo{}), 40},
		{"VkDescriptorSetLayoutBinding", unsafe.Sizeof(DescriptorSetLayoutBinding{}), 24},
		{"VkDescriptorSetLayoutCreateInfo", unsafe.Sizeof(DescriptorSetLayoutCreateInfo{}), 32},
		{"VkPushConstantRange", unsafe.Sizeof(PushConstantRange{}), 12},
		{"VkPipelineLayoutCreateInfo", unsafe.Sizeof(PipelineLayoutCreateInfo{}), 48},
		{"VkSpecializationMapEntry", unsafe.Sizeof(SpecializationMapEntry{}), 16},
		{"VkSpecializationInfo", unsafe.Sizeof(SpecializationInfo{}), 32},
		{"VkPipelineShaderStageCreateInfo", unsafe.Sizeof(PipelineShaderStageCreateInfo{}), 48},
		{"VkComputePipelineCreateInfo", unsafe.Sizeof(c), 96},
		{"VkComputePipelineCreateInfo.layout", unsafe.Offsetof(c.Layout), 72},
		{"VkPipelineCacheCreateInfo", unsafe.Sizeof(PipelineCacheCreateInfo{}), 40},
		{"VkDescriptorPoolSize", unsafe.Sizeof(DescriptorPoolSize{}), 8},
		{"VkDescriptorPoolCreateInfo", unsafe.Sizeof(DescriptorPoolCreateInfo{}), 40},
		{"VkDescriptorSetAllocateInfo", unsafe.Sizeof(DescriptorSetAllocateInfo{}), 40},
		{"VkDescriptorBufferInfo", unsafe.Sizeof(DescriptorBufferInfo{}), 24},
		{"VkWriteDescriptorSet", unsafe.Sizeof(WriteDescriptorSet{}), 64},
		{"VkCommandPoolCreateInfo", unsafe.Sizeof(CommandPoolCreateInfo{}), 24},
		{"VkCommandBufferAllocateInfo", unsafe.Sizeof(CommandBufferAllocateInfo{}), 32},
		{"VkCommandBufferBeginInfo", unsafe.Sizeof(CommandBufferBeginInfo{}), 32},
		{"VkMemoryBarrier", unsafe.Sizeof(MemoryBarrier{}), 24},
		{"VkBufferCopy", unsafe.Sizeof(BufferCopy{}), 24},
		{"VkSubmitInfo", unsafe.Sizeof(SubmitInfo{}), 72},
		{"VkFenceCreateInfo", unsafe.Sizeof(FenceCreateInfo{}), 24},
		{"VkQueryPoolCreateInfo", unsafe.Sizeof(QueryPoolCreateInfo{}), 32},
	} {
		if c.got != c.want {
			t.Errorf("%s: Go has %d, C has %d", c.name, c.got, c.want)
		}
	}
}
