package data

import (
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
