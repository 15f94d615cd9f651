package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// FromFloats is torch.tensor: the values are given row-major with the
// shape, and the tensor takes the device's float dtype (F32 unless
// Device.Configure says otherwise), whatever Go float type holds them.
func ExampleFromFloats() {
	cpu := ember.CPU()
	x := ember.FromFloats([]float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, cpu)
	fmt.Println(x.Shape(), x.DType(), x.Device())
	fmt.Println(x)
	// Output:
	// [2 3] f32 cpu
	// tensor([[1., 2., 3.],
	//         [4., 5., 6.]], device=cpu)
}

// Full, Zeros and Ones fill a shape with one value; Arange counts in the
// device's int dtype, Linspace spaces floats evenly.
func ExampleFull() {
	cpu := ember.CPU()
	fmt.Println(ember.Full([]int{2, 2}, 0.5, cpu).Float32s())
	fmt.Println(ember.Ones([]int{3}, cpu).Float32s())
	a := ember.Arange(0, 5, cpu)
	fmt.Println(a.Int64s(), a.DType())
	fmt.Println(ember.Linspace(0, 1, 5, cpu).Float32s())
	// Output:
	// [0.5 0.5 0.5 0.5]
	// [1 1 1]
	// [0 1 2 3 4] i64
	// [0 0.25 0.5 0.75 1]
}

// Random ops draw from the device's generator: after the same Seed the
// same ops give the same values on the same backend (torch.manual_seed).
func ExampleRandom() {
	cpu := ember.CPU()
	cpu.Seed(42)
	a := ember.Random([]int{2, 3}, ember.Uniform(-1, 1), cpu)
	cpu.Seed(42)
	b := ember.Random([]int{2, 3}, ember.Uniform(-1, 1), cpu)
	fmt.Printf("%.4f\n", a.Float32s())
	fmt.Println(a.Shape(), a.Eq(b).All().Item() == 1)
	lo, hi := a.Min().Item(), a.Max().Item()
	fmt.Println(lo >= -1, hi < 1)
	// Output:
	// [0.5804 0.8789 -0.3229 0.8985 -0.2557 0.7150]
	// [2 3] true
	// true true
}

// Binary ops broadcast as NumPy and PyTorch do: shapes are aligned from
// the last axis, and an axis of size 1 (or a missing one) stretches to
// the other operand's size. Here [2, 1] + [3] gives [2, 3].
func ExampleTensor_Add() {
	cpu := ember.CPU()
	col := ember.FromFloats([]float32{10, 20}, []int{2, 1}, cpu)
	row := ember.FromFloats([]float32{1, 2, 3}, []int{3}, cpu)
	sum := col.Add(row)
	fmt.Println(sum.Shape(), sum.Float32s())
	out, ok := ember.BroadcastShapes([]int{4, 1, 5}, []int{3, 1})
	fmt.Println(out, ok)
	// Output:
	// [2 3] [11 12 13 21 22 23]
	// [4 3 5] true
}

// Reshape, Permute and Transpose rearrange axes (views where the layout
// allows, like PyTorch's view); -1 infers one size.
func ExampleTensor_Reshape() {
	cpu := ember.CPU()
	x := ember.Arange(0, 6, cpu).Reshape(2, -1)
	fmt.Println(x.Shape(), x.Int64s())
	t := x.Transpose()
	fmt.Println(t.Shape(), t.Int64s())
	fmt.Println(x.Unsqueeze(0).Shape(), x.Flatten(0, -1).Shape())
	// Output:
	// [2 3] [0 1 2 3 4 5]
	// [3 2] [0 3 1 4 2 5]
	// [1 2 3] [6]
}

// Slice takes one Range per leading axis, with Python's slicing rules:
// x[:, 1:] is Slice(All(), R(1, 3)) and x[::-1] is Slice(Reverse()).
// IndexSelect picks whole rows (torch.index_select).
func ExampleTensor_Slice() {
	cpu := ember.CPU()
	x := ember.Arange(0, 12, cpu).Reshape(3, 4)
	fmt.Println(x.Slice(ember.All(), ember.R(1, 3)).Int64s())
	fmt.Println(x.Slice(ember.Reverse()).Slice(ember.R(0, 1)).Int64s())
	fmt.Println(x.Slice(ember.R(-1, 3)).Int64s())
	rows := ember.FromInts([]int{2, 0}, []int{2}, cpu)
	fmt.Println(x.IndexSelect(0, rows).Int64s())
	// Output:
	// [1 2 5 6 9 10]
	// [8 9 10 11]
	// [8 9 10 11]
	// [8 9 10 11 0 1 2 3]
}

// Reading a result copies it to the host: Float32s, Float64s, Int64s and
// Item convert as they read, and panic on a device failure; ToData returns
// the raw TensorData (shape, dtype, little-endian bytes) and reports a
// device failure as an error.
func ExampleTensor_ToData() {
	cpu := ember.CPU()
	x := ember.FromFloats([]float32{1.5, -2, 3.25}, []int{3}, cpu)
	y := x.MulScalar(2)
	data, err := y.ToData()
	if err != nil {
		panic(err)
	}
	fmt.Println(data.Shape, data.DType, len(data.Bytes), "bytes")
	fmt.Println(data.Float32s())
	fmt.Printf("%.4f\n", y.Sum().Item())
	// Output:
	// [3] f32 12 bytes
	// [3 -4 6.5]
	// 5.5000
}

// Reductions take an axis and a keepDim flag (PyTorch's dim and keepdim);
// full reductions return rank-0 tensors.
func ExampleTensor_SumAxis() {
	cpu := ember.CPU()
	x := ember.FromFloats([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, cpu)
	fmt.Println(x.SumAxis(0, false).Float32s(), x.SumAxis(1, true).Shape())
	fmt.Println(x.Sum().Shape(), x.Sum().Item())
	fmt.Printf("%.4f\n", x.MeanAxis(-1, false).Float32s())
	// Output:
	// [5 7 9] [2 1]
	// [] 21
	// [2.0000 5.0000]
}

// Matmul multiplies the last two axes and broadcasts the leading ones
// (torch.matmul).
func ExampleTensor_Matmul() {
	cpu := ember.CPU()
	a := ember.FromFloats([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, cpu)
	b := ember.FromFloats([]float32{1, 0, 0, 1, 1, 1}, []int{3, 2}, cpu)
	c := a.Matmul(b)
	fmt.Println(c.Shape(), c.Float32s())
	// Output: [2 2] [4 5 10 11]
}
