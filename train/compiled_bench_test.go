package train

import (
	"fmt"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// syntheticBatch returns a batch of n synthetic examples.
func syntheticBatch(n int) data.Batch {
	s := newSynthetic(n)
	b := data.Batch{Size: n}
	for i := range n {
		img, l := s.Example(i)
		b.Images = append(b.Images, img...)
		b.Labels = append(b.Labels, int64(l))
	}
	return b
}

// BenchmarkTrainStep times one training step (batch 64, Adam) of each
// model on cpu and, where present, cuda:0: eager; capturing and compiling
// the step with its first two runs (the plan, then the recording of the
// device graph on cuda); a compiled step after those (a CUDA graph launch
// on cuda); a compiled step without reading the loss back; and the batch
// upload alone.
func BenchmarkTrainStep(bb *testing.B) {
	devs := []ember.Device{ember.CPU()}
	if gpu := ember.CUDA(0); gpu.Init() == nil {
		devs = append(devs, gpu)
	}
	b := syntheticBatch(64)
	for _, dev := range devs {
		for _, name := range []string{"mlp", "cnn"} {
			prefix := fmt.Sprintf("%v/%s", dev, name)
			adev := dev.Autodiff()
			model, _ := NewModel(name, adev)
			cfg, _ := Config{Model: name}.withDefaults()
			opt := newOptimizer(cfg, model)
			step(model, opt, nil, b, adev)
			bb.Run(prefix+"/eager", func(bb *testing.B) {
				for bb.Loop() {
					step(model, opt, nil, b, adev)
				}
			})
			bb.Run(prefix+"/capture-compile-first-two-runs", func(bb *testing.B) {
				for bb.Loop() {
					cs, err := newCompiledStep(model, opt, adev, 64, 0, 0)
					if err != nil {
						bb.Fatal(err)
					}
					cs.run(b) // the plan
					cs.run(b) // recorded and launched (a device graph)
					cs.close()
				}
			})
			cs, err := newCompiledStep(model, opt, adev, 64, 0, 0)
			if err != nil {
				bb.Fatal(err)
			}
			cs.run(b)
			cs.run(b)
			bb.Run(prefix+"/compiled", func(bb *testing.B) {
				for bb.Loop() {
					cs.run(b).Item()
				}
			})
			bb.Run(prefix+"/compiled-no-loss-read", func(bb *testing.B) {
				n := len(cs.cells) + cs.ns
				for bb.Loop() {
					ins := make([]*ember.Tensor, n+3)
					ins[n] = ember.FromFloats(b.Images, []int{64, imageChannels, imageSize, imageSize}, dev)
					ins[n+1] = ember.FromInts(b.Labels, []int{64}, dev)
					ins[n+2] = float64Tensor(cs.opt.NextScalars(), dev)
					if _, err := cs.c.Run(ins...); err != nil {
						bb.Fatal(err)
					}
				}
				if err := dev.Sync(); err != nil {
					bb.Fatal(err)
				}
			})
			bb.Run(prefix+"/upload", func(bb *testing.B) {
				for bb.Loop() {
					ember.FromFloats(b.Images, []int{64, imageChannels, imageSize, imageSize}, dev)
					ember.FromInts(b.Labels, []int{64}, dev)
					float64Tensor(cs.opt.NextScalars(), dev)
				}
				if err := dev.Sync(); err != nil {
					bb.Fatal(err)
				}
			})
			cs.close()
		}
	}
}
