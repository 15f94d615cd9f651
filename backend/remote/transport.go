package remote

import (
	"context"
	"crypto/ed25519"
	"errors"
)

// PeerID is an endpoint's identity: its ed25519 public key. Over QUIC both
// sides prove they hold the private key of their PeerID in the TLS 1.3
// handshake; over WebSocket there is no key identity and the PeerID is the
// zero value.
type PeerID [ed25519.PublicKeySize]byte

// IsZero reports whether id is the zero PeerID (no key identity).
func (id PeerID) IsZero() bool { return id == PeerID{} }

// Conn is one client–server connection that carries whole frames, in
// order, in both directions. WebSocket connections carry one frame per
// binary message; QUIC connections carry length-prefixed frames on one
// bidirectional stream. A Conn is safe for one reader and one writer at a
// time (ReadFrame and WriteFrame may run concurrently with each other).
type Conn interface {
	// ReadFrame returns the next frame. A frame longer than the limit
	// the Conn was made with is an error wrapping ErrFrameTooLarge,
	// returned before the frame's bytes are buffered; after any error the
	// Conn is unusable. The frame may live in a buffer that the next
	// ReadFrame reuses (the WebSocket Conn's does): decode it, or copy
	// it, before reading again.
	ReadFrame(ctx context.Context) ([]byte, error)
	// WriteFrame sends one frame.
	WriteFrame(ctx context.Context, frame []byte) error
	// Peer is the authenticated identity of the other side (the zero
	// PeerID where the transport has none).
	Peer() PeerID
	// Close closes the connection; reason (may be nil) is reported to
	// the other side where the transport can carry it.
	Close(reason error) error
}

// Listener accepts server-side Conns.
type Listener interface {
	// Accept waits for the next connection. After Close it returns an
	// error wrapping net.ErrClosed.
	Accept(ctx context.Context) (Conn, error)
	// Addr is the address the listener is bound to ("127.0.0.1:3000").
	Addr() string
	// Close stops listening; established Conns stay open.
	Close() error
}

// ErrFrameTooLarge is wrapped by the error for a frame over the
// connection's size limit.
var ErrFrameTooLarge = errors.New("remote: frame too large")

// ErrUnauthorized is wrapped by the error a client gets when the server
// refuses it: a wrong key, credential or device index (PeerAuthorizer), or
// a QUIC peer whose key is not pinned.
var ErrUnauthorized = errors.New("remote: unauthorized")

// PeerAuthorizer decides whether a client may open a session. The server
// calls Authorize once per connection, after the handshake has named the
// device and before any session state exists; a non-nil error refuses the
// client, which sees an error wrapping ErrUnauthorized (with the error's
// text). peer is the client's key identity (zero over WebSocket);
// credential is what the client sent (RemoteQUICAuthorized, or nil);
// deviceIndex is the server device the session will run on, or -1 for a
// client that only lists the server's devices (Enumerate, ember devices
// --remote), which opens no session.
// The interface is the counterpart of Burn's remote authorization hook.
type PeerAuthorizer interface {
	Authorize(peer PeerID, deviceIndex int, credential []byte) error
}

// AllowAll is the default PeerAuthorizer: it admits every client.
var AllowAll PeerAuthorizer = allowAll{}

type allowAll struct{}

func (allowAll) Authorize(PeerID, int, []byte) error { return nil }
