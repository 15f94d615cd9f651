package backend

import "errors"

// ErrGraphsUnsupported is wrapped by the error of GraphRecorder.BeginGraph
// on a device that cannot record graphs (a decorator over a backend
// without GraphRecorder, a CUDA driver without the graph entry points).
var ErrGraphsUnsupported = errors.New("device graphs are not supported")

// GraphRecorder is implemented by backends that can record the work they
// queue into a device graph and replay it with one launch: the cuda
// backend through CUDA graphs (cuStreamBeginCapture, cuStreamEndCapture,
// cuGraphInstantiate, cuGraphLaunch; see the CUDA Programming Guide,
// "CUDA Graphs"), and the fusion decorator by forwarding to the backend it
// wraps after running what it has queued. The root package's
// CapturedGraph.Compile finds it with As.
//
// Between BeginGraph and EndGraph the backend records instead of running:
// Exec, ExecFused and CopyInto return at once and their results hold
// values only after the graph is launched. Every buffer allocated while
// recording belongs to the graph: it is never handed to work outside the
// graph, even after its tensor is dropped, so the addresses the graph
// reads and writes stay valid until the graph is closed. Buffers made by
// NewStatic before recording are where a graph's inputs live (CopyInto
// writes them before a launch) and where its results are copied to.
//
// Only one goroutine may use the device while it records; reading a
// tensor's data (ToData), Sync and anything that waits for the device fail
// while recording, and ops that cannot be recorded (none of the base
// kinds of the cuda backend) panic as Exec does.
type GraphRecorder interface {
	// BeginGraph starts recording. It returns an error when the device is
	// already recording, or one wrapping ErrGraphsUnsupported when it
	// cannot record.
	BeginGraph() error
	// EndGraph stops recording and returns the recorded graph, ready to
	// launch. After an error (including one raised by an op while
	// recording) the device is not recording any more.
	EndGraph() (DeviceGraph, error)
	// NewStatic returns a new contiguous tensor of shape and dt with
	// unspecified contents, in memory outside every graph's. It panics as
	// Exec does when the device is out of memory.
	NewStatic(shape []int, dt DType) Tensor
	// CopyInto copies src (any layout) into dst, a tensor from NewStatic of
	// src's shape and dtype. Outside recording the copy is queued at once;
	// while recording it becomes part of the graph. It returns an error for
	// mismatched shapes or dtypes or a dst that NewStatic did not make.
	CopyInto(dst, src Tensor) error
}

// DeviceGraph is a graph recorded by a GraphRecorder.
type DeviceGraph interface {
	// Launch queues one replay of the graph on the device's stream and
	// returns at once; faults surface as the device's Sync reports them.
	Launch() error
	// Close releases the graph and the memory it owns. Tensors made while
	// it was recorded must not be read afterwards. Close is idempotent.
	Close() error
}
