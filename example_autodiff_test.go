package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Backward of a scalar loss gives d loss / d x for every tracked leaf.
func ExampleTensor_Backward() {
	dev := ember.CPU().Autodiff()
	x := ember.FromFloats([]float32{1, 2, 3}, []int{3}, dev).RequireGrad()
	loss := x.Mul(x).Sum() // Σ x², d/dx = 2x
	fmt.Println(loss.Backward().Of(x).Float32s())
	// Output: [2 4 6]
}

// BackwardWith takes the gradient of a non-scalar output explicitly: here
// d(Σ g·x²)/dx = 2·x·g.
func ExampleTensor_BackwardWith() {
	dev := ember.CPU().Autodiff()
	x := ember.FromFloats([]float32{1, 2, 3}, []int{3}, dev).RequireGrad()
	y := x.Mul(x)
	g := ember.FromFloats([]float32{1, 0, -1}, []int{3}, dev)
	fmt.Println(y.BackwardWith(g).Of(x).Float32s())
	// Output: [2 0 -6]
}

// NoGrad evaluates without recording, on the calling goroutine only.
func ExampleNoGrad() {
	dev := ember.CPU().Autodiff()
	w := ember.FromFloats([]float32{0.5, -1}, []int{2}, dev).RequireGrad()
	ember.NoGrad(func() {
		fmt.Println(w.MulScalar(2).IsTracked())
	})
	fmt.Println(w.MulScalar(2).IsTracked())
	// Output:
	// false
	// true
}
