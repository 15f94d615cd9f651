package ember_test

import (
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
