package remote

import (
	"github.com/emberml/ember/backend"
	"github.com/fxamacker/cbor/v2"
)

// The codec of the wire protocol: deterministic CBOR out; in, a decoder
// for untrusted input that rejects duplicate map keys, unknown fields,
// tags and indefinite lengths and bounds nesting, array lengths and map
// sizes. github.com/fxamacker/cbor/v2 checks that a whole frame is well
// formed before it decodes any of it, so a length in the input claims no
// memory before its bytes are seen to be there: decoding a frame
// allocates in proportion to the frame's length, which the transport
// bounds (the Conn's frame limit).

// The decoder's limits. A batch holds at most maxTasks tasks (the client
// sends DefaultBatchTasks at a time) and a drop task as many ids; maps
// are structs of at most a dozen keys; frames nest at most seven levels
// (frame, tasks, task, record, attributes, ranges, range).
const (
	maxTasks        = 1 << 16
	maxMapPairs     = 64
	maxNestedLevels = 16
	minFrame        = 64 << 10
	frameOverhead   = 1 << 10
)

// errExecution is backend.ErrExecution, which every failed op wraps.
var errExecution = backend.ErrExecution

var (
	encMode   cbor.EncMode
	decMode   cbor.DecMode
	probeMode cbor.DecMode
)

func init() {
	var err error
	encMode, err = cbor.EncOptions{
		Sort:        cbor.SortCoreDeterministic,
		IndefLength: cbor.IndefLengthForbidden,
		TagsMd:      cbor.TagsForbidden,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	opts := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		MaxNestedLevels:   maxNestedLevels,
		MaxArrayElements:  maxTasks,
		MaxMapPairs:       maxMapPairs,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}
	if decMode, err = opts.DecMode(); err != nil {
		panic(err)
	}
	// The version probe reads key 1 of a handshake frame of any version,
	// so unknown fields are allowed there; every other limit holds.
	opts.ExtraReturnErrors = cbor.ExtraDecErrorNone
	if probeMode, err = opts.DecMode(); err != nil {
		panic(err)
	}
}
