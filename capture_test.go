package ember_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/capture"
	"github.com/emberml/ember/ir"
)

// onCapture moves host values of the given shape onto dev as a value.
func onCapture(vals []float32, shape []int, dev ember.Device) *ember.Tensor {
	return ember.FromFloats(vals, shape, ember.Flex()).ToDevice(dev)
}

// recorder returns the capture backend of dev.
func recorder(t *testing.T, dev ember.Device) *capture.Backend {
	t.Helper()
	cb, ok := backend.As[*capture.Backend](dev.Backend())
	if !ok {
		t.Fatalf("%v has no capture backend", dev)
	}
	return cb
}

// The seed's first check: repeated empty scopes on one capture device
// return empty graphs.
func TestCaptureRepeatedEmptyScopes(t *testing.T) {
	dev := ember.Capture()
	for i := range 3 {
		g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
			return s.Complete(nil, nil)
		})
		if err != nil {
			t.Fatalf("scope %d: %v", i, err)
		}
		if g == nil || len(g.Operations) != 0 || len(g.Inputs) != 0 || len(g.Outputs) != 0 || len(g.Values) != 0 {
			t.Fatalf("scope %d: graph %+v, want empty", i, g)
		}
	}
}

// The seed's second check: a scope on DefaultDevice (or any device that is
// not a capture device) returns ErrInvalidDevice.
func TestCaptureScopeNeedsCaptureDevice(t *testing.T) {
	for _, dev := range []ember.Device{ember.DefaultDevice(), ember.CPU().Autodiff(), ember.Flex(), {}} {
		called := false
		g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
			called = true
			return s.Complete(nil, nil)
		})
		var de *ember.DeviceError
		if g != nil || !errors.Is(err, ember.ErrInvalidDevice) || !errors.As(err, &de) || called {
			t.Errorf("%v: graph %v, error %v (called %v), want a *DeviceError wrapping ErrInvalidDevice", dev, g, err, called)
		}
	}
}

// The seed's third check: inside a scope the capture device supports F32,
// F64, BF16, I32 and Bool (stored Native), and every other dtype.
func TestCaptureSupportsDTypes(t *testing.T) {
	dev := ember.Capture()
	_, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		for _, dt := range []ember.DType{ember.F32, ember.F64, ember.BF16, ember.I32, ember.Bool} {
			if !s.Device().SupportsDType(dt) {
				t.Errorf("SupportsDType(%v) = false", dt)
			}
		}
		if b := s.Device().Settings().BoolDType; b != ember.BoolNative {
			t.Errorf("bool store %v, want Native", b)
		}
		for _, dt := range backend.AllDTypes {
			if !dev.SupportsDType(dt) || !dev.Autodiff().SupportsDType(dt) {
				t.Errorf("SupportsDType(%v) = false", dt)
			}
		}
		if dev.SupportsDType(ember.DType(200)) {
			t.Error("an invalid dtype is supported")
		}
		return s.Complete(nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Capture devices have increasing indices that are never reused, and an
// index named by ParseDevice before Capture reached it is skipped.
func TestCaptureDeviceIndices(t *testing.T) {
	a, b := ember.Capture(), ember.Capture()
	if a.Equal(b) || b.Index() <= a.Index() {
		t.Fatalf("Capture() gave %v then %v", a, b)
	}
	named, err := ember.ParseDevice(fmt.Sprintf("capture:%d", b.Index()+1))
	if err != nil {
		t.Fatal(err)
	}
	c := ember.Capture()
	if c.Equal(named) || c.Index() <= b.Index() {
		t.Fatalf("Capture() reused %v (named by ParseDevice): got %v", named, c)
	}
	if got := c.String(); got != fmt.Sprintf("capture:%d", c.Index()) {
		t.Errorf("String() = %q", got)
	}
	if p, err := ember.ParseDevice(c.String()); err != nil || !p.Equal(c) {
		t.Errorf("ParseDevice(%q) = %v, %v", c.String(), p, err)
	}
	if err := c.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	for _, d := range ember.Enumerate() {
		if d.Type().String() == "capture" {
			t.Errorf("Enumerate lists %v", d)
		}
	}
}

// A scope records each op with its output shape and dtype; values become
// the graph's Values and declared inputs its Inputs; replayed on every
// device, the graph computes exp(x·w + b) as a float64 loop does.
func TestCaptureRecordsOps(t *testing.T) {
	dev := ember.Capture()
	xv := []float32{0.5, -1, 0.25, 2, -0.75, 1.5}
	wv := []float32{0.3, -0.2, 0.1, 0.4, -0.5, 0.6}
	bv := []float32{0.05, -0.1}
	x := onCapture(xv, []int{2, 3}, dev)
	w := onCapture(wv, []int{3, 2}, dev)
	b := onCapture(bv, []int{2}, dev)
	if x.ID() == 0 || w.ID() <= x.ID() || b.ID() <= w.ID() {
		t.Fatalf("ids %d %d %d, want increasing and non-zero", x.ID(), w.ID(), b.ID())
	}
	var y *ember.Tensor
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y = x.Matmul(w).Add(b).Exp()
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind  ir.Kind
		sub   uint8
		shape []int
	}
	wantOps := []want{{ir.KindMatmul, 0, []int{2, 2}}, {ir.KindBinary, uint8(ir.OpAdd), []int{2, 2}}, {ir.KindUnary, uint8(ir.OpExp), []int{2, 2}}}
	if len(g.Operations) != len(wantOps) {
		t.Fatalf("%d ops recorded, want %d: %+v", len(g.Operations), len(wantOps), g.Operations)
	}
	for i, w := range wantOps {
		r := g.Operations[i]
		if r.Kind != w.kind || r.Sub != w.sub || !slices.Equal(r.Shape, w.shape) || r.DType != ember.F32 {
			t.Errorf("op %d: %v/%d %v %v, want %v/%d %v f32", i, r.Kind, r.Sub, r.Shape, r.DType, w.kind, w.sub, w.shape)
		}
	}
	if r := g.Operations[0]; !slices.Equal(r.Inputs, []ember.TensorID{x.ID(), w.ID()}) {
		t.Errorf("matmul inputs %v, want [%d %d]", r.Inputs, x.ID(), w.ID())
	}
	if len(g.Inputs) != 1 || g.Inputs[0].ID != x.ID() || !slices.Equal(g.Inputs[0].Shape, []int{2, 3}) || g.Inputs[0].DType != ember.F32 {
		t.Errorf("inputs %+v", g.Inputs)
	}
	if len(g.Values) != 2 || g.Values[w.ID()] == nil || g.Values[b.ID()] == nil {
		t.Fatalf("values %v, want w and b", g.Values)
	}
	if got := ir.As[float32](g.Values[w.ID()]); !slices.Equal(got, wv) {
		t.Errorf("value w = %v, want %v", got, wv)
	}
	if !slices.Equal(g.Outputs, []ember.TensorID{y.ID()}) {
		t.Errorf("outputs %v", g.Outputs)
	}
	if err := g.Graph().Validate(); err != nil {
		t.Fatal(err)
	}
	// A float64 reference of exp(x·w + b).
	ref := make([]float64, 4)
	for i := range 2 {
		for j := range 2 {
			acc := float64(bv[j])
			for k := range 3 {
				acc += float64(xv[i*3+k]) * float64(wv[k*2+j])
			}
			ref[i*2+j] = math.Exp(acc)
		}
	}
	for _, d := range replayDevices(t) {
		outs, err := g.Run(d, ember.FromFloats(xv, []int{2, 3}, ember.Flex()).ToDevice(d))
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if !outs[0].Device().Equal(d) || !slices.Equal(outs[0].Shape(), []int{2, 2}) {
			t.Fatalf("%v: output %v", d, outs[0])
		}
		for i, v := range outs[0].Float64s() {
			if math.Abs(v-ref[i]) > 1e-6*ref[i] {
				t.Errorf("%v: element %d = %v, want %v (1e-6 relative)", d, i, v, ref[i])
			}
		}
	}
}

// captureErr runs a scope on dev whose function f returns the boundaries
// and checks that the result is the *CaptureError of class sentinel at
// (boundary, index) naming tensor id(); it also checks that the scope is
// closed afterwards.
func checkBoundaryError(t *testing.T, name string, dev ember.Device, sentinel error, boundary string, index int,
	f func() (in, out []ember.TensorID, id ember.TensorID)) *ember.CaptureError {
	t.Helper()
	var id ember.TensorID
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		in, out, bad := f()
		id = bad
		return s.Complete(in, out)
	})
	var ce *ember.CaptureError
	if g != nil || !errors.Is(err, sentinel) || !errors.As(err, &ce) {
		t.Fatalf("%s: graph %v, error %v; want a *CaptureError wrapping %v", name, g, err, sentinel)
	}
	if ce.Boundary != boundary || ce.Index != index || ce.ID != id || ce.Device != dev.Inner().String() {
		t.Errorf("%s: %+v, want %s %d tensor %d on %v", name, ce, boundary, index, id, dev.Inner())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("tensor %d", id)) || !strings.Contains(err.Error(), boundary) {
		t.Errorf("%s: message %q does not name the tensor and boundary", name, err)
	}
	// The scope is closed: an op fails, and a new scope opens.
	if err := ember.Try(func() { ember.Zeros([]int{2}, dev) }); err == nil {
		t.Errorf("%s: an op after the failed scope was recorded", name)
	}
	if _, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope { return s.Complete(nil, nil) }); err != nil {
		t.Errorf("%s: the next scope: %v", name, err)
	}
	return ce
}

// Every boundary error class, each with its boundary, index and tensor.
func TestCaptureBoundaryErrors(t *testing.T) {
	dev := ember.Capture()
	x := onCapture([]float32{1, 2, 3}, []int{3}, dev)
	w := onCapture([]float32{4, 5, 6}, []int{3}, dev)

	checkBoundaryError(t, "unknown input 0", dev, ember.ErrUnknownBoundary, "input", 0, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		return []ember.TensorID{0}, nil, 0
	})
	checkBoundaryError(t, "unknown input id", dev, ember.ErrUnknownBoundary, "input", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		return []ember.TensorID{x.ID(), 1 << 60}, nil, 1 << 60
	})
	checkBoundaryError(t, "unknown output", dev, ember.ErrUnknownBoundary, "output", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y := x.Exp()
		return []ember.TensorID{x.ID()}, []ember.TensorID{y.ID(), 1 << 61}, 1 << 61
	})
	checkBoundaryError(t, "duplicate input", dev, ember.ErrDuplicateBoundary, "input", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y := x.Mul(x)
		return []ember.TensorID{x.ID(), x.ID()}, []ember.TensorID{y.ID()}, x.ID()
	})
	checkBoundaryError(t, "duplicate output", dev, ember.ErrDuplicateBoundary, "output", 2, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y, z := x.Exp(), x.Neg()
		return []ember.TensorID{x.ID()}, []ember.TensorID{y.ID(), z.ID(), y.ID()}, y.ID()
	})
	checkBoundaryError(t, "input produced inside", dev, ember.ErrInputProduced, "input", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y := x.Exp()
		z := y.Add(w)
		return []ember.TensorID{x.ID(), y.ID()}, []ember.TensorID{z.ID()}, y.ID()
	})
	checkBoundaryError(t, "output is a value", dev, ember.ErrOutputNotProduced, "output", 0, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		_ = x.Add(w)
		return []ember.TensorID{x.ID()}, []ember.TensorID{w.ID()}, w.ID()
	})
	checkBoundaryError(t, "output is an input", dev, ember.ErrOutputNotProduced, "output", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y := x.Exp()
		return []ember.TensorID{x.ID()}, []ember.TensorID{y.ID(), x.ID()}, x.ID()
	})

	// A result of an earlier scope is a tensor of the device but neither a
	// value nor made inside the next scope: used there, it must be
	// declared.
	var earlier *ember.Tensor
	if _, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		earlier = x.Exp()
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{earlier.ID()})
	}); err != nil {
		t.Fatal(err)
	}
	ce := checkBoundaryError(t, "undeclared input", dev, ember.ErrUndeclaredInput, "input", -1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		y := x.Neg()        // op 0: x is a value, fine undeclared
		z := y.Mul(earlier) // op 1 uses the undeclared result
		return nil, []ember.TensorID{z.ID()}, earlier.ID()
	})
	if ce.Op != "op 1 (mul)" || !strings.Contains(ce.Error(), "op 1 (mul)") {
		t.Errorf("undeclared input names op %q (%v), want op 1 (mul)", ce.Op, ce)
	}
	checkBoundaryError(t, "output of an earlier scope", dev, ember.ErrOutputNotProduced, "output", 1, func() ([]ember.TensorID, []ember.TensorID, ember.TensorID) {
		z := earlier.Neg()
		return []ember.TensorID{earlier.ID()}, []ember.TensorID{z.ID(), earlier.ID()}, earlier.ID()
	})
	// Declared, the earlier result is an input with its shape and dtype.
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		z := earlier.Mul(w)
		return s.Complete([]ember.TensorID{earlier.ID()}, []ember.TensorID{z.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Inputs) != 1 || g.Inputs[0].ID != earlier.ID() || !slices.Equal(g.Inputs[0].Shape, []int{3}) || len(g.Values) != 1 || g.Values[w.ID()] == nil {
		t.Errorf("graph inputs %+v values %v", g.Inputs, g.Values)
	}
}

// dropResult records exp(x) and drops it, returning its id.
//
//go:noinline
func dropResult(x *ember.Tensor) ember.TensorID { return x.Exp().ID() }

// An output whose tensor was dropped (garbage collected) before Complete
// is ErrOutputDropped; a dropped tensor that was used is still recorded.
func TestCaptureOutputDropped(t *testing.T) {
	dev := ember.Capture()
	cb := recorder(t, dev)
	x := onCapture([]float32{1, 2}, []int{2}, dev)
	var kept *ember.Tensor
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		id := dropResult(x)
		for i := 0; i < 500 && cb.Live(id); i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if cb.Live(id) {
			t.Fatalf("tensor %d was not collected", id)
		}
		kept = x.Neg()
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{kept.ID(), id})
	})
	var ce *ember.CaptureError
	if g != nil || !errors.Is(err, ember.ErrOutputDropped) || !errors.As(err, &ce) || ce.Boundary != "output" || ce.Index != 1 {
		t.Fatalf("graph %v, error %v; want ErrOutputDropped at output 1", g, err)
	}
	// A dropped intermediate still replays: only outputs must be alive.
	g, err = dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.Exp().Neg()
		runtime.GC()
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID()})
	})
	if err != nil || len(g.Operations) != 2 {
		t.Fatalf("graph %+v, error %v", g, err)
	}
	outs, err := g.Run(ember.Flex(), ember.FromFloats([]float32{1, 2}, []int{2}, ember.Flex()))
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Float64s(); math.Abs(got[0]+math.E) > 1e-6 || math.Abs(got[1]+math.Exp(2)) > 1e-5 {
		t.Errorf("-exp([1 2]) = %v", got)
	}
}

// Ops outside a scope, and after Complete, panic with an *Error naming the
// op and the device; so does Backward outside a scope on an autodiff
// capture device.
func TestCaptureOpsOutsideScope(t *testing.T) {
	dev := ember.Capture()
	x := onCapture([]float32{1, 2}, []int{2}, dev)
	check := func(what, op string, f func()) {
		t.Helper()
		err := ember.Try(f)
		var e *ember.Error
		if !errors.As(err, &e) || e.Op != op || !errors.Is(err, ember.ErrNoCaptureScope) || !strings.Contains(err.Error(), dev.String()) {
			t.Errorf("%s: %v; want an *Error of %s naming %v, wrapping ErrNoCaptureScope", what, err, op, dev)
		}
	}
	check("exp before any scope", "exp", func() { x.Exp() })
	check("zeros before any scope", "full", func() { ember.Zeros([]int{3}, dev) })
	check("randn before any scope", "random", func() { ember.Randn([]int{3}, dev) })
	var after error
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.Exp()
		c := s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID()})
		after = ember.Try(func() { y.Neg() })
		return c
	})
	if err != nil || len(g.Operations) != 1 {
		t.Fatalf("graph %+v, error %v", g, err)
	}
	var e *ember.Error
	if !errors.As(after, &e) || e.Op != "neg" || !errors.Is(after, ember.ErrNoCaptureScope) {
		t.Errorf("an op after Complete: %v", after)
	}
	// An op after Complete that the function does not catch ends the
	// scope with its *Error.
	g, err = dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		c := s.Complete(nil, nil)
		x.Neg()
		return c
	})
	if g != nil || !errors.As(err, &e) || e.Op != "neg" {
		t.Errorf("uncaught op after Complete: graph %v, error %v", g, err)
	}

	ad := ember.Capture().Autodiff()
	w := onCapture([]float32{1, 2}, []int{2}, ad).RequireGrad()
	var loss *ember.Tensor
	if _, err := ad.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		loss = w.Mul(w).Sum()
		return s.Complete(nil, []ember.TensorID{loss.ID()})
	}); err != nil {
		t.Fatal(err)
	}
	err = ember.Try(func() { loss.Backward() })
	if !errors.As(err, &e) || !errors.Is(err, ember.ErrNoCaptureScope) {
		t.Errorf("Backward outside a scope: %v", err)
	}
}

// A second scope on a device with one open is ErrAlreadyActive, from the
// same goroutine or another; scopes on different capture devices nest.
func TestCaptureAlreadyActive(t *testing.T) {
	a, b := ember.Capture(), ember.Capture()
	xa := onCapture([]float32{1, 2}, []int{2}, a)
	xb := onCapture([]float32{3, 4}, []int{2}, b)
	var inner *ember.CapturedGraph
	var nestedErr, goroutineErr error
	ga, err := a.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		ya := xa.Exp()
		_, nestedErr = a.Autodiff().CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope { return s.Complete(nil, nil) })
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, goroutineErr = a.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope { return s.Complete(nil, nil) })
		}()
		wg.Wait()
		var err error
		inner, err = b.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
			yb := xb.Neg()
			return s.Complete([]ember.TensorID{xb.ID()}, []ember.TensorID{yb.ID()})
		})
		if err != nil {
			t.Errorf("nested scope on another device: %v", err)
		}
		za := ya.Neg()
		return s.Complete([]ember.TensorID{xa.ID()}, []ember.TensorID{za.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"nested": nestedErr, "other goroutine": goroutineErr} {
		var de *ember.DeviceError
		if !errors.Is(err, ember.ErrAlreadyActive) || !errors.As(err, &de) || de.Device != a.String() {
			t.Errorf("%s scope: %v, want a *DeviceError of %v wrapping ErrAlreadyActive", what, err, a)
		}
	}
	if len(ga.Operations) != 2 || ga.Operations[0].Sub != uint8(ir.OpExp) || ga.Operations[1].Sub != uint8(ir.OpNeg) {
		t.Errorf("outer graph %+v", ga.Operations)
	}
	if len(inner.Operations) != 1 || inner.Operations[0].Sub != uint8(ir.OpNeg) || inner.Inputs[0].ID != xb.ID() {
		t.Errorf("inner graph %+v", inner)
	}
	// Once closed, another goroutine opens a scope.
	done := make(chan error)
	go func() {
		_, err := a.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope { return s.Complete(nil, nil) })
		done <- err
	}()
	if err := <-done; err != nil {
		t.Errorf("scope after the first closed: %v", err)
	}
}

// Ops from several goroutines inside one scope are all recorded (run with
// -race).
func TestCaptureConcurrentOps(t *testing.T) {
	dev := ember.Capture()
	x := onCapture([]float32{1, 2, 3}, []int{3}, dev)
	const workers, each = 4, 25
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		outs := make([][]ember.TensorID, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				y := x
				for range each {
					y = y.Neg()
					outs[w] = append(outs[w], y.ID())
				}
			}()
		}
		wg.Wait()
		var last []ember.TensorID
		for _, o := range outs {
			last = append(last, o[len(o)-1])
		}
		return s.Complete([]ember.TensorID{x.ID()}, last)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Operations) != workers*each {
		t.Fatalf("%d ops recorded, want %d", len(g.Operations), workers*each)
	}
	outs, err := g.Run(ember.Flex(), ember.FromFloats([]float32{1, 2, 3}, []int{3}, ember.Flex()))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs { // 25 negations: -x
		if got := o.Float64s(); !slices.Equal(got, []float64{-1, -2, -3}) {
			t.Errorf("output %d = %v, want [-1 -2 -3]", i, got)
		}
	}
}

// The scope is closed whatever the function does: a panic with an error
// becomes CaptureScope's error, any other panic propagates; returning
// without Complete, or completing twice, is an *Error.
func TestCaptureGuardClosesScope(t *testing.T) {
	dev := ember.Capture()
	x := onCapture([]float32{1, 2, 3}, []int{3}, dev)
	y := onCapture([]float32{1, 2}, []int{2}, dev)
	reopens := func(what string) {
		t.Helper()
		if _, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope { return s.Complete(nil, nil) }); err != nil {
			t.Errorf("after %s: %v", what, err)
		}
		if err := ember.Try(func() { x.Exp() }); !errors.Is(err, ember.ErrNoCaptureScope) {
			t.Errorf("after %s an op was recorded: %v", what, err)
		}
	}
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		z := x.Add(y) // shapes [3] and [2] do not broadcast: an *Error
		return s.Complete(nil, []ember.TensorID{z.ID()})
	})
	var e *ember.Error
	if g != nil || !errors.As(err, &e) || e.Op != "add" {
		t.Fatalf("misuse inside the scope: graph %v, error %v", g, err)
	}
	reopens("an *Error")

	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the function's panic", r)
			}
		}()
		dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
			x.Exp()
			panic("boom")
		})
		t.Error("the panic did not propagate")
	}()
	reopens("a panic")

	g, err = dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		x.Exp()
		return ember.CompletedCaptureScope{}
	})
	if g != nil || !errors.As(err, &e) || !strings.Contains(err.Error(), "Complete") {
		t.Errorf("no Complete: graph %v, error %v", g, err)
	}
	reopens("no Complete")

	g, err = dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		s.Complete(nil, nil)
		return s.Complete(nil, nil)
	})
	if g != nil || !errors.As(err, &e) || !strings.Contains(err.Error(), "already completed") {
		t.Errorf("Complete twice: graph %v, error %v", g, err)
	}
	reopens("Complete twice")

	if _, err := dev.CaptureScope(nil); err == nil {
		t.Error("a nil function was accepted")
	}
}

// Data goes onto a capture device and never comes back: a value reads
// back, a computed tensor does not, nothing moves to another device; Seed
// is an error, Sync and Flush do nothing.
func TestCaptureDataStays(t *testing.T) {
	dev := ember.Capture()
	vals := []float32{1.5, -2, 3.25}
	x := onCapture(vals, []int{3}, dev)
	if got := x.Float32s(); !slices.Equal(got, vals) {
		t.Errorf("reading a value: %v, want %v", got, vals)
	}
	var y *ember.Tensor
	if _, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y = x.Exp()
		return s.Complete(nil, []ember.TensorID{y.ID()})
	}); err != nil {
		t.Fatal(err)
	}
	_, err := y.ToData()
	var ee *ember.ExecutionError
	if !errors.As(err, &ee) || !errors.Is(err, ember.ErrNotComputed) || ee.Device != dev.String() {
		t.Errorf("reading a computed tensor: %v, want an *ExecutionError wrapping ErrNotComputed", err)
	}
	if err := ember.Try(func() { y.Float32s() }); !errors.Is(err, ember.ErrNotComputed) {
		t.Errorf("Float32s of a computed tensor: %v", err)
	}
	if s := y.String(); !strings.Contains(s, "recorded, not computed") {
		t.Errorf("String() = %q", s)
	}
	for _, target := range []ember.Device{ember.Flex(), ember.CPU().Autodiff(), ember.Capture()} {
		for _, src := range []*ember.Tensor{x, y} {
			_, err := src.TryToDevice(target)
			var de *ember.DeviceError
			if !errors.Is(err, ember.ErrInvalidDevice) || !errors.As(err, &de) || de.Device != dev.String() {
				t.Errorf("moving %v to %v: %v, want a *DeviceError wrapping ErrInvalidDevice", src, target, err)
			}
		}
	}
	if err := ember.Try(func() { x.ToDevice(ember.Flex()) }); !errors.Is(err, ember.ErrInvalidDevice) {
		t.Errorf("ToDevice: %v", err)
	}
	// The same hardware with autodiff is no move.
	if z, err := x.TryToDevice(dev.Autodiff()); err != nil || z.ID() != x.ID() {
		t.Errorf("to the autodiff variant: %v, %v", z, err)
	}
	err = ember.Try(func() { dev.Seed(1) })
	var e *ember.Error
	if !errors.As(err, &e) || !errors.Is(err, ember.ErrInvalidDevice) || e.Op != "seed" {
		t.Errorf("Seed: %v", err)
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	dev.Flush()
}

// Tensor.ID: 0 on devices that do not number tensors, the primal's id
// through autodiff, and a gradient's id names a tensor of the graph.
func TestCaptureTensorID(t *testing.T) {
	if id := ember.Zeros([]int{2}, ember.Flex()).ID(); id != 0 {
		t.Errorf("a flex tensor has id %d", id)
	}
	if id := ember.Zeros([]int{2}, ember.CPU().Autodiff()).RequireGrad().ID(); id != 0 {
		t.Errorf("a cpu tensor has id %d", id)
	}
	if err := ember.Try(func() { (*ember.Tensor)(nil).ID() }); err == nil {
		t.Error("ID of a nil tensor did not panic")
	}
	ad := ember.Capture().Autodiff()
	w := onCapture([]float32{0.5, -1, 2}, []int{3}, ad).RequireGrad()
	if w.ID() == 0 || w.Detach().ID() != w.ID() || w.Inner().ID() != w.ID() {
		t.Errorf("ids of a tracked leaf %d, detached %d, inner %d", w.ID(), w.Detach().ID(), w.Inner().ID())
	}
	g, err := ad.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		loss := w.Mul(w).Sum() // d loss / dw = 2w
		grads := loss.Backward()
		gw := grads.Of(w)
		if gw.ID() == 0 || gw.ID() == w.ID() {
			t.Errorf("gradient id %d", gw.ID())
		}
		return s.Complete([]ember.TensorID{w.ID()}, []ember.TensorID{loss.ID(), gw.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	in := []float32{1.5, -0.25, 3}
	outs, err := g.Run(ember.Flex(), ember.FromFloats(in, []int{3}, ember.Flex()))
	if err != nil {
		t.Fatal(err)
	}
	var wantLoss float64
	for _, v := range in {
		wantLoss += float64(v) * float64(v)
	}
	if got := outs[0].Item(); math.Abs(got-wantLoss) > 1e-6*wantLoss {
		t.Errorf("loss %v, want %v", got, wantLoss)
	}
	for i, v := range outs[1].Float64s() {
		if want := 2 * float64(in[i]); v != want {
			t.Errorf("gradient %d = %v, want %v", i, v, want)
		}
	}
}

// Random ops are recorded and sample from the generator of the device the
// graph runs on.
func TestCaptureRandomReplays(t *testing.T) {
	dev := ember.Capture()
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		r := ember.Randn([]int{64}, dev).MulScalar(2)
		return s.Complete(nil, []ember.TensorID{r.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Operations[0]; r.Kind != ir.KindRandom || r.Sub != uint8(ir.DistNormal) || r.Scalars != [2]float64{0, 1} {
		t.Fatalf("op 0 %+v, want a normal random op", r)
	}
	flex := ember.Flex()
	flex.Seed(11)
	outs, err := g.Run(flex)
	if err != nil {
		t.Fatal(err)
	}
	flex.Seed(11)
	want := ember.Randn([]int{64}, flex).Float64s()
	for i, v := range outs[0].Float64s() {
		if v != 2*want[i] {
			t.Fatalf("element %d = %v, want 2·%v", i, v, want[i])
		}
	}
}
