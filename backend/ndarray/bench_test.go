package ndarray

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// benchOp runs op (inputs made from data) on ndarray and, as the peer in
// the same run, on flex.
func benchOp(b *testing.B, op ir.Op, inputs ...*backend.TensorData) {
	for _, be := range []backend.Backend{tb, fb} {
		b.Run(be.ID().Type, func(b *testing.B) {
			o := op
			for i, d := range inputs {
				o.In[i] = be.FromData(d)
			}
			if err := o.Infer(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				be.Exec(o)
			}
		})
	}
}

func benchData(n int, shape []int) *backend.TensorData {
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return ir.FromSlice(v, shape).Convert(backend.F32)
}

// BenchmarkMatmul256 is an F32 256×256×256 product.
func BenchmarkMatmul256(b *testing.B) {
	x := benchData(256*256, []int{256, 256})
	benchOp(b, ir.Op{Kind: ir.KindMatmul}, x, x)
}

// BenchmarkAdd64K is an F32 add of 64K elements.
func BenchmarkAdd64K(b *testing.B) {
	x := benchData(1<<16, []int{256, 256})
	benchOp(b, ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd)}, x, x)
}

// BenchmarkConv2d is an F32 3×3 convolution of a [8, 16, 28, 28] batch
// to 32 channels.
func BenchmarkConv2d(b *testing.B) {
	x, w := benchData(8*16*28*28, []int{8, 16, 28, 28}), benchData(32*16*9, []int{32, 16, 3, 3})
	benchOp(b, ir.Op{Kind: ir.KindConv2d, Attrs: &ir.Attrs{Conv: ir.ConvOptions{Padding: [2]int{1, 1}}.WithDefaults()}}, x, w)
}
