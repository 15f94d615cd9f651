package data

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/emberml/ember"
)

// fuzzCSVOptions derives ReadCSV options from the fuzzer's flag byte:
// bit 0 a header, bit 1 class targets (bit 2: named classes), bit 3 ';'
// as the delimiter, bits 4-5 the feature dtype, bit 6 comments, bit 7 the
// first column as the target.
func fuzzCSVOptions(flags byte) CSVOptions {
	o := CSVOptions{Header: flags&1 != 0}
	if flags&2 != 0 {
		o.Target = ClassTarget
		if flags&4 != 0 {
			o.ClassNames = []string{"a", "b", "c"}
		}
	}
	if flags&8 != 0 {
		o.Comma = ';'
	}
	o.FeatureDType = []ember.DType{ember.F32, ember.F64, ember.F16, ember.BF16}[flags>>4&3]
	if flags&64 != 0 {
		o.Comment = '#'
	}
	if flags&128 != 0 {
		o.Targets = []string{"0"}
	}
	return o
}

// FuzzReadCSV checks that ReadCSV never panics, that every error it
// returns for in-memory input is a format error, and that a dataset it
// returns gathers every example with finite values of its schema.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("x,y,label\n1,2,0\n3,4,1\n"), byte(3))
	f.Add([]byte("1;2;a\n3;4;c\n"), byte(6|8))
	f.Add([]byte("# c\n1.5,2e3,-1\n\"3\",4,5\n"), byte(64))
	f.Add([]byte("1,2\n3\n"), byte(0))
	f.Fuzz(func(t *testing.T, in []byte, flags byte) {
		o := fuzzCSVOptions(flags)
		ds, err := ReadCSV(bytes.NewReader(in), "fuzz.csv", o)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrColumns) {
				t.Fatalf("error %v is neither a format nor an options error", err)
			}
			return
		}
		n := ds.Len()
		s := ds.Schema()
		if n < 1 || len(ds.FeatureNames) != s.Features.Size() || len(s.Features.Shape) != 1 {
			t.Fatalf("Len %d, schema %v, feature names %v", n, s, ds.FeatureNames)
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		fb, tb := make([]byte, n*s.Features.Bytes()), make([]byte, n*s.Targets.Bytes())
		if err := ds.Gather(idx, fb, tb); err != nil {
			t.Fatal(err)
		}
		feat := (&ember.TensorData{Shape: append([]int{n}, s.Features.Shape...), DType: s.Features.DType, Bytes: fb}).Float64s()
		for _, v := range feat {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("feature value %v", v)
			}
		}
		if o.Target == ClassTarget {
			tg := (&ember.TensorData{Shape: []int{n}, DType: ember.I64, Bytes: tb}).Int64s()
			for _, c := range tg {
				if c < 0 || o.ClassNames != nil && c >= int64(len(o.ClassNames)) {
					t.Fatalf("class %d", c)
				}
			}
		}
	})
}
