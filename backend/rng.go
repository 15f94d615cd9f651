package backend

// RNGStater is implemented by backends whose random generator state can
// be read and put back, so that a program can save it beside a checkpoint
// and later continue the same random stream (PyTorch's
// torch.get_rng_state and set_rng_state). The root package's
// Device.RNGState and Device.SetRNGState find it with As after draining
// the decorators' queued work; a backend without it makes them return an
// error wrapping errors.ErrUnsupported.
//
// The state is opaque bytes that start with a tag naming the generator
// (for example "pcg:" for math/rand/v2's PCG), so that SetRNGState can
// refuse a state of another generator.
type RNGStater interface {
	// RNGState returns the generator's state: after SetRNGState(state)
	// the same sequence of random ops yields the values it would have
	// yielded when RNGState was called.
	RNGState() ([]byte, error)
	// SetRNGState restores a state returned by RNGState of a backend of
	// the same kind. It returns an error, changing nothing, for a state
	// it cannot read.
	SetRNGState(state []byte) error
}
