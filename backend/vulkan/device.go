//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/vulkan/internal/vk"
)

// device is one opened adapter: its VkDevice, the compute queue every
// operation is submitted to, the memory allocator, pipelines and the
// command batches. The backends of the DeviceIDs that name the adapter
// ("vulkan:discrete:0", "vulkan:default:0", "wgpu:discrete:0") share it.
type device struct {
	adapter *Adapter
	api     *vk.DeviceAPI
	queue   vk.Queue
	family  uint32

	f64, f16     bool
	maxRange     uint64    // maxStorageBufferRange
	offsetAlign  uint64    // minStorageBufferOffsetAlignment
	maxGroups    [3]uint32 // maxComputeWorkGroupCount
	timestampNs  float64   // nanoseconds per timestamp tick
	groupCap     int       // most workgroups of a grid-stride dispatch
	hasTimestamp bool

	// Memory types: pages of tensors (device-local), parameter blocks
	// (host-visible, device-local where possible) and staging (host-visible,
	// cached where possible). mapped: tensor pages are host-visible and
	// coherent, so reads copy straight from them.
	pageType, paramsType, stagingType uint32
	mapped                            bool

	alloc      *allocator
	persistent atomic.Int32

	// pagesMu guards the page table (the allocator creates and destroys
	// pages with or without mu held).
	pagesMu sync.Mutex
	pages   map[uint64]*vkPage
	nextID  uint64

	// mu guards the pipelines, the batches and the queue. Nothing
	// allocates tensor memory while holding it (the allocator may wait
	// for the queue, which takes mu).
	mu      sync.Mutex
	pipes   map[pipeKey]*pipeline
	modules map[string]vk.ShaderModule
	layouts map[int]*pipeLayout
	cache   vk.PipelineCache
	// cacheDirty: pipelines were created since the cache was last saved
	// (at cacheSaved).
	cacheDirty bool
	cacheSaved time.Time

	cur      *batch   // the batch being recorded (nil: none)
	inflight []*batch // submitted, oldest first
	free     []*batch
	serial   uint64 // serial number of the next batch
	done     uint64 // every batch with a lower serial has completed
	chunks   hostChunks
	dummy    *Buffer // bound to the bindings a kernel does not use

	fatal atomic.Pointer[error]
}

var (
	openMu  sync.Mutex
	devices = map[*Adapter]*device{}
)

// openDevice returns the shared device of adapter a, creating it on first use.
func openDevice(a *Adapter) (*device, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if d, ok := devices[a]; ok {
		return d, nil
	}
	d, err := newDevice(a)
	if err != nil {
		return nil, err
	}
	devices[a] = d
	return d, nil
}

func newDevice(a *Adapter) (*device, error) {
	fam, ok := a.computeFamily()
	if !ok {
		return nil, fmt.Errorf("%s has no compute queue", a.Name)
	}
	want := new(vk.Features)
	want.Core.Features[vk.FeatureShaderInt64] = 1
	want.V11.Bools[vk.Feature11StorageBuffer16BitAccess] = 1
	want.V12.Bools[vk.Feature12StorageBuffer8BitAccess] = 1
	if a.HasF64() {
		want.Core.Features[vk.FeatureShaderFloat64] = 1
	}
	api, err := inst.CreateDevice(a.pd, fam, want, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the Vulkan device on %s: %w", a.Name, err)
	}
	lim := &a.props.Limits
	d := &device{adapter: a, api: api, family: fam, queue: api.Queue(fam, 0),
		f64: a.HasF64(), f16: a.HasF16(),
		maxRange: uint64(lim.MaxStorageBufferRange), offsetAlign: max(lim.MinStorageBufferOffsetAlignment, 4),
		maxGroups: lim.MaxComputeWorkGroupCount, timestampNs: float64(lim.TimestampPeriod),
		pages: map[uint64]*vkPage{}, nextID: 1, pipes: map[pipeKey]*pipeline{},
		modules: map[string]vk.ShaderModule{}, layouts: map[int]*pipeLayout{}}
	// A GPU keeps 32768 workgroups of 256 busy (each invocation loops over
	// its share); a software adapter runs each workgroup as a task on a
	// CPU thread, where a few per thread amortize the cost of starting one.
	d.groupCap = 32768
	if a.Software() {
		d.groupCap = softwareGroups
	}
	fams := inst.QueueFamilies(a.pd)
	d.hasTimestamp = lim.TimestampPeriod > 0 && fams[fam].TimestampValidBits > 0
	if err := d.chooseMemory(); err != nil {
		api.Destroy()
		return nil, err
	}
	if d.cache, err = api.CreatePipelineCache(loadPipelineCache(a)); err != nil {
		api.Destroy()
		return nil, err
	}
	d.alloc = newAllocator(&vkMemory{d: d}, collectGarbage)
	d.dummy, err = d.newBuffer(256, true)
	if err != nil {
		api.Destroy()
		return nil, err
	}
	return d, nil
}

// chooseMemory picks the memory types of tensor pages, parameter blocks
// and staging buffers from those a probe buffer accepts.
func (d *device) chooseMemory() error {
	probe, err := d.api.CreateBuffer(256, vk.BufferUsageStorageBuffer|vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst)
	if err != nil {
		return err
	}
	bitsOK := d.api.BufferMemoryRequirements(probe).MemoryTypeBits
	d.api.DestroyBuffer(probe)
	mp := d.adapter.memProps
	const hostVC = vk.MemoryPropertyHostVisible | vk.MemoryPropertyHostCoherent
	uma := d.adapter.Kind == "integrated" || d.adapter.Kind == "cpu"
	pick := func(score func(flags uint32, heap uint64) int) (uint32, bool) {
		best, bestScore := uint32(0), -1
		for i := range mp.MemoryTypeCount {
			if bitsOK&(1<<i) == 0 {
				continue
			}
			t := mp.MemoryTypes[i]
			if s := score(t.PropertyFlags, mp.MemoryHeaps[t.HeapIndex].Size); s > bestScore {
				best, bestScore = i, s
			}
		}
		return best, bestScore >= 0
	}
	var ok bool
	// Tensor pages: device-local on the largest heap; host-visible ones
	// are preferred on unified-memory adapters (reads copy directly) and
	// avoided on discrete ones (a PCIe BAR reads slowly).
	d.pageType, ok = pick(func(f uint32, heap uint64) int {
		s := int(heap >> 20)
		if f&vk.MemoryPropertyDeviceLocal != 0 {
			s += 1 << 40
		}
		if f&hostVC == hostVC && uma {
			s += 1 << 20
		} else if f&vk.MemoryPropertyHostVisible != 0 && !uma {
			s -= 1 << 20
		}
		return s
	})
	if !ok {
		return errors.New("no memory type holds storage buffers")
	}
	d.mapped = mp.MemoryTypes[d.pageType].PropertyFlags&hostVC == hostVC
	d.paramsType, ok = pick(func(f uint32, _ uint64) int {
		if f&hostVC != hostVC {
			return -1
		}
		if f&vk.MemoryPropertyDeviceLocal != 0 {
			return 2
		}
		return 1
	})
	if !ok {
		return errors.New("no host-visible coherent memory type holds storage buffers")
	}
	d.stagingType, _ = pick(func(f uint32, _ uint64) int {
		if f&hostVC != hostVC {
			return -1
		}
		s := 1
		if f&vk.MemoryPropertyHostCached != 0 {
			s += 2
		}
		if f&vk.MemoryPropertyDeviceLocal != 0 && !uma {
			s-- // a small BAR heap: keep it for parameter blocks
		}
		return s
	})
	return nil
}

// softwareGroups is groupCap on a software adapter.
var softwareGroups = 64

// vkPage is one VkDeviceMemory with one VkBuffer over all of it: a page
// of the allocator. ptr (when mapped) is its host address.
type vkPage struct {
	id   uint64
	mem  vk.DeviceMemory
	buf  vk.Buffer
	size uint64
	ptr  unsafe.Pointer
}

// pageShift places page ids in the allocator's addresses: address
// id<<pageShift + offset (pages are smaller than 2^40 bytes).
const pageShift = 40

// vkMemory draws the allocator's pages from the device.
type vkMemory struct{ d *device }

func (m *vkMemory) alloc(n uint64) (uint64, error) {
	d := m.d
	if n >= 1<<pageShift {
		return 0, fmt.Errorf("%w: %d bytes is more than one Vulkan allocation holds", backend.ErrOutOfMemory, n)
	}
	buf, err := d.api.CreateBuffer(n, vk.BufferUsageStorageBuffer|vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst)
	if err != nil {
		return 0, memErr(err)
	}
	req := d.api.BufferMemoryRequirements(buf)
	mem, err := d.api.AllocateMemory(req.Size, d.pageType)
	if err != nil {
		d.api.DestroyBuffer(buf)
		return 0, memErr(err)
	}
	if err := d.api.BindBufferMemory(buf, mem, 0); err != nil {
		d.api.DestroyBuffer(buf)
		d.api.FreeMemory(mem)
		return 0, err
	}
	pg := &vkPage{mem: mem, buf: buf, size: n}
	if d.mapped {
		if pg.ptr, err = d.api.MapMemory(mem, req.Size); err != nil {
			d.api.DestroyBuffer(buf)
			d.api.FreeMemory(mem)
			return 0, err
		}
	}
	d.pagesMu.Lock()
	pg.id = d.nextID
	d.nextID++
	d.pages[pg.id] = pg
	d.pagesMu.Unlock()
	return pg.id << pageShift, nil
}

func (m *vkMemory) free(ptr uint64) {
	d := m.d
	d.pagesMu.Lock()
	pg := d.pages[ptr>>pageShift]
	delete(d.pages, ptr>>pageShift)
	d.pagesMu.Unlock()
	if pg != nil {
		d.api.DestroyBuffer(pg.buf)
		d.api.FreeMemory(pg.mem) // unmaps
	}
}

// synchronize waits until the queue is idle (before pages are destroyed).
func (m *vkMemory) synchronize() { _ = m.d.waitIdle() }

func (m *vkMemory) info() (free, total uint64) { return 0, m.d.adapter.Memory }

// memErr wraps a Vulkan out-of-memory result in backend.ErrOutOfMemory.
func memErr(err error) error {
	var ve *vk.Error
	if errors.As(err, &ve) && ve.OutOfMemory() {
		return fmt.Errorf("%w: %w", backend.ErrOutOfMemory, err)
	}
	return err
}

// page returns the page of an allocator address and the offset in it.
func (d *device) page(ptr uint64) (*vkPage, uint64) {
	d.pagesMu.Lock()
	pg := d.pages[ptr>>pageShift]
	d.pagesMu.Unlock()
	return pg, ptr & (1<<pageShift - 1)
}

// failed returns the sticky error that made the device unusable.
func (d *device) failed() error {
	if p := d.fatal.Load(); p != nil {
		return *p
	}
	return nil
}
