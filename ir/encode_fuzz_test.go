package ir

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// opSeeds are valid encodings of random ops of every kind.
func opSeeds(t testing.TB) [][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	var seeds [][]byte
	for _, k := range Kinds() {
		for range 2 {
			c := randomOp(rng, k)
			b, err := MarshalOp(Encode(c.op, refID, c.outs))
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// graphSeeds are valid encodings of graphs: the test graph, an empty one
// and one that does not validate.
func graphSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	add := func(g *Graph) {
		b, err := MarshalGraph(g)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	add(testGraph(t))
	add(&Graph{})
	g := testGraph(t)
	g.Ops[1].Shape = []int{2, 5}
	add(g)
	return seeds
}

// dataSeeds are valid encodings of tensor data of every dtype.
func dataSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for i, dt := range AllDTypes {
		shape := [][]int{nil, {}, {0}, {3}, {2, 2}}[i%5]
		d, err := NewTensorData(shape, dt, make([]byte, NumElements(shape)*dt.Size()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalTensorData(d)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// checkDecodeError fails unless err wraps ErrFormat or ErrVersion.
func checkDecodeError(t *testing.T, err error) {
	if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
		t.Fatalf("error %q wraps neither ErrFormat nor ErrVersion", err)
	}
}

// fuzzRef returns a placeholder for any id: its rank, sizes (0 to 7) and
// dtype come from the id's bits, so that the fuzzer picks the inputs'
// shapes by picking ids.
func fuzzRef(id TensorID) (Tensor, bool) {
	shape := make([]int, id%5)
	for i := range shape {
		shape[i] = int(id>>(3+3*i)) & 7
	}
	return NewRef(id, shape, AllDTypes[int(id>>18)%len(AllDTypes)]), true
}

// FuzzUnmarshalOp: decoding never panics, what decodes re-encodes to the
// same bytes, and the decoded op (with placeholder inputs) infers without
// panicking, to a valid shape and dtype when it succeeds.
func FuzzUnmarshalOp(f *testing.F) {
	for _, b := range opSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := UnmarshalOp(data)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		b, err := MarshalOp(r)
		if err != nil {
			t.Fatalf("MarshalOp of a decoded record: %v", err)
		}
		r2, err := UnmarshalOp(b)
		if err != nil {
			t.Fatalf("UnmarshalOp of a re-encoded record: %v", err)
		}
		if !bitsEqual(r, r2) {
			t.Fatalf("record changed: %+v, then %+v", r, r2)
		}
		if b2, _ := MarshalOp(r2); !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", b, b2)
		}
		op, err := r.Decode(fuzzRef)
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if op.Infer() == nil {
			if err := CheckShape(op.Shape); err != nil || !op.DType.Valid() {
				t.Fatalf("%s inferred an invalid output %v %v", op.Name(), op.Shape, op.DType)
			}
		}
	})
}

// FuzzUnmarshalGraph: decoding and validating never panic, and what
// decodes re-encodes to the same bytes.
func FuzzUnmarshalGraph(f *testing.F) {
	for _, b := range graphSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := UnmarshalGraph(data)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if err := g.Validate(); err != nil && !errors.Is(err, ErrInvalidGraph) {
			t.Fatalf("Validate: %q does not wrap ErrInvalidGraph", err)
		}
		b, err := MarshalGraph(g)
		if err != nil {
			t.Fatalf("MarshalGraph of a decoded graph: %v", err)
		}
		g2, err := UnmarshalGraph(b)
		if err != nil {
			t.Fatalf("UnmarshalGraph of a re-encoded graph: %v", err)
		}
		if b2, _ := MarshalGraph(g2); !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", b, b2)
		}
	})
}

// FuzzUnmarshalTensorData: decoding never panics, what decodes has as
// many bytes as its shape and dtype need and re-encodes to the same bytes.
func FuzzUnmarshalTensorData(f *testing.F) {
	for _, b := range dataSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := UnmarshalTensorData(data)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if len(d.Bytes) != d.NumElements()*d.DType.Size() {
			t.Fatalf("%d bytes for shape %v of %v", len(d.Bytes), d.Shape, d.DType)
		}
		b, err := MarshalTensorData(d)
		if err != nil {
			t.Fatalf("MarshalTensorData of decoded data: %v", err)
		}
		d2, err := UnmarshalTensorData(b)
		if err != nil {
			t.Fatalf("UnmarshalTensorData of re-encoded data: %v", err)
		}
		if b2, _ := MarshalTensorData(d2); !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", b, b2)
		}
	})
}
