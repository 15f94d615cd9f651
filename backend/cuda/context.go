package cuda

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// enter locks the calling goroutine to its OS thread and makes the
// device's primary context current there; call the returned function when
// the driver calls are done. CUDA contexts are per OS thread and goroutines
// migrate between threads, so every entry point that calls the driver does
// this (cuCtxSetCurrent is a thread-local store in the driver: see
// bench/NOTES.md "CUDA backend" for its cost). It panics with the
// backend's fatal error after a sticky device fault.
func (b *Backend) enter() func() {
	if err := b.failed(); err != nil {
		panic(err)
	}
	runtime.LockOSThread()
	if err := cu.CtxSetCurrent(b.ctx); err != nil {
		runtime.UnlockOSThread()
		panic(b.fail(err))
	}
	return runtime.UnlockOSThread
}

// failed returns the sticky error that made the device unusable, or nil.
func (b *Backend) failed() error {
	if p := b.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// fail turns a driver error into the error the backend reports: sticky
// faults (illegal address, launch failure, ...) are recorded so that every
// later operation fails with the same error, and wrap
// backend.ErrExecution; other errors are returned wrapped with the device name.
func (b *Backend) fail(err error) error {
	var ce *cu.Error
	if errors.As(err, &ce) && ce.Sticky() {
		e := fmt.Errorf("%v: %w: %w (the device is unusable until the process restarts)", b.id, backend.ErrExecution, err)
		b.fatal.CompareAndSwap(nil, &e)
		return *b.fatal.Load()
	}
	if errors.As(err, &ce) && ce.Code == cu.ErrorOutOfMemory && !errors.Is(err, backend.ErrOutOfMemory) {
		return fmt.Errorf("%v: %w: %w", b.id, backend.ErrOutOfMemory, err)
	}
	return fmt.Errorf("%v: %w", b.id, err)
}

// failf is fail for an error of the operation described by format and
// args: sticky faults return the recorded fatal error, others read
// "cuda:0: <operation>: <driver error>".
func (b *Backend) failf(err error, format string, args ...any) error {
	var ce *cu.Error
	if errors.As(err, &ce) && ce.Sticky() {
		return b.fail(err)
	}
	if errors.As(err, &ce) && ce.Code == cu.ErrorOutOfMemory && !errors.Is(err, backend.ErrOutOfMemory) {
		err = fmt.Errorf("%w: %w", backend.ErrOutOfMemory, err)
	}
	return fmt.Errorf("%v: %s: %w", b.id, fmt.Sprintf(format, args...), err)
}

// must panics with b.fail(err) when err is not nil.
func (b *Backend) must(err error) {
	if err != nil {
		panic(b.fail(err))
	}
}
