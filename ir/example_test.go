package ir_test

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// An op is a value: Infer validates it and gives its output shape and
// dtype, here for inputs known only by id, shape and dtype (Refs).
func ExampleOp_Infer() {
	x := ir.NewRef(1, []int{2, 3}, ir.F32)
	y := ir.NewRef(2, []int{3}, ir.F32)
	op := ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), In: [3]ir.Tensor{x, y}}
	fmt.Println(op.Infer(), op.Name(), op.Shape, op.DType)

	bad := ir.Op{Kind: ir.KindMatmul, In: [3]ir.Tensor{x, x}}
	fmt.Println(bad.Infer())
	// Output:
	// <nil> add [2 3] f32
	// inner dimensions differ: lhs has 3 columns, rhs has 2 rows
}

// Run executes an op on any executor; a kind the executor has no kernel
// for (MaxPool2d on flex) runs as its decomposition into base kinds. The
// builders (ir.Reduce, ir.Add, ...) infer and run one op each.
func ExampleRun() {
	be := flex.New(backend.DeviceID{Type: "flex"})
	x := be.FromData(ir.FromSlice([]float32{1, 5, 2, 4, 3, 0, 7, 6, 8}, []int{1, 1, 3, 3}))
	pool := ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
	y := ir.Apply(be, ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: pool}, In: [3]ir.Tensor{x}})
	fmt.Println(be.Supports(ir.KindMaxPool2d, ir.F32), y.Shape())

	d, _ := be.ToData(y)
	fmt.Println(ir.As[float32](d))

	s := ir.Reduce(be, ir.ReduceSum, x, 3, false)
	d, _ = be.ToData(s)
	fmt.Println(s.Shape(), ir.As[float32](d))
	// Output:
	// false [1 1 2 2]
	// [5 5 7 8]
	// [1 1 3] [8 7 21]
}
