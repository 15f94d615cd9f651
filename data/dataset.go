package data

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/emberml/ember"
)

// Field describes one half of every example of a Dataset, its features or
// its targets: the shape of one example's array (without the leading
// example axis; empty for a scalar such as a class index) and its dtype.
// A batch of b examples holds an array of shape [b, Shape...].
type Field struct {
	// Shape is the shape of one example's array, e.g. [1 28 28] for an
	// MNIST image, [] for its label, [4] for four CSV feature columns.
	Shape []int
	// DType is the element type, e.g. ember.F32 or ember.I64.
	DType ember.DType
}

// Size returns the number of elements of one example's array, the
// product of Shape (1 for a scalar).
func (f Field) Size() int {
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	return n
}

// Bytes returns the number of bytes one example's array occupies in
// ember.TensorData: Size() * DType.Size().
func (f Field) Bytes() int { return f.Size() * f.DType.Size() }

// String formats the field as "f32[1 28 28]".
func (f Field) String() string { return fmt.Sprintf("%v%v", f.DType, f.Shape) }

// check returns an error unless f has a valid dtype and a shape whose
// per-example byte size, and that size times n examples, fit in an int.
func (f Field) check(what string, n int) error {
	if !f.DType.Valid() {
		return fmt.Errorf("%s dtype %v is not a valid dtype", what, f.DType)
	}
	size := uint64(f.DType.Size())
	for _, d := range f.Shape {
		if d < 0 {
			return fmt.Errorf("%s shape %v has a negative size", what, f.Shape)
		}
		hi, lo := bits.Mul64(size, uint64(d))
		if hi != 0 || lo > maxInt {
			return fmt.Errorf("%s shape %v of %v is too large", what, f.Shape, f.DType)
		}
		size = lo
	}
	if hi, lo := bits.Mul64(size, uint64(max(n, 0))); hi != 0 || lo > maxInt {
		return fmt.Errorf("%d examples of %s %v are too large", n, what, f)
	}
	return nil
}

// maxInt is the largest int, as a uint64.
const maxInt = uint64(^uint(0) >> 1)

// Schema describes the examples of a Dataset: the shape and dtype of each
// example's features and of its targets.
type Schema struct {
	Features, Targets Field
}

// String formats the schema as "features f32[4], targets i64[]".
func (s Schema) String() string {
	return fmt.Sprintf("features %v, targets %v", s.Features, s.Targets)
}

// Equal reports whether s and o have the same dtypes and shapes.
func (s Schema) Equal(o Schema) bool {
	return s.Features.DType == o.Features.DType && s.Targets.DType == o.Targets.DType &&
		slices.Equal(s.Features.Shape, o.Features.Shape) && slices.Equal(s.Targets.Shape, o.Targets.Shape)
}

// Validate returns an error unless both fields have a valid dtype and
// non-negative sizes, and n examples of them fit in an int's count of
// bytes. NewLoader panics for a schema Validate rejects; package train
// reports it as an error.
func (s Schema) Validate(n int) error { return s.check(n) }

// check validates both fields for n examples.
func (s Schema) check(n int) error {
	if err := s.Features.check("features", n); err != nil {
		return err
	}
	return s.Targets.check("targets", n)
}

// Dataset is a finite, indexable collection of examples, each a pair of
// arrays, its features and its targets, of the fixed shapes and dtypes
// its Schema names (as PyTorch's map-style torch.utils.data.Dataset, with
// batched access). Implementations must be safe for concurrent calls (a
// Loader calls Gather from a background goroutine).
//
// Sources in this package: TensorDataset (in-memory arrays, built by
// NewTensorDataset, FromSlices, ReadCSV, ReadIDXPair and
// ReadSafetensorsShards), MNISTDataset, and the views Subset, Pick and
// RandomSplit.
type Dataset interface {
	// Len returns the number of examples.
	Len() int
	// Schema returns the shape and dtype of every example's features and
	// targets; it returns the same value on every call.
	Schema() Schema
	// Gather writes the examples indices[0], indices[1], ... back to back
	// into features (len(indices)*Schema().Features.Bytes() bytes) and
	// targets (len(indices)*Schema().Targets.Bytes() bytes), each example
	// row-major, as little-endian ember.TensorData bytes. It panics if an
	// index is outside [0, Len()) or a buffer has the wrong length (a
	// programming error, as slicing), and returns an error only for a
	// failure at run time, such as a file that can no longer be read.
	Gather(indices []int, features, targets []byte) error
}

// Example returns example i of ds as two arrays: features of shape
// Schema().Features.Shape and targets of shape Schema().Targets.Shape,
// freshly allocated. It returns ds's Gather error, and panics if i is out
// of range.
func Example(ds Dataset, i int) (features, targets *ember.TensorData, err error) {
	s := ds.Schema()
	features = &ember.TensorData{Shape: slices.Clone(s.Features.Shape), DType: s.Features.DType, Bytes: make([]byte, s.Features.Bytes())}
	targets = &ember.TensorData{Shape: slices.Clone(s.Targets.Shape), DType: s.Targets.DType, Bytes: make([]byte, s.Targets.Bytes())}
	if err := ds.Gather([]int{i}, features.Bytes, targets.Bytes); err != nil {
		return nil, nil, err
	}
	return features, targets, nil
}

// checkGather panics unless every index lies in [0, n) and the buffers
// have the lengths Gather requires for s.
func checkGather(op string, s Schema, n int, indices []int, features, targets []byte) {
	if len(features) != len(indices)*s.Features.Bytes() || len(targets) != len(indices)*s.Targets.Bytes() {
		panic(fmt.Sprintf("data: %s.Gather: %d examples need %d feature and %d target bytes, got %d and %d",
			op, len(indices), len(indices)*s.Features.Bytes(), len(indices)*s.Targets.Bytes(), len(features), len(targets)))
	}
	for _, i := range indices {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("data: %s.Gather: index %d out of range [0,%d)", op, i, n))
		}
	}
}
