package ember_test

import (
	"fmt"

	"github.com/emberml/ember"
)

// A chain of elementwise ops on a cpu or cuda device is queued and runs as
// one pass over memory when it is read (here by Float32s), with the same
// values as one kernel per op. EMBER_FUSION=0 (or DeviceConfig.WithFusion
// before the device's first operation) runs them one by one.
func ExampleDevice_Fusion() {
	dev := ember.CPU()
	x := ember.FromFloats([]float32{-1, 0, 1, 2}, []int{4}, dev)
	y := x.MulScalar(2).AddScalar(1).Relu().Mul(x)
	fmt.Println(y.Float32s())
	// Output: [-0 0 3 10]
}
