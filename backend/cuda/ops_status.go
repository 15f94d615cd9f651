package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/ir"
)

// The indexing kernels (gather, scatter-add, index-select) check every
// index, and the integer divisions (Div, FloorDiv, Rem, Mod, unfused and
// in fused programs) every divisor, and report the first failure into a
// status word of four uint32 in page-locked host memory that the device
// writes directly (unified addressing): [0] the op's code (0: no error;
// statusGather ... for an index, statusDivide | the ir.BinaryOp for a
// zero divisor), then for an index [1..2] the index and [3] the axis size,
// for a divisor [1] the dtype. Reading it costs no device call, so the
// check after a stream synchronization is free; a bad index or divisor
// neither corrupts memory nor leaves the context unusable.

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

// statusDivide marks the code of a zero integer divisor: statusDivide |
// the division's ir.BinaryOp (report_div in the prelude).
const statusDivide = 0x100

// statusError returns the failure a kernel reported since the last call
// (statusReport) and clears the report; nil when there was none. Call it
// after the stream was synchronized (Sync, ToData), when the kernels'
// writes are visible.
func (b *Backend) statusError() error {
	p, ok := statusWords.Load(b)
	if !ok {
		return nil
	}
	w := (*[4]uint32)(p.(unsafe.Pointer))
	var words [4]uint32
	if words[0] = atomic.LoadUint32(&w[0]); words[0] == 0 {
		return nil
	}
	for i := 1; i < 4; i++ {
		words[i] = atomic.LoadUint32(&w[i])
	}
	atomic.StoreUint32(&w[0], 0)
	return statusReport(b.id, words)
}

// statusReport turns the words of a status report of device id into an
// error wrapping backend.ErrExecution, nil when w[0] is 0: for an
// out-of-range index one that names the device, the op, the index and
// the axis size; for a zero integer divisor one that names the device,
// the op ("div", "floor_div", "rem", "mod") and the dtype.
func statusReport(id backend.DeviceID, w [4]uint32) error {
	code := w[0]
	switch {
	case code == 0:
		return nil
	case code&statusDivide != 0:
		op := ir.BinaryOp(code &^ statusDivide)
		return fmt.Errorf("%v: %w: %s: integer division by zero (%v operands)", id, backend.ErrExecution, op, ir.DType(w[1]))
	}
	op := "indexing"
	if int(code) < len(statusOps) && statusOps[code] != "" {
		op = statusOps[code]
	}
	idx := int64(uint64(w[1]) | uint64(w[2])<<32)
	return fmt.Errorf("%v: %w: %s: index %d is out of range for an axis of size %d", id, backend.ErrExecution, op, idx, w[3])
}
