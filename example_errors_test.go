package ember_test

import (
	"errors"
	"fmt"

	"github.com/emberml/ember"
)

// Tensor methods panic with an *Error on misuse (shapes that do not fit,
// a wrong dtype, operands on different devices, a bad axis), as PyTorch
// raises. Try is the error-returning form: it turns such a panic into the
// error, which names the op, each operand's shape, dtype and device, and
// what was expected.
func ExampleTry() {
	cpu := ember.CPU()
	a := ember.Zeros([]int{2, 3}, cpu)
	b := ember.Zeros([]int{2, 3}, cpu)
	err := ember.Try(func() { a.Matmul(b) })
	fmt.Println(err)

	var e *ember.Error
	if errors.As(err, &e) {
		fmt.Println(e.Op, len(e.Operands))
	}

	err = ember.Try(func() { a.Add(ember.Zeros([]int{2}, ember.Flex())) })
	fmt.Println(err)

	fmt.Println(ember.Try(func() { a.Add(b) }))
	// Output:
	// ember: matmul: inner dimensions differ: lhs has 3 columns, rhs has 2 rows (lhs [2 3] f32 on cpu; rhs [2 3] f32 on cpu)
	// matmul 2
	// ember: add: operands are on different devices; move them with ToDevice first (lhs [2 3] f32 on cpu; rhs [2] f32 on flex)
	// <nil>
}
