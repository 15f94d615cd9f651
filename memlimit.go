package ember

import (
	"fmt"
	"math"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/internal/sysmem"
)

var (
	hostMemOnce  sync.Once
	hostMemBytes uint64
)

// hostMemory is the machine's physical memory in bytes (MaxUint64 where
// unknown); see memlimit_linux.go.
func hostMemory() uint64 {
	hostMemOnce.Do(func() {
		hostMemBytes = sysmem.Total()
		if hostMemBytes == 0 {
			hostMemBytes = math.MaxUint64
		}
	})
	return hostMemBytes
}

func failAlloc(op string, shape []int, dt DType, n uint64, where string, limit uint64) {
	panic(&Error{Op: op, Msg: fmt.Sprintf("a %v tensor of shape %v needs %d bytes, more than %s %d bytes of memory", dt, shape, n, where, limit), Err: ErrOutOfMemory})
}

// memoryLimit is the most bytes one tensor of this device could take: the
// device's memory where its backend reports it (GPUs), else the host's.
// Computed once per device.
func (s *deviceState) memoryLimit() (uint64, string) {
	s.limitOnce.Do(func() {
		s.limit, s.limitWhere = hostMemory(), "this machine's"
		if b, err := s.open(); err == nil {
			if dd, ok := backend.As[backend.DeviceDescriber](b); ok {
				if m := dd.DeviceInfo().MemoryBytes; m > 0 {
					s.limit, s.limitWhere = m, s.id.String()+"'s"
				}
			}
		}
	})
	return s.limit, s.limitWhere
}
