package train

import (
	"context"
	"math"
	"testing"

	"github.com/emberml/ember"
)

// Training the MLP on the Vulkan device (the software adapter in CI)
// reaches the cpu backend's accuracy: the same data order, an
// initialization drawn from another random stream, the same arithmetic
// up to rounding.
func TestRunVulkanMatchesCPU(t *testing.T) {
	dev := ember.Vulkan(ember.DefaultKind)
	if err := dev.Init(); err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	trainSet, testSet := mnist(t)
	run := func(d ember.Device) *Result {
		cfg := Config{Device: d, Batch: 64, Seed: 1, Limit: 2048, TestLimit: 1000, Epochs: 1, Train: trainSet, Test: testSet}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		return res
	}
	cpu, vk := run(ember.CPU()), run(dev)
	t.Logf("cpu: loss %.4f accuracy %.3f; %v: loss %.4f accuracy %.3f", cpu.Epochs[0].TrainLoss, cpu.TestAccuracy,
		dev, vk.Epochs[0].TrainLoss, vk.TestAccuracy)
	if vk.TestAccuracy < 0.8 || math.Abs(vk.TestAccuracy-cpu.TestAccuracy) > 0.03 {
		t.Errorf("%v: test accuracy %.3f, cpu %.3f: want within 0.03 of cpu and at least 0.8", dev, vk.TestAccuracy, cpu.TestAccuracy)
	}
}
