package ember_test

import (
	"errors"
	"fmt"

	"github.com/emberml/ember"
)

// Each backend has a constructor; constructors never fail and touch no
// hardware. A device prints as its parseable name, with "+autodiff" when
// gradient tracking is on. Equal compares the hardware only.
func ExampleCPU() {
	fmt.Println(ember.CPU(), ember.Flex(), ember.CUDA(1), ember.Vulkan(ember.DiscreteGPU(0)))
	ad := ember.CPU().Autodiff()
	fmt.Println(ad, ad.IsAutodiff(), ad.Inner())
	fmt.Println(ad.Equal(ember.CPU()), ember.CPU().Equal(ember.Flex()))
	// Output:
	// cpu flex cuda:1 vulkan:discrete:0
	// cpu+autodiff true cpu
	// true false
}

// ParseDevice is the inverse of Device.String (the form EMBER_DEVICE and
// ember train --device take). It accepts exactly the printed names: "cpu",
// not "cpu:0".
func ExampleParseDevice() {
	for _, name := range []string{"cuda:1", "cpu+autodiff", "vulkan:integrated:0"} {
		d, err := ember.ParseDevice(name)
		if err != nil {
			panic(err)
		}
		fmt.Println(d, d.Type(), d.IsAutodiff(), d.String() == name)
	}
	_, err := ember.ParseDevice("cpu:0")
	fmt.Println(err != nil)
	// Output:
	// cuda:1 cuda false true
	// cpu+autodiff cpu true true
	// vulkan:integrated:0 vulkan false true
	// true
}

// Init says whether a device can run. A backend missing from this build
// (or whose library or hardware is missing here) gives a *DeviceError
// wrapping ErrBackendUnavailable, and an operation on such a device panics
// with an *Error wrapping that same cause.
func ExampleDevice_Init() {
	fmt.Println(ember.CPU().Init())

	gpu := ember.Vulkan(ember.DiscreteGPU(0))
	err := gpu.Init()
	var de *ember.DeviceError
	fmt.Println(errors.As(err, &de), de.Device, de.Op)
	fmt.Println(errors.Is(err, ember.ErrBackendUnavailable))

	err = ember.Try(func() { ember.Zeros([]int{2}, gpu) })
	fmt.Println(errors.Is(err, ember.ErrBackendUnavailable))
	// Output:
	// <nil>
	// true vulkan:discrete:0 init
	// true
	// true
}

// Enumerate lists the devices present, best backend first; with types it
// lists only those (cpu and flex are present on every machine).
func ExampleEnumerate() {
	fmt.Println(ember.Enumerate(ember.TypeCPU, ember.TypeFlex))
	fmt.Println(ember.Enumerate(ember.TypeFlex).Autodiff())
	// Output:
	// [cpu flex]
	// [flex+autodiff]
}

// DefaultDevice picks the device EMBER_DEVICE names when set, else the
// best device that runs (a GPU when there is one, else cpu). It never
// returns a device that cannot run, nor an autodiff device, so
// DefaultDevice().Autodiff() always works.
func ExampleDefaultDevice() {
	dev := ember.DefaultDevice()
	fmt.Println(dev.Init() == nil, dev.IsAutodiff(), dev.Autodiff().IsAutodiff())
	// Output:
	// true false true
}

// Autodiff is a property of the device (torch's requires_grad is
// RequireGrad on a tensor of an autodiff device). Ops on tracked tensors
// are recorded; Backward returns the gradients of the tracked leaves, and
// Detach, like torch's detach, cuts a tensor from its history.
func ExampleDevice_Autodiff() {
	dev := ember.CPU().Autodiff()
	w := ember.FromFloats([]float32{2, -1}, []int{2}, dev).RequireGrad()
	x := ember.FromFloats([]float32{3, 4}, []int{2}, dev) // data: not tracked
	y := w.Mul(x).Sum()                                   // y = 2·3 − 1·4
	fmt.Println(w.IsTracked(), x.IsTracked(), y.IsTracked(), y.Detach().IsTracked())
	g := y.Backward()
	fmt.Println(y.Item(), g.Of(w).Float32s(), g.Of(x))
	fmt.Println(g.Of(w).Device()) // gradients live on the inner device
	// Output:
	// true false true false
	// 2 [3 4] <nil>
	// cpu
}

// ToDevice is PyTorch's .to(device): data moves between devices, and a
// tracked tensor stays differentiable, so the gradient flows back to the
// device its leaf lives on.
func ExampleTensor_ToDevice() {
	flex := ember.Flex().Autodiff()
	cpu := ember.CPU().Autodiff()
	w := ember.FromFloats([]float32{1, 2, 3}, []int{3}, flex).RequireGrad()
	y := w.ToDevice(cpu).Square().Sum() // computed on cpu
	g := y.Backward().Of(w)
	fmt.Println(y.Device(), y.Item())
	fmt.Println(g.Device(), g.Float32s())
	// Output:
	// cpu+autodiff 14
	// flex [2 4 6]
}
