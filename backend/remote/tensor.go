package remote

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/emberml/ember/ir"
)

// Tensor is a client's handle to one tensor of its session: the number
// the server knows it by, its shape and dtype. When the handle becomes
// unreachable its cleanup queues a drop, which the next batch carries,
// and the server frees the tensor. It implements backend.NumberedTensor.
type Tensor struct {
	c       *Client
	id      ir.TensorID
	shape   []int
	dtype   ir.DType
	cleanup runtime.Cleanup
	// err is set when the tensor was never sent (its op failed on the
	// client or the connection was lost first); reads return it.
	err error
	// host is the value, for small tensors uploaded or read once
	// (tensors are immutable); set at creation or by a read.
	host atomic.Pointer[[]byte]
}

// Shape is the tensor's shape (do not modify).
func (t *Tensor) Shape() []int { return t.shape }

// DType is the tensor's dtype.
func (t *Tensor) DType() ir.DType { return t.dtype }

// TensorID is the number the session knows the tensor by (never 0).
func (t *Tensor) TensorID() ir.TensorID { return t.id }

// String describes the handle, for debugging.
func (t *Tensor) String() string {
	return fmt.Sprintf("remote.Tensor(%s #%d %v %v)", t.c.name, t.id, t.dtype, t.shape)
}

// numBytes is the tensor's size in bytes (the largest int64 when it
// overflows, which no inferred op produces).
func (t *Tensor) numBytes() int64 {
	hi, lo := bits.Mul64(uint64(ir.NumElements(t.shape)), uint64(t.dtype.Size()))
	if hi != 0 || lo > 1<<62 {
		return 1 << 62
	}
	return int64(lo)
}

// failLocal marks a tensor that was never sent: its reads fail with err
// and its drop is not sent.
func (t *Tensor) failLocal(err error) {
	t.err = err
	t.cleanup.Stop()
	t.c.live.Add(-t.numBytes())
}

func (t *Tensor) cached() []byte {
	if p := t.host.Load(); p != nil {
		return *p
	}
	return nil
}

func (t *Tensor) setCached(b []byte) { t.host.Store(&b) }
