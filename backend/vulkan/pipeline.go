//go:build linux && (amd64 || arm64)

package vulkan

import (
	"embed"
	"encoding/binary"
	"fmt"

	"github.com/emberml/ember/backend/vulkan/internal/vk"
)

// The shaders, compiled from shaders/*.comp by go generate (see
// internal/spirv and gen.go) and committed.
//
//go:embed spv/*.spv
var spvFS embed.FS

// workgroup is the size of the 1-d workgroups (specialization constant 0).
const workgroup = 256

// pipeKey names a pipeline: a shader variant and its specialization
// constants 1 and 2 (the op, the output dtype; 0 when unused).
type pipeKey struct {
	name   string
	c1, c2 uint32
}

type pipeline struct {
	p      vk.Pipeline
	layout *pipeLayout
}

// pipeLayout is the descriptor set layout and pipeline layout of shaders
// with n storage-buffer bindings (the parameter block and n-1 data buffers).
type pipeLayout struct {
	set vk.DescriptorSetLayout
	pl  vk.PipelineLayout
	n   int
}

// layoutLocked returns the layout of n bindings, creating it on first use.
func (d *device) layoutLocked(n int) (*pipeLayout, error) {
	if l, ok := d.layouts[n]; ok {
		return l, nil
	}
	set, err := d.api.CreateStorageSetLayout(n)
	if err != nil {
		return nil, err
	}
	pl, err := d.api.CreatePipelineLayout(set, 0)
	if err != nil {
		return nil, err
	}
	l := &pipeLayout{set: set, pl: pl, n: n}
	d.layouts[n] = l
	return l, nil
}

// moduleLocked returns the shader module of a variant, loading it from
// the embedded SPIR-V on first use.
func (d *device) moduleLocked(name string) (vk.ShaderModule, error) {
	if m, ok := d.modules[name]; ok {
		return m, nil
	}
	b, err := spvFS.ReadFile("spv/" + name + ".spv")
	if err != nil {
		return 0, fmt.Errorf("shader %s is not in this build: %w", name, err)
	}
	if len(b)%4 != 0 || len(b) == 0 {
		return 0, fmt.Errorf("shader %s: %d bytes is not SPIR-V", name, len(b))
	}
	words := make([]uint32, len(b)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	m, err := d.api.CreateShaderModule(words)
	if err != nil {
		return 0, fmt.Errorf("shader %s: %w", name, err)
	}
	d.modules[name] = m
	return m, nil
}

// pipelineLocked returns the pipeline of k with nbind bindings, creating
// it on first use (the driver compiles the shader for the constants).
func (d *device) pipelineLocked(k pipeKey, nbind int) (*pipeline, error) {
	if p, ok := d.pipes[k]; ok {
		return p, nil
	}
	m, err := d.moduleLocked(k.name)
	if err != nil {
		return nil, err
	}
	l, err := d.layoutLocked(nbind)
	if err != nil {
		return nil, err
	}
	vp, err := d.api.CreateComputePipeline(d.cache, l.pl, m, []uint32{0, 1, 2}, []uint32{workgroup, k.c1, k.c2})
	if err != nil {
		return nil, fmt.Errorf("creating the pipeline of shader %s (constants %d, %d): %w", k.name, k.c1, k.c2, err)
	}
	p := &pipeline{p: vp, layout: l}
	d.pipes[k] = p
	d.cacheDirty = true
	return p, nil
}

// dispatch is one kernel launch: a shader variant, its constants, its
// parameter words, its data buffers (bindings 1, 2, ...) and its
// workgroup counts.
type dispatch struct {
	key    pipeKey
	params []uint32
	bufs   []*Buffer
	groups [3]uint32
}

// run records the dispatches in order in the current batch and submits
// the batch when it is full. Buffers must be allocated before (run holds
// d.mu, under which nothing may allocate tensor memory).
func (d *device) run(ds ...dispatch) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range ds {
		if err := d.recordLocked(&ds[i]); err != nil {
			return err
		}
	}
	if d.cur != nil && (d.cur.dispatches >= batchDispatches || d.cur.bytes >= batchBytes) {
		return d.submitLocked()
	}
	return nil
}

func (d *device) recordLocked(ds *dispatch) error {
	b, err := d.current()
	if err != nil {
		return err
	}
	if b.sets >= batchSets {
		if err := d.submitLocked(); err != nil {
			return err
		}
		if b, err = d.current(); err != nil {
			return err
		}
	}
	nbind := 1 + len(ds.bufs)
	p, err := d.pipelineLocked(ds.key, nbind)
	if err != nil {
		return err
	}
	pb, err := d.paramsLocked(&b, ds.params)
	if err != nil {
		return err
	}
	set, err := d.api.AllocateDescriptorSet(b.dpool, &p.layout.set)
	if err != nil {
		return d.fail(err)
	}
	b.sets++
	infos := make([]vk.DescriptorBufferInfo, nbind)
	writes := make([]vk.WriteDescriptorSet, nbind)
	infos[0] = vk.DescriptorBufferInfo{Buffer: pb.buf, Offset: pb.off, Range: pb.bytes}
	for i, buf := range ds.bufs {
		bd := d.bind(buf)
		infos[i+1] = vk.DescriptorBufferInfo{Buffer: bd.buf, Offset: bd.off, Range: bd.bytes}
		if buf != nil {
			b.bytes += buf.blk.size
		}
	}
	for i := range writes {
		writes[i] = vk.WriteDescriptorSet{SType: vk.StructureTypeWriteDescriptorSet, DstSet: set, DstBinding: uint32(i),
			DescriptorCount: 1, DescriptorType: vk.DescriptorTypeStorageBuffer, PBufferInfo: &infos[i]}
	}
	d.api.UpdateDescriptorSets(writes)
	d.api.CmdBindPipeline(b.cmd, p.p)
	d.api.CmdBindDescriptorSet(b.cmd, p.layout.pl, &set)
	// Kernels loop over the z dimension (batches) beyond the device's
	// limit; callers keep x and y within it.
	g := ds.groups
	d.api.CmdDispatch(b.cmd, max(g[0], 1), max(g[1], 1), min(max(g[2], 1), d.maxGroups[2]))
	d.api.CmdMemoryBarrier(b.cmd, vk.PipelineStageComputeShader, vk.PipelineStageComputeShader|vk.PipelineStageTransfer,
		vk.AccessShaderWrite, vk.AccessShaderRead|vk.AccessShaderWrite|vk.AccessTransferRead|vk.AccessTransferWrite)
	b.dispatches++
	return nil
}

// groups1 returns the workgroup count of a 1-d grid-stride kernel over n
// items (at most the device's limit and groupCap: each invocation loops).
func (d *device) groups1(n int) [3]uint32 {
	g := (n + workgroup - 1) / workgroup
	g = min(g, int(d.maxGroups[0]), d.groupCap)
	return [3]uint32{uint32(max(g, 1)), 1, 1}
}
