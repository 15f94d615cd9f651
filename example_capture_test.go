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

// A compiled graph runs many times with one of its inputs carried from
// run to run: here a running sum s ← 0.5·s + x over three batches. On
// CUDA the runs from the second on would be CUDA graph launches.
func ExampleCapturedGraph_Compile() {
	dev := ember.Capture()
	s := ember.FromFloats([]float32{0, 0}, []int{2}, ember.CPU()).ToDevice(dev)
	x := ember.FromFloats([]float32{0, 0}, []int{2}, ember.CPU()).ToDevice(dev)
	g, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		next := s.MulScalar(0.5).Add(x)
		return sc.Complete([]ember.TensorID{s.ID(), x.ID()}, []ember.TensorID{next.ID()})
	})
	if err != nil {
		panic(err)
	}
	cpu := ember.CPU()
	c, err := g.Compile(cpu, ember.CompileOptions{Carry: []ember.GraphCarry{{Output: 0, Input: 0}}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	start := ember.FromFloats([]float32{8, 0}, []int{2}, cpu)
	for i, batch := range [][]float32{{1, 2}, {1, 2}, {1, 2}} {
		in := []*ember.Tensor{nil, ember.FromFloats(batch, []int{2}, cpu)}
		if i == 0 {
			in[0] = start // later runs take the carried value
		}
		outs, err := c.Run(in...)
		if err != nil {
			panic(err)
		}
		fmt.Println(outs[0].Float32s())
	}
	fmt.Println(c.Runs(), "runs,", c.Mode())
	// Output:
	// [5 2]
	// [3.5 3]
	// [2.75 3.5]
	// 3 runs, plan
}
