package remote

import "time"

// Defaults of the client and server options.
const (
	// DefaultMaxFrame is the largest frame either side reads by default
	// (64 MiB); larger tensors travel in parts.
	DefaultMaxFrame = 64 << 20
	// DefaultMaxTensorBytes is the largest tensor a session may create
	// by default (4 GiB), whether uploaded or computed.
	DefaultMaxTensorBytes int64 = 4 << 30
	// DefaultMaxTensors is the most tensors a session may hold at once
	// by default.
	DefaultMaxTensors = 1 << 20
	// DefaultBatchTasks is the number of queued tasks at which the
	// client sends its batch.
	DefaultBatchTasks = 256
	// DefaultBatchBytes is the amount of queued data (encoded tasks, in
	// bytes) at which the client sends its batch: 1 MiB.
	DefaultBatchBytes = 1 << 20
	// DefaultQueueFrames is the depth of the client's send queue: the
	// number of batches that may wait for the connection before the
	// caller blocks (backpressure).
	DefaultQueueFrames = 8
	// DefaultTimeout bounds the handshake and the time a client takes to
	// find a silent or vanished server dead (5 s).
	DefaultTimeout = 5 * time.Second
	// DefaultClientTimeout is the time the server takes to find a silent
	// client dead (30 s).
	DefaultClientTimeout = 30 * time.Second
	// DefaultHostCacheBytes is the size up to which a client keeps the
	// value of a tensor it uploaded or read (tensors are immutable), so
	// reading it again needs no round trip (64 KiB).
	DefaultHostCacheBytes = 64 << 10
	// DefaultGCBytes is the amount of server memory held by tensors the
	// client has made since its last garbage collection after which it
	// starts one, so that dropped tensors are freed on the server
	// without waiting for the client's own heap to grow (256 MiB).
	DefaultGCBytes int64 = 256 << 20
)
