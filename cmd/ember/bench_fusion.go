package main

import (
	"fmt"
	"math"

	"github.com/emberml/ember"
)

// benchFusion times the chain gelu(x·a+b)·c on 16M f32 (gelu exact:
// t·(erf(t/√2)+1)·0.5, eight elementwise ops and three constants) as the
// device runs it — one fused program where the device fuses — against the
// same ops each computed alone (a Flush after every op, so each is its own
// kernel and memory pass), on the same device in the same run, the two
// timed in turn. The rate
// counts the chain's own traffic: four inputs read, one output written.
func benchFusion(b *bencher) ([]benchResult, error) {
	n := (16 << 20) / benchScale
	shape := fmt.Sprint(n)
	x := ember.FromFloats(randFloats[float32](n, 1), []int{n}, b.dev)
	a := ember.FromFloats(randFloats[float32](n, 2), []int{n}, b.dev)
	bb := ember.FromFloats(randFloats[float32](n, 3), []int{n}, b.dev)
	c := ember.FromFloats(randFloats[float32](n, 4), []int{n}, b.dev)
	bytes := 5 * 4 * float64(n)
	sync := func(t *ember.Tensor) {
		if err := b.dev.Sync(); err != nil {
			panic(err)
		}
	}
	step := func(t *ember.Tensor) *ember.Tensor { b.dev.Flush(); return t }
	// The two run in turn (medianPair), so a shared machine's load falls
	// on both alike.
	fused, eager := b.medianPair("gelu chain "+shape+" "+b.name+" and op by op", func() {
		sync(x.Mul(a).Add(bb).Gelu().Mul(c))
	}, func() {
		t := step(step(x.Mul(a)).Add(bb))
		u := step(t.MulScalar(1 / math.Sqrt2))
		u = step(step(step(u.Erf()).AddScalar(1)).MulScalar(0.5))
		sync(step(step(t.Mul(u)).Mul(c)))
	})
	note := "fusion off: both rows run op by op"
	if b.dev.Fusion() {
		note = ""
	}
	row := benchResult{Bench: "gelu-chain", Shape: shape, Backend: b.name, DType: "f32", Median: fused, GBPS: bytes / fused / 1e9, Note: note}
	peer := benchResult{Bench: "gelu-chain", Shape: shape, Backend: b.name + "-op-by-op", DType: "f32", Median: eager, GBPS: bytes / eager / 1e9}
	return withRatios(row, peer), nil
}
