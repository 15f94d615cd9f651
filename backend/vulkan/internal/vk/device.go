//go:build linux && (amd64 || arm64)

package vk

import (
	"fmt"
	"unsafe"
)

// DeviceAPI is a VkDevice with its device-level entry points.
type DeviceAPI struct {
	Handle Device

	destroyDevice, getDeviceQueue, deviceWaitIdle                            uintptr
	createBuffer, destroyBuffer, getBufferMemReq, allocateMemory, freeMemory uintptr
	bindBufferMemory, mapMemory, unmapMemory                                 uintptr
	createShaderModule, destroyShaderModule                                  uintptr
	createDescSetLayout, destroyDescSetLayout, createPipelineLayout          uintptr
	destroyPipelineLayout, createComputePipelines, destroyPipeline           uintptr
	createPipelineCache, destroyPipelineCache, getPipelineCacheData          uintptr
	createDescriptorPool, destroyDescriptorPool, resetDescriptorPool         uintptr
	allocateDescriptorSets, updateDescriptorSets                             uintptr
	createCommandPool, destroyCommandPool, allocateCommandBuffers            uintptr
	resetCommandBuffer, beginCommandBuffer, endCommandBuffer                 uintptr
	cmdBindPipeline, cmdBindDescriptorSets, cmdPushConstants, cmdDispatch    uintptr
	cmdPipelineBarrier, cmdCopyBuffer, cmdFillBuffer                         uintptr
	cmdResetQueryPool, cmdWriteTimestamp, createQueryPool, destroyQueryPool  uintptr
	getQueryPoolResults                                                      uintptr
	queueSubmit, queueWaitIdle                                               uintptr
	createFence, destroyFence, waitForFences, resetFences, getFenceStatus    uintptr
}

func newDeviceAPI(in *InstanceAPI, h Device) (*DeviceAPI, error) {
	d := &DeviceAPI{Handle: h}
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&d.destroyDevice, "vkDestroyDevice"}, {&d.getDeviceQueue, "vkGetDeviceQueue"}, {&d.deviceWaitIdle, "vkDeviceWaitIdle"},
		{&d.createBuffer, "vkCreateBuffer"}, {&d.destroyBuffer, "vkDestroyBuffer"},
		{&d.getBufferMemReq, "vkGetBufferMemoryRequirements"}, {&d.allocateMemory, "vkAllocateMemory"},
		{&d.freeMemory, "vkFreeMemory"}, {&d.bindBufferMemory, "vkBindBufferMemory"},
		{&d.mapMemory, "vkMapMemory"}, {&d.unmapMemory, "vkUnmapMemory"},
		{&d.createShaderModule, "vkCreateShaderModule"}, {&d.destroyShaderModule, "vkDestroyShaderModule"},
		{&d.createDescSetLayout, "vkCreateDescriptorSetLayout"}, {&d.destroyDescSetLayout, "vkDestroyDescriptorSetLayout"},
		{&d.createPipelineLayout, "vkCreatePipelineLayout"}, {&d.destroyPipelineLayout, "vkDestroyPipelineLayout"},
		{&d.createComputePipelines, "vkCreateComputePipelines"}, {&d.destroyPipeline, "vkDestroyPipeline"},
		{&d.createPipelineCache, "vkCreatePipelineCache"}, {&d.destroyPipelineCache, "vkDestroyPipelineCache"},
		{&d.getPipelineCacheData, "vkGetPipelineCacheData"},
		{&d.createDescriptorPool, "vkCreateDescriptorPool"}, {&d.destroyDescriptorPool, "vkDestroyDescriptorPool"},
		{&d.resetDescriptorPool, "vkResetDescriptorPool"}, {&d.allocateDescriptorSets, "vkAllocateDescriptorSets"},
		{&d.updateDescriptorSets, "vkUpdateDescriptorSets"},
		{&d.createCommandPool, "vkCreateCommandPool"}, {&d.destroyCommandPool, "vkDestroyCommandPool"},
		{&d.allocateCommandBuffers, "vkAllocateCommandBuffers"}, {&d.resetCommandBuffer, "vkResetCommandBuffer"},
		{&d.beginCommandBuffer, "vkBeginCommandBuffer"}, {&d.endCommandBuffer, "vkEndCommandBuffer"},
		{&d.cmdBindPipeline, "vkCmdBindPipeline"}, {&d.cmdBindDescriptorSets, "vkCmdBindDescriptorSets"},
		{&d.cmdPushConstants, "vkCmdPushConstants"}, {&d.cmdDispatch, "vkCmdDispatch"},
		{&d.cmdPipelineBarrier, "vkCmdPipelineBarrier"}, {&d.cmdCopyBuffer, "vkCmdCopyBuffer"},
		{&d.cmdFillBuffer, "vkCmdFillBuffer"},
		{&d.cmdResetQueryPool, "vkCmdResetQueryPool"}, {&d.cmdWriteTimestamp, "vkCmdWriteTimestamp"},
		{&d.createQueryPool, "vkCreateQueryPool"}, {&d.destroyQueryPool, "vkDestroyQueryPool"},
		{&d.getQueryPoolResults, "vkGetQueryPoolResults"},
		{&d.queueSubmit, "vkQueueSubmit"}, {&d.queueWaitIdle, "vkQueueWaitIdle"},
		{&d.createFence, "vkCreateFence"}, {&d.destroyFence, "vkDestroyFence"},
		{&d.waitForFences, "vkWaitForFences"}, {&d.resetFences, "vkResetFences"},
		{&d.getFenceStatus, "vkGetFenceStatus"},
	} {
		if *s.p = in.deviceProc(h, s.name); *s.p == 0 {
			if d.destroyDevice != 0 {
				callVoid(d.destroyDevice, uintptr(h), 0)
			}
			return nil, fmt.Errorf("the Vulkan driver lacks %s", s.name)
		}
	}
	return d, nil
}

// Destroy destroys the device (its objects must be destroyed first).
func (d *DeviceAPI) Destroy() { callVoid(d.destroyDevice, uintptr(d.Handle), 0) }

// Queue returns queue index of family.
func (d *DeviceAPI) Queue(family, index uint32) Queue {
	var q Queue
	callVoid(d.getDeviceQueue, uintptr(d.Handle), uintptr(family), uintptr(index), uintptr(unsafe.Pointer(&q)))
	return q
}

// WaitIdle waits until the device has no work.
func (d *DeviceAPI) WaitIdle() error {
	return check("vkDeviceWaitIdle", call(d.deviceWaitIdle, uintptr(d.Handle)))
}

// CreateBuffer creates an exclusive buffer of size bytes with usage.
func (d *DeviceAPI) CreateBuffer(size uint64, usage uint32) (Buffer, error) {
	ci := &BufferCreateInfo{SType: StructureTypeBufferCreateInfo, Size: size, Usage: usage}
	var b Buffer
	err := check("vkCreateBuffer", call(d.createBuffer, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&b))))
	return b, err
}

// DestroyBuffer destroys b.
func (d *DeviceAPI) DestroyBuffer(b Buffer) {
	callVoid(d.destroyBuffer, uintptr(d.Handle), uintptr(b), 0)
}

// BufferMemoryRequirements returns b's size, alignment and memory types.
func (d *DeviceAPI) BufferMemoryRequirements(b Buffer) MemoryRequirements {
	var r MemoryRequirements
	callVoid(d.getBufferMemReq, uintptr(d.Handle), uintptr(b), uintptr(unsafe.Pointer(&r)))
	return r
}

// AllocateMemory allocates size bytes of memory type typeIndex.
func (d *DeviceAPI) AllocateMemory(size uint64, typeIndex uint32) (DeviceMemory, error) {
	ai := &MemoryAllocateInfo{SType: StructureTypeMemoryAllocateInfo, AllocationSize: size, MemoryTypeIndex: typeIndex}
	var m DeviceMemory
	err := check("vkAllocateMemory", call(d.allocateMemory, uintptr(d.Handle), uintptr(unsafe.Pointer(ai)), 0, uintptr(unsafe.Pointer(&m))))
	return m, err
}

// FreeMemory frees m (unmapping it).
func (d *DeviceAPI) FreeMemory(m DeviceMemory) {
	callVoid(d.freeMemory, uintptr(d.Handle), uintptr(m), 0)
}

// BindBufferMemory binds b to m at offset.
func (d *DeviceAPI) BindBufferMemory(b Buffer, m DeviceMemory, offset uint64) error {
	return check("vkBindBufferMemory", call(d.bindBufferMemory, uintptr(d.Handle), uintptr(b), uintptr(m), uintptr(offset)))
}

// MapMemory maps all of m and returns its host address.
func (d *DeviceAPI) MapMemory(m DeviceMemory, size uint64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := check("vkMapMemory", call(d.mapMemory, uintptr(d.Handle), uintptr(m), 0, uintptr(size), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// CreateShaderModule creates a shader module from SPIR-V words.
func (d *DeviceAPI) CreateShaderModule(code []uint32) (ShaderModule, error) {
	ci := &ShaderModuleCreateInfo{SType: StructureTypeShaderModuleCreateInfo, CodeSize: uintptr(4 * len(code)), PCode: &code[0]}
	var m ShaderModule
	err := check("vkCreateShaderModule", call(d.createShaderModule, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&m))))
	keep(code)
	return m, err
}

// DestroyShaderModule destroys m.
func (d *DeviceAPI) DestroyShaderModule(m ShaderModule) {
	callVoid(d.destroyShaderModule, uintptr(d.Handle), uintptr(m), 0)
}

// CreateStorageSetLayout creates a descriptor set layout of n storage
// buffers at bindings 0 .. n-1, visible to compute shaders.
func (d *DeviceAPI) CreateStorageSetLayout(n int) (DescriptorSetLayout, error) {
	bs := make([]DescriptorSetLayoutBinding, n)
	for i := range bs {
		bs[i] = DescriptorSetLayoutBinding{Binding: uint32(i), DescriptorType: DescriptorTypeStorageBuffer, DescriptorCount: 1, StageFlags: ShaderStageCompute}
	}
	ci := &DescriptorSetLayoutCreateInfo{SType: StructureTypeDescriptorSetLayoutCreate, BindingCount: uint32(n), PBindings: &bs[0]}
	var l DescriptorSetLayout
	err := check("vkCreateDescriptorSetLayout", call(d.createDescSetLayout, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&l))))
	keep(bs)
	return l, err
}

// CreatePipelineLayout creates a pipeline layout of one set layout and
// pushBytes bytes of compute push constants (0: none).
func (d *DeviceAPI) CreatePipelineLayout(set DescriptorSetLayout, pushBytes uint32) (PipelineLayout, error) {
	sets := []DescriptorSetLayout{set}
	ci := &PipelineLayoutCreateInfo{SType: StructureTypePipelineLayoutCreateInfo, SetLayoutCount: 1, PSetLayouts: &sets[0]}
	pr := &PushConstantRange{StageFlags: ShaderStageCompute, Size: pushBytes}
	if pushBytes > 0 {
		ci.PushConstantRangeCount, ci.PPushConstantRanges = 1, pr
	}
	var l PipelineLayout
	err := check("vkCreatePipelineLayout", call(d.createPipelineLayout, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&l))))
	keep(sets, pr)
	return l, err
}

// CreatePipelineCache creates a pipeline cache seeded with data (may be empty).
func (d *DeviceAPI) CreatePipelineCache(data []byte) (PipelineCache, error) {
	ci := &PipelineCacheCreateInfo{SType: StructureTypePipelineCacheCreateInfo}
	if len(data) > 0 {
		ci.InitialDataSize, ci.PInitialData = uintptr(len(data)), uintptr(unsafe.Pointer(&data[0]))
	}
	var c PipelineCache
	err := check("vkCreatePipelineCache", call(d.createPipelineCache, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&c))))
	keep(data)
	return c, err
}

// PipelineCacheData returns the cache's serialized contents.
func (d *DeviceAPI) PipelineCacheData(c PipelineCache) ([]byte, error) {
	var n uintptr
	if err := check("vkGetPipelineCacheData", call(d.getPipelineCacheData, uintptr(d.Handle), uintptr(c), uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if err := check("vkGetPipelineCacheData", call(d.getPipelineCacheData, uintptr(d.Handle), uintptr(c), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&buf[0])))); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// CreateComputePipeline creates a compute pipeline from module's entry
// point "main" with the given specialization constants (constant i+... as
// listed: ids[i] takes the 4 bytes values[i]).
func (d *DeviceAPI) CreateComputePipeline(cache PipelineCache, layout PipelineLayout, module ShaderModule, ids []uint32, values []uint32) (Pipeline, error) {
	entry := cstr("main")
	ci := &ComputePipelineCreateInfo{SType: StructureTypeComputePipelineCreateInfo, Layout: layout, BasePipelineIndex: -1}
	ci.Stage = PipelineShaderStageCreateInfo{SType: StructureTypePipelineShaderStageCreate, Stage: ShaderStageCompute, Module: module, PName: &entry[0]}
	var entries []SpecializationMapEntry
	var si *SpecializationInfo
	if len(ids) > 0 {
		entries = make([]SpecializationMapEntry, len(ids))
		for i, id := range ids {
			entries[i] = SpecializationMapEntry{ConstantID: id, Offset: uint32(4 * i), Size: 4}
		}
		si = &SpecializationInfo{MapEntryCount: uint32(len(ids)), PMapEntries: &entries[0], DataSize: uintptr(4 * len(values)), PData: uintptr(unsafe.Pointer(&values[0]))}
		ci.Stage.PSpecializationInfo = si
	}
	var p Pipeline
	err := check("vkCreateComputePipelines", call(d.createComputePipelines, uintptr(d.Handle), uintptr(cache), 1, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	keep(entry, entries, si, values)
	return p, err
}

// DestroyPipeline destroys p.
func (d *DeviceAPI) DestroyPipeline(p Pipeline) {
	callVoid(d.destroyPipeline, uintptr(d.Handle), uintptr(p), 0)
}

// CreateDescriptorPool creates a pool of maxSets sets holding up to
// buffers storage-buffer descriptors in all.
func (d *DeviceAPI) CreateDescriptorPool(maxSets, buffers uint32) (DescriptorPool, error) {
	size := &DescriptorPoolSize{Type: DescriptorTypeStorageBuffer, DescriptorCount: buffers}
	ci := &DescriptorPoolCreateInfo{SType: StructureTypeDescriptorPoolCreateInfo, MaxSets: maxSets, PoolSizeCount: 1, PPoolSizes: size}
	var p DescriptorPool
	err := check("vkCreateDescriptorPool", call(d.createDescriptorPool, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// ResetDescriptorPool returns every set of p to it.
func (d *DeviceAPI) ResetDescriptorPool(p DescriptorPool) error {
	return check("vkResetDescriptorPool", call(d.resetDescriptorPool, uintptr(d.Handle), uintptr(p), 0))
}

// AllocateDescriptorSet allocates one set of layout from p.
func (d *DeviceAPI) AllocateDescriptorSet(p DescriptorPool, layout *DescriptorSetLayout) (DescriptorSet, error) {
	ai := &DescriptorSetAllocateInfo{SType: StructureTypeDescriptorSetAllocateInfo, DescriptorPool: p, DescriptorSetCount: 1, PSetLayouts: layout}
	var s DescriptorSet
	err := check("vkAllocateDescriptorSets", call(d.allocateDescriptorSets, uintptr(d.Handle), uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(&s))))
	return s, err
}

// UpdateDescriptorSets writes the descriptors of writes.
func (d *DeviceAPI) UpdateDescriptorSets(writes []WriteDescriptorSet) {
	callVoid(d.updateDescriptorSets, uintptr(d.Handle), uintptr(len(writes)), uintptr(unsafe.Pointer(&writes[0])), 0, 0)
}

// CreateCommandPool creates a pool of resettable command buffers for family.
func (d *DeviceAPI) CreateCommandPool(family uint32) (CommandPool, error) {
	ci := &CommandPoolCreateInfo{SType: StructureTypeCommandPoolCreateInfo, Flags: CommandPoolCreateResetCommandBuffer, QueueFamilyIndex: family}
	var p CommandPool
	err := check("vkCreateCommandPool", call(d.createCommandPool, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// AllocateCommandBuffer allocates one primary command buffer from p.
func (d *DeviceAPI) AllocateCommandBuffer(p CommandPool) (CommandBuffer, error) {
	ai := &CommandBufferAllocateInfo{SType: StructureTypeCommandBufferAllocateInfo, CommandPool: p, Level: CommandBufferLevelPrimary, CommandBufferCount: 1}
	var c CommandBuffer
	err := check("vkAllocateCommandBuffers", call(d.allocateCommandBuffers, uintptr(d.Handle), uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(&c))))
	return c, err
}

// BeginCommandBuffer resets c and begins recording a one-time submission.
func (d *DeviceAPI) BeginCommandBuffer(c CommandBuffer) error {
	bi := &CommandBufferBeginInfo{SType: StructureTypeCommandBufferBeginInfo, Flags: CommandBufferUsageOneTimeSubmit}
	return check("vkBeginCommandBuffer", call(d.beginCommandBuffer, uintptr(c), uintptr(unsafe.Pointer(bi))))
}

// EndCommandBuffer ends recording.
func (d *DeviceAPI) EndCommandBuffer(c CommandBuffer) error {
	return check("vkEndCommandBuffer", call(d.endCommandBuffer, uintptr(c)))
}

// CmdBindPipeline binds a compute pipeline.
func (d *DeviceAPI) CmdBindPipeline(c CommandBuffer, p Pipeline) {
	callVoid(d.cmdBindPipeline, uintptr(c), PipelineBindPointCompute, uintptr(p))
}

// CmdBindDescriptorSet binds set 0 of a compute pipeline layout.
func (d *DeviceAPI) CmdBindDescriptorSet(c CommandBuffer, layout PipelineLayout, set *DescriptorSet) {
	callVoid(d.cmdBindDescriptorSets, uintptr(c), PipelineBindPointCompute, uintptr(layout), 0, 1, uintptr(unsafe.Pointer(set)), 0, 0)
}

// CmdPushConstants sets the compute push constants from data.
func (d *DeviceAPI) CmdPushConstants(c CommandBuffer, layout PipelineLayout, data []uint32) {
	callVoid(d.cmdPushConstants, uintptr(c), uintptr(layout), ShaderStageCompute, 0, uintptr(4*len(data)), uintptr(unsafe.Pointer(&data[0])))
}

// CmdDispatch dispatches x × y × z workgroups.
func (d *DeviceAPI) CmdDispatch(c CommandBuffer, x, y, z uint32) {
	callVoid(d.cmdDispatch, uintptr(c), uintptr(x), uintptr(y), uintptr(z))
}

// CmdMemoryBarrier records a global memory barrier between the given
// stages and accesses.
func (d *DeviceAPI) CmdMemoryBarrier(c CommandBuffer, srcStage, dstStage, srcAccess, dstAccess uint32) {
	b := &MemoryBarrier{SType: StructureTypeMemoryBarrier, SrcAccessMask: srcAccess, DstAccessMask: dstAccess}
	callVoid(d.cmdPipelineBarrier, uintptr(c), uintptr(srcStage), uintptr(dstStage), 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}

// CmdCopyBuffer copies size bytes from src at srcOff to dst at dstOff.
func (d *DeviceAPI) CmdCopyBuffer(c CommandBuffer, src, dst Buffer, srcOff, dstOff, size uint64) {
	r := &BufferCopy{SrcOffset: srcOff, DstOffset: dstOff, Size: size}
	callVoid(d.cmdCopyBuffer, uintptr(c), uintptr(src), uintptr(dst), 1, uintptr(unsafe.Pointer(r)))
}

// CmdFillBuffer fills size bytes of b at offset (both multiples of 4)
// with the 32-bit word data.
func (d *DeviceAPI) CmdFillBuffer(c CommandBuffer, b Buffer, offset, size uint64, data uint32) {
	callVoid(d.cmdFillBuffer, uintptr(c), uintptr(b), uintptr(offset), uintptr(size), uintptr(data))
}

// CreateTimestampPool creates a query pool of n timestamps.
func (d *DeviceAPI) CreateTimestampPool(n uint32) (QueryPool, error) {
	ci := &QueryPoolCreateInfo{SType: StructureTypeQueryPoolCreateInfo, QueryType: QueryTypeTimestamp, QueryCount: n}
	var p QueryPool
	err := check("vkCreateQueryPool", call(d.createQueryPool, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// DestroyQueryPool destroys p.
func (d *DeviceAPI) DestroyQueryPool(p QueryPool) {
	callVoid(d.destroyQueryPool, uintptr(d.Handle), uintptr(p), 0)
}

// CmdResetQueryPool resets queries first .. first+n-1 of p.
func (d *DeviceAPI) CmdResetQueryPool(c CommandBuffer, p QueryPool, first, n uint32) {
	callVoid(d.cmdResetQueryPool, uintptr(c), uintptr(p), uintptr(first), uintptr(n))
}

// CmdWriteTimestamp writes a timestamp into query q of p once stage is done.
func (d *DeviceAPI) CmdWriteTimestamp(c CommandBuffer, stage uint32, p QueryPool, q uint32) {
	callVoid(d.cmdWriteTimestamp, uintptr(c), uintptr(stage), uintptr(p), uintptr(q))
}

// QueryResults reads queries first .. first+len(out)-1 of p as 64-bit
// values, waiting for them.
func (d *DeviceAPI) QueryResults(p QueryPool, first uint32, out []uint64) error {
	return check("vkGetQueryPoolResults", call(d.getQueryPoolResults, uintptr(d.Handle), uintptr(p), uintptr(first), uintptr(len(out)),
		uintptr(8*len(out)), uintptr(unsafe.Pointer(&out[0])), 8, QueryResult64|QueryResultWait))
}

// QueueSubmit submits one command buffer to q, signalling fence when done.
func (d *DeviceAPI) QueueSubmit(q Queue, c CommandBuffer, fence Fence) error {
	cbs := []CommandBuffer{c}
	si := &SubmitInfo{SType: StructureTypeSubmitInfo, CommandBufferCount: 1, PCommandBuffers: &cbs[0]}
	err := check("vkQueueSubmit", call(d.queueSubmit, uintptr(q), 1, uintptr(unsafe.Pointer(si)), uintptr(fence)))
	keep(cbs)
	return err
}

// QueueWaitIdle waits until q has no work.
func (d *DeviceAPI) QueueWaitIdle(q Queue) error {
	return check("vkQueueWaitIdle", call(d.queueWaitIdle, uintptr(q)))
}

// CreateFence creates an unsignalled fence.
func (d *DeviceAPI) CreateFence() (Fence, error) {
	ci := &FenceCreateInfo{SType: StructureTypeFenceCreateInfo}
	var f Fence
	err := check("vkCreateFence", call(d.createFence, uintptr(d.Handle), uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&f))))
	return f, err
}

// DestroyFence destroys f.
func (d *DeviceAPI) DestroyFence(f Fence) { callVoid(d.destroyFence, uintptr(d.Handle), uintptr(f), 0) }

// WaitForFence waits up to timeout nanoseconds for f; it returns
// (false, nil) on timeout.
func (d *DeviceAPI) WaitForFence(f Fence, timeout uint64) (bool, error) {
	fs := []Fence{f}
	r := call(d.waitForFences, uintptr(d.Handle), 1, uintptr(unsafe.Pointer(&fs[0])), 1, uintptr(timeout))
	keep(fs)
	if r == Timeout {
		return false, nil
	}
	return true, check("vkWaitForFences", r)
}

// FenceSignalled reports whether f is signalled (vkGetFenceStatus).
func (d *DeviceAPI) FenceSignalled(f Fence) (bool, error) {
	r := call(d.getFenceStatus, uintptr(d.Handle), uintptr(f))
	if r == NotReady {
		return false, nil
	}
	return r == Success, check("vkGetFenceStatus", r)
}

// ResetFence returns f to the unsignalled state.
func (d *DeviceAPI) ResetFence(f Fence) error {
	fs := []Fence{f}
	err := check("vkResetFences", call(d.resetFences, uintptr(d.Handle), 1, uintptr(unsafe.Pointer(&fs[0]))))
	keep(fs)
	return err
}
