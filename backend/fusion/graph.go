package fusion

import (
	"fmt"

	"github.com/emberml/ember/backend"
)

var _ backend.GraphRecorder = (*Backend)(nil)

// recorder returns the wrapped backend's graph recorder, or an error
// wrapping backend.ErrGraphsUnsupported naming the device.
func (b *Backend) recorder() (backend.GraphRecorder, error) {
	gr, ok := backend.As[backend.GraphRecorder](b.inner)
	if !ok {
		return nil, fmt.Errorf("%v: %w", b.ID(), backend.ErrGraphsUnsupported)
	}
	return gr, nil
}

// BeginGraph computes everything queued (so that no earlier work is
// recorded) and starts recording on the wrapped backend
// (backend.GraphRecorder). Without a recorder below it returns an error
// wrapping backend.ErrGraphsUnsupported.
func (b *Backend) BeginGraph() error {
	gr, err := b.recorder()
	if err != nil {
		return err
	}
	b.drainAll()
	b.waitFlights()
	return gr.BeginGraph()
}

// EndGraph computes everything queued while recording, so that the graph
// holds it, and ends the wrapped backend's recording.
func (b *Backend) EndGraph() (backend.DeviceGraph, error) {
	gr, err := b.recorder()
	if err != nil {
		return nil, err
	}
	b.drainAll()
	b.waitFlights()
	return gr.EndGraph()
}

// NewStatic is the wrapped backend's (it panics as Exec does without a
// recorder below).
func (b *Backend) NewStatic(shape []int, dt backend.DType) backend.Tensor {
	gr, err := b.recorder()
	if err != nil {
		panic(err)
	}
	return gr.NewStatic(shape, dt)
}

// CopyInto computes src if it is pending and copies it into dst on the
// wrapped backend.
func (b *Backend) CopyInto(dst, src backend.Tensor) error {
	gr, err := b.recorder()
	if err != nil {
		return err
	}
	return gr.CopyInto(b.Inner(dst), b.Inner(src))
}

var _ backend.Keeper = (*Backend)(nil)

// Keep marks x, when it is one of b's pending tensors, as asked for: the
// drain of its stream writes it (backend.Keeper).
func (b *Backend) Keep(x backend.Tensor) {
	t, ok := x.(*Tensor)
	if !ok || t.owner != b {
		return
	}
	b.mu.Lock()
	if t.t == nil && t.st != nil {
		t.want = true
	}
	b.mu.Unlock()
}
