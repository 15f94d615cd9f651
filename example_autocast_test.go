package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// Autocast is automatic mixed precision (torch.autocast) as a device: ops
// on dev.Autocast(ember.BF16) run matrix products in BF16 and sums,
// softmax and norms in F32, whatever their operands' dtypes. Here the
// parameter w stays F32 on the autodiff device (a master weight) and the
// input x is made on the autocast device, so x·w runs in BF16; the
// gradient flows back through the casts and reaches w in F32.
func ExampleDevice_Autocast() {
	dev := ember.CPU().Autodiff()
	amp := dev.Autocast(ember.BF16)
	fmt.Println(amp)

	w := ember.FromFloats([]float32{0.5, -1, 2, 0.25}, []int{2, 2}, dev).RequireGrad()
	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, amp)
	y := x.Matmul(w)       // BF16: a matrix product
	p := y.Softmax(1)      // F32: softmax
	loss := p.Mul(p).Sum() // F32: the product promotes, the sum runs in F32
	fmt.Println(y.DType(), p.DType(), loss.DType(), y.Device())

	g := loss.Backward().Of(w)
	fmt.Println("gradient of w:", g.DType(), g.Shape())

	// Outside the autocast device nothing changes.
	fmt.Println(x.ToDevice(dev).Matmul(w).DType())
	// Output:
	// cpu+autodiff+autocast:bf16
	// bf16 f32 f32 cpu+autodiff+autocast:bf16
	// gradient of w: f32 [2 2]
	// f32
}
