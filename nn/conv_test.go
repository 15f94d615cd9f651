package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// conv2dRef is a naive float64 2-d cross-correlation with PyTorch's
// semantics: x [n, cin, h, w], weight [cout, cin/g, k, k], bias [cout].
func conv2dRef(x []float64, n, cin, h, w int, wt, bias []float64, cout, k int, o ember.ConvOptions) ([]float64, int, int) {
	g := o.Groups
	ho := (h+2*o.Padding[0]-o.Dilation[0]*(k-1)-1)/o.Stride[0] + 1
	wo := (w+2*o.Padding[1]-o.Dilation[1]*(k-1)-1)/o.Stride[1] + 1
	cpg, opg := cin/g, cout/g
	out := make([]float64, n*cout*ho*wo)
	for b := range n {
		for oc := range cout {
			grp := oc / opg
			for i := range ho {
				for j := range wo {
					s := bias[oc]
					for ic := range cpg {
						c := grp*cpg + ic
						for p := range k {
							for q := range k {
								y := i*o.Stride[0] - o.Padding[0] + p*o.Dilation[0]
								xx := j*o.Stride[1] - o.Padding[1] + q*o.Dilation[1]
								if y < 0 || y >= h || xx < 0 || xx >= w {
									continue
								}
								s += x[((b*cin+c)*h+y)*w+xx] * wt[((oc*cpg+ic)*k+p)*k+q]
							}
						}
					}
					out[((b*cout+oc)*ho+i)*wo+j] = s
				}
			}
		}
	}
	return out, ho, wo
}

func TestConv2dForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dev := ember.Flex()
	for _, o := range []ember.ConvOptions{
		{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1},
		{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 1}, Groups: 2},
		{Stride: [2]int{1, 2}, Padding: [2]int{2, 1}, Dilation: [2]int{2, 1}, Groups: 1},
	} {
		c := NewConv2d(4, 6, 3, o, dev)
		if s := c.Weight.Value.Shape(); s[0] != 6 || s[1] != 4/o.Groups || s[2] != 3 || s[3] != 3 {
			t.Fatalf("weight shape %v", s)
		}
		wt := setRandF64(rng, c.Weight)
		b := setRandF64(rng, c.Bias)
		x := randVals(rng, 2*4*7*6)
		y := c.Forward(f64(x, []int{2, 4, 7, 6}, dev))
		want, ho, wo := conv2dRef(x, 2, 4, 7, 6, wt, b, 6, 3, o)
		if s := y.Shape(); s[0] != 2 || s[1] != 6 || s[2] != ho || s[3] != wo {
			t.Fatalf("%+v: output shape %v, want [2 6 %d %d]", o, s, ho, wo)
		}
		assertClose(t, "conv2d", y.Float64s(), want, 1e-12)
	}
}

func TestConv2dGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dev := ember.Flex().Autodiff()
	o := ember.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 1}, Groups: 2}
	c := NewConv2d(4, 2, 3, o, dev)
	setRandF64(rng, c.Weight)
	setRandF64(rng, c.Bias)
	x := &Param{Value: f64(randVals(rng, 1*4*5*4), []int{1, 4, 5, 4}, dev)}
	y := c.Forward(x.Value)
	r := randVals(rng, y.NumElements())
	checkGrads(t, func() *ember.Tensor { return weightedSum(c.Forward(x.Value), r) },
		map[string]*Param{"weight": c.Weight, "bias": c.Bias, "x": x})
}

func TestConv2dInit(t *testing.T) {
	// PyTorch's default init: weight and bias within ±1/√fanIn, fanIn = in/groups·k·k.
	dev := ember.Flex()
	dev.Seed(11)
	c := NewConv2d(8, 16, 3, ember.ConvOptions{Groups: 2}, dev)
	bound := 1 / 6.0 // fanIn = 4·3·3 = 36
	for name, p := range map[string]*Param{"weight": c.Weight, "bias": c.Bias} {
		vals := p.Value.Float64s()
		maxAbs := 0.0
		for _, v := range vals {
			if v < -bound || v >= bound {
				t.Fatalf("%s value %v outside ±%v", name, v, bound)
			}
			maxAbs = max(maxAbs, v, -v)
		}
		if name == "weight" && maxAbs < 0.9*bound {
			t.Errorf("weight values reach only %v of bound %v", maxAbs, bound)
		}
	}
}
