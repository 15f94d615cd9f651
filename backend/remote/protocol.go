package remote

import (
	"errors"
	"fmt"

	"github.com/emberml/ember/ir"
	"github.com/fxamacker/cbor/v2"
)

// The wire protocol. Every frame is one CBOR (RFC 8949) map with small
// integer keys, zero fields left out, encoded and decoded by the codec of
// codec.go; ops and tensor data inside frames are ir.Record and
// ir.TensorData in the ir encoding (ir/encode.go), so the server checks
// them as ir does.
//
// A connection starts with a handshake: the client's first frame is a
// hello (protocol version, session id, device index, credential, the
// largest frame it reads), and the server answers with one welcome (its
// version, the device's settings, every hosted device, its peer id, its
// limits) or with a welcome that carries a refusal (another version, an
// unauthorized client, a bad device index) and closes. The version is read
// before anything else in both directions, so a mismatch is reported as
// such whatever else the frame holds.
//
// After the handshake the client sends batches (clientFrame): tasks run in
// order, each one op, a tensor upload, a read, a sync, a seed, a dtype
// query, drops, an export or import (server-side moves) or close. Tasks
// that answer carry a request id; the server answers with replies
// (serverFrame) by request id, in request order. A serverFrame with Fatal
// set ends the session (malformed or oversize input, shutdown).

// ProtocolVersion is the version of the wire protocol this build speaks.
// The handshake refuses a peer of another version, with a message naming
// both on each side.
const ProtocolVersion = 1

// sessionIDLen is the length of a session id, and tokenLen that of an
// export token.
const (
	sessionIDLen = 16
	tokenLen     = 16
)

// maxCredential bounds the credential a hello carries.
const maxCredential = 4096

// hello is the client's first frame.
type hello struct {
	Version uint64 `cbor:"1,keyasint,omitzero"`
	// Session is a random id that names the session in the server's
	// logs (sessionIDLen bytes).
	Session []byte `cbor:"2,keyasint,omitzero"`
	// Device is the index of the server device the session runs on.
	Device int `cbor:"3,keyasint,omitzero"`
	// Credential is handed to the server's PeerAuthorizer.
	Credential []byte `cbor:"4,keyasint,omitzero"`
	// MaxFrame is the largest frame the client reads; the server sends
	// no larger one.
	MaxFrame uint64 `cbor:"5,keyasint,omitzero"`
	// List asks only for the server's devices: the server answers and
	// closes, opening no session (Device is then ignored and
	// PeerAuthorizer sees device index -1).
	List bool `cbor:"6,keyasint,omitzero"`
}

// wireSettings are a device's default dtypes (backend.Settings).
type wireSettings struct {
	Float ir.DType `cbor:"1,keyasint,omitzero"`
	Int   ir.DType `cbor:"2,keyasint,omitzero"`
	Bool  uint8    `cbor:"3,keyasint,omitzero"`
}

// wireDevice describes one device the server hosts.
type wireDevice struct {
	// Name is the server-side device name ("cpu", "cuda:0").
	Name string `cbor:"1,keyasint,omitzero"`
	// Model and Memory are the device's backend.DeviceInfo.
	Model    string       `cbor:"2,keyasint,omitzero"`
	Memory   uint64       `cbor:"3,keyasint,omitzero"`
	Settings wireSettings `cbor:"4,keyasint,omitzero"`
}

// welcome is the server's answer to a hello.
type welcome struct {
	Version uint64 `cbor:"1,keyasint,omitzero"`
	// Refusal, when set, refuses the client; the server then closes.
	Refusal *wireError `cbor:"2,keyasint,omitzero"`
	// Devices lists every hosted device, in index order.
	Devices []wireDevice `cbor:"3,keyasint,omitzero"`
	// Peer is the server's PeerID (empty over WebSocket).
	Peer []byte `cbor:"4,keyasint,omitzero"`
	// Server is a random id of the server process: two devices whose
	// handshakes carry one Server id can move tensors server-side.
	Server []byte `cbor:"5,keyasint,omitzero"`
	// MaxFrame, MaxTensorBytes and MaxTensors are the server's limits.
	MaxFrame       uint64 `cbor:"6,keyasint,omitzero"`
	MaxTensorBytes uint64 `cbor:"7,keyasint,omitzero"`
	MaxTensors     uint64 `cbor:"8,keyasint,omitzero"`
}

// versionProbe reads only the version of a hello or welcome, whatever
// else a frame of another version holds.
type versionProbe struct {
	Version uint64 `cbor:"1,keyasint"`
}

// clientFrame is a batch of tasks.
type clientFrame struct {
	Tasks []task `cbor:"1,keyasint,omitzero"`
}

// task is one unit of work: exactly one field is set.
type task struct {
	// Op runs one op; its output ids become the session's tensors.
	Op *ir.Record `cbor:"1,keyasint,omitzero"`
	// Upload registers a tensor from data.
	Upload *uploadTask `cbor:"2,keyasint,omitzero"`
	// Begin and Part upload a tensor too large for one frame: Begin
	// names its id, shape and dtype, Parts append its bytes in order;
	// the tensor exists when the last byte is there.
	Begin *beginTask `cbor:"3,keyasint,omitzero"`
	Part  *partTask  `cbor:"4,keyasint,omitzero"`
	// Read asks for a tensor's value (reply: Data, or Parts).
	Read *idRequest `cbor:"5,keyasint,omitzero"`
	// Sync waits for the session's work and asks for its errors.
	Sync *request `cbor:"6,keyasint,omitzero"`
	// Seed re-seeds the device's random generator.
	Seed *seedTask `cbor:"7,keyasint,omitzero"`
	// DType asks whether the device supports a dtype (reply: OK).
	DType *dtypeRequest `cbor:"8,keyasint,omitzero"`
	// Drop frees tensors.
	Drop []ir.TensorID `cbor:"9,keyasint,omitzero"`
	// Close ends the session after the tasks before it.
	Close bool `cbor:"10,keyasint,omitzero"`
	// Export makes a tensor importable by another session of the
	// server under a one-time token (reply: Token).
	Export *idRequest `cbor:"11,keyasint,omitzero"`
	// Import registers the tensor exported under a token.
	Import *importTask `cbor:"12,keyasint,omitzero"`
}

type uploadTask struct {
	ID   ir.TensorID    `cbor:"1,keyasint,omitzero"`
	Data *ir.TensorData `cbor:"2,keyasint,omitzero"`
}

type beginTask struct {
	ID    ir.TensorID `cbor:"1,keyasint,omitzero"`
	Shape []int       `cbor:"2,keyasint,omitzero"`
	DType ir.DType    `cbor:"3,keyasint,omitzero"`
}

type partTask struct {
	ID    ir.TensorID `cbor:"1,keyasint,omitzero"`
	Bytes []byte      `cbor:"2,keyasint,omitzero"`
}

type request struct {
	Req uint64 `cbor:"1,keyasint,omitzero"`
}

type idRequest struct {
	Req uint64      `cbor:"1,keyasint,omitzero"`
	ID  ir.TensorID `cbor:"2,keyasint,omitzero"`
}

type seedTask struct {
	Seed uint64 `cbor:"1,keyasint,omitzero"`
}

type dtypeRequest struct {
	Req   uint64   `cbor:"1,keyasint,omitzero"`
	DType ir.DType `cbor:"2,keyasint,omitzero"`
}

type importTask struct {
	ID    ir.TensorID `cbor:"1,keyasint,omitzero"`
	Token []byte      `cbor:"2,keyasint,omitzero"`
}

// serverFrame carries replies, or ends the session.
type serverFrame struct {
	Replies []reply    `cbor:"1,keyasint,omitzero"`
	Fatal   *wireError `cbor:"2,keyasint,omitzero"`
}

// reply answers the request Req.
type reply struct {
	Req uint64     `cbor:"1,keyasint,omitzero"`
	Err *wireError `cbor:"2,keyasint,omitzero"`
	// Data is a read's value when it fits in one frame.
	Data *ir.TensorData `cbor:"3,keyasint,omitzero"`
	// Part is a piece of a larger read's bytes; More says others follow.
	Part []byte `cbor:"4,keyasint,omitzero"`
	More bool   `cbor:"5,keyasint,omitzero"`
	// OK answers a dtype query.
	OK bool `cbor:"6,keyasint,omitzero"`
	// Token answers an export.
	Token []byte `cbor:"7,keyasint,omitzero"`
}

// errCode classifies a wireError.
type errCode uint8

const (
	codeExecution     errCode = iota + 1 // an op or task failed
	codeUnknownTensor                    // an id the session does not hold
	codeLimit                            // a server limit was exceeded
	codeUnauthorized                     // the PeerAuthorizer refused
	codeVersion                          // another protocol version
	codeMalformed                        // undecodable or invalid frame
	codeTooLarge                         // frame over the limit
	codeShutdown                         // the server is shutting down
	codeBadDevice                        // no such device index
	numCodes
)

// wireError is a structured error: its class, the op or task it belongs
// to, and the message.
type wireError struct {
	Code errCode `cbor:"1,keyasint,omitzero"`
	Op   string  `cbor:"2,keyasint,omitzero"`
	Msg  string  `cbor:"3,keyasint,omitzero"`
}

// The sentinels a remote error wraps besides the ones of transport.go.
var (
	// ErrClosed is wrapped by the error of every call on a client whose
	// connection was closed or lost (the server went away, a ping timed
	// out, the server ended the session).
	ErrClosed = errors.New("remote: connection closed")
	// ErrVersion is wrapped by the error of a handshake between a client
	// and a server of different protocol versions.
	ErrVersion = errors.New("remote: protocol version mismatch")
	// ErrProtocol is wrapped by the error for a frame that does not
	// decode or breaks the protocol, and by the server's error for a
	// session it closed for that reason.
	ErrProtocol = errors.New("remote: protocol error")
	// ErrLimit is wrapped by the error for a task that exceeds a server
	// limit (tensor bytes, tensors per session).
	ErrLimit = errors.New("remote: server limit exceeded")
	// ErrShutdown is wrapped by the error of a session the server ended
	// because it is shutting down.
	ErrShutdown = errors.New("remote: server shutting down")
)

// Error is a failure the server reported: the op or task it belongs to
// and the server's message. It wraps the sentinel of its class
// (backend.ErrExecution for a failed op, ir.ErrUnknownTensor for an id
// the session does not hold, ErrUnauthorized, ErrVersion, ErrLimit,
// ErrProtocol, ErrFrameTooLarge, ErrShutdown).
type Error struct {
	// Device is the client device's name ("remote+ws://host:3000/0").
	Device string
	// Op is the op or task ("matmul", "read", "handshake").
	Op string
	// Msg is the server's message.
	Msg  string
	code errCode
	// closed marks the error the session ended with (it wraps ErrClosed
	// too).
	closed bool
}

// Error formats as "remote+ws://host:3000/0: matmul: message".
func (e *Error) Error() string {
	s := e.Device
	if e.Op != "" {
		s += ": " + e.Op
	}
	return s + ": " + e.Msg
}

// Unwrap returns the sentinels of the error's class.
func (e *Error) Unwrap() []error {
	if e.closed {
		return append(codeSentinels(e.code), ErrClosed)
	}
	return codeSentinels(e.code)
}

func codeSentinels(c errCode) []error {
	switch c {
	case codeExecution:
		return []error{errExecution}
	case codeUnknownTensor:
		return []error{errExecution, ir.ErrUnknownTensor}
	case codeLimit:
		return []error{errExecution, ErrLimit}
	case codeUnauthorized, codeBadDevice:
		return []error{ErrUnauthorized}
	case codeVersion:
		return []error{ErrVersion}
	case codeMalformed:
		return []error{ErrProtocol}
	case codeTooLarge:
		return []error{ErrFrameTooLarge}
	case codeShutdown:
		return []error{ErrShutdown}
	}
	return nil
}

// toError converts a wireError of device dev into an *Error.
func (w *wireError) toError(dev string) *Error {
	return &Error{Device: dev, Op: w.Op, Msg: w.Msg, code: w.Code}
}

// errorf builds a wireError.
func errorf(code errCode, op, format string, args ...any) *wireError {
	return &wireError{Code: code, Op: op, Msg: fmt.Sprintf(format, args...)}
}

// check validates a decoded hello.
func (h *hello) check() error {
	switch {
	case len(h.Session) != sessionIDLen:
		return fmt.Errorf("hello: session id of %d bytes, want %d", len(h.Session), sessionIDLen)
	case h.Device < 0:
		return fmt.Errorf("hello: negative device index %d", h.Device)
	case len(h.Credential) > maxCredential:
		return fmt.Errorf("hello: credential of %d bytes exceeds %d", len(h.Credential), maxCredential)
	case h.MaxFrame < minFrame:
		return fmt.Errorf("hello: client frame limit %d is below the minimum %d", h.MaxFrame, minFrame)
	}
	return nil
}

// check validates a decoded welcome.
func (w *welcome) check() error {
	if w.Refusal != nil {
		return w.Refusal.check()
	}
	switch {
	case len(w.Devices) == 0:
		return fmt.Errorf("welcome: the server lists no device")
	case len(w.Peer) != 0 && len(w.Peer) != len(PeerID{}):
		return fmt.Errorf("welcome: peer id of %d bytes", len(w.Peer))
	case len(w.Server) != sessionIDLen:
		return fmt.Errorf("welcome: server id of %d bytes, want %d", len(w.Server), sessionIDLen)
	case w.MaxFrame < minFrame:
		return fmt.Errorf("welcome: server frame limit %d is below the minimum %d", w.MaxFrame, minFrame)
	}
	for i, d := range w.Devices {
		if err := d.Settings.check(); err != nil {
			return fmt.Errorf("welcome: device %d: %v", i, err)
		}
	}
	return nil
}

// check validates settings: zero (the default) or a dtype of the right
// category.
func (s *wireSettings) check() error {
	switch {
	case s.Float != 0 && !s.Float.IsFloat():
		return fmt.Errorf("float dtype %d is not a float dtype", s.Float)
	case s.Int != 0 && !s.Int.IsInt():
		return fmt.Errorf("int dtype %d is not an integer dtype", s.Int)
	case s.Bool > uint8(ir.BoolU32):
		return fmt.Errorf("bool store %d is not valid", s.Bool)
	}
	return nil
}

// check validates a decoded wireError.
func (w *wireError) check() error {
	if w.Code == 0 || w.Code >= numCodes {
		return fmt.Errorf("error: unknown code %d", w.Code)
	}
	return nil
}

// check validates a decoded task: exactly one field set and each value
// well formed (the ir parts were checked by their decoders). Whether ids
// exist is the session's business.
func (t *task) check() error {
	n := 0
	var err error
	set := func(ok bool, check func() error) {
		if ok {
			n++
			if err == nil && check != nil {
				err = check()
			}
		}
	}
	set(t.Op != nil, nil)
	set(t.Upload != nil, func() error {
		if t.Upload.ID == 0 || t.Upload.Data == nil {
			return fmt.Errorf("upload: needs an id and data")
		}
		return nil
	})
	set(t.Begin != nil, func() error {
		if t.Begin.ID == 0 {
			return fmt.Errorf("upload: needs an id")
		}
		if !t.Begin.DType.Valid() {
			return fmt.Errorf("upload: invalid dtype %d", t.Begin.DType)
		}
		if len(t.Begin.Shape) > maxRank {
			return fmt.Errorf("upload: rank %d exceeds %d", len(t.Begin.Shape), maxRank)
		}
		if _, err := ir.NumBytes(t.Begin.Shape, t.Begin.DType); err != nil {
			return fmt.Errorf("upload: %v", err)
		}
		return nil
	})
	set(t.Part != nil, func() error {
		if t.Part.ID == 0 {
			return fmt.Errorf("upload part: needs an id")
		}
		return nil
	})
	set(t.Read != nil, func() error { return t.Read.check("read") })
	set(t.Sync != nil, func() error {
		if t.Sync.Req == 0 {
			return fmt.Errorf("sync: needs a request id")
		}
		return nil
	})
	set(t.Seed != nil, nil)
	set(t.DType != nil, func() error {
		if t.DType.Req == 0 {
			return fmt.Errorf("dtype query: needs a request id")
		}
		return nil
	})
	set(len(t.Drop) > 0, func() error {
		for _, id := range t.Drop {
			if id == 0 {
				return fmt.Errorf("drop: tensor id 0")
			}
		}
		return nil
	})
	set(t.Close, nil)
	set(t.Export != nil, func() error { return t.Export.check("export") })
	set(t.Import != nil, func() error {
		if t.Import.ID == 0 || len(t.Import.Token) != tokenLen {
			return fmt.Errorf("import: needs an id and a %d-byte token", tokenLen)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("a task must hold exactly one request, this one holds %d", n)
	}
	return nil
}

func (r *idRequest) check(what string) error {
	if r.Req == 0 || r.ID == 0 {
		return fmt.Errorf("%s: needs a request id and a tensor id", what)
	}
	return nil
}

// check validates a decoded reply.
func (r *reply) check() error {
	if r.Req == 0 {
		return fmt.Errorf("reply: request id 0")
	}
	if r.Err != nil {
		return r.Err.check()
	}
	if r.Data != nil && r.Part != nil {
		return fmt.Errorf("reply: both data and a part")
	}
	if r.Token != nil && len(r.Token) != tokenLen {
		return fmt.Errorf("reply: token of %d bytes", len(r.Token))
	}
	return nil
}

// maxRank bounds the rank of an upload's shape (as ir bounds encoded
// shapes).
const maxRank = 64

// decodeClientFrame decodes and checks a batch.
func decodeClientFrame(b []byte) (*clientFrame, error) {
	var f clientFrame
	if err := decMode.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: batch: %v", ErrProtocol, err)
	}
	for i := range f.Tasks {
		if err := f.Tasks[i].check(); err != nil {
			return nil, fmt.Errorf("%w: batch task %d: %v", ErrProtocol, i, err)
		}
	}
	return &f, nil
}

// decodeServerFrame decodes and checks a server frame.
func decodeServerFrame(b []byte) (*serverFrame, error) {
	var f serverFrame
	if err := decMode.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: server frame: %v", ErrProtocol, err)
	}
	if f.Fatal != nil {
		if err := f.Fatal.check(); err != nil {
			return nil, fmt.Errorf("%w: server frame: %v", ErrProtocol, err)
		}
	}
	for i := range f.Replies {
		if err := f.Replies[i].check(); err != nil {
			return nil, fmt.Errorf("%w: server frame reply %d: %v", ErrProtocol, i, err)
		}
	}
	return &f, nil
}

// decodeHello decodes a hello: its version first (returned even when the
// rest does not decode), then the whole frame, checked.
func decodeHello(b []byte) (uint64, *hello, error) {
	var p versionProbe
	if err := probeMode.Unmarshal(b, &p); err != nil {
		return 0, nil, fmt.Errorf("%w: hello: %v", ErrProtocol, err)
	}
	if p.Version != ProtocolVersion {
		return p.Version, nil, nil
	}
	var h hello
	if err := decMode.Unmarshal(b, &h); err != nil {
		return p.Version, nil, fmt.Errorf("%w: hello: %v", ErrProtocol, err)
	}
	if err := h.check(); err != nil {
		return p.Version, nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	return p.Version, &h, nil
}

// decodeWelcome is decodeHello for the server's answer.
func decodeWelcome(b []byte) (uint64, *welcome, error) {
	var p versionProbe
	if err := probeMode.Unmarshal(b, &p); err != nil {
		return 0, nil, fmt.Errorf("%w: welcome: %v", ErrProtocol, err)
	}
	if p.Version != ProtocolVersion {
		return p.Version, nil, nil
	}
	var w welcome
	if err := decMode.Unmarshal(b, &w); err != nil {
		return p.Version, nil, fmt.Errorf("%w: welcome: %v", ErrProtocol, err)
	}
	if err := w.check(); err != nil {
		return p.Version, nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	return p.Version, &w, nil
}

// marshal encodes a frame.
func marshal(v any) ([]byte, error) { return encMode.Marshal(v) }

// rawTasks is a batch whose tasks were encoded one by one (as the client
// queues them).
type rawTasks struct {
	Tasks []cbor.RawMessage `cbor:"1,keyasint,omitzero"`
}
