package ember

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/capture"
	"github.com/emberml/ember/ir"
)

// Capture, after Burn's Device::capture and capture_scope: a capture device
// (Capture) records the ops of a scope instead of running them, and the
// scope's graph (CapturedGraph) replays on any device (Run) and goes
// through a file (WriteTo, ReadGraph), which Burn's graphs do not.
//
// The recorder is package capture's backend; this file drives it and adds
// one decorator layer, below autodiff, that turns the recorder's panics
// (an op outside a scope) into *Errors naming the op and the device.

func init() {
	registerLayer(layer{
		name:    "capture",
		rank:    10, // below autodiff, so that backward ops are converted too
		applies: func(d Device) bool { return d.ID().Type == "capture" },
		wrap: func(inner backend.Backend, d Device) backend.Backend {
			if _, ok := inner.(*capture.Backend); !ok {
				return inner
			}
			return &captureLayer{inner: inner, name: d.Inner().String()}
		},
	})
}

// captureLayer is the root's decorator over a capture backend: it
// converts the recorder's *capture.ScopeError panics into *Error and makes
// Seed an *Error; everything else goes to the recorder.
type captureLayer struct {
	inner backend.Backend
	name  string
}

var _ backend.Wrapper = (*captureLayer)(nil)

// Unwrap returns the recorder.
func (l *captureLayer) Unwrap() backend.Backend { return l.inner }

// Supports asks the recorder (every valid kind and dtype).
func (l *captureLayer) Supports(k ir.Kind, dt DType) bool { return l.inner.Supports(k, dt) }

// Exec records op; outside a scope it panics with an *Error naming the op,
// its operands and the device, wrapping capture.ErrNoScope.
func (l *captureLayer) Exec(op ir.Op) ir.Outputs {
	defer func() {
		if r := recover(); r != nil {
			if se, ok := r.(*capture.ScopeError); ok {
				panic(l.opError(&op, se))
			}
			panic(r)
		}
	}()
	return l.inner.Exec(op)
}

// opError is the *Error of an op the recorder refused.
func (l *captureLayer) opError(op *ir.Op, se *capture.ScopeError) *Error {
	var ops []string
	if op.Kind.Valid() {
		spec := ir.SpecOf(op.Kind)
		for i := range op.NumInputs() {
			if x := op.Input(i); x != nil {
				ops = append(ops, describeOn(operandName(spec, i), x, DeviceFromID(l.inner.ID())))
			}
		}
	}
	msg := fmt.Sprintf("%s records ops only inside Device.CaptureScope, before Complete", l.name)
	if se.Err != capture.ErrNoScope {
		msg = fmt.Sprintf("cannot record on %s: %v", l.name, se.Err)
		if se.Detail != "" {
			msg += " (" + se.Detail + ")"
		}
	}
	return &Error{Op: se.Op, Operands: ops, Msg: msg, Err: se.Err}
}

// ID is the recorder's.
func (l *captureLayer) ID() backend.DeviceID { return l.inner.ID() }

// Sync returns nil: nothing runs.
func (l *captureLayer) Sync() error { return l.inner.Sync() }

// Flush does nothing.
func (l *captureLayer) Flush() { l.inner.Flush() }

// Seed panics with an *Error wrapping ErrInvalidDevice: random ops are
// recorded and sample on the device the graph replays on.
func (l *captureLayer) Seed(uint64) {
	panic(&Error{Op: "seed", Operands: []string{l.name}, Err: ErrInvalidDevice,
		Msg: "a capture device records random ops without sampling them; seed the device the graph runs on"})
}

// SupportsDType asks the recorder (every valid dtype).
func (l *captureLayer) SupportsDType(dt DType) bool { return l.inner.SupportsDType(dt) }

// FromData makes a value on the recorder.
func (l *captureLayer) FromData(d *TensorData) backend.Tensor { return l.inner.FromData(d) }

// ToData returns a value's data; a recorded result has none.
func (l *captureLayer) ToData(t backend.Tensor) (*TensorData, error) { return l.inner.ToData(t) }

// isCapture reports whether d is a capture device.
func (d Device) isCapture() bool { return d.st != nil && d.st.id.Type == "capture" }

// checkCaptureMove returns the error of moving x off a capture device to
// another device (nil for any other move): data never leaves a capture
// device, which computes nothing.
func checkCaptureMove(x *Tensor, dev Device) error {
	if !x.dev.isCapture() || x.dev.Equal(dev) {
		return nil
	}
	return &DeviceError{Device: x.dev.Inner().String(), Op: "to_device", Err: fmt.Errorf(
		"%w: a tensor cannot leave a capture device (to %v): the device records ops and computes nothing; run the captured graph there (CapturedGraph.Run)",
		ErrInvalidDevice, dev)}
}

// CaptureScope is an open recording on a capture device, passed to the
// function of Device.CaptureScope: every op on the device (from any
// goroutine) is recorded in it until Complete.
type CaptureScope struct {
	dev Device
	sc  *capture.Scope

	mu    sync.Mutex
	done  bool
	graph *CapturedGraph
	err   error
}

// CompletedCaptureScope is what CaptureScope.Complete returns and the
// function of Device.CaptureScope must return: proof that the scope was
// completed (Burn's CompletedCaptureScope).
type CompletedCaptureScope struct{ s *CaptureScope }

// Device returns the capture device the scope records (with the autodiff
// setting of the device CaptureScope was called on).
func (s *CaptureScope) Device() Device {
	if s == nil {
		panic(&Error{Op: "capture_scope", Msg: "nil *CaptureScope"})
	}
	return s.dev
}

// Complete declares the graph's boundaries — inputs, the ids (Tensor.ID)
// of tensors the caller will supply when the graph runs, and outputs, the
// ids of the results it returns — and closes the scope at once: an op on
// the device afterwards panics with an *Error (until another scope
// opens). The graph, or the *CaptureError of a rejected boundary, is
// what Device.CaptureScope returns; see CaptureError for the classes.
// Tensors the ops used that are values (data moved onto the device:
// parameters, constants) become the graph's Values unless listed as
// inputs. It panics with an *Error when the scope was already completed.
func (s *CaptureScope) Complete(inputs, outputs []TensorID) CompletedCaptureScope {
	if s == nil {
		panic(&Error{Op: "complete", Msg: "nil *CaptureScope"})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := s.dev.Inner().String()
	if s.done {
		panic(&Error{Op: "complete", Operands: []string{name}, Msg: "the capture scope was already completed"})
	}
	s.done = true
	g, err := s.sc.Complete(inputs, outputs)
	if err != nil {
		s.err = captureError(name, err)
	} else {
		s.graph = graphFrom(g)
	}
	return CompletedCaptureScope{s: s}
}

// CaptureScope records the ops f runs on the capture device d and returns
// them as a graph (Burn's capture_scope): f receives the open scope and
// must return s.Complete(inputs, outputs). d may be an autodiff capture
// device (Capture().Autodiff()): the backward ops of Backward and the
// optimizer's update are recorded too, so a whole training step can be
// captured.
//
// Errors:
//   - a *DeviceError wrapping ErrInvalidDevice when d is not a capture
//     device;
//   - a *DeviceError wrapping ErrAlreadyActive while another scope is open
//     on d (from any goroutine; a capture device opens many scopes, one
//     at a time, and scopes on different capture devices may nest);
//   - a *CaptureError for a boundary Complete rejects;
//   - an *Error when f returns without completing its scope.
//
// Methods that read their operands on the host fail inside a scope when
// the operand is a recorded result (a value reads back): integer Div,
// FloorDiv, Rem and Mod check their divisor for zeros, so on a capture
// device an integer divisor must be a value. (Gather, ScatterAdd and
// IndexSelect do not read their indices here: they are checked where the
// graph runs.)
//
// The scope is closed when CaptureScope returns, however f ends. When f
// panics with an error value (an *Error of tensor-math misuse, such as an
// op after Complete), CaptureScope returns that error; a panic with any
// other value, or a Go runtime error, propagates after the scope is
// closed (as Try does).
func (d Device) CaptureScope(f func(s *CaptureScope) CompletedCaptureScope) (g *CapturedGraph, err error) {
	name := d.Inner().String()
	if !d.isCapture() {
		return nil, &DeviceError{Device: name, Op: "capture_scope", Err: fmt.Errorf("%w: capture scopes need a capture device (ember.Capture())", ErrInvalidDevice)}
	}
	if f == nil {
		return nil, &Error{Op: "capture_scope", Operands: []string{name}, Msg: "needs a function"}
	}
	st, err := d.tryStack(false)
	if err != nil {
		return nil, err
	}
	cb, ok := backend.As[*capture.Backend](st.top)
	if !ok {
		return nil, &DeviceError{Device: name, Op: "capture_scope", Err: fmt.Errorf("%w: the device has no capture backend", ErrInvalidDevice)}
	}
	sc, err := cb.Begin()
	if err != nil {
		return nil, &DeviceError{Device: name, Op: "capture_scope", Err: err}
	}
	s := &CaptureScope{dev: d, sc: sc}
	defer func() {
		sc.Close() // a no-op when Complete closed it
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				if _, isRuntime := e.(runtime.Error); !isRuntime {
					g, err = nil, e
					return
				}
			}
			panic(r)
		}
	}()
	tok := f(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.s != s || !s.done {
		return nil, &Error{Op: "capture_scope", Operands: []string{name}, Msg: "the function must return s.Complete(inputs, outputs) of the scope it was given"}
	}
	return s.graph, s.err
}
