package ember

import "testing"

var sinkF32 []float32

func BenchmarkOpOverhead(b *testing.B) {
	b.Run("go", func(b *testing.B) {
		x, y := []float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}
		b.ReportAllocs()
		for b.Loop() {
			out := make([]float32, 4)
			for i := range out {
				out[i] = x[i] + y[i]
			}
			sinkF32 = out
		}
	})
	for _, c := range []struct {
		name string
		dev  Device
		grad bool
	}{{"flex", Flex(), false}, {"cpu", CPU(), false}, {"cpu+autodiff", CPU().Autodiff(), true}} {
		b.Run(c.name, func(b *testing.B) {
			x := FromFloats([]float32{1, 2, 3, 4}, []int{4}, c.dev)
			y := FromFloats([]float32{5, 6, 7, 8}, []int{4}, c.dev)
			if c.grad {
				x, y = x.RequireGrad(), y.RequireGrad()
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = x.Add(y)
			}
		})
	}
}
