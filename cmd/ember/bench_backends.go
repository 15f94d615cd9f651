package main

import (
	"fmt"
	"strings"

	"github.com/emberml/ember"
)

// backendNames are the local backends the backends family compares: the
// optimized cpu backend (the reference row), the ndarray backend and
// libtorch (in builds with the libtorch tag).
var backendNames = []string{"cpu", "ndarray", "libtorch"}

// benchBackends times the same work on each backend of backendNames that
// initializes — a 512³ f32 matmul, a 16M-element f32 add and one MNIST MLP
// training step (784-128-10, batch 64, Adam) — ignoring --device. Each
// work item gives the cpu row first and then one row per other backend,
// whose "cpu" ratio is the cpu row's median time over its own (above 1:
// faster than cpu). Backends whose Init fails are skipped; the cpu rows'
// note says why.
func benchBackends(b *bencher) ([]benchResult, error) {
	var devs []ember.Device
	var skipped []string
	for _, name := range backendNames {
		d, err := ember.ParseDevice(name)
		if err == nil {
			err = d.Init()
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s skipped (%s)", name, unavailableReason(name, err)))
			continue
		}
		devs = append(devs, d)
	}
	if len(devs) == 0 || devs[0].String() != "cpu" {
		return nil, fmt.Errorf("the cpu device does not initialize: %s", strings.Join(skipped, "; "))
	}
	note := strings.Join(skipped, "; ")
	work := []func(b *bencher, d ember.Device) (benchResult, error){backendMatmul, backendAdd, backendMLPStep}
	var out []benchResult
	for _, w := range work {
		var ref benchResult
		for i, d := range devs {
			r, err := w(b, d)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				ref = r
				r.Note = note
			} else if r.Median > 0 {
				r.Ratios = map[string]float64{"cpu": ref.Median / r.Median}
			}
			out = append(out, r)
			if err := b.ctx.Err(); err != nil {
				return out, nil
			}
		}
	}
	return out, nil
}

// timeOn times f on d (after a warm-up), synchronizing d after each run.
func (b *bencher) timeOn(d ember.Device, label string, f func() *ember.Tensor) float64 {
	return b.median(label, func() {
		f()
		if err := d.Sync(); err != nil {
			panic(err)
		}
	})
}

// backendMatmul times a square f32 product of 512 (divided by
// benchScale) on d.
func backendMatmul(b *bencher, d ember.Device) (benchResult, error) {
	n := max(512/benchScale, 2)
	x := ember.FromFloats(randFloats[float32](n*n, 1), []int{n, n}, d)
	y := ember.FromFloats(randFloats[float32](n*n, 2), []int{n, n}, d)
	shape := fmt.Sprintf("%dx%dx%d", n, n, n)
	sec := b.timeOn(d, "backends matmul "+shape+" "+d.String(), func() *ember.Tensor { return x.Matmul(y) })
	flop := 2 * float64(n) * float64(n) * float64(n)
	return benchResult{Bench: "backends-matmul", Shape: shape, Backend: d.String(), DType: "f32", Median: sec, GFLOPS: flop / sec / 1e9}, nil
}

// backendAdd times x+y on 16M f32 elements (divided by benchScale) on d;
// the rate counts two reads and one write.
func backendAdd(b *bencher, d ember.Device) (benchResult, error) {
	n := (16 << 20) / benchScale
	x := ember.FromFloats(randFloats[float32](n, 1), []int{n}, d)
	y := ember.FromFloats(randFloats[float32](n, 2), []int{n}, d)
	sec := b.timeOn(d, "backends add "+fmt.Sprint(n)+" "+d.String(), func() *ember.Tensor { return x.Add(y) })
	return benchResult{Bench: "backends-add", Shape: fmt.Sprint(n), Backend: d.String(), DType: "f32", Median: sec, GBPS: 3 * 4 * float64(n) / sec / 1e9}, nil
}

// backendMLPStep times one MNIST MLP training step on d (the mnist
// family's step, on d instead of --device).
func backendMLPStep(b *bencher, d ember.Device) (benchResult, error) {
	on := *b
	on.dev, on.name = d, d.String()
	rows, err := benchMNIST(&on)
	if err != nil || len(rows) == 0 {
		return benchResult{}, fmt.Errorf("mnist step on %v: %w", d, err)
	}
	r := rows[0]
	r.Bench = "backends-mnist-mlp-step"
	return r, nil
}

func init() { benchFamilies = append(benchFamilies, benchFamily{name: "backends", run: benchBackends}) }
