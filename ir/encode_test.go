package ir

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// bitsEqual is reflect.DeepEqual with floats compared by their bits (so
// NaN equals the same NaN and -0 differs from 0); unexported fields are
// compared too.
func bitsEqual(a, b any) bool { return valuesBitsEqual(reflect.ValueOf(a), reflect.ValueOf(b)) }

func valuesBitsEqual(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32:
		return math.Float32bits(float32(a.Float())) == math.Float32bits(float32(b.Float()))
	case reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !valuesBitsEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !valuesBitsEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Kind() == reflect.Pointer && a.Pointer() == b.Pointer() {
			return true
		}
		return valuesBitsEqual(a.Elem(), b.Elem())
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !valuesBitsEqual(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	}
	panic("bitsEqual: unsupported kind " + a.Kind().String())
}

// randomFloat returns a float64 that is often special: NaNs with payloads
// (quiet and signaling, either sign), infinities, -0, subnormals, random
// bit patterns.
func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(10) {
	case 0:
		return math.NaN()
	case 1:
		bits := 0x7ff0000000000000 | rng.Uint64()&(1<<52-1) | 1
		if rng.IntN(2) == 0 {
			bits |= 1 << 63
		}
		return math.Float64frombits(bits)
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return math.Copysign(0, -1)
	case 5:
		return 0
	case 6:
		return math.Float64frombits(rng.Uint64())
	case 7:
		return math.SmallestNonzeroFloat64 * float64(rng.IntN(1000))
	case 8:
		return float64(rng.IntN(2001)-1000) / 8
	}
	return rng.NormFloat64()
}

// randomInt returns an int that is often small and sometimes extreme.
func randomInt(rng *rand.Rand) int {
	switch rng.IntN(8) {
	case 0:
		return math.MaxInt
	case 1:
		return math.MinInt
	case 2:
		return int(rng.Uint64())
	case 3:
		return -rng.IntN(10)
	}
	return rng.IntN(10)
}

// randomShape returns nil or a valid shape of rank 1 to 5.
func randomShape(rng *rand.Rand) []int {
	switch rng.IntN(6) {
	case 0:
		return nil
	case 1:
		return []int{1 << 40, rng.IntN(3)}
	}
	s := make([]int, 1+rng.IntN(5))
	for i := range s {
		s[i] = rng.IntN(8)
	}
	return s
}

func randomInts(rng *rand.Rand) []int {
	if rng.IntN(3) == 0 {
		return nil
	}
	s := make([]int, 1+rng.IntN(2*maxRank))
	for i := range s {
		s[i] = randomInt(rng)
	}
	return s
}

func randomPair(rng *rand.Rand) [2]int { return [2]int{randomInt(rng), randomInt(rng)} }

func randomAttrs(rng *rand.Rand) *Attrs {
	if rng.IntN(3) == 0 {
		return nil
	}
	a := &Attrs{}
	if rng.IntN(2) == 0 {
		a.Conv = ConvOptions{Stride: randomPair(rng), Padding: randomPair(rng), Dilation: randomPair(rng),
			Groups: randomInt(rng), OutputPadding: randomPair(rng)}
	}
	if rng.IntN(2) == 0 {
		a.Pool = PoolOptions{Kernel: randomPair(rng), Stride: randomPair(rng), Padding: randomPair(rng), Dilation: randomPair(rng)}
	}
	if rng.IntN(2) == 0 {
		a.Ranges = make([]Range, rng.IntN(maxRank+1)) // empty (not nil) included
		for i := range a.Ranges {
			a.Ranges[i] = Range{Start: randomInt(rng), End: randomInt(rng), Step: randomInt(rng)}
		}
	}
	if rng.IntN(2) == 0 {
		a.Optim = OptimUpdate{LR: randomFloat(rng), Beta1: randomFloat(rng), Beta2: randomFloat(rng), Eps: randomFloat(rng),
			WeightDecay: randomFloat(rng), Step: randomInt(rng), Decoupled: rng.IntN(2) == 0,
			Momentum: randomFloat(rng), Nesterov: rng.IntN(2) == 0}
	}
	return a
}

func randomDType(rng *rand.Rand) DType { return AllDTypes[rng.IntN(len(AllDTypes))] }

// randomSub picks a sub-op valid for k, without knowing k.
func randomSub(rng *rand.Rand, k Kind) uint8 {
	var valid []uint8
	for s := range 256 {
		if validSub(k, uint8(s)) {
			valid = append(valid, uint8(s))
		}
	}
	return valid[rng.IntN(len(valid))]
}

// opCase is a random op of some kind with its output ids and the Refs
// that it reads.
type opCase struct {
	op   Op
	outs []TensorID
	refs map[TensorID]*Ref
}

// randomOp fills every field of an op of kind k at random; its inputs
// follow only from k's Spec (NumInputs), and some are absent.
func randomOp(rng *rand.Rand, k Kind) opCase {
	spec := SpecOf(k)
	c := opCase{refs: map[TensorID]*Ref{}}
	c.op = Op{Kind: k, Sub: randomSub(rng, k), DType: randomDType(rng), KeepDim: rng.IntN(2) == 0,
		Axis: rng.IntN(maxRank), Shape: randomShape(rng), Scalars: [2]float64{randomFloat(rng), randomFloat(rng)},
		Ints: randomInts(rng), Attrs: randomAttrs(rng)}
	n := spec.NumInputs
	if n < 0 {
		n = 1 + rng.IntN(6)
	}
	if c.op.UsesXs() {
		c.op.Xs = make([]Tensor, n)
	}
	id := TensorID(1 + rng.IntN(1000))
	for i := range n {
		id += TensorID(1 + rng.IntN(1<<20))
		if rng.IntN(6) == 0 {
			continue // absent (optional) input: id 0
		}
		r := NewRef(id, randomShape(rng), randomDType(rng))
		c.refs[id] = r
		c.op.SetInput(i, r)
	}
	c.outs = make([]TensorID, spec.NumOutputs)
	for j := range c.outs {
		if j > 0 && rng.IntN(3) == 0 {
			continue // output not kept
		}
		id += TensorID(1 + rng.IntN(1<<40))
		c.outs[j] = id
	}
	return c
}

func refID(t Tensor) TensorID { return t.(*Ref).ID() }

func (c opCase) lookup(id TensorID) (Tensor, bool) {
	r, ok := c.refs[id]
	if !ok {
		return nil, false
	}
	return r, true
}

// TestOpRoundTripEveryKind encodes random ops of every registered kind
// (the list comes from Kinds, so a new kind is covered without editing
// this test) and checks that they come back bit for bit.
func TestOpRoundTripEveryKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := Kinds()
	if len(kinds) == 0 {
		t.Fatal("no kinds registered")
	}
	for _, k := range kinds {
		for i := range 200 {
			c := randomOp(rng, k)
			r := Encode(c.op, refID, c.outs)
			b, err := MarshalOp(r)
			if err != nil {
				t.Fatalf("%v #%d: MarshalOp: %v", k, i, err)
			}
			r2, err := UnmarshalOp(b)
			if err != nil {
				t.Fatalf("%v #%d: UnmarshalOp: %v\n%x", k, i, err, b)
			}
			if !bitsEqual(r, r2) {
				t.Fatalf("%v #%d: record changed:\n got %+v\nwant %+v", k, i, r2, r)
			}
			op, err := r2.Decode(c.lookup)
			if err != nil {
				t.Fatalf("%v #%d: Decode: %v", k, i, err)
			}
			if !bitsEqual(c.op, op) {
				t.Fatalf("%v #%d: op changed:\n got %+v\nwant %+v", k, i, op, c.op)
			}
			if b2, err := MarshalOp(r2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("%v #%d: re-encoding differs (%v):\n%x\n%x", k, i, err, b, b2)
			}
		}
	}
}

// TestOpEncodingGolden pins the bytes of one record: the format is
// stable within a FormatVersion.
func TestOpEncodingGolden(t *testing.T) {
	r := Record{Kind: KindSlice, DType: F32, Shape: []int{2, 3}, Scalars: [2]float64{math.Copysign(0, -1), 1.5},
		Attrs: &Attrs{Ranges: []Range{{0, 2, 1}, {1, 7, 2}}}, Inputs: []TensorID{7}, Outputs: []TensorID{300}}
	b, err := MarshalOp(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = "830101a7010c0302068202030782f98000f93e0009a103828300020183010702" + "0a81070b8119012c"
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("encoding changed:\n got %s\nwant %s", got, want)
	}
}

// rawEnvelope encodes [version, type, payload] with payload marshaled
// as-is (bypassing the checks of the Marshal functions).
func rawEnvelope(t testing.TB, version, typ uint64, payload any) []byte {
	t.Helper()
	p, err := encMode.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encMode.Marshal([]any{version, typ, cbor.RawMessage(p)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toWire is the encoded form of r, unchecked.
func toWire(r Record) *wireRecord {
	return &wireRecord{Kind: r.Kind, Sub: r.Sub, DType: r.DType, KeepDim: r.KeepDim, Axis: r.Axis, Shape: r.Shape,
		Scalars: r.Scalars, Ints: r.Ints, Attrs: toWireAttrs(r.Attrs), Inputs: r.Inputs, Outputs: r.Outputs}
}

func validRecord() Record {
	return Record{Kind: KindBinary, Sub: uint8(OpAdd), DType: F32, Shape: []int{2, 3}, Inputs: []TensorID{1, 2}, Outputs: []TensorID{3}}
}

func TestUnmarshalOpRejects(t *testing.T) {
	mod := func(f func(r *Record)) any {
		r := validRecord()
		f(&r)
		return toWire(r)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an enveloped value"},
		{"not an array", []byte{0x01}, "not an enveloped value"},
		{"empty envelope", []byte{0x80}, "empty envelope"},
		{"version", rawEnvelope(t, 2, typeOp, mod(func(*Record) {})), "format version 2, this build reads version 1"},
		{"version, other layout", []byte{0x81, 0x02}, "format version 2, this build reads version 1"},
		{"version, huge", []byte{0x82, 0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xa0}, "format version 18446744073709551615"},
		{"version not an int", []byte{0x83, 0x61, 0x31, 0x01, 0xa0}, "format version: cbor"},
		{"two items", []byte{0x82, 0x01, 0x01}, "envelope has 2 items, want 3"},
		{"type not an int", []byte{0x83, 0x01, 0x61, 0x78, 0xa0}, "envelope type"},
		{"version 0", rawEnvelope(t, 0, typeOp, mod(func(*Record) {})), "format version 0, this build reads version 1"},
		{"type", rawEnvelope(t, 1, typeGraph, mod(func(*Record) {})), "op expected, the input holds graph"},
		{"type unknown", rawEnvelope(t, 1, 9, mod(func(*Record) {})), "op expected, the input holds type 9"},
		{"kind 0", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Kind = 0 })), "unknown kind 0"},
		{"kind huge", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Kind = 65535 })), "unknown kind 65535"},
		{"kind overflow", rawEnvelope(t, 1, typeOp, map[int]any{1: 1 << 20}), "overflows"},
		{"sub", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Sub = 200 })), "invalid sub-op 200"},
		{"sub on kind without", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Kind = KindMatmul; r.Sub = 1 })), "invalid sub-op 1"},
		{"dtype", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.DType = 0 })), "invalid dtype 0"},
		{"dtype high", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.DType = Bool + 1 })), "invalid dtype 15"},
		{"negative size", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Shape = []int{2, -1} })), "negative size"},
		{"shape overflow", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Shape = []int{1 << 40, 1 << 40} })), "more elements than an int"},
		{"rank", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Shape = make([]int, maxRank+1) })), "rank 65 exceeds 64"},
		{"axis", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Axis = -1 })), "axis -1"},
		{"axis high", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Axis = maxRank })), "axis 64"},
		{"ints", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Ints = make([]int, 2*maxRank+1) })), "129 integer attributes"},
		{"ranges", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Attrs = &Attrs{Ranges: make([]Range, maxRank+1)} })), "65 ranges"},
		{"inputs", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Inputs = r.Inputs[:1] })), "1 input ids, the kind has 2"},
		{"variadic inputs", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Kind = KindCat; r.Sub = 0; r.Inputs = nil })), "at least one input"},
		{"outputs", rawEnvelope(t, 1, typeOp, mod(func(r *Record) { r.Outputs = nil })), "0 output ids, the kind has 1"},
		{"unknown field", rawEnvelope(t, 1, typeOp, map[int]any{1: 5, 2: 1, 3: 2, 10: []int{1, 2}, 11: []int{3}, 99: 1}), "unknown field"},
		{"string key", rawEnvelope(t, 1, typeOp, map[string]any{"Kind": 5}), "unknown field"},
		{"wrong type", rawEnvelope(t, 1, typeOp, map[int]any{1: "binary"}), "cannot unmarshal"},
		{"negative id", rawEnvelope(t, 1, typeOp, map[int]any{1: 5, 2: 1, 3: 2, 10: []int{-1, 2}, 11: []int{3}}), "cannot unmarshal"},
		{"float axis", rawEnvelope(t, 1, typeOp, map[int]any{1: 5, 5: 1.5}), "cannot unmarshal"},
		{"bad attrs", rawEnvelope(t, 1, typeOp, map[int]any{1: 12, 9: map[int]any{3: []int{1}}}), "cannot unmarshal positive integer"},
		{"range length", rawEnvelope(t, 1, typeOp, map[int]any{1: 12, 9: map[int]any{3: [][]int{{1, 2}}}}), "different number of elements"},
		{"duplicate key", append(rawEnvelope(t, 1, typeOp, map[int]any{})[:3], 0xa2, 0x01, 0x05, 0x01, 0x05), "duplicate map key"},
		{"tag", []byte{0x83, 0x01, 0x01, 0xc1, 0xa0}, "tag"},
		{"indefinite", []byte{0x9f, 0x01, 0x01, 0xa0, 0xff}, "indefinite"},
		{"truncated", rawEnvelope(t, 1, typeOp, mod(func(*Record) {}))[:10], "unexpected EOF"},
		{"trailing", append(rawEnvelope(t, 1, typeOp, mod(func(*Record) {})), 0), "extraneous data"},
		{"huge array header", []byte{0x83, 0x01, 0x01, 0xa1, 0x06, 0x9b, 0, 0, 0, 1, 0, 0, 0, 0}, "exceeded max number of elements"},
		{"deep nesting", append(append([]byte{0x83, 0x01, 0x01, 0xa1, 0x06}, bytes.Repeat([]byte{0x81}, 40)...), 0x00), "exceeded max nested level"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := UnmarshalOp(c.data)
			if err == nil {
				t.Fatalf("no error for %x", c.data)
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
				t.Errorf("error %q wraps neither ErrFormat nor ErrVersion", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
	if _, err := UnmarshalOp(rawEnvelope(t, 2, typeOp, 0)); !errors.Is(err, ErrVersion) {
		t.Errorf("version error %v does not wrap ErrVersion", err)
	}
}

func TestMarshalOpRejectsInvalid(t *testing.T) {
	r := validRecord()
	r.Inputs = nil
	if _, err := MarshalOp(r); err == nil || !errors.Is(err, ErrFormat) {
		t.Errorf("MarshalOp of a record without inputs: %v", err)
	}
	if r := Encode(Op{Kind: 0}, refID, nil); r.Inputs != nil {
		t.Errorf("Encode of an invalid kind has inputs %v", r.Inputs)
	}
}

func TestDecodeUnknownTensor(t *testing.T) {
	x := NewRef(1, []int{2}, F32)
	_, err := validRecord().Decode(func(id TensorID) (Tensor, bool) {
		if id == 1 {
			return x, true
		}
		return nil, false
	})
	if !errors.Is(err, ErrUnknownTensor) || !strings.Contains(err.Error(), "unknown tensor 2: input 1 (rhs) of add") {
		t.Errorf("Decode: %v", err)
	}
	r := validRecord()
	r.Kind = NumKinds + 3
	if _, err := r.Decode(nil); !errors.Is(err, ErrFormat) {
		t.Errorf("Decode of an invalid record: %v", err)
	}
}

// TestRecordEmbeds checks that a record and tensor data inside another
// CBOR message, encoded with default options, keep their form and their
// checks.
func TestRecordEmbeds(t *testing.T) {
	type message struct {
		Op    Record
		Data  *TensorData
		Graph *Graph
	}
	r := validRecord()
	r.Scalars[0] = math.Float64frombits(0x7ff0000000000123)
	m := message{Op: r, Data: FromSlice([]int16{1, -2}, []int{2}), Graph: testGraph(t)}
	b, err := cbor.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got message
	if err := cbor.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !bitsEqual(m, got) {
		t.Errorf("got %+v, want %+v", got, m)
	}
	m.Op.Kind = 0
	if _, err := cbor.Marshal(m); err == nil {
		t.Error("an invalid embedded record encodes")
	}
	m.Op = r
	m.Data.Bytes = m.Data.Bytes[:3]
	if _, err := cbor.Marshal(m); err == nil {
		t.Error("invalid embedded tensor data encodes")
	}
	// Decoding checks what it embeds.
	bad := func(field string, v any) []byte {
		b, err := cbor.Marshal(map[string]any{field: v})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, b := range [][]byte{
		bad("Op", toWire(Record{Kind: KindBinary})),
		bad("Data", &wireData{Shape: []int{2}, DType: F32}),
		bad("Graph", map[int]any{4: []int{1}, 2: map[int]any{0: &wireData{DType: U8, Bytes: []byte{1}}}}),
	} {
		var got message
		if err := cbor.Unmarshal(b, &got); !errors.Is(err, ErrFormat) {
			t.Errorf("decoding %x: %v, want an error wrapping ErrFormat", b, err)
		}
	}
}

func TestTensorDataRoundTripEveryDType(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := [][]int{nil, {}, {0}, {1}, {3}, {2, 3}, {4, 0, 2}, {2, 1, 3, 1}}
	for _, dt := range AllDTypes {
		for _, shape := range shapes {
			b := make([]byte, NumElements(shape)*dt.Size())
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if dt == Bool {
				for i := range b {
					b[i] &= 1
				}
			}
			d, err := NewTensorData(shape, dt, b)
			if err != nil {
				t.Fatal(err)
			}
			d.Shape = shape // keep nil and empty apart
			enc, err := MarshalTensorData(d)
			if err != nil {
				t.Fatalf("%v %v: %v", dt, shape, err)
			}
			got, err := UnmarshalTensorData(enc)
			if err != nil {
				t.Fatalf("%v %v: %v", dt, shape, err)
			}
			if !reflect.DeepEqual(d, got) {
				t.Errorf("%v %v: got %#v, want %#v", dt, shape, got, d)
			}
		}
	}
	// Values through FromSlice, floats with NaN payloads and -0.
	f := FromSlice([]float64{math.Copysign(0, -1), math.Float64frombits(0x7ff0000000000001), math.Inf(-1)}, []int{3})
	enc, err := MarshalTensorData(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalTensorData(enc)
	if err != nil || !reflect.DeepEqual(f, got) {
		t.Errorf("got %#v (%v), want %#v", got, err, f)
	}
}

func TestTensorDataRejects(t *testing.T) {
	cases := []struct {
		name string
		w    wireData
		want string
	}{
		{"length", wireData{Shape: []int{2}, DType: F32, Bytes: make([]byte, 7)}, "needs 8 bytes, got 7"},
		{"dtype 0", wireData{Shape: []int{2}, Bytes: make([]byte, 2)}, "invalid dtype 0"},
		{"dtype high", wireData{Shape: []int{2}, DType: 15, Bytes: make([]byte, 2)}, "invalid dtype 15"},
		{"negative", wireData{Shape: []int{-2}, DType: U8, Bytes: nil}, "negative size"},
		{"elements overflow", wireData{Shape: []int{1 << 62, 4}, DType: U8}, "more elements than an int"},
		{"bytes overflow", wireData{Shape: []int{1 << 61, 2}, DType: F64}, "more bytes than an int"},
		{"rank", wireData{Shape: make([]int, maxRank+1), DType: U8}, "rank 65"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := UnmarshalTensorData(rawEnvelope(t, 1, typeData, &c.w))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("UnmarshalTensorData: %v, want an error saying %q", err, c.want)
			}
			d := TensorData(c.w)
			if _, err := MarshalTensorData(&d); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("MarshalTensorData: %v, want an error saying %q", err, c.want)
			}
		})
	}
	if _, err := MarshalTensorData(nil); !errors.Is(err, ErrFormat) {
		t.Errorf("MarshalTensorData(nil): %v", err)
	}
	// A byte string header claiming 2^40 bytes in a short input.
	huge := []byte{0x83, 0x01, 0x03, 0xa3, 0x01, 0x81, 0x1b, 0, 0, 1, 0, 0, 0, 0, 0, 0x02, 0x0d, 0x03, 0x5b, 0, 0, 1, 0, 0, 0, 0, 0}
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := UnmarshalTensorData(huge); err == nil {
			t.Fatal("no error for a truncated byte string")
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for a short hostile input", allocs)
	}
	if _, err := UnmarshalTensorData(rawEnvelope(t, 1, typeOp, &wireData{})); err == nil || !strings.Contains(err.Error(), "tensor data expected, the input holds op") {
		t.Errorf("type mismatch: %v", err)
	}
}
