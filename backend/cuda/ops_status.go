package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// The indexing kernels (gather, scatter-add, index-select) check every
// index and report the first bad one into a status word of four uint32 in
// page-locked host memory that the device writes directly (unified
// addressing): [0] the op's code (0: no error), [1..2] the index, [3] the
// axis size. Reading it costs no device call, so the check after a stream
// synchronization is free; a bad index neither corrupts memory nor leaves
// the context unusable.

var statusWords sync.Map // *Backend -> unsafe.Pointer to [4]uint32

// cuMemHostAllocPortable | cuMemHostAllocDeviceMap.
const hostAllocMapped = 0x1 | 0x2

// statusWord returns the device address of b's status word, allocating
// and zeroing it on first use.
func (b *Backend) statusWord() uint64 {
	if p, ok := statusWords.Load(b); ok {
		return uint64(uintptr(p.(unsafe.Pointer)))
	}
	exit := b.enter()
	p, err := cu.MemHostAlloc(16, hostAllocMapped)
	exit()
	if err != nil {
		panic(b.fail(err))
	}
	w := (*[4]uint32)(p)
	for i := range w {
		atomic.StoreUint32(&w[i], 0)
	}
	if q, loaded := statusWords.LoadOrStore(b, p); loaded {
		exit := b.enter()
		_ = cu.MemFreeHost(p)
		exit()
		p = q.(unsafe.Pointer)
	}
	return uint64(uintptr(p))
}

var statusOps = [...]string{statusGather: "gather", statusScatterAdd: "scatter_add", statusIndexSelect: "index_select"}

// indexError returns the out-of-range index an indexing kernel reported
// since the last call, as an error wrapping backend.ErrExecution that
// names the op, the index and the axis size, and clears the report; nil
// when there was none. Call it after the stream was synchronized (Sync,
// ToData), when the kernels' writes are visible.
func (b *Backend) indexError() error {
	p, ok := statusWords.Load(b)
	if !ok {
		return nil
	}
	w := (*[4]uint32)(p.(unsafe.Pointer))
	code := atomic.LoadUint32(&w[0])
	if code == 0 {
		return nil
	}
	idx := int64(uint64(atomic.LoadUint32(&w[1])) | uint64(atomic.LoadUint32(&w[2]))<<32)
	size := atomic.LoadUint32(&w[3])
	atomic.StoreUint32(&w[0], 0)
	op := "indexing"
	if int(code) < len(statusOps) && statusOps[code] != "" {
		op = statusOps[code]
	}
	return fmt.Errorf("%v: %w: %s: index %d is out of range for an axis of size %d", b.id, backend.ErrExecution, op, idx, size)
}
