package backend

import "errors"

// Sentinel errors. The root package re-exports each under the same name
// (ember.ErrOutOfMemory is ErrOutOfMemory), so errors.Is works with either.
var (
	// ErrOutOfMemory: an allocation failed after the allocator released its cache.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrBackendUnavailable: the device's backend is not in this build, or
	// its library or hardware is missing.
	ErrBackendUnavailable = errors.New("backend unavailable")
	// ErrAlreadyInitialized: a device's settings were configured twice, or
	// after its first tensor operation.
	ErrAlreadyInitialized = errors.New("device already initialized")
	// ErrUnsupportedDType: the device cannot store or compute in the dtype.
	ErrUnsupportedDType = errors.New("unsupported dtype")
	// ErrExecution: queued device work failed asynchronously.
	ErrExecution = errors.New("execution failed")
	// ErrInvalidDevice: the operation needs another kind of device.
	ErrInvalidDevice = errors.New("invalid device")
)
