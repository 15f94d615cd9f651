package ember

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/autodiff"
)

// ToDevice moves x to dev. On the same hardware it only switches autodiff
// and autocast: to a non-autodiff device it returns the untracked value
// (as Inner), from a non-autodiff device to an autodiff one an untracked
// tensor, and between devices that differ only in autocast the same value,
// tracked as x is, under dev's precision policy (Device.Autocast). Otherwise
// the data is copied through the host. A tracked x moved to an autodiff
// device stays differentiable, as PyTorch's x.to(device): Backward from a
// result on dev carries the gradient back to x's graph, so the leaves x
// depends on receive theirs on their own device. It panics with an *Error
// wrapping the device's initialization error when dev cannot run.
func (x *Tensor) ToDevice(dev Device) *Tensor {
	x.need("to_device", "x")
	y, err := x.TryToDevice(dev)
	if err != nil {
		panic(&Error{Op: "to_device", Operands: []string{describe("x", x), "target " + dev.String()}, Msg: "cannot move the tensor", Err: err})
	}
	return y
}

// TryToDevice is ToDevice returning an error instead of panicking: the
// target's *DeviceError when it cannot run, or an *ExecutionError when the
// source cannot be read. A tensor on a capture device cannot leave it: moving
// it to another device is a *DeviceError wrapping ErrInvalidDevice.
func (x *Tensor) TryToDevice(dev Device) (*Tensor, error) {
	if err := dev.Init(); err != nil {
		return nil, err
	}
	if x == nil || x.t == nil {
		return nil, nilError("to_device", []string{"x"}, []*Tensor{x}, 0)
	}
	if err := checkCaptureMove(x, dev); err != nil {
		return nil, err
	}
	if x.dev.Equal(dev) {
		if x.dev.autodiff == dev.autodiff && x.dev.checkpointing == dev.checkpointing {
			if x.dev.autocast != dev.autocast { // the same value under another policy
				return wrap(dev, x.t), nil
			}
			return x, nil
		}
		inner := x.t
		if x.dev.autodiff {
			inner = x.dev.ad().Primal(x.t)
			if dev.autodiff { // another checkpointing mode: the same graph
				return wrap(dev, dev.ad().Transfer(x.dev.ad(), x.t, inner)), nil
			}
		}
		if dev.autodiff {
			return wrap(dev, dev.ad().Wrap(inner)), nil
		}
		return wrap(dev, inner), nil
	}
	inner := dev.Inner()
	y, err := x.copyTo(inner)
	if err != nil {
		return nil, err
	}
	if dev.autodiff {
		if x.dev.autodiff {
			return wrap(dev, dev.ad().Transfer(x.dev.ad(), x.t, y.t)), nil
		}
		return wrap(dev, dev.ad().Wrap(y.t)), nil
	}
	return y, nil
}

// Inner returns x's value without autodiff tracking, on the hardware
// device alone (Device.Inner: no autodiff, no autocast; x itself when x is
// already there).
func (x *Tensor) Inner() *Tensor {
	x.need("inner", "x")
	return x.ToDevice(x.dev.Inner())
}

// RequireGrad returns x marked as a leaf whose gradient Backward computes.
// x must be a float tensor on an autodiff device; otherwise it panics with
// an *Error.
func (x *Tensor) RequireGrad() *Tensor {
	x.need("require_grad", "x")
	if !x.dev.autodiff {
		fail("require_grad", []string{describe("x", x)}, "needs an autodiff device (Device.Autodiff)")
	}
	if !x.DType().IsFloat() {
		fail("require_grad", []string{describe("x", x)}, "only float tensors can require gradients")
	}
	return wrap(x.dev, x.dev.ad().RequireGrad(x.t))
}

// IsTracked reports whether x is part of an autodiff graph (a leaf that
// requires gradients or the result of ops on one); false for a nil *Tensor.
func (x *Tensor) IsTracked() bool {
	return x != nil && x.t != nil && x.dev.autodiff && x.dev.ad().IsTracked(x.t)
}

// Detach returns x without its autodiff history, on the same device.
func (x *Tensor) Detach() *Tensor {
	x.need("detach", "x")
	if !x.dev.autodiff {
		return x
	}
	return wrap(x.dev, x.dev.ad().Detach(x.t))
}

// Gradients holds the gradients computed by Backward.
type Gradients struct {
	g   *autodiff.Gradients
	dev Device
}

// Backward computes the gradients of the scalar x (one element; d x /
// d leaf) with respect to every tracked tensor it depends on. It panics
// with an *Error when x is not tracked or has more than one element (as
// PyTorch's "grad can be implicitly created only for scalar outputs"):
// for other outputs give the output gradient with BackwardWith.
func (x *Tensor) Backward() *Gradients {
	if !x.IsTracked() {
		fail("backward", []string{describe("x", x)}, "the tensor is not tracked (create inputs on an autodiff device and call RequireGrad)")
	}
	if x.NumElements() != 1 {
		fail("backward", []string{describe("x", x)}, "grad can be implicitly created only for scalar outputs; use BackwardWith with a gradient of x's shape")
	}
	return &Gradients{g: x.dev.ad().Backward(x.t), dev: x.dev}
}

// BackwardWith computes the gradients of Σ grad·x (the vector-Jacobian
// product; PyTorch's x.backward(grad)) with respect to every tracked
// tensor x depends on. grad must have x's shape and dtype and live on x's
// hardware device (tracked or not: its value is used, its history is not).
// It panics with an *Error when x is not tracked or grad does not match.
func (x *Tensor) BackwardWith(grad *Tensor) *Gradients {
	if !x.IsTracked() {
		fail("backward", []string{describe("x", x)}, "the tensor is not tracked (create inputs on an autodiff device and call RequireGrad)")
	}
	if grad == nil || grad.t == nil {
		fail("backward", []string{describe("x", x), "grad <nil>"}, "needs an output gradient")
	}
	if !grad.dev.Equal(x.dev) || grad.DType() != x.DType() || !slices.Equal(grad.shape(), x.shape()) {
		fail("backward", []string{describe("x", x), describe("grad", grad)}, "the output gradient must have x's shape and dtype, on x's device")
	}
	return &Gradients{g: x.dev.ad().BackwardWith(x.t, grad.on(x.dev.Inner())), dev: x.dev}
}

// Of returns the gradient of t (same shape and dtype) as an untracked tensor
// on the inner (non-autodiff) device, or nil when t received no gradient.
func (g *Gradients) Of(t *Tensor) *Tensor {
	if g == nil || g.g == nil || t == nil || t.t == nil || !t.dev.autodiff {
		return nil
	}
	gt, ok := g.g.Get(t.t)
	if !ok {
		return nil
	}
	return wrap(t.dev.Inner(), gt)
}

// Remove returns the gradient of t like Of and forgets it.
func (g *Gradients) Remove(t *Tensor) *Tensor {
	if g == nil || g.g == nil || t == nil || t.t == nil || !t.dev.autodiff {
		return nil
	}
	gt, ok := g.g.Remove(t.t)
	if !ok {
		return nil
	}
	return wrap(t.dev.Inner(), gt)
}

// Set makes grad the gradient of t in g, replacing the one Backward
// computed (PyTorch's assignment to t.grad), so that code between Backward
// and an optimizer's Step can rescale, clip or otherwise edit gradients:
// gradient clipping (optim.ClipGradNorm) and loss unscaling
// (optim.GradScaler) rewrite them this way. t must be a tracked tensor on
// an autodiff device; grad must have t's shape and dtype and live on t's
// hardware device (autodiff or not, tracked or not: its value is stored,
// detached). Of and Remove return it afterwards, untracked on the inner
// device. It panics with an *Error otherwise, or when g is nil. Like
// Remove, it is not safe for concurrent use with other calls on g.
func (g *Gradients) Set(t, grad *Tensor) {
	if g == nil || g.g == nil {
		fail("gradients_set", nil, "nil Gradients (use the result of Backward)")
	}
	t.need("gradients_set", "t")
	switch {
	case !t.dev.autodiff || !t.IsTracked():
		fail("gradients_set", []string{describe("t", t)}, "t is not tracked (a leaf that requires grad or a result computed from one, on an autodiff device)")
	case grad == nil || grad.t == nil:
		fail("gradients_set", []string{describe("t", t), "grad <nil>"}, "needs a gradient")
	case !grad.dev.Equal(t.dev) || grad.DType() != t.DType() || !slices.Equal(grad.shape(), t.shape()):
		fail("gradients_set", []string{describe("t", t), describe("grad", grad)}, "the gradient must have t's shape and dtype, on t's device")
	}
	g.g.Set(t.t, grad.Detach().on(t.dev.Inner()))
}

// NoGrad runs f with gradient recording switched off on every autodiff
// device for the calling goroutine: ops it calls inside f produce
// untracked tensors, while other goroutines keep recording (like
// torch.no_grad, which is per thread). Goroutines that f starts are not
// inside the scope. Calls nest; a panic in f restores recording.
func NoGrad(f func()) { autodiff.NoGrad(f) }

var _ backend.Backend = (*autodiff.Backend)(nil)
