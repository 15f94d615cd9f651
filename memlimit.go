package ember

import (
	"fmt"
	"math"
	"sync"

	"github.com/emberml/ember/backend"
)

var (
	hostMemOnce  sync.Once
	hostMemBytes uint64
)

// hostMemory is the machine's physical memory in bytes (MaxUint64 where
// unknown); see memlimit_linux.go.
func hostMemory() uint64 {
	hostMemOnce.Do(func() {
		hostMemBytes = totalHostMemory()
		if hostMemBytes == 0 {
			hostMemBytes = math.MaxUint64
		}
	})
	return hostMemBytes
}

// checkAlloc panics with an *Error wrapping ErrOutOfMemory when a tensor of
// shape and dt could never fit in the host's memory, instead of letting the
// Go runtime abort the process with an unrecoverable out-of-memory error.
func checkAlloc(op string, shape []int, dt DType) {
	n := uint64(backend.NumElements(shape)) * uint64(dt.Size())
	if limit := hostMemory(); n > limit {
		panic(&Error{Op: op, Msg: fmt.Sprintf("a %v tensor of shape %v needs %d bytes, more than this machine's %d bytes of memory", dt, shape, n, limit), Err: ErrOutOfMemory})
	}
}
