package ir

import (
	"fmt"
	"math"

	"github.com/fxamacker/cbor/v2"
)

// The CBOR side of the encoding: the encoded forms of records, attributes,
// tensor data and graphs (structs with small integer keys), the envelope
// [version, type, value] and the codec's options and limits.

// wireRecord is the encoded form of Record.
type wireRecord struct {
	Kind    Kind       `cbor:"1,keyasint,omitzero"`
	Sub     uint8      `cbor:"2,keyasint,omitzero"`
	DType   DType      `cbor:"3,keyasint,omitzero"`
	KeepDim bool       `cbor:"4,keyasint,omitzero"`
	Axis    int        `cbor:"5,keyasint,omitzero"`
	Shape   []int      `cbor:"6,keyasint,omitzero"`
	Scalars floats2    `cbor:"7,keyasint,omitzero"`
	Ints    []int      `cbor:"8,keyasint,omitzero"`
	Attrs   *wireAttrs `cbor:"9,keyasint,omitzero"`
	Inputs  []TensorID `cbor:"10,keyasint,omitzero"`
	Outputs []TensorID `cbor:"11,keyasint,omitzero"`
}

// floats2 is a pair of floats that is zero only when both are +0 (the
// codec's default zero test, reflect's, would drop -0).
type floats2 [2]float64

// IsZero reports whether both floats are +0.
func (f floats2) IsZero() bool { return math.Float64bits(f[0])|math.Float64bits(f[1]) == 0 }

// toWireRecord checks r and returns its encoded form (the error does not
// wrap ErrFormat yet).
func toWireRecord(r *Record) (*wireRecord, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return &wireRecord{
		Kind: r.Kind, Sub: r.Sub, DType: r.DType, KeepDim: r.KeepDim, Axis: r.Axis, Shape: r.Shape,
		Scalars: r.Scalars, Ints: r.Ints, Attrs: toWireAttrs(r.Attrs), Inputs: r.Inputs, Outputs: r.Outputs,
	}, nil
}

// record returns the checked record w encodes (the error does not wrap
// ErrFormat yet).
func (w *wireRecord) record() (Record, error) {
	r := Record{
		Kind: w.Kind, Sub: w.Sub, DType: w.DType, KeepDim: w.KeepDim, Axis: w.Axis, Shape: w.Shape,
		Scalars: w.Scalars, Ints: w.Ints, Attrs: w.Attrs.attrs(), Inputs: w.Inputs, Outputs: w.Outputs,
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// wireAttrs is the encoded form of Attrs.
type wireAttrs struct {
	Conv   wireConv    `cbor:"1,keyasint,omitzero"`
	Pool   wirePool    `cbor:"2,keyasint,omitzero"`
	Ranges []wireRange `cbor:"3,keyasint,omitzero"`
	Optim  wireOptim   `cbor:"4,keyasint,omitzero"`
}

// wireConv is ConvOptions with keys (convertible to and from it).
type wireConv struct {
	Stride        [2]int `cbor:"1,keyasint,omitzero"`
	Padding       [2]int `cbor:"2,keyasint,omitzero"`
	Dilation      [2]int `cbor:"3,keyasint,omitzero"`
	Groups        int    `cbor:"4,keyasint,omitzero"`
	OutputPadding [2]int `cbor:"5,keyasint,omitzero"`
}

// wirePool is PoolOptions with keys (convertible to and from it).
type wirePool struct {
	Kernel   [2]int `cbor:"1,keyasint,omitzero"`
	Stride   [2]int `cbor:"2,keyasint,omitzero"`
	Padding  [2]int `cbor:"3,keyasint,omitzero"`
	Dilation [2]int `cbor:"4,keyasint,omitzero"`
}

// wireOptim is OptimUpdate with keys.
type wireOptim struct {
	LR          float `cbor:"1,keyasint,omitzero"`
	Beta1       float `cbor:"2,keyasint,omitzero"`
	Beta2       float `cbor:"3,keyasint,omitzero"`
	Eps         float `cbor:"4,keyasint,omitzero"`
	WeightDecay float `cbor:"5,keyasint,omitzero"`
	Step        int   `cbor:"6,keyasint,omitzero"`
	Decoupled   bool  `cbor:"7,keyasint,omitzero"`
	Momentum    float `cbor:"8,keyasint,omitzero"`
	Nesterov    bool  `cbor:"9,keyasint,omitzero"`
}

// float is a float64 that is zero only when it is +0 (the codec's
// default zero test, reflect's, would drop -0).
type float float64

// IsZero reports whether f is +0.
func (f float) IsZero() bool { return math.Float64bits(float64(f)) == 0 }

// IsZero reports whether every field is zero, floats +0.
func (w wireOptim) IsZero() bool {
	return w.LR.IsZero() && w.Beta1.IsZero() && w.Beta2.IsZero() && w.Eps.IsZero() && w.WeightDecay.IsZero() &&
		w.Momentum.IsZero() && w.Step == 0 && !w.Decoupled && !w.Nesterov
}

func toWireOptim(u OptimUpdate) wireOptim {
	return wireOptim{LR: float(u.LR), Beta1: float(u.Beta1), Beta2: float(u.Beta2), Eps: float(u.Eps),
		WeightDecay: float(u.WeightDecay), Step: u.Step, Decoupled: u.Decoupled, Momentum: float(u.Momentum), Nesterov: u.Nesterov}
}

func (w wireOptim) update() OptimUpdate {
	return OptimUpdate{LR: float64(w.LR), Beta1: float64(w.Beta1), Beta2: float64(w.Beta2), Eps: float64(w.Eps),
		WeightDecay: float64(w.WeightDecay), Step: w.Step, Decoupled: w.Decoupled, Momentum: float64(w.Momentum), Nesterov: w.Nesterov}
}

// wireRange is a Range as the array [start, end, step].
type wireRange struct {
	_                struct{} `cbor:",toarray"`
	Start, End, Step int
}

// toWireAttrs returns the encoded form of a (nil for nil).
func toWireAttrs(a *Attrs) *wireAttrs {
	if a == nil {
		return nil
	}
	w := &wireAttrs{Conv: wireConv(a.Conv), Pool: wirePool(a.Pool), Optim: toWireOptim(a.Optim)}
	if a.Ranges != nil {
		w.Ranges = make([]wireRange, len(a.Ranges))
		for i, r := range a.Ranges {
			w.Ranges[i] = wireRange{Start: r.Start, End: r.End, Step: r.Step}
		}
	}
	return w
}

// attrs returns the attributes w encodes (nil for nil).
func (w *wireAttrs) attrs() *Attrs {
	if w == nil {
		return nil
	}
	a := &Attrs{Conv: ConvOptions(w.Conv), Pool: PoolOptions(w.Pool), Optim: w.Optim.update()}
	if w.Ranges != nil {
		a.Ranges = make([]Range, len(w.Ranges))
		for i, r := range w.Ranges {
			a.Ranges[i] = Range{Start: r.Start, End: r.End, Step: r.Step}
		}
	}
	return a
}

// wireData is the encoded form of TensorData (convertible to and from
// it).
type wireData struct {
	Shape []int  `cbor:"1,keyasint,omitzero"`
	DType DType  `cbor:"2,keyasint,omitzero"`
	Bytes []byte `cbor:"3,keyasint,omitzero"`
}

// toWireData checks d and returns its encoded form (the error does not
// wrap ErrFormat yet).
func toWireData(d *TensorData) (*wireData, error) {
	if err := checkData(d.Shape, d.DType, d.Bytes); err != nil {
		return nil, err
	}
	return (*wireData)(d), nil
}

// data returns the checked tensor data w encodes (the error does not wrap
// ErrFormat yet).
func (w *wireData) data() (*TensorData, error) {
	if err := checkData(w.Shape, w.DType, w.Bytes); err != nil {
		return nil, err
	}
	return (*TensorData)(w), nil
}

// The types of enveloped values.
const (
	typeOp    = 1
	typeGraph = 2
	typeData  = 3
)

var typeNames = [...]string{"", "op", "graph", "tensor data"}

// envelope is [version, type, value].
type envelope struct {
	_       struct{} `cbor:",toarray"`
	Version uint64
	Type    uint64
	Value   any
}

// marshal encodes v in an envelope of the given type.
func marshal(typ uint64, v any) ([]byte, error) {
	return encMode.Marshal(&envelope{Version: FormatVersion, Type: typ, Value: v})
}

// unmarshal decodes an envelope of the given type into v. It reads the
// version before anything else, so that input of another version is
// reported as such whatever its layout.
func unmarshal(data []byte, typ uint64, v any) error {
	what := typeNames[typ]
	n, rest, ok := arrayHeader(data)
	switch {
	case !ok && len(data) > 0 && data[0] == 0x9f:
		return formatError("%s: indefinite-length envelope", what)
	case !ok:
		return formatError("%s: not an enveloped value (a CBOR array [version, type, value])", what)
	}
	if n == 0 {
		return formatError("%s: empty envelope", what)
	}
	var version uint64
	rest, err := decMode.UnmarshalFirst(rest, &version)
	if err != nil {
		return formatError("%s: format version: %v", what, err)
	}
	if version != FormatVersion {
		return fmt.Errorf("%w: %s encoded in format version %d, this build reads version %d", ErrVersion, what, version, FormatVersion)
	}
	if n != 3 {
		return formatError("%s: envelope has %d items, want 3", what, n)
	}
	var got uint64
	if rest, err = decMode.UnmarshalFirst(rest, &got); err != nil {
		return formatError("%s: envelope type: %v", what, err)
	}
	if got != typ {
		name := fmt.Sprint("type ", got)
		if got > 0 && got < uint64(len(typeNames)) {
			name = typeNames[got]
		}
		return formatError("%s expected, the input holds %s", what, name)
	}
	if err := decMode.Unmarshal(rest, v); err != nil {
		return formatError("%s: %v", what, err)
	}
	return nil
}

// arrayHeader reads the head of a definite-length CBOR array: its length
// and the bytes after the head.
func arrayHeader(data []byte) (n uint64, rest []byte, ok bool) {
	if len(data) == 0 || data[0]>>5 != 4 {
		return 0, nil, false
	}
	info := data[0] & 0x1f
	if info < 24 {
		return uint64(info), data[1:], true
	}
	if info > 27 {
		return 0, nil, false // reserved or indefinite length
	}
	size := 1 << (info - 24)
	if len(data) < 1+size {
		return 0, nil, false
	}
	for _, b := range data[1 : 1+size] {
		n = n<<8 | uint64(b)
	}
	return n, data[1+size:], true
}

// The codec's limits: deep enough for a graph (envelope, graph, ops,
// record, attributes, options, array), arrays and maps big enough for
// large graphs (a million ops), small enough that one array of hostile
// input costs at most some hundred megabytes.
const (
	maxNestedLevels  = 16
	maxArrayElements = 1 << 20
	maxMapPairs      = 1 << 20
)

var (
	encMode cbor.EncMode
	decMode cbor.DecMode
)

func init() {
	var err error
	encMode, err = cbor.EncOptions{
		Sort:          cbor.SortCoreDeterministic,
		ShortestFloat: cbor.ShortestFloat16,
		NaNConvert:    cbor.NaNConvertNone,
		InfConvert:    cbor.InfConvertFloat16,
		IndefLength:   cbor.IndefLengthForbidden,
		TagsMd:        cbor.TagsForbidden,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	decMode, err = cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels:   maxNestedLevels,
		MaxArrayElements:  maxArrayElements,
		MaxMapPairs:       maxMapPairs,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}.DecMode()
	if err != nil {
		panic(err)
	}
}
