package data

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLoaderMNISTSized measures assembling shuffled batches of 64
// MNIST-sized examples from an in-memory MNISTDataset (bytes/s counts the
// float32 images produced).
func BenchmarkLoaderMNISTSized(b *testing.B) {
	const n = 4096
	imgs := &IDX{Type: IDXUint8, Dims: []int{n, 28, 28}, Data: make([]byte, n*MNISTImageSize)}
	for i := range imgs.Data {
		imgs.Data[i] = byte(i * 31)
	}
	lbls := &IDX{Type: IDXUint8, Dims: []int{n}, Data: make([]byte, n)}
	ds, err := newMNIST(imgs, lbls, "images", "labels", mnistConfig{})
	if err != nil {
		b.Fatal(err)
	}
	l := NewLoader(ds, 64, LoaderOptions{Shuffle: true, Seed: 1})
	defer l.Close()
	b.SetBytes(n * MNISTImageSize * 4)
	b.ReportAllocs()
	for e := 0; b.Loop(); e++ {
		for range l.Epoch(e) {
		}
	}
}

// BenchmarkLoaderTensorDataset measures assembling shuffled batches of 64
// from a TensorDataset of 4096 examples of 784 F32 features and an I64
// label (bytes/s counts the features produced), the generic path a
// PyTorch TensorDataset and DataLoader(batch_size=64, shuffle=True) take.
func BenchmarkLoaderTensorDataset(b *testing.B) {
	const n, d = 4096, 784
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(i%251) / 251
	}
	y := make([]int64, n)
	for i := range y {
		y[i] = int64(i % 10)
	}
	ds, err := FromSlices(x, []int{n, d}, y, []int{n})
	if err != nil {
		b.Fatal(err)
	}
	l := NewLoader(ds, 64, LoaderOptions{Shuffle: true, Seed: 1})
	defer l.Close()
	b.SetBytes(n * d * 4)
	b.ReportAllocs()
	for e := 0; b.Loop(); e++ {
		for range l.Epoch(e) {
		}
	}
}

// BenchmarkReadCSV measures parsing a CSV table of 10000 rows of four
// float features and a class label (bytes/s counts the CSV text).
func BenchmarkReadCSV(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("a,b,c,d,label\n")
	for i := range 10000 {
		fmt.Fprintf(&sb, "%.4f,%.4f,%.4f,%.4f,%d\n", float64(i)/7, float64(i%13)/3, -float64(i)/11, float64(i%101), i%3)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadCSV(strings.NewReader(text), "bench.csv", CSVOptions{Header: true, Target: ClassTarget}); err != nil {
			b.Fatal(err)
		}
	}
}
