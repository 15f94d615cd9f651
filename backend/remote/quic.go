package remote

import (
	"context"
	"crypto/ed25519"
	"errors"
)

// Endpoint is one side's QUIC identity: an ed25519 key pair. Its PeerID is
// the public key.
type Endpoint struct {
	key ed25519.PrivateKey
}

// EndpointAddr is how to reach a QUIC peer: its PeerID (pinned: the
// connection fails unless the peer proves it holds that key) and its UDP
// address "host:port".
type EndpointAddr struct {
	ID   PeerID
	Addr string
}

var errQUICMissing = errors.New("remote: QUIC transport not implemented yet")

// DialQUIC connects from ep to the peer at addr over QUIC, pinning addr.ID.
// maxFrame bounds the frames it reads.
func DialQUIC(ctx context.Context, ep *Endpoint, addr EndpointAddr, maxFrame int) (Conn, error) {
	return nil, errQUICMissing
}

// ListenQUIC listens for QUIC clients on the UDP address addr with ep's
// identity. Every client must present an ed25519 key; Conn.Peer is it.
// maxFrame bounds the frames each Conn reads.
func ListenQUIC(ep *Endpoint, addr string, maxFrame int) (Listener, error) {
	return nil, errQUICMissing
}
