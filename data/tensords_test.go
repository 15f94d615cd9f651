package data

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
)

func TestFromSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 13
	x := make([]float64, n*2*3)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(100)) - 50
	}
	ds, err := FromSlices(x, []int{n, 2, 3}, y, []int{n})
	if err != nil {
		t.Fatal(err)
	}
	s := ds.Schema()
	if ds.Len() != n || s.String() != "features f64[2 3], targets i32[]" {
		t.Fatalf("Len %d schema %v", ds.Len(), s)
	}
	// A shuffled loader reproduces the slices' rows.
	l := NewLoader(ds, 4, LoaderOptions{Shuffle: true, Seed: 3})
	defer l.Close()
	for b := range l.Epoch(0) {
		f, tg := b.Features.Float64s(), ir.As[int32](b.Targets)
		for k, i := range b.Indices {
			if !slices.Equal(f[6*k:6*k+6], x[6*i:6*i+6]) || tg[k] != y[i] {
				t.Fatalf("example %d: %v %v, want %v %v", i, f[6*k:6*k+6], tg[k], x[6*i:6*i+6], y[i])
			}
		}
	}
	for name, f := range map[string]func() error{
		"length":   func() error { _, err := FromSlices(x[:5], []int{n, 2, 3}, y, []int{n}); return err },
		"rows":     func() error { _, err := FromSlices(x, []int{n, 2, 3}, y[:n-1], []int{n - 1}); return err },
		"rank 0":   func() error { _, err := FromSlices([]float32{1}, []int{}, []int64{1}, []int{1}); return err },
		"negative": func() error { _, err := FromSlices([]float32{}, []int{-1}, []int64{}, []int{0}); return err },
	} {
		if err := f(); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
}

func TestNewTensorDatasetErrors(t *testing.T) {
	good := ir.FromSlice([]float32{1, 2, 3, 4}, []int{2, 2})
	lbl := ir.FromSlice([]int64{0, 1}, []int{2})
	if _, err := NewTensorDataset(good, lbl); err != nil {
		t.Fatal(err)
	}
	cases := map[string][2]*ember.TensorData{
		"nil":        {nil, lbl},
		"dtype":      {{Shape: []int{2}, DType: 0, Bytes: make([]byte, 8)}, lbl},
		"bytes":      {{Shape: []int{2, 2}, DType: ember.F32, Bytes: make([]byte, 15)}, lbl},
		"overflow":   {{Shape: []int{2, 1 << 62}, DType: ember.F32}, lbl},
		"rows":       {good, ir.FromSlice([]int64{0, 1, 2}, []int{3})},
		"rank 0":     {good, ir.FromSlice([]int64{0}, []int{})},
		"huge empty": {{Shape: []int{0, 1 << 40, 1 << 40}, DType: ember.F32}, {Shape: []int{0}, DType: ember.I64}},
	}
	for name, c := range cases {
		if _, err := NewTensorDataset(c[0], c[1]); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
}

// TestTensorDatasetShards checks that several shards read as one dataset
// in order, against the concatenated values.
func TestTensorDatasetShards(t *testing.T) {
	var fs, ts []*ember.TensorData
	var all []float32
	var labels []int64
	for k, n := range []int{3, 1, 5} {
		x := make([]float32, 2*n)
		y := make([]int64, n)
		for i := range x {
			x[i] = float32(100*k + i)
		}
		for i := range y {
			y[i] = int64(10*k + i)
		}
		all = append(all, x...)
		labels = append(labels, y...)
		fs = append(fs, ir.FromSlice(x, []int{n, 2}))
		ts = append(ts, ir.FromSlice(y, []int{n}))
	}
	ds, err := newTensorDataset([]string{"a", "b", "c"}, fs, ts)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 9 {
		t.Fatalf("Len %d", ds.Len())
	}
	idx := []int{8, 0, 3, 4, 2, 3}
	f, y := make([]byte, len(idx)*8), make([]byte, len(idx)*8)
	if err := ds.Gather(idx, f, y); err != nil {
		t.Fatal(err)
	}
	gf := (&ember.TensorData{Shape: []int{len(idx), 2}, DType: ember.F32, Bytes: f}).Float32s()
	gy := (&ember.TensorData{Shape: []int{len(idx)}, DType: ember.I64, Bytes: y}).Int64s()
	for k, i := range idx {
		if gf[2*k] != all[2*i] || gf[2*k+1] != all[2*i+1] || gy[k] != labels[i] {
			t.Fatalf("example %d: %v %v, want %v %v", i, gf[2*k:2*k+2], gy[k], all[2*i:2*i+2], labels[i])
		}
	}
	_, err = newTensorDataset([]string{"a", "b"}, []*ember.TensorData{fs[0], ir.FromSlice([]float64{1, 2}, []int{1, 2})}, ts[:2])
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "b:") {
		t.Fatalf("mismatched shards: %v, want ErrFormat naming b", err)
	}
}

func TestGatherPanics(t *testing.T) {
	ds, _ := FromSlices([]float32{1, 2}, []int{2, 1}, []int64{0, 1}, []int{2})
	for name, f := range map[string]func(){
		"index":  func() { _ = ds.Gather([]int{2}, make([]byte, 4), make([]byte, 8)) },
		"buffer": func() { _ = ds.Gather([]int{1}, make([]byte, 3), make([]byte, 8)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
