package ember_test

import (
	"bytes"
	"fmt"

	"github.com/emberml/ember"
)

// A capture device records a function's ops as a graph, which then runs on
// any device, here after a round trip through its file format.
func ExampleDevice_CaptureScope() {
	dev := ember.Capture()
	// Data moved onto the capture device: w becomes a value of the graph,
	// x an input because the scope declares it so.
	w := ember.FromFloats([]float32{1, 2, 3}, []int{3}, ember.CPU()).ToDevice(dev)
	x := ember.FromFloats([]float32{0, 0, 0}, []int{3}, ember.CPU()).ToDevice(dev)
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.Mul(w).AddScalar(1)
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID()})
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(g.Operations), "ops,", len(g.Inputs), "input,", len(g.Values), "value")

	var file bytes.Buffer
	if _, err := g.WriteTo(&file); err != nil {
		panic(err)
	}
	g, err = ember.ReadGraph(&file)
	if err != nil {
		panic(err)
	}
	outs, err := g.Run(ember.CPU(), ember.FromFloats([]float32{10, 20, 30}, []int{3}, ember.CPU()))
	if err != nil {
		panic(err)
	}
	fmt.Println(outs[0].Float32s())
	// Output:
	// 3 ops, 1 input, 1 value
	// [11 41 91]
}
