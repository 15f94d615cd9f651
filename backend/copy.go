package backend

// PeerCopier is implemented by backends that can copy one of their
// tensors to another backend without a round trip through the calling
// program's memory, such as two devices of one remote server (the copy
// stays on the server). The root package's Tensor.ToDevice asks the source
// backend's chain (As) before it copies through the host.
type PeerCopier interface {
	// CopyTo copies t, a tensor of this backend, to dst (the target
	// device's backend, as its Device.Backend without autodiff returns
	// it) and returns dst's tensor of the same shape, dtype and values.
	// ok is false, with a nil error, when this backend cannot reach dst
	// directly: the caller then copies through the host. A non-nil error
	// (t failed to compute, the connection is lost) names the device.
	CopyTo(t Tensor, dst Backend) (out Tensor, ok bool, err error)
}
