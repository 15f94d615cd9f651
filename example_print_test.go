package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Tensors print as PyTorch prints them, with their device; fmt's
// precision and notation verbs apply to the floats.
func ExampleTensor_String() {
	cpu := ember.CPU()
	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, cpu)
	fmt.Println(x)
	y := x.DivScalar(3)
	fmt.Println(y)
	fmt.Printf("%.2f\n", y)
	fmt.Println(ember.FromInts([]int{7, 80, 900}, []int{3}, cpu))
	// Output:
	// tensor([[1., 2.],
	//         [3., 4.]], device=cpu)
	// tensor([[0.3333, 0.6667],
	//         [1.0000, 1.3333]], device=cpu)
	// tensor([[0.33, 0.67],
	//         [1.00, 1.33]], device=cpu)
	// tensor([  7,  80, 900], device=cpu)
}
