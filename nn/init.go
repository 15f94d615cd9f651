package nn

import (
	"math"

	"github.com/emberml/ember"
)

// The initializers below follow torch.nn.init. They sample with the
// device's generator (Device.Seed makes them reproducible) in the device's
// float dtype and return plain, untracked tensors; layers turn them into
// parameters. They panic with an *ember.Error when a fan is not positive
// or the slope a is not finite.

// leakyReluGain is torch.nn.init.calculate_gain("leaky_relu", a):
// √(2 / (1 + a²)). a = 0 gives the ReLU gain √2.
func leakyReluGain(a float64) float64 { return math.Sqrt(2 / (1 + a*a)) }

// checkSlope panics with an *ember.Error for op when the negative slope a
// is NaN or infinite.
func checkSlope(op string, a float64) {
	if math.IsNaN(a) || math.IsInf(a, 0) {
		fail(op, nil, "slope a must be finite, got %v", a)
	}
}

func checkFan(op string, fans ...int) {
	for _, f := range fans {
		if f <= 0 {
			fail(op, nil, "fan must be positive, got %d", f)
		}
	}
}

// KaimingUniform samples a tensor of the shape from U(−b, b) with
// b = gain·√(3 / fanIn) and gain = √(2 / (1 + a²)), PyTorch's
// kaiming_uniform_ with mode "fan_in" and nonlinearity "leaky_relu" (a = 0
// for ReLU networks; PyTorch's Linear and Conv2d use a = √5, which gives
// b = 1/√fanIn).
func KaimingUniform(shape []int, fanIn int, a float64, dev ember.Device) *ember.Tensor {
	checkFan("kaiming_uniform", fanIn)
	checkSlope("kaiming_uniform", a)
	b := leakyReluGain(a) * math.Sqrt(3/float64(fanIn))
	return ember.Random(shape, ember.Uniform(-b, b), dev.Inner()).ToDevice(dev)
}

// KaimingNormal samples a tensor of the shape from N(0, σ²) with
// σ = gain / √fanIn and gain = √(2 / (1 + a²)), PyTorch's kaiming_normal_
// with mode "fan_in" and nonlinearity "leaky_relu".
func KaimingNormal(shape []int, fanIn int, a float64, dev ember.Device) *ember.Tensor {
	checkFan("kaiming_normal", fanIn)
	checkSlope("kaiming_normal", a)
	std := leakyReluGain(a) / math.Sqrt(float64(fanIn))
	return ember.Random(shape, ember.Normal(0, std), dev.Inner()).ToDevice(dev)
}

// XavierUniform samples a tensor of the shape from U(−b, b) with
// b = √(6 / (fanIn + fanOut)), PyTorch's xavier_uniform_ with gain 1.
func XavierUniform(shape []int, fanIn, fanOut int, dev ember.Device) *ember.Tensor {
	checkFan("xavier_uniform", fanIn, fanOut)
	b := math.Sqrt(6 / (float64(fanIn) + float64(fanOut))) // the sum cannot overflow
	return ember.Random(shape, ember.Uniform(-b, b), dev.Inner()).ToDevice(dev)
}

// XavierNormal samples a tensor of the shape from N(0, σ²) with
// σ = √(2 / (fanIn + fanOut)), PyTorch's xavier_normal_ with gain 1.
func XavierNormal(shape []int, fanIn, fanOut int, dev ember.Device) *ember.Tensor {
	checkFan("xavier_normal", fanIn, fanOut)
	std := math.Sqrt(2 / (float64(fanIn) + float64(fanOut)))
	return ember.Random(shape, ember.Normal(0, std), dev.Inner()).ToDevice(dev)
}

// uniform samples U(−b, b) (PyTorch's bias initialization uses b = 1/√fanIn).
func uniform(shape []int, b float64, dev ember.Device) *ember.Tensor {
	return ember.Random(shape, ember.Uniform(-b, b), dev.Inner()).ToDevice(dev)
}
