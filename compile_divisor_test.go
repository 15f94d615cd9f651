package ember_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// An integer division in a compiled graph keeps the graph from being
// recorded as a device graph only on devices that check divisors on the
// host (the host read cannot be recorded): on a device that checks them
// itself (backend.DivisorChecker, as CUDA) the graph is recorded. A graph
// with an integer division by a computed divisor can be captured at all
// because the capture device reads no divisor back. Values are the
// hand-computed floor quotients; a zero divisor fails the host-checked
// run with an error naming the op.
func TestCompiledIntegerDivision(t *testing.T) {
	dev, gb := graphRecorderDevice(t)
	g := captureFunc(t, [][]int{{4}, {4}}, func(xs []*ember.Tensor) []*ember.Tensor {
		return []*ember.Tensor{xs[0].Cast(ember.I32).FloorDiv(xs[1].Cast(ember.I32).AddScalar(1)).Cast(ember.F32)}
	})
	x := ember.FromFloats([]float32{7, -7, 9, 0}, []int{4}, dev)
	y := ember.FromFloats([]float32{1, 1, -4, 2}, []int{4}, dev) // divisors 2, 2, -3, 3
	want := []float64{3, -4, -3, 0}
	for _, checks := range []bool{false, true} {
		gb.mu.Lock()
		gb.divisors = checks
		gb.mu.Unlock()
		c, err := g.Compile(dev, ember.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for run := range 3 {
			outs, err := c.Run(x, y)
			if err != nil {
				t.Fatalf("divisors checked on the device %v, run %d: %v", checks, run, err)
			}
			if got := outs[0].Float64s(); bitsEqual(got, want) >= 0 {
				t.Fatalf("divisors checked on the device %v, run %d: %v, want %v", checks, run, got, want)
			}
		}
		wantMode := ember.CompiledPlan
		if checks {
			wantMode = ember.CompiledDeviceGraph
		}
		if c.Mode() != wantMode {
			t.Errorf("divisors checked on the device %v: mode %v, want %v", checks, c.Mode(), wantMode)
		}
		if !checks {
			zero := ember.FromFloats([]float32{1, -1, 1, 1}, []int{4}, dev)
			if _, err := c.Run(x, zero); err == nil || !strings.Contains(err.Error(), "floor_div") || !strings.Contains(err.Error(), "division by zero") {
				t.Errorf("a zero divisor in a host-checked plan: %v", err)
			}
		}
		c.Close()
	}
	gb.mu.Lock()
	gb.divisors = false
	gb.mu.Unlock()
}

// On cuda:0 a compiled graph with an integer division and a OneHot is
// recorded as a CUDA graph (recording refuses every host read and sync,
// so neither op reads its divisor or labels back), gives flex's values,
// and a zero divisor or a bad label in a launch is reported by the next
// Sync naming the op. It skips without a GPU.
func TestCUDACompiledIntegerDivision(t *testing.T) {
	dev := cudaDevice(t)
	g := captureFunc(t, [][]int{{4}, {4}, {6}}, func(xs []*ember.Tensor) []*ember.Tensor {
		q := xs[0].Cast(ember.I32).FloorDiv(xs[1].Cast(ember.I32).AddScalar(1)).Cast(ember.F32)
		return []*ember.Tensor{q, ember.OneHot(xs[2].Cast(ember.I64), 4)}
	})
	c, err := g.Compile(dev, ember.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in := func(d ember.Device, y, l []float32) []*ember.Tensor {
		return []*ember.Tensor{
			ember.FromFloats([]float32{7, -7, 9, 0}, []int{4}, d),
			ember.FromFloats(y, []int{4}, d),
			ember.FromFloats(l, []int{6}, d),
		}
	}
	good, labels := []float32{1, 1, -4, 2}, []float32{3, 0, 1, 2, 2, 0}
	want, err := g.Run(ember.Flex(), in(ember.Flex(), good, labels)...)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 3 {
		outs, err := c.Run(in(dev, good, labels)...)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for j := range want {
			if i := bitsEqual(outs[j].Float64s(), want[j].Float64s()); i >= 0 {
				t.Fatalf("run %d output %d: %v, flex %v", run, j, outs[j].Float64s(), want[j].Float64s())
			}
		}
	}
	if c.Mode() != ember.CompiledDeviceGraph || c.DeviceGraphError() != nil {
		t.Fatalf("mode %v, DeviceGraphError %v; want a device graph", c.Mode(), c.DeviceGraphError())
	}
	for _, bad := range []struct {
		y, l []float32
		frag string
	}{
		{[]float32{1, -1, 1, 1}, labels, "floor_div: integer division by zero"},
		{good, []float32{3, 0, 1, 4, 2, 0}, "scatter_add: index 4"},
	} {
		if _, err := c.Run(in(dev, bad.y, bad.l)...); err != nil {
			t.Fatalf("%s: the launch failed at once: %v", bad.frag, err)
		}
		if err := dev.Sync(); err == nil || !errors.Is(err, ember.ErrExecution) || !strings.Contains(err.Error(), bad.frag) || !strings.Contains(err.Error(), "cuda:0") {
			t.Errorf("Sync after a launch with bad data: %v, want an error naming %q", err, bad.frag)
		}
		if err := dev.Sync(); err != nil {
			t.Errorf("%s: reported twice: %v", bad.frag, err)
		}
	}
}
