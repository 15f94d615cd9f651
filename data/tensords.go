package data

import (
	"fmt"
	"slices"
	"sort"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
)

// TensorDataset is a Dataset held in memory as arrays whose leading axis
// indexes the examples (PyTorch's TensorDataset): features [n, ...] and
// targets [n, ...], possibly in several shards one after another (see
// ReadSafetensorsShards). It is immutable and safe for concurrent use.
type TensorDataset struct {
	schema Schema
	shards []tensorShard
	// starts[k] is the index of shard k's first example; the last entry
	// is the number of examples.
	starts []int
}

// tensorShard is one block of examples: their feature and target bytes.
type tensorShard struct {
	features, targets []byte
}

// NewTensorDataset returns the dataset whose example i is features[i] and
// targets[i]: both arrays need a valid dtype, rank >= 1, the same leading
// size n, and exactly the bytes their shape and dtype require. A target
// array of shape [n] makes scalar targets (class indices: Schema shape
// []). The dataset shares the arrays' bytes, which must not be modified
// afterwards. Errors wrap ErrFormat.
func NewTensorDataset(features, targets *ember.TensorData) (*TensorDataset, error) {
	return newTensorDataset([]string{"arrays"}, []*ember.TensorData{features}, []*ember.TensorData{targets})
}

// FromSlices returns the TensorDataset of features (row-major values of
// the shape featureShape, whose first entry is the number of examples n)
// and targets (of the shape targetShape, [n, ...]); the dtypes follow
// the element types (float32: F32, int64: I64, ...; see ir.Element). For
// example, 100 examples of 3 features with a class index each:
//
//	ds, err := data.FromSlices(x, []int{100, 3}, y, []int{100})
//
// The values are copied. Errors (a length that disagrees with its shape,
// leading sizes that differ, rank 0) wrap ErrFormat.
func FromSlices[F, T ir.Element](features []F, featureShape []int, targets []T, targetShape []int) (*TensorDataset, error) {
	f, err := fromSlice("features", features, featureShape)
	if err != nil {
		return nil, err
	}
	t, err := fromSlice("targets", targets, targetShape)
	if err != nil {
		return nil, err
	}
	return NewTensorDataset(f, t)
}

// fromSlice is ir.FromSlice returning errors instead of panicking.
func fromSlice[T ir.Element](what string, v []T, shape []int) (*ember.TensorData, error) {
	if err := ir.CheckShape(shape); err != nil {
		return nil, fmt.Errorf("data: FromSlices: %w: %s: %v", ErrFormat, what, err)
	}
	if n := ir.NumElements(shape); n != len(v) {
		return nil, fmt.Errorf("data: FromSlices: %w: %d %s values for shape %v, which holds %d", ErrFormat, len(v), what, shape, n)
	}
	return ir.FromSlice(v, shape), nil
}

// newTensorDataset builds a dataset from aligned shards of features and
// targets; names[k] identifies shard k in errors.
func newTensorDataset(names []string, features, targets []*ember.TensorData) (*TensorDataset, error) {
	d := &TensorDataset{starts: []int{0}}
	for k := range features {
		where := names[k]
		f, t := features[k], targets[k]
		if err := checkArray(where, "features", f); err != nil {
			return nil, err
		}
		if err := checkArray(where, "targets", t); err != nil {
			return nil, err
		}
		if f.Shape[0] != t.Shape[0] {
			return nil, formatErr(where, "%d feature rows but %d target rows", f.Shape[0], t.Shape[0])
		}
		s := Schema{
			Features: Field{Shape: slices.Clone(f.Shape[1:]), DType: f.DType},
			Targets:  Field{Shape: slices.Clone(t.Shape[1:]), DType: t.DType},
		}
		if err := s.check(f.Shape[0]); err != nil {
			return nil, formatErr(where, "%v", err)
		}
		if k == 0 {
			d.schema = s
		} else if !s.Equal(d.schema) {
			return nil, formatErr(where, "%v differ from the first shard's %v", s, d.schema)
		}
		d.shards = append(d.shards, tensorShard{features: f.Bytes, targets: t.Bytes})
		d.starts = append(d.starts, d.starts[len(d.starts)-1]+f.Shape[0])
	}
	if len(d.shards) == 0 {
		return nil, formatErr("arrays", "no arrays")
	}
	return d, nil
}

// checkArray validates one array of a TensorDataset.
func checkArray(where, what string, a *ember.TensorData) error {
	if a == nil {
		return formatErr(where, "%s array is nil", what)
	}
	if !a.DType.Valid() {
		return formatErr(where, "%s dtype %v is not valid", what, a.DType)
	}
	if len(a.Shape) == 0 {
		return formatErr(where, "%s array has rank 0; its leading axis must index the examples", what)
	}
	n, err := ir.NumBytes(a.Shape, a.DType)
	if err != nil {
		return formatErr(where, "%s: %v", what, err)
	}
	if n != len(a.Bytes) {
		return formatErr(where, "%s array of shape %v and dtype %v needs %d bytes, has %d", what, a.Shape, a.DType, n, len(a.Bytes))
	}
	return nil
}

// Len returns the number of examples.
func (d *TensorDataset) Len() int { return d.starts[len(d.starts)-1] }

// Schema returns the examples' shapes and dtypes: the arrays' shapes
// without their leading axis.
func (d *TensorDataset) Schema() Schema { return d.schema }

// Gather copies the examples indices into features and targets (see
// Dataset). It never returns an error; it panics on an index out of range
// or buffers of the wrong length.
func (d *TensorDataset) Gather(indices []int, features, targets []byte) error {
	checkGather("TensorDataset", d.schema, d.Len(), indices, features, targets)
	fb, tb := d.schema.Features.Bytes(), d.schema.Targets.Bytes()
	for k, i := range indices {
		s := 0
		if len(d.shards) > 1 {
			s = sort.SearchInts(d.starts, i+1) - 1
		}
		j := i - d.starts[s]
		sh := &d.shards[s]
		copy(features[k*fb:(k+1)*fb], sh.features[j*fb:(j+1)*fb])
		copy(targets[k*tb:(k+1)*tb], sh.targets[j*tb:(j+1)*tb])
	}
	return nil
}
