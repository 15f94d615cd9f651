package ember

import (
	"errors"
	"fmt"

	"github.com/emberml/ember/backend"
)

// RNGState returns the state of the device's random generator, the one
// Seed seeds and random ops (Randn, Rand, Bernoulli, Dropout, parameter
// initialization) draw from, as opaque bytes: after SetRNGState(state)
// the same sequence of random ops yields the same values it would have
// yielded right after this call (PyTorch's torch.get_rng_state). It first
// waits for the device's queued work (Sync), so random ops already called
// have drawn their values. Autodiff and checkpointing variants of a
// device share its generator.
//
// Errors: an unusable device, a failed Sync, and, wrapping
// errors.ErrUnsupported, a backend that cannot report its generator's
// state (flex, cpu, ndarray and cuda can; a remote device cannot yet).
func (d Device) RNGState() ([]byte, error) {
	r, err := d.rngStater("RNGState")
	if err != nil {
		return nil, err
	}
	st, err := r.RNGState()
	if err != nil {
		return nil, fmt.Errorf("ember: %v: RNGState: %w", d.Inner(), err)
	}
	return st, nil
}

// SetRNGState puts back a generator state that RNGState returned on a
// device of the same backend (PyTorch's torch.set_rng_state); flex, cpu
// and ndarray share one generator kind, so their states are
// interchangeable. It waits for the device's queued work first. Errors:
// those of RNGState, and a state the backend cannot read (of another
// backend, or corrupt), which changes nothing.
func (d Device) SetRNGState(state []byte) error {
	r, err := d.rngStater("SetRNGState")
	if err != nil {
		return err
	}
	if err := r.SetRNGState(state); err != nil {
		return fmt.Errorf("ember: %v: %w", d.Inner(), err)
	}
	return nil
}

// rngStater drains the device and finds its generator.
func (d Device) rngStater(op string) (backend.RNGStater, error) {
	st, err := d.tryStack(false)
	if err != nil {
		return nil, err
	}
	if err := d.Sync(); err != nil {
		return nil, err
	}
	r, ok := backend.As[backend.RNGStater](st.top)
	if !ok {
		return nil, fmt.Errorf("ember: %v: %s: the backend cannot report its random generator's state: %w", d.Inner(), op, errors.ErrUnsupported)
	}
	return r, nil
}
