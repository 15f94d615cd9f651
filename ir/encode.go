package ir

// The serialized form of ops, graphs and tensor data.
//
// An Op refers to its inputs as backend tensors; to leave the process it
// becomes a Record, the same op with every tensor replaced by a TensorID
// (Encode), and a Record becomes an Op again when each id is looked up
// (Record.Decode). Remote execution ships Records between a client and a
// server that map ids to their tensors; a captured Graph is a list of
// Records over the ids of its inputs, its constants (TensorData values)
// and the results of earlier Records, and Graph.Validate replays it with
// placeholder tensors (Ref) through each kind's Spec.Infer.
//
// Records, Graphs and TensorData encode as CBOR (RFC 8949) with
// github.com/fxamacker/cbor/v2: structs are maps with small integer keys
// (compact and stable), zero fields are left out, maps are sorted
// (deterministic output) and floats keep every bit (NaN payloads, -0).
// MarshalOp, MarshalGraph and MarshalTensorData wrap the value in an
// envelope [FormatVersion, type, value]; the Unmarshal functions reject
// another version or another type with an error naming both. Record,
// Graph and TensorData also implement cbor.Marshaler and
// cbor.Unmarshaler, so a message that embeds them (and carries its own
// version) encodes them the same way, without the envelope, whatever the
// options of the message's encoder.
//
// Decoding is meant for untrusted input: it never panics, rejects
// duplicate map keys, unknown fields, CBOR tags and indefinite lengths,
// bounds nesting, array lengths and map sizes, and allocates in
// proportion to the input's length (a byte string or array claims no
// memory before its bytes are seen to be there). Every decoded value is
// checked structurally: a Record has a known kind, a sub-op valid for it,
// a valid dtype, a shape with non-negative sizes whose element count fits
// an int, a rank, axis and attribute lengths within 64 axes, and as many
// inputs and outputs as its Spec says; TensorData has a valid dtype, a
// valid shape and exactly as many bytes as they need. Whether a graph's
// ops fit together is Graph.Validate's job.

import (
	"errors"
	"fmt"
	"strconv"
)

// FormatVersion is the version of the encoding written by MarshalOp,
// MarshalGraph and MarshalTensorData, the only one their Unmarshal
// counterparts accept. It changes whenever an encoded field changes
// meaning; kinds appended to the Kind list do not change it.
const FormatVersion = 1

// ErrFormat is wrapped by every error that reports malformed or invalid
// encoded input.
var ErrFormat = errors.New("ir: invalid encoding")

// ErrVersion is wrapped by the error for input of another FormatVersion.
var ErrVersion = errors.New("ir: unsupported format version")

// ErrUnknownTensor is wrapped by Record.Decode's error for an input id
// that its lookup does not know.
var ErrUnknownTensor = errors.New("ir: unknown tensor")

// TensorID names a tensor where tensors are referred to by number
// (captured graphs, remote execution). The zero id is reserved for "no
// tensor" (an absent optional input, an output that is not kept).
type TensorID uint64

// Ref is a placeholder tensor: an id with a shape and dtype and no
// storage. It implements Tensor, so that an op over ids can be inferred
// (Graph.Validate) or recorded without a backend.
type Ref struct {
	id    TensorID
	shape []int
	dtype DType
}

// NewRef returns the placeholder tensor id of the given shape and dtype.
// The shape is kept, not copied.
func NewRef(id TensorID, shape []int, dt DType) *Ref {
	return &Ref{id: id, shape: shape, dtype: dt}
}

// ID is the tensor's id.
func (r *Ref) ID() TensorID { return r.id }

// Shape is the tensor's shape.
func (r *Ref) Shape() []int { return r.shape }

// DType is the tensor's dtype.
func (r *Ref) DType() DType { return r.dtype }

// Record is an Op with its tensors replaced by ids: the fields of Op that
// a kind reads, the ids of its inputs and the ids of its outputs. It
// encodes as a CBOR map with the keys 1 (Kind) to 11 (Outputs) in field
// order, zero fields left out.
type Record struct {
	// Kind, Sub, DType, KeepDim, Axis, Shape, Scalars, Ints and Attrs
	// are the Op's fields (Attrs nil when the op has none).
	Kind    Kind
	Sub     uint8
	DType   DType
	KeepDim bool
	Axis    int
	Shape   []int
	Scalars [2]float64
	Ints    []int
	Attrs   *Attrs
	// Inputs are the ids of the op's inputs in Op.Input order, 0 for an
	// absent optional input (SGDStep without a momentum buffer).
	Inputs []TensorID
	// Outputs are the ids of the op's results, one per Spec.NumOutputs,
	// 0 for a result that is not kept.
	Outputs []TensorID
}

// Encode returns the record of op: its fields, id(t) for each non-nil
// input t (0 for a nil one) and outs as the output ids. The record shares
// op's Shape, Ints and Attrs and the outs slice; it does not copy them.
// An op of an invalid kind gets no input ids (and its record is rejected
// by MarshalOp).
func Encode(op Op, id func(Tensor) TensorID, outs []TensorID) Record {
	r := Record{
		Kind: op.Kind, Sub: op.Sub, DType: op.DType, KeepDim: op.KeepDim, Axis: op.Axis,
		Shape: op.Shape, Scalars: op.Scalars, Ints: op.Ints, Attrs: op.Attrs, Outputs: outs,
	}
	if !op.Kind.Valid() {
		return r
	}
	if n := op.NumInputs(); n > 0 {
		r.Inputs = make([]TensorID, n)
		for i := range n {
			if t := op.Input(i); t != nil {
				r.Inputs[i] = id(t)
			}
		}
	}
	return r
}

// Decode returns the op of r, each input id replaced by tensor(id) (nil
// for id 0). The op shares r's Shape, Ints and Attrs. It returns an error
// wrapping ErrFormat if r is structurally invalid (see the encoding
// overview at the top of encode.go), or one wrapping ErrUnknownTensor
// when tensor does not know an id. The op is not inferred: Shape and
// DType are the recorded ones.
func (r Record) Decode(tensor func(TensorID) (Tensor, bool)) (Op, error) {
	if err := r.check(); err != nil {
		return Op{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	op, i := r.decode(tensor)
	if i >= 0 {
		return Op{}, fmt.Errorf("%w %d: input %d (%s) of %s", ErrUnknownTensor, r.Inputs[i], i, operandName(r.Kind, i), op.Name())
	}
	return op, nil
}

// decode is Decode of a checked record; it returns the index of the first
// unknown input, or -1.
func (r *Record) decode(tensor func(TensorID) (Tensor, bool)) (Op, int) {
	op := Op{
		Kind: r.Kind, Sub: r.Sub, DType: r.DType, KeepDim: r.KeepDim, Axis: r.Axis,
		Shape: r.Shape, Scalars: r.Scalars, Ints: r.Ints, Attrs: r.Attrs,
	}
	useXs := op.UsesXs()
	if useXs {
		op.Xs = make([]Tensor, len(r.Inputs))
	}
	for i, id := range r.Inputs {
		var t Tensor
		if id != 0 {
			var ok bool
			if t, ok = tensor(id); !ok {
				return op, i
			}
		}
		if useXs {
			op.Xs[i] = t
		} else {
			op.In[i] = t
		}
	}
	return op, -1
}

// operandName is the spec's name for input i, or its number.
func operandName(k Kind, i int) string {
	if ops := specs[k].Operands; i < len(ops) {
		return ops[i]
	}
	return "#" + strconv.Itoa(i)
}

// maxRank bounds the rank of every encoded shape, axis and per-axis list.
const maxRank = 64

// validSub reports whether sub is a valid Op.Sub for the valid kind k:
// one of the Spec.Subs values from Spec.FirstSub, or 0 for a kind without
// sub-ops.
func validSub(k Kind, sub uint8) bool {
	s := &specs[k]
	if s.Subs == 0 {
		return sub == 0
	}
	return sub >= s.FirstSub && sub-s.FirstSub < s.Subs
}

// formatError returns an error wrapping ErrFormat.
func formatError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// checkEncodedShape checks a shape's rank, sizes and element count.
func checkEncodedShape(shape []int) error {
	if len(shape) > maxRank {
		return fmt.Errorf("rank %d exceeds %d", len(shape), maxRank)
	}
	return CheckShape(shape)
}

// check validates r structurally.
func (r *Record) check() error {
	if !r.Kind.Valid() {
		return fmt.Errorf("op: unknown kind %d", r.Kind)
	}
	s := &specs[r.Kind]
	name := r.Kind.String()
	switch {
	case !validSub(r.Kind, r.Sub):
		return fmt.Errorf("op %s: invalid sub-op %d", name, r.Sub)
	case !r.DType.Valid():
		return fmt.Errorf("op %s: invalid dtype %d", name, r.DType)
	case r.Axis < 0 || r.Axis >= maxRank:
		return fmt.Errorf("op %s: axis %d is outside [0, %d)", name, r.Axis, maxRank)
	case len(r.Ints) > 2*maxRank:
		return fmt.Errorf("op %s: %d integer attributes exceed %d", name, len(r.Ints), 2*maxRank)
	case r.Attrs != nil && len(r.Attrs.Ranges) > maxRank:
		return fmt.Errorf("op %s: %d ranges exceed %d", name, len(r.Attrs.Ranges), maxRank)
	case len(r.Outputs) != s.NumOutputs:
		return fmt.Errorf("op %s: %d output ids, the kind has %d outputs", name, len(r.Outputs), s.NumOutputs)
	}
	if err := checkEncodedShape(r.Shape); err != nil {
		return fmt.Errorf("op %s: %v", name, err)
	}
	if n := s.NumInputs; n < 0 {
		if len(r.Inputs) == 0 {
			return fmt.Errorf("op %s: needs at least one input id", name)
		}
	} else if len(r.Inputs) != n {
		return fmt.Errorf("op %s: %d input ids, the kind has %d inputs", name, len(r.Inputs), n)
	}
	return nil
}

// checkData validates tensor data: dtype, shape and byte length.
func checkData(shape []int, dt DType, b []byte) error {
	if !dt.Valid() {
		return fmt.Errorf("tensor data: invalid dtype %d", dt)
	}
	if err := checkEncodedShape(shape); err != nil {
		return fmt.Errorf("tensor data: %v", err)
	}
	n, err := NumBytes(shape, dt)
	if err != nil {
		return fmt.Errorf("tensor data: %v", err)
	}
	if len(b) != n {
		return fmt.Errorf("tensor data: shape %v of %v needs %d bytes, got %d", shape, dt, n, len(b))
	}
	return nil
}

// MarshalOp encodes r with its format version. It fails for a
// structurally invalid record.
func MarshalOp(r Record) ([]byte, error) {
	w, err := toWireRecord(&r)
	if err != nil {
		return nil, formatError("%v", err)
	}
	return marshal(typeOp, w)
}

// UnmarshalOp decodes and checks a record encoded by MarshalOp. Errors
// wrap ErrFormat, or ErrVersion for another format version.
func UnmarshalOp(data []byte) (Record, error) {
	var w wireRecord
	if err := unmarshal(data, typeOp, &w); err != nil {
		return Record{}, err
	}
	r, err := w.record()
	if err != nil {
		return Record{}, formatError("%v", err)
	}
	return r, nil
}

// MarshalCBOR encodes r without an envelope (cbor.Marshaler), for
// messages that embed records and carry their own version. It fails for
// a structurally invalid record.
func (r Record) MarshalCBOR() ([]byte, error) {
	w, err := toWireRecord(&r)
	if err != nil {
		return nil, formatError("%v", err)
	}
	return encMode.Marshal(w)
}

// UnmarshalCBOR decodes and checks a record encoded by MarshalCBOR
// (cbor.Unmarshaler).
func (r *Record) UnmarshalCBOR(data []byte) error {
	var w wireRecord
	if err := decMode.Unmarshal(data, &w); err != nil {
		return formatError("op: %v", err)
	}
	v, err := w.record()
	if err != nil {
		return formatError("%v", err)
	}
	*r = v
	return nil
}

// MarshalTensorData encodes d with its format version. It fails when the
// byte length does not match the shape and dtype.
func MarshalTensorData(d *TensorData) ([]byte, error) {
	if d == nil {
		return nil, formatError("tensor data: nil")
	}
	w, err := toWireData(d)
	if err != nil {
		return nil, formatError("%v", err)
	}
	return marshal(typeData, w)
}

// UnmarshalTensorData decodes and checks tensor data encoded by
// MarshalTensorData. Errors wrap ErrFormat, or ErrVersion for another
// format version.
func UnmarshalTensorData(data []byte) (*TensorData, error) {
	var w wireData
	if err := unmarshal(data, typeData, &w); err != nil {
		return nil, err
	}
	d, err := w.data()
	if err != nil {
		return nil, formatError("%v", err)
	}
	return d, nil
}

// MarshalCBOR encodes d without an envelope (cbor.Marshaler), for
// messages that embed tensor data and carry their own version. It fails
// when the byte length does not match the shape and dtype.
func (d TensorData) MarshalCBOR() ([]byte, error) {
	w, err := toWireData(&d)
	if err != nil {
		return nil, formatError("%v", err)
	}
	return encMode.Marshal(w)
}

// UnmarshalCBOR decodes and checks tensor data encoded by MarshalCBOR
// (cbor.Unmarshaler).
func (d *TensorData) UnmarshalCBOR(data []byte) error {
	var w wireData
	if err := decMode.Unmarshal(data, &w); err != nil {
		return formatError("tensor data: %v", err)
	}
	v, err := w.data()
	if err != nil {
		return formatError("%v", err)
	}
	*d = *v
	return nil
}
