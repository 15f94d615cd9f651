package data

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFakeMNIST writes both splits of a small MNIST-format data set into
// dir (gzip-compressed) and returns the raw train pixels and labels.
func writeFakeMNIST(t *testing.T, dir string, nTrain, nTest int) (pix, lbl []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	write := func(name string, n int) ([]byte, []byte) {
		p := make([]byte, n*MNISTImageSize)
		for i := range p {
			p[i] = byte(r.IntN(256))
		}
		l := make([]byte, n)
		for i := range l {
			l[i] = byte(r.IntN(10))
		}
		names := mnistFiles[name]
		if err := os.WriteFile(filepath.Join(dir, names[0]+".gz"), gzipBytes(t, encodeIDX(IDXUint8, []uint32{uint32(n), 28, 28}, p)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, names[1]+".gz"), gzipBytes(t, encodeIDX(IDXUint8, []uint32{uint32(n)}, l)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, l
	}
	pix, lbl = write("train", nTrain)
	write("test", nTest)
	return pix, lbl
}

func TestMNISTFake(t *testing.T) {
	dir := t.TempDir()
	pix, lbl := writeFakeMNIST(t, dir, 5, 3)
	ds, err := MNIST(dir, "train")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 5 {
		t.Fatalf("Len = %d, want 5", ds.Len())
	}
	norm, err := MNIST(dir, "train", Normalized())
	if err != nil {
		t.Fatal(err)
	}
	if ds.Normalized() || !norm.Normalized() {
		t.Fatal("Normalized() flags wrong")
	}
	for i := range 5 {
		img, l := ds.Example(i)
		nimg, nl := norm.Example(i)
		if len(img) != 784 || l != int(lbl[i]) || nl != l || ds.Label(i) != l {
			t.Fatalf("example %d: len %d label %d/%d, want 784 label %d", i, len(img), l, nl, lbl[i])
		}
		for j, v := range img {
			b := float64(pix[i*784+j])
			if want := b / 255; math.Abs(float64(v)-want) > 1e-7 {
				t.Fatalf("example %d pixel %d = %v, want %v", i, j, v, want)
			}
			if want := (b/255 - 0.1307) / 0.3081; math.Abs(float64(nimg[j])-want) > 1e-6 {
				t.Fatalf("normalized example %d pixel %d = %v, want %v", i, j, nimg[j], want)
			}
		}
	}
	test, err := MNIST(dir, "test")
	if err != nil || test.Len() != 3 {
		t.Fatalf("test split: %v, len %v", err, test)
	}
	if s := ds.ImageShape(); len(s) != 3 || s[0] != 1 || s[1] != 28 || s[2] != 28 {
		t.Fatalf("ImageShape = %v", s)
	}
}

func TestMNISTPlainFiles(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, 2, 2)
	// Replace the compressed test images by an uncompressed file.
	names := mnistFiles["test"]
	x, err := ReadIDXFile(filepath.Join(dir, names[0]+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, names[0]+".gz"))
	if err := os.WriteFile(filepath.Join(dir, names[0]), encodeIDX(IDXUint8, []uint32{2, 28, 28}, x.Data), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := MNIST(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	img, _ := ds.Example(1)
	if want := float32(x.Data[784+100]) / 255; img[100] != want {
		t.Fatalf("pixel = %v, want %v", img[100], want)
	}
}

func TestMNISTErrors(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, 3, 3)
	if _, err := MNIST(dir, "validation"); err == nil || !strings.Contains(err.Error(), "validation") {
		t.Fatalf("unknown split: err = %v", err)
	}
	empty := t.TempDir()
	_, err := MNIST(empty, "train")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("empty dir: err = %v", err)
	}

	writeLabels := func(dims []uint32, l []byte) {
		t.Helper()
		p := filepath.Join(dir, mnistFiles["train"][1]+".gz")
		if err := os.WriteFile(p, gzipBytes(t, encodeIDX(IDXUint8, dims, l)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLabels([]uint32{3}, []byte{1, 10, 2})
	if _, err := MNIST(dir, "train"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "label 10 of example 1") {
		t.Fatalf("bad label: err = %v", err)
	}
	writeLabels([]uint32{2}, []byte{1, 2})
	if _, err := MNIST(dir, "train"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "2 labels for 3 images") {
		t.Fatalf("count mismatch: err = %v", err)
	}
	writeLabels([]uint32{3, 1}, []byte{1, 2, 3})
	if _, err := MNIST(dir, "train"); !errors.Is(err, ErrFormat) {
		t.Fatalf("2-d labels: err = %v", err)
	}
	p := filepath.Join(dir, mnistFiles["test"][0]+".gz")
	if err := os.WriteFile(p, gzipBytes(t, encodeIDX(IDXUint8, []uint32{3, 27, 28}, make([]byte, 3*27*28))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MNIST(dir, "test"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), p) {
		t.Fatalf("27x28 images: err = %v", err)
	}
}
