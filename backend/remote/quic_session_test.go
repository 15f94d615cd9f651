package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
)

// peerRecorder admits the peers of an AuthorizedKeys set and records the
// peer ids it was asked about.
type peerRecorder struct {
	inner PeerAuthorizer
	mu    sync.Mutex
	seen  []PeerID
}

func (p *peerRecorder) Authorize(peer PeerID, index int, cred []byte) error {
	p.mu.Lock()
	p.seen = append(p.seen, peer)
	p.mu.Unlock()
	return p.inner.Authorize(peer, index, cred)
}

// TestQUICSessions runs sessions over QUIC with key identities: the
// server's PeerAuthorizer sees each client's key; an authorized client
// computes and sees the server's PeerID in the handshake; a client whose
// key is not authorized is refused before any session exists, with an
// error wrapping ErrUnauthorized; a client pinning another server key
// cannot connect at all.
func TestQUICSessions(t *testing.T) {
	srvEP, good, bad := quicTestEndpoint(t), quicTestEndpoint(t), quicTestEndpoint(t)
	auth := &peerRecorder{inner: AuthorizedKeys(good.ID())}
	srv, err := NewServer(ServerOptions{
		Backends:   []backend.Backend{cpu.New(backend.DeviceID{Type: "cpu"})},
		Authorizer: auth, Peer: srvEP.ID(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ListenQUIC(srvEP, "127.0.0.1:0", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, l); close(done) }()
	defer func() { cancel(); <-done }()
	addr := EndpointAddr{ID: srvEP.ID(), Addr: l.Addr()}
	connect := func(ep *Endpoint, to EndpointAddr) (*Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := DialQUIC(ctx, ep, to, DefaultMaxFrame)
		if err != nil {
			return nil, err
		}
		return Connect(ctx, conn, backend.DeviceID{Type: "remote+quic", Addr: to.String()}, 0, ClientOptions{})
	}

	if _, err := connect(bad, addr); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), bad.ID().String()) {
		t.Fatalf("a client with an unauthorized key: %v, want ErrUnauthorized naming its key", err)
	}
	if st := srv.Stats(); st.Opened != 0 || st.Refused != 1 {
		t.Fatalf("after the refusal: %+v, want no session opened", st)
	}
	other := quicTestEndpoint(t)
	if _, err := connect(good, EndpointAddr{ID: other.ID(), Addr: l.Addr()}); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("a client pinning another server key: %v, want ErrUnauthorized", err)
	}
	c, err := connect(good, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerPeer() != srvEP.ID() {
		t.Errorf("the handshake names server %v, want %v", c.ServerPeer(), srvEP.ID())
	}
	checkWorks(t, "over QUIC", c, rand.New(rand.NewPCG(23, 24)))
	auth.mu.Lock()
	seen := append([]PeerID(nil), auth.seen...)
	auth.mu.Unlock()
	if len(seen) != 2 || seen[0] != bad.ID() || seen[1] != good.ID() {
		t.Errorf("the authorizer saw %v, want the refused key, then the admitted one", seen)
	}
}
