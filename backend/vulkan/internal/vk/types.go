//go:build linux && (amd64 || arm64)

package vk

// Dispatchable handles (pointers in C).
type (
	Instance       uintptr
	PhysicalDevice uintptr
	Device         uintptr
	Queue          uintptr
	CommandBuffer  uintptr
)

// Non-dispatchable handles (64-bit values in C).
type (
	Buffer              uint64
	DeviceMemory        uint64
	ShaderModule        uint64
	Pipeline            uint64
	PipelineLayout      uint64
	PipelineCache       uint64
	DescriptorSetLayout uint64
	DescriptorPool      uint64
	DescriptorSet       uint64
	CommandPool         uint64
	Fence               uint64
	QueryPool           uint64
)

// StructureType values (VkStructureType).
const (
	StructureTypeApplicationInfo             = 0
	StructureTypeInstanceCreateInfo          = 1
	StructureTypeDeviceQueueCreateInfo       = 2
	StructureTypeDeviceCreateInfo            = 3
	StructureTypeSubmitInfo                  = 4
	StructureTypeMemoryAllocateInfo          = 5
	StructureTypeFenceCreateInfo             = 8
	StructureTypeQueryPoolCreateInfo         = 11
	StructureTypeBufferCreateInfo            = 12
	StructureTypeShaderModuleCreateInfo      = 16
	StructureTypePipelineCacheCreateInfo     = 17
	StructureTypePipelineShaderStageCreate   = 18
	StructureTypeComputePipelineCreateInfo   = 29
	StructureTypePipelineLayoutCreateInfo    = 30
	StructureTypeDescriptorSetLayoutCreate   = 32
	StructureTypeDescriptorPoolCreateInfo    = 33
	StructureTypeDescriptorSetAllocateInfo   = 34
	StructureTypeWriteDescriptorSet          = 35
	StructureTypeCommandPoolCreateInfo       = 39
	StructureTypeCommandBufferAllocateInfo   = 40
	StructureTypeCommandBufferBeginInfo      = 42
	StructureTypeMemoryBarrier               = 46
	StructureTypePhysicalDeviceVulkan11Feat  = 49
	StructureTypePhysicalDeviceVulkan12Feat  = 51
	StructureTypePhysicalDeviceFeatures2     = 1000059000
	StructureTypePhysicalDeviceProperties2   = 1000059001
	StructureTypePhysicalDeviceDriverProps   = 1000196000
	StructureTypePhysicalDeviceSubgroupProps = 1000094000
)

// MakeAPIVersion is VK_MAKE_API_VERSION(0, major, minor, patch).
func MakeAPIVersion(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }

// APIVersionString prints a packed version as "1.3.230".
func APIVersionString(v uint32) string {
	return itoa(v>>22&0x7f) + "." + itoa(v>>12&0x3ff) + "." + itoa(v&0xfff)
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// ApplicationInfo is VkApplicationInfo.
type ApplicationInfo struct {
	SType              uint32
	PNext              uintptr
	PApplicationName   *byte
	ApplicationVersion uint32
	PEngineName        *byte
	EngineVersion      uint32
	APIVersion         uint32
}

// InstanceCreateInfo is VkInstanceCreateInfo.
type InstanceCreateInfo struct {
	SType                   uint32
	PNext                   uintptr
	Flags                   uint32
	PApplicationInfo        *ApplicationInfo
	EnabledLayerCount       uint32
	PPEnabledLayerNames     **byte
	EnabledExtensionCount   uint32
	PPEnabledExtensionNames **byte
}

// PhysicalDeviceType values.
const (
	PhysicalDeviceTypeOther         = 0
	PhysicalDeviceTypeIntegratedGPU = 1
	PhysicalDeviceTypeDiscreteGPU   = 2
	PhysicalDeviceTypeVirtualGPU    = 3
	PhysicalDeviceTypeCPU           = 4
)

// PhysicalDeviceLimits is VkPhysicalDeviceLimits.
type PhysicalDeviceLimits struct {
	MaxImageDimension1D                             uint32
	MaxImageDimension2D                             uint32
	MaxImageDimension3D                             uint32
	MaxImageDimensionCube                           uint32
	MaxImageArrayLayers                             uint32
	MaxTexelBufferElements                          uint32
	MaxUniformBufferRange                           uint32
	MaxStorageBufferRange                           uint32
	MaxPushConstantsSize                            uint32
	MaxMemoryAllocationCount                        uint32
	MaxSamplerAllocationCount                       uint32
	BufferImageGranularity                          uint64
	SparseAddressSpaceSize                          uint64
	MaxBoundDescriptorSets                          uint32
	MaxPerStageDescriptorSamplers                   uint32
	MaxPerStageDescriptorUniformBuffers             uint32
	MaxPerStageDescriptorStorageBuffers             uint32
	MaxPerStageDescriptorSampledImages              uint32
	MaxPerStageDescriptorStorageImages              uint32
	MaxPerStageDescriptorInputAttachments           uint32
	MaxPerStageResources                            uint32
	MaxDescriptorSetSamplers                        uint32
	MaxDescriptorSetUniformBuffers                  uint32
	MaxDescriptorSetUniformBuffersDynamic           uint32
	MaxDescriptorSetStorageBuffers                  uint32
	MaxDescriptorSetStorageBuffersDynamic           uint32
	MaxDescriptorSetSampledImages                   uint32
	MaxDescriptorSetStorageImages                   uint32
	MaxDescriptorSetInputAttachments                uint32
	MaxVertexInputAttributes                        uint32
	MaxVertexInputBindings                          uint32
	MaxVertexInputAttributeOffset                   uint32
	MaxVertexInputBindingStride                     uint32
	MaxVertexOutputComponents                       uint32
	MaxTessellationGenerationLevel                  uint32
	MaxTessellationPatchSize                        uint32
	MaxTessellationControlPerVertexInputComponents  uint32
	MaxTessellationControlPerVertexOutputComponents uint32
	MaxTessellationControlPerPatchOutputComponents  uint32
	MaxTessellationControlTotalOutputComponents     uint32
	MaxTessellationEvaluationInputComponents        uint32
	MaxTessellationEvaluationOutputComponents       uint32
	MaxGeometryShaderInvocations                    uint32
	MaxGeometryInputComponents                      uint32
	MaxGeometryOutputComponents                     uint32
	MaxGeometryOutputVertices                       uint32
	MaxGeometryTotalOutputComponents                uint32
	MaxFragmentInputComponents                      uint32
	MaxFragmentOutputAttachments                    uint32
	MaxFragmentDualSrcAttachments                   uint32
	MaxFragmentCombinedOutputResources              uint32
	MaxComputeSharedMemorySize                      uint32
	MaxComputeWorkGroupCount                        [3]uint32
	MaxComputeWorkGroupInvocations                  uint32
	MaxComputeWorkGroupSize                         [3]uint32
	SubPixelPrecisionBits                           uint32
	SubTexelPrecisionBits                           uint32
	MipmapPrecisionBits                             uint32
	MaxDrawIndexedIndexValue                        uint32
	MaxDrawIndirectCount                            uint32
	MaxSamplerLodBias                               float32
	MaxSamplerAnisotropy                            float32
	MaxViewports                                    uint32
	MaxViewportDimensions                           [2]uint32
	ViewportBoundsRange                             [2]float32
	ViewportSubPixelBits                            uint32
	MinMemoryMapAlignment                           uintptr
	MinTexelBufferOffsetAlignment                   uint64
	MinUniformBufferOffsetAlignment                 uint64
	MinStorageBufferOffsetAlignment                 uint64
	MinTexelOffset                                  int32
	MaxTexelOffset                                  uint32
	MinTexelGatherOffset                            int32
	MaxTexelGatherOffset                            uint32
	MinInterpolationOffset                          float32
	MaxInterpolationOffset                          float32
	SubPixelInterpolationOffsetBits                 uint32
	MaxFramebufferWidth                             uint32
	MaxFramebufferHeight                            uint32
	MaxFramebufferLayers                            uint32
	FramebufferColorSampleCounts                    uint32
	FramebufferDepthSampleCounts                    uint32
	FramebufferStencilSampleCounts                  uint32
	FramebufferNoAttachmentsSampleCounts            uint32
	MaxColorAttachments                             uint32
	SampledImageColorSampleCounts                   uint32
	SampledImageIntegerSampleCounts                 uint32
	SampledImageDepthSampleCounts                   uint32
	SampledImageStencilSampleCounts                 uint32
	StorageImageSampleCounts                        uint32
	MaxSampleMaskWords                              uint32
	TimestampComputeAndGraphics                     uint32
	TimestampPeriod                                 float32
	MaxClipDistances                                uint32
	MaxCullDistances                                uint32
	MaxCombinedClipAndCullDistances                 uint32
	DiscreteQueuePriorities                         uint32
	PointSizeRange                                  [2]float32
	LineWidthRange                                  [2]float32
	PointSizeGranularity                            float32
	LineWidthGranularity                            float32
	StrictLines                                     uint32
	StandardSampleLocations                         uint32
	OptimalBufferCopyOffsetAlignment                uint64
	OptimalBufferCopyRowPitchAlignment              uint64
	NonCoherentAtomSize                             uint64
}

// PhysicalDeviceProperties is VkPhysicalDeviceProperties.
type PhysicalDeviceProperties struct {
	APIVersion        uint32
	DriverVersion     uint32
	VendorID          uint32
	DeviceID          uint32
	DeviceType        uint32
	DeviceName        [256]byte
	PipelineCacheUUID [16]uint8
	Limits            PhysicalDeviceLimits
	SparseProperties  [5]uint32
}

// Name returns the device name as a Go string.
func (p *PhysicalDeviceProperties) Name() string { return goString(p.DeviceName[:]) }

// PhysicalDeviceDriverProperties is VkPhysicalDeviceDriverProperties.
type PhysicalDeviceDriverProperties struct {
	SType              uint32
	PNext              uintptr
	DriverID           uint32
	DriverName         [256]byte
	DriverInfo         [256]byte
	ConformanceVersion [4]uint8
}

// PhysicalDeviceSubgroupProperties is VkPhysicalDeviceSubgroupProperties.
type PhysicalDeviceSubgroupProperties struct {
	SType                     uint32
	PNext                     uintptr
	SubgroupSize              uint32
	SupportedStages           uint32
	SupportedOperations       uint32
	QuadOperationsInAllStages uint32
}

// PhysicalDeviceProperties2 is VkPhysicalDeviceProperties2.
type PhysicalDeviceProperties2 struct {
	SType      uint32
	PNext      uintptr
	Properties PhysicalDeviceProperties
}

// Indices of VkPhysicalDeviceFeatures members in Features.
const (
	FeatureShaderFloat64 = 39
	FeatureShaderInt64   = 40
	FeatureShaderInt16   = 41
	numFeatures          = 55
)

// PhysicalDeviceFeatures2 is VkPhysicalDeviceFeatures2 (Features holds the
// 55 VkBool32 members of VkPhysicalDeviceFeatures in order).
type PhysicalDeviceFeatures2 struct {
	SType    uint32
	PNext    uintptr
	Features [numFeatures]uint32
}

// Indices of VkPhysicalDeviceVulkan11Features members in Bools.
const (
	Feature11StorageBuffer16BitAccess = 0
	numFeatures11                     = 12
)

// PhysicalDeviceVulkan11Features is VkPhysicalDeviceVulkan11Features.
type PhysicalDeviceVulkan11Features struct {
	SType uint32
	PNext uintptr
	Bools [numFeatures11]uint32
}

// Indices of VkPhysicalDeviceVulkan12Features members in Bools.
const (
	Feature12StorageBuffer8BitAccess = 2
	Feature12ShaderFloat16           = 7
	Feature12ShaderInt8              = 8
	Feature12TimelineSemaphore       = 37
	numFeatures12                    = 47
)

// PhysicalDeviceVulkan12Features is VkPhysicalDeviceVulkan12Features.
type PhysicalDeviceVulkan12Features struct {
	SType uint32
	PNext uintptr
	Bools [numFeatures12]uint32
}

// Memory property flags (VkMemoryPropertyFlagBits).
const (
	MemoryPropertyDeviceLocal  = 0x1
	MemoryPropertyHostVisible  = 0x2
	MemoryPropertyHostCoherent = 0x4
	MemoryPropertyHostCached   = 0x8
)

// MemoryHeapDeviceLocal is VK_MEMORY_HEAP_DEVICE_LOCAL_BIT.
const MemoryHeapDeviceLocal = 0x1

// MemoryType is VkMemoryType.
type MemoryType struct {
	PropertyFlags uint32
	HeapIndex     uint32
}

// MemoryHeap is VkMemoryHeap.
type MemoryHeap struct {
	Size  uint64
	Flags uint32
}

// PhysicalDeviceMemoryProperties is VkPhysicalDeviceMemoryProperties.
type PhysicalDeviceMemoryProperties struct {
	MemoryTypeCount uint32
	MemoryTypes     [32]MemoryType
	MemoryHeapCount uint32
	MemoryHeaps     [16]MemoryHeap
}

// Queue flags (VkQueueFlagBits).
const (
	QueueGraphics = 0x1
	QueueCompute  = 0x2
	QueueTransfer = 0x4
)

// QueueFamilyProperties is VkQueueFamilyProperties.
type QueueFamilyProperties struct {
	QueueFlags                  uint32
	QueueCount                  uint32
	TimestampValidBits          uint32
	MinImageTransferGranularity [3]uint32
}

// ExtensionProperties is VkExtensionProperties.
type ExtensionProperties struct {
	ExtensionName [256]byte
	SpecVersion   uint32
}

// Name returns the extension's name.
func (e *ExtensionProperties) Name() string { return goString(e.ExtensionName[:]) }

// DeviceQueueCreateInfo is VkDeviceQueueCreateInfo.
type DeviceQueueCreateInfo struct {
	SType            uint32
	PNext            uintptr
	Flags            uint32
	QueueFamilyIndex uint32
	QueueCount       uint32
	PQueuePriorities *float32
}

// DeviceCreateInfo is VkDeviceCreateInfo.
type DeviceCreateInfo struct {
	SType                   uint32
	PNext                   uintptr
	Flags                   uint32
	QueueCreateInfoCount    uint32
	PQueueCreateInfos       *DeviceQueueCreateInfo
	EnabledLayerCount       uint32
	PPEnabledLayerNames     **byte
	EnabledExtensionCount   uint32
	PPEnabledExtensionNames **byte
	PEnabledFeatures        uintptr
}

// Buffer usage flags (VkBufferUsageFlagBits).
const (
	BufferUsageTransferSrc   = 0x1
	BufferUsageTransferDst   = 0x2
	BufferUsageStorageBuffer = 0x20
)

// BufferCreateInfo is VkBufferCreateInfo.
type BufferCreateInfo struct {
	SType                 uint32
	PNext                 uintptr
	Flags                 uint32
	Size                  uint64
	Usage                 uint32
	SharingMode           uint32
	QueueFamilyIndexCount uint32
	PQueueFamilyIndices   *uint32
}

// MemoryRequirements is VkMemoryRequirements.
type MemoryRequirements struct {
	Size           uint64
	Alignment      uint64
	MemoryTypeBits uint32
}

// MemoryAllocateInfo is VkMemoryAllocateInfo.
type MemoryAllocateInfo struct {
	SType           uint32
	PNext           uintptr
	AllocationSize  uint64
	MemoryTypeIndex uint32
}

// ShaderModuleCreateInfo is VkShaderModuleCreateInfo.
type ShaderModuleCreateInfo struct {
	SType    uint32
	PNext    uintptr
	Flags    uint32
	CodeSize uintptr
	PCode    *uint32
}

// Descriptor types and shader stages.
const (
	DescriptorTypeStorageBuffer = 7
	ShaderStageCompute          = 0x20
	PipelineBindPointCompute    = 1
)

// DescriptorSetLayoutBinding is VkDescriptorSetLayoutBinding.
type DescriptorSetLayoutBinding struct {
	Binding            uint32
	DescriptorType     uint32
	DescriptorCount    uint32
	StageFlags         uint32
	PImmutableSamplers uintptr
}

// DescriptorSetLayoutCreateInfo is VkDescriptorSetLayoutCreateInfo.
type DescriptorSetLayoutCreateInfo struct {
	SType        uint32
	PNext        uintptr
	Flags        uint32
	BindingCount uint32
	PBindings    *DescriptorSetLayoutBinding
}

// PushConstantRange is VkPushConstantRange.
type PushConstantRange struct {
	StageFlags uint32
	Offset     uint32
	Size       uint32
}

// PipelineLayoutCreateInfo is VkPipelineLayoutCreateInfo.
type PipelineLayoutCreateInfo struct {
	SType                  uint32
	PNext                  uintptr
	Flags                  uint32
	SetLayoutCount         uint32
	PSetLayouts            *DescriptorSetLayout
	PushConstantRangeCount uint32
	PPushConstantRanges    *PushConstantRange
}

// SpecializationMapEntry is VkSpecializationMapEntry.
type SpecializationMapEntry struct {
	ConstantID uint32
	Offset     uint32
	Size       uintptr
}

// SpecializationInfo is VkSpecializationInfo.
type SpecializationInfo struct {
	MapEntryCount uint32
	PMapEntries   *SpecializationMapEntry
	DataSize      uintptr
	PData         uintptr
}

// PipelineShaderStageCreateInfo is VkPipelineShaderStageCreateInfo.
type PipelineShaderStageCreateInfo struct {
	SType               uint32
	PNext               uintptr
	Flags               uint32
	Stage               uint32
	Module              ShaderModule
	PName               *byte
	PSpecializationInfo *SpecializationInfo
}

// ComputePipelineCreateInfo is VkComputePipelineCreateInfo.
type ComputePipelineCreateInfo struct {
	SType              uint32
	PNext              uintptr
	Flags              uint32
	Stage              PipelineShaderStageCreateInfo
	Layout             PipelineLayout
	BasePipelineHandle Pipeline
	BasePipelineIndex  int32
}

// PipelineCacheCreateInfo is VkPipelineCacheCreateInfo.
type PipelineCacheCreateInfo struct {
	SType           uint32
	PNext           uintptr
	Flags           uint32
	InitialDataSize uintptr
	PInitialData    uintptr
}

// DescriptorPoolSize is VkDescriptorPoolSize.
type DescriptorPoolSize struct {
	Type            uint32
	DescriptorCount uint32
}

// DescriptorPoolCreateInfo is VkDescriptorPoolCreateInfo.
type DescriptorPoolCreateInfo struct {
	SType         uint32
	PNext         uintptr
	Flags         uint32
	MaxSets       uint32
	PoolSizeCount uint32
	PPoolSizes    *DescriptorPoolSize
}

// DescriptorSetAllocateInfo is VkDescriptorSetAllocateInfo.
type DescriptorSetAllocateInfo struct {
	SType              uint32
	PNext              uintptr
	DescriptorPool     DescriptorPool
	DescriptorSetCount uint32
	PSetLayouts        *DescriptorSetLayout
}

// DescriptorBufferInfo is VkDescriptorBufferInfo.
type DescriptorBufferInfo struct {
	Buffer Buffer
	Offset uint64
	Range  uint64
}

// WriteDescriptorSet is VkWriteDescriptorSet.
type WriteDescriptorSet struct {
	SType            uint32
	PNext            uintptr
	DstSet           DescriptorSet
	DstBinding       uint32
	DstArrayElement  uint32
	DescriptorCount  uint32
	DescriptorType   uint32
	PImageInfo       uintptr
	PBufferInfo      *DescriptorBufferInfo
	PTexelBufferView uintptr
}

// Command pool and buffer flags.
const (
	CommandPoolCreateResetCommandBuffer = 0x2
	CommandBufferLevelPrimary           = 0
	CommandBufferUsageOneTimeSubmit     = 0x1
)

// CommandPoolCreateInfo is VkCommandPoolCreateInfo.
type CommandPoolCreateInfo struct {
	SType            uint32
	PNext            uintptr
	Flags            uint32
	QueueFamilyIndex uint32
}

// CommandBufferAllocateInfo is VkCommandBufferAllocateInfo.
type CommandBufferAllocateInfo struct {
	SType              uint32
	PNext              uintptr
	CommandPool        CommandPool
	Level              uint32
	CommandBufferCount uint32
}

// CommandBufferBeginInfo is VkCommandBufferBeginInfo.
type CommandBufferBeginInfo struct {
	SType            uint32
	PNext            uintptr
	Flags            uint32
	PInheritanceInfo uintptr
}

// Pipeline stages and access flags for barriers.
const (
	PipelineStageTopOfPipe     = 0x1
	PipelineStageComputeShader = 0x800
	PipelineStageTransfer      = 0x1000
	PipelineStageBottomOfPipe  = 0x2000
	PipelineStageHost          = 0x4000
	AccessShaderRead           = 0x20
	AccessShaderWrite          = 0x40
	AccessTransferRead         = 0x800
	AccessTransferWrite        = 0x1000
	AccessHostRead             = 0x2000
	AccessHostWrite            = 0x4000
)

// MemoryBarrier is VkMemoryBarrier.
type MemoryBarrier struct {
	SType         uint32
	PNext         uintptr
	SrcAccessMask uint32
	DstAccessMask uint32
}

// BufferCopy is VkBufferCopy.
type BufferCopy struct {
	SrcOffset uint64
	DstOffset uint64
	Size      uint64
}

// SubmitInfo is VkSubmitInfo.
type SubmitInfo struct {
	SType                uint32
	PNext                uintptr
	WaitSemaphoreCount   uint32
	PWaitSemaphores      uintptr
	PWaitDstStageMask    uintptr
	CommandBufferCount   uint32
	PCommandBuffers      *CommandBuffer
	SignalSemaphoreCount uint32
	PSignalSemaphores    uintptr
}

// FenceCreateInfo is VkFenceCreateInfo.
type FenceCreateInfo struct {
	SType uint32
	PNext uintptr
	Flags uint32
}

// Query types and result flags.
const (
	QueryTypeTimestamp = 2
	QueryResult64      = 0x1
	QueryResultWait    = 0x2
)

// QueryPoolCreateInfo is VkQueryPoolCreateInfo.
type QueryPoolCreateInfo struct {
	SType              uint32
	PNext              uintptr
	Flags              uint32
	QueryType          uint32
	QueryCount         uint32
	PipelineStatistics uint32
}
