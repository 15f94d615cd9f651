package cpu

import (
	"fmt"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// BenchmarkConvWinograd times 5×5 float32 convolutions on the Winograd
// paths against the direct kernels (the paths switched off), conv2d,
// conv_transpose2d and conv2d's weight gradient (WinogradEnv "all"), on the MNIST CNN's second layer and on shapes near
// the path's thresholds (16 channels, half a vector of images, a larger
// padded image). It reports the process CPU time per call besides the
// wall time (see BenchmarkConvMNIST).
func BenchmarkConvWinograd(b *testing.B) {
	be := New(backend.DeviceID{Type: "cpu"})
	for _, c := range []struct {
		name   string
		xs, ws [4]int
		pad    int
	}{
		{"mnist2", [4]int{64, 32, 12, 12}, [4]int{64, 32, 5, 5}, 0},
		{"c16", [4]int{64, 16, 12, 12}, [4]int{16, 16, 5, 5}, 0},
		{"n8", [4]int{8, 32, 12, 12}, [4]int{64, 32, 5, 5}, 0},
		{"28x28pad2", [4]int{16, 32, 28, 28}, [4]int{32, 32, 5, 5}, 2},
	} {
		o := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, Padding: [2]int{c.pad, c.pad}}
		x := randTensor(be, c.xs[:], 1)
		w := randTensor(be, c.ws[:], 2)
		ys := convShape(c.xs[:], c.ws[:], o, false)
		g := randTensor(be, ys[:], 3)
		flops := 2 * float64(ys[0]*ys[1]*ys[2]*ys[3]) * float64(c.ws[1]*c.ws[2]*c.ws[3])
		for _, op := range []struct {
			name string
			run  func()
		}{
			{"fwd", func() { ir.Conv2d(be, x, w, o) }},
			{"dgrad", func() { ir.ConvTranspose2d(be, g, w, o) }},
			{"wgrad", func() { conv2dWeightGrad(be, x, g, c.ws, o) }},
		} {
			for _, on := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s_%s/winograd=%v", c.name, op.name, on), func(b *testing.B) {
					prev := winoWgradOn
					winoWgradOn = on // WinogradEnv "all" for the weight gradient
					defer func() { winoWgradOn = prev }()
					withWinograd(on, func() {
						c0, ok := processCPUTime()
						for b.Loop() {
							op.run()
						}
						c1, _ := processCPUTime()
						b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
						if cpu := (c1 - c0).Seconds(); ok && cpu > 0 {
							b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
						}
					})
				})
			}
		}
	}
}
