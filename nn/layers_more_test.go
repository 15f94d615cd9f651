package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// TestMoreLayers checks that Conv1d, Conv3d, ConvTranspose2d,
// AdaptiveAvgPool2d and Upsample compute their functional op with their
// parameters, that the convolutions' weights have PyTorch's shapes and
// lie within PyTorch's Kaiming bound √(6/((1+a²)·fanIn)) with a = √5, and
// that an Embedding's padding row starts at zero and gets no gradient
// while the other rows do.
func TestMoreLayers(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	dev := ember.CPU()
	within := func(name string, p *Param, fanIn int) {
		bound := math.Sqrt(6 / (6 * float64(fanIn)))
		for _, v := range p.Value.Float64s() {
			if math.Abs(v) > bound+1e-7 {
				t.Fatalf("%s: weight %v outside ±%v", name, v, bound)
			}
		}
	}
	c1 := NewConv1d(4, 6, 3, ember.Conv1dOptions{Stride: 2, Padding: 1, Groups: 2}, dev)
	if s := c1.Weight.Value.Shape(); len(s) != 3 || s[0] != 6 || s[1] != 2 || s[2] != 3 {
		t.Errorf("conv1d weight shape %v", s)
	}
	within("conv1d", c1.Weight, 2*3)
	x1 := f64(randVals(rng, 2*4*9), []int{2, 4, 9}, dev)
	assertClose(t, "conv1d layer", c1.Forward(x1).Float64s(), x1.Conv1d(c1.Weight.Value, c1.Bias.Value, c1.Opts).Float64s(), 0)

	c3 := NewConv3d(2, 3, 2, ember.Conv3dOptions{Padding: [3]int{1, 0, 1}}, dev)
	within("conv3d", c3.Weight, 2*8)
	x3 := f64(randVals(rng, 2*4*4*3), []int{1, 2, 4, 4, 3}, dev)
	assertClose(t, "conv3d layer", c3.Forward(x3).Float64s(), x3.Conv3d(c3.Weight.Value, c3.Bias.Value, c3.Opts).Float64s(), 0)

	ct := NewConvTranspose2d(4, 6, 3, ember.ConvOptions{Stride: [2]int{2, 2}, Groups: 2}, dev)
	if s := ct.Weight.Value.Shape(); s[0] != 4 || s[1] != 3 {
		t.Errorf("conv_transpose2d weight shape %v, want [4 3 3 3]", s)
	}
	within("conv_transpose2d", ct.Weight, 3*9)
	x2 := f64(randVals(rng, 4*5*5), []int{1, 4, 5, 5}, dev)
	assertClose(t, "conv_transpose2d layer", ct.Forward(x2).Float64s(), x2.ConvTranspose2d(ct.Weight.Value, ct.Bias.Value, ct.Opts).Float64s(), 0)
	assertClose(t, "adaptive pool layer", AdaptiveAvgPool2d{2, 3}.Forward(x2).Float64s(), x2.AdaptiveAvgPool2d(2, 3).Float64s(), 0)
	up := Upsample{Size: [2]int{7, 9}, Mode: ember.InterpBilinear}
	assertClose(t, "upsample layer", up.Forward(x2).Float64s(), x2.Interpolate([2]int{7, 9}, ember.InterpBilinear, false).Float64s(), 0)

	ad := ember.CPU().Autodiff()
	e := NewEmbeddingWithPadding(5, 3, -2, ad)
	if *e.PaddingIdx != 3 {
		t.Fatalf("padding index %d, want 3", *e.PaddingIdx)
	}
	row := e.Weight.Value.Float64s()[9:12]
	assertClose(t, "padding row starts at zero", row, []float64{0, 0, 0}, 0)
	idx := ember.FromInts([]int{3, 1, 3, 0}, []int{2, 2}, ad)
	g := e.Forward(idx).Sum().Backward().Of(e.Weight.Value).Float64s()
	want := []float64{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	assertClose(t, "embedding gradient without the padding row", g, want, 0)
	if err := ember.Try(func() { NewEmbeddingWithPadding(5, 3, 5, dev) }); err == nil {
		t.Error("padding index out of range: no error")
	}
}
