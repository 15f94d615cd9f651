package ember

import "github.com/emberml/ember/backend"

// copyTo copies x's value to inner, a device without autodiff on other
// hardware: directly when x's backend reaches inner's
// (backend.PeerCopier: two devices of one remote server move the tensor
// on the server), else through the host (ToData, then FromData). It
// returns the source's *ExecutionError when x cannot be read.
func (x *Tensor) copyTo(inner Device) (*Tensor, error) {
	dst := inner.backend()
	if pc, ok := backend.As[backend.PeerCopier](x.dev.Inner().backend()); ok {
		src := x.t
		if x.dev.autodiff {
			src = x.dev.ad().Primal(x.t)
		}
		t, ok, err := pc.CopyTo(src, dst)
		if err != nil {
			return nil, &ExecutionError{Device: x.dev.Inner().String(), Err: err}
		}
		if ok {
			return wrap(inner, t), nil
		}
	}
	d, err := x.ToData()
	if err != nil {
		return nil, err
	}
	return wrap(inner, dst.FromData(d)), nil
}
