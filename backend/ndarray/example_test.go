package ndarray_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// The ndarray device runs every op of the ember API, with the same values
// as Flex; programs select it by name (ember.NdArray(), or
// EMBER_DEVICE=ndarray), never by default.
func Example() {
	dev := ember.NdArray()
	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev)
	fmt.Println(dev, x.Matmul(x).Sum().Item())

	// Integers wrap at their dtype's width; integer Div truncates toward zero.
	i := ember.FromInts([]int8{127, -7}, []int{2}, dev).Cast(ember.I8)
	fmt.Println(i.AddScalar(1).Int64s(), i.Div(ember.FromInts([]int{2, 2}, []int{2}, dev).Cast(ember.I8)).Int64s())
	// Output:
	// ndarray 54
	// [-128 -6] [63 -3]
}

// Gradients on the ndarray device: the device's Autodiff decorator
// records the ops and runs their gradient rules on ndarray.
func Example_autodiff() {
	dev := ember.NdArray().Autodiff()
	w := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev).RequireGrad()
	loss := w.Matmul(w).Sum() // d/dw of sum(w·w) = 1·wᵀ + wᵀ·1
	fmt.Println(loss.Backward().Of(w).Float32s())
	// Output:
	// [7 11 9 13]
}
