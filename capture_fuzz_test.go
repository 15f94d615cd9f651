package ember_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
)

// graphBytes encodes g with WriteTo.
func graphBytes(t testing.TB, g *ember.CapturedGraph) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fuzzSeeds are encodings of real captured graphs: an MLP and a CNN
// training step, an empty graph, and small graphs with index and integer
// division ops over values.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		graphBytes(t, captureStep(t, mlpModel, newStepData(mlpModel, 6))),
		graphBytes(t, captureStep(t, cnnModel, newStepData(cnnModel, 6))),
		graphBytes(t, &ember.CapturedGraph{}),
	}
	dev := ember.Capture()
	x := ember.FromFloats([]float32{1, -2, 3, 0.5}, []int{2, 2}, ember.Flex()).ToDevice(dev)
	idx := ember.FromInts([]int{1, 0}, []int{2}, ember.Flex()).ToDevice(dev)
	a := ember.FromInts([]int{7, -9}, []int{2}, ember.Flex()).ToDevice(dev)
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		y := x.IndexSelect(1, idx).Gather(0, ember.FromInts([]int{1, 0, 0, 1}, []int{2, 2}, ember.Flex()).ToDevice(dev))
		b := ember.FromInts([]int{2, 4}, []int{2}, ember.Flex()).ToDevice(dev)
		q := a.Div(b).Add(a.Rem(b)).Mul(a)
		z := x.Sum().Add(ember.Randn([]int{2}, dev).Sum())
		return s.Complete([]ember.TensorID{x.ID()}, []ember.TensorID{y.ID(), q.ID(), z.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(seeds, graphBytes(t, g))
}

// fuzzRunLimit bounds the work of a fuzzed graph that the fuzzer runs
// (graphWork).
const fuzzRunLimit = 1 << 20

// graphWork estimates the element operations of running g: the elements
// of its inputs and values, and per op those it reads and writes, times
// the inner dimension of a matmul, the weight of a convolution or the
// window (and padded input) of a pooling, so that the fuzzer runs only
// graphs that finish in milliseconds. A valid graph may hold arbitrarily
// much work (a pooling window of a million taps is valid), as a program
// may.
func graphWork(g *ember.CapturedGraph) float64 {
	size := func(s []int) float64 { return float64(ir.NumElements(s)) }
	shapes := map[ember.TensorID][]int{}
	var work float64
	for _, in := range g.Inputs {
		shapes[in.ID] = in.Shape
		work += size(in.Shape)
	}
	for id, v := range g.Values {
		shapes[id] = v.Shape
		work += size(v.Shape)
	}
	for _, r := range g.Operations {
		out := size(r.Shape) * float64(len(r.Outputs))
		var in float64
		for _, id := range r.Inputs {
			in += size(shapes[id])
		}
		w := out + in
		switch r.Kind {
		case ir.KindMatmul:
			if lhs := shapes[r.Inputs[0]]; len(lhs) > 0 {
				w += out * float64(lhs[len(lhs)-1])
			}
		case ir.KindConv2d, ir.KindConvTranspose2d, ir.KindConv2dWeightGrad:
			w += (out + in) * size(shapes[r.Inputs[1]])
		case ir.KindMaxPool2d, ir.KindMaxPool2dGrad:
			if a, x := r.Attrs, shapes[r.Inputs[0]]; a != nil && len(x) >= 2 {
				p := a.Pool
				padded := size(x[:len(x)-2]) * float64(x[len(x)-2]+2*p.Padding[0]) * float64(x[len(x)-1]+2*p.Padding[1])
				w += (out + in + padded) * float64(p.Kernel[0]) * float64(p.Kernel[1])
			}
		}
		work += w
		for _, id := range r.Outputs {
			shapes[id] = r.Shape
		}
	}
	return work
}

// FuzzReadGraph: reading never panics and fails with an error wrapping
// ir.ErrFormat, ir.ErrVersion or ErrInvalidGraph; what reads re-encodes
// to bytes that read back to the same encoding; and a small graph that
// reads runs on flex (with zero inputs) without panicking, returning
// outputs of the recorded shapes and dtypes or an error.
func FuzzReadGraph(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ember.ReadGraph(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ir.ErrFormat) && !errors.Is(err, ir.ErrVersion) && !errors.Is(err, ember.ErrInvalidGraph) {
				t.Fatalf("error %q wraps no sentinel", err)
			}
			return
		}
		enc := graphBytes(t, g)
		g2, err := ember.ReadGraph(bytes.NewReader(enc))
		if err != nil {
			t.Fatalf("re-encoded graph does not read: %v", err)
		}
		if enc2 := graphBytes(t, g2); !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not stable")
		}
		// Run small graphs on flex.
		if graphWork(g) > fuzzRunLimit {
			return
		}
		dev := ember.Flex()
		var ins []*ember.Tensor
		for _, in := range g.Inputs {
			ins = append(ins, ember.FullDType(in.Shape, 1, in.DType, dev))
		}
		outs, err := g.Run(dev, ins...)
		if err != nil {
			return
		}
		types := map[ember.TensorID]ir.Record{}
		for _, r := range g.Operations {
			for _, o := range r.Outputs {
				types[o] = r
			}
		}
		for _, in := range g.Inputs {
			types[in.ID] = ir.Record{Shape: in.Shape, DType: in.DType}
		}
		for id, v := range g.Values {
			types[id] = ir.Record{Shape: v.Shape, DType: v.DType}
		}
		for i, o := range outs {
			want := types[g.Outputs[i]]
			if !slices.Equal(o.Shape(), want.Shape) && !(len(o.Shape()) == 0 && len(want.Shape) == 0) || o.DType() != want.DType {
				t.Fatalf("output %d is %v %v, the graph says %v %v", i, o.Shape(), o.DType(), want.Shape, want.DType)
			}
		}
	})
}
