package ndarray

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestDriver(t *testing.T) {
	d, ok := backend.Lookup("ndarray")
	if !ok {
		t.Fatal("driver ndarray is not registered")
	}
	if p, isP := d.(backend.Placeholder); isP && p.Placeholder() {
		t.Fatal("driver ndarray is still the placeholder")
	}
	fx, _ := backend.Lookup("flex")
	if fx == nil || d.Priority() >= fx.Priority() {
		t.Errorf("priority %d must be below flex's", d.Priority())
	}
	if devs := d.Devices(); !slices.Equal(devs, []backend.DeviceID{{Type: "ndarray"}}) {
		t.Errorf("Devices() = %v", devs)
	}
	if s, ok := d.(interface{ SingleDevice() bool }); !ok || !s.SingleDevice() {
		t.Error("the driver must report a single device")
	}
	be, err := d.Open(backend.DeviceID{Type: "ndarray"})
	if err != nil || be.ID() != (backend.DeviceID{Type: "ndarray"}) {
		t.Fatalf("Open = %v, %v", be, err)
	}
	if info := be.(backend.DeviceDescriber).DeviceInfo(); info.Name != "ndarray" {
		t.Errorf("DeviceInfo = %+v", info)
	}
	if _, ok := be.(backend.IndexChecker); ok {
		t.Error("ndarray must leave index checks to the root package")
	}
}

func TestSupports(t *testing.T) {
	for _, k := range ir.Kinds() {
		base := ir.SpecOf(k).Decompose == nil
		for _, dt := range backend.AllDTypes {
			if got := tb.Supports(k, dt); got != base {
				t.Errorf("Supports(%v, %v) = %v, want %v", k, dt, got, base)
			}
		}
		if tb.Supports(k, backend.DType(0)) {
			t.Errorf("Supports(%v, invalid dtype) = true", k)
		}
	}
	for _, dt := range backend.AllDTypes {
		if !tb.SupportsDType(dt) {
			t.Errorf("SupportsDType(%v) = false", dt)
		}
	}
	// A fast-path kind reaching Exec is an *ir.UnsupportedError.
	x := mk(backend.F32, []int{3}, []float64{1, 2, 3})
	op := ir.Op{Kind: ir.KindCumSum, In: [3]ir.Tensor{x}}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	var ue *ir.UnsupportedError
	if err := catch(t, func() { tb.Exec(op) }); !errors.As(err, &ue) {
		t.Errorf("Exec(cumsum) panicked with %v, want *ir.UnsupportedError", err)
	}
	// Run lowers it through its decomposition onto the base kinds.
	if got := vals(t, ir.Run(tb, op)[0]); !slices.Equal(got, []float64{1, 3, 6}) {
		t.Errorf("cumsum through ir.Run = %v", got)
	}
}

// Ops and the generator are safe for concurrent use: goroutines sharing
// one backend and its tensors get the results a single goroutine gets.
func TestConcurrentUse(t *testing.T) {
	be := New(backend.DeviceID{Type: "ndarray"})
	a := be.FromData(ir.FromSlice([]float64{1, 2, 3, 4, 5, 6}, []int{2, 3}).Convert(backend.F32))
	step := func() []float64 {
		p := ir.Op{Kind: ir.KindPermute, Ints: []int{1, 0}, In: [3]ir.Tensor{a}}
		m := ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{a, ir.Apply(be, p)}}
		r := ir.Op{Kind: ir.KindRandom, Sub: uint8(ir.DistNormal), DType: backend.F64, Shape: []int{4}, Scalars: [2]float64{0, 1}}
		ir.Apply(be, r) // draws from the shared generator
		d, _ := be.ToData(ir.Apply(be, m))
		return ir.As[float64](d)
	}
	want := step()
	var wg sync.WaitGroup
	errs := make(chan []float64, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := step(); !slices.Equal(got, want) {
					errs <- got
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Errorf("concurrent result %v, want %v", got, want)
	}
}
