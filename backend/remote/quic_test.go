package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// quicTestEndpoint returns a fresh endpoint or fails the test.
func quicTestEndpoint(t testing.TB) *Endpoint {
	t.Helper()
	ep, err := GenerateEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// quicTestListen listens on a loopback port, closed at the test's end.
func quicTestListen(t testing.TB, ep *Endpoint, cfg QUICConfig) Listener {
	t.Helper()
	ln, err := cfg.Listen(ep, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// quicTestDial dials ln's address pinning server, closing the Conn at the
// test's end.
func quicTestDial(t testing.TB, ep *Endpoint, server PeerID, addr string, cfg QUICConfig) Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cfg.Dial(ctx, ep, EndpointAddr{ID: server, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(nil) })
	return c
}

// quicTestAccept accepts one Conn within 10 s.
func quicTestAccept(t testing.TB, ln Listener) Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(nil) })
	return c
}

// quicEcho echoes c's frames back until an error.
func quicEcho(c Conn) error {
	ctx := context.Background()
	for {
		f, err := c.ReadFrame(ctx)
		if err != nil {
			return err
		}
		if err := c.WriteFrame(ctx, f); err != nil {
			return err
		}
	}
}

// quicPair returns a connected client and server Conn with their endpoints.
func quicPair(t testing.TB, cfg QUICConfig) (client, server Conn, cep, sep *Endpoint) {
	t.Helper()
	sep, cep = quicTestEndpoint(t), quicTestEndpoint(t)
	ln := quicTestListen(t, sep, cfg)
	client = quicTestDial(t, cep, sep.ID(), ln.Addr(), cfg)
	server = quicTestAccept(t, ln)
	quicCloseBothAtEnd(t, client, server)
	return client, server, cep, sep
}

// quicCloseBothAtEnd closes a and b at once when the test ends, so that
// each Close reads the other's close record instead of waiting for it to
// be read.
func quicCloseBothAtEnd(t testing.TB, a, b Conn) {
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { a.Close(nil); close(done) }()
		b.Close(nil)
		<-done
	})
}

// within runs f and fails the test unless it returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: not done within %v", what, d)
	}
}

// TestQUICEchoConcurrentConnections sends frames of 0 B, 1 B, 64 KiB,
// 1 MiB+17 and random sizes from four clients at once through an echo
// server and compares every echo byte for byte with what was sent; each
// side's Peer is the other's Endpoint.ID.
func TestQUICEchoConcurrentConnections(t *testing.T) {
	sep := quicTestEndpoint(t)
	cfg := QUICConfig{MaxFrame: 2 << 20}
	ln := quicTestListen(t, sep, cfg)

	const clients = 4
	ceps := make([]*Endpoint, clients)
	want := map[PeerID]bool{}
	for i := range ceps {
		ceps[i] = quicTestEndpoint(t)
		want[ceps[i].ID()] = true
	}
	var (
		mu      sync.Mutex
		seen    = map[PeerID]bool{}
		servers sync.WaitGroup
	)
	servers.Add(clients)
	go func() {
		for range clients {
			c, err := ln.Accept(context.Background())
			if err != nil {
				t.Error(err)
				servers.Done()
				continue
			}
			mu.Lock()
			seen[c.Peer()] = true
			mu.Unlock()
			go func() {
				defer servers.Done()
				defer c.Close(nil)
				if err := quicEcho(c); !errors.Is(err, io.EOF) {
					t.Errorf("echo server: %v, want the client's normal close (io.EOF)", err)
				}
			}()
		}
	}()

	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			c, err := cfg.Dial(ctx, ceps[i], EndpointAddr{ID: sep.ID(), Addr: ln.Addr()})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close(nil)
			if c.Peer() != sep.ID() {
				t.Errorf("client %d: Peer %s, want the server's %s", i, c.Peer(), sep.ID())
			}
			rng := mrand.New(mrand.NewPCG(uint64(i), 7))
			sizes := []int{0, 1, 64 << 10, 1<<20 + 17}
			for range 8 {
				sizes = append(sizes, rng.IntN(300<<10))
			}
			frames := make([][]byte, len(sizes))
			for j, n := range sizes {
				frames[j] = make([]byte, n)
				for k := range frames[j] {
					frames[j][k] = byte(rng.Uint32())
				}
			}
			writeErr := make(chan error, 1)
			go func() {
				for _, f := range frames {
					if err := c.WriteFrame(ctx, f); err != nil {
						writeErr <- err
						return
					}
				}
				writeErr <- nil
			}()
			for j, f := range frames {
				got, err := c.ReadFrame(ctx)
				if err != nil {
					t.Errorf("client %d frame %d: %v", i, j, err)
					return
				}
				if !bytes.Equal(got, f) {
					t.Errorf("client %d frame %d: echo of %d bytes differs from the %d bytes sent", i, j, len(got), len(f))
				}
			}
			if err := <-writeErr; err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	servers.Wait()
	mu.Lock()
	defer mu.Unlock()
	for id := range want {
		if !seen[id] {
			t.Errorf("server never saw client %s as Peer; saw %v", id, seen)
		}
	}
	if len(seen) != clients {
		t.Errorf("server saw %d distinct peers, want %d", len(seen), clients)
	}
}

// TestQUICIPv6Loopback echoes one frame over [::1] where the host has it.
func TestQUICIPv6Loopback(t *testing.T) {
	sep, cep := quicTestEndpoint(t), quicTestEndpoint(t)
	cfg := QUICConfig{MaxFrame: 1 << 10}
	ln, err := cfg.Listen(sep, "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer ln.Close()
	if !strings.HasPrefix(ln.Addr(), "[::1]:") {
		t.Errorf("Addr %q, want [::1]:port", ln.Addr())
	}
	client := quicTestDial(t, cep, sep.ID(), ln.Addr(), cfg)
	server := quicTestAccept(t, ln)
	quicCloseBothAtEnd(t, client, server)
	go quicEcho(server)
	ctx := context.Background()
	if err := client.WriteFrame(ctx, []byte("v6")); err != nil {
		t.Fatal(err)
	}
	if f, err := client.ReadFrame(ctx); err != nil || string(f) != "v6" {
		t.Fatalf("echo over IPv6: %q, %v", f, err)
	}
}

// TestQUICConcurrentWriters writes frames from four goroutines on one Conn;
// every frame must arrive whole, each writer's in order.
func TestQUICConcurrentWriters(t *testing.T) {
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 1 << 20})
	const writers, perWriter = 4, 50
	frame := func(w, seq int) []byte {
		n := (w*perWriter+seq)*97%5000 + 3
		f := make([]byte, n)
		f[0], f[1] = byte(w), byte(seq)
		for k := 2; k < n; k++ {
			f[k] = byte(w*31 + seq*7 + k)
		}
		return f
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range perWriter {
				if err := client.WriteFrame(context.Background(), frame(w, seq)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	next := make([]int, writers)
	for range writers * perWriter {
		got, err := server.ReadFrame(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 2 || int(got[0]) >= writers {
			t.Fatalf("frame of %d bytes does not start with a writer id", len(got))
		}
		w, seq := int(got[0]), int(got[1])
		if seq != next[w] {
			t.Fatalf("writer %d: frame %d arrived, want %d", w, seq, next[w])
		}
		if !bytes.Equal(got, frame(w, seq)) {
			t.Fatalf("writer %d frame %d: bytes differ from those written (interleaved?)", w, seq)
		}
		next[w]++
	}
	wg.Wait()
}

// TestQUICWrongPinnedKey dials with another key pinned: the dial fails
// with ErrUnauthorized naming both keys, and the server accepts nothing.
func TestQUICWrongPinnedKey(t *testing.T) {
	sep, cep, other := quicTestEndpoint(t), quicTestEndpoint(t), quicTestEndpoint(t)
	cfg := QUICConfig{MaxFrame: 1 << 10}
	ln := quicTestListen(t, sep, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cfg.Dial(ctx, cep, EndpointAddr{ID: other.ID(), Addr: ln.Addr()})
	if err == nil {
		c.Close(nil)
		t.Fatal("dial pinning another key succeeded")
	}
	if !errors.Is(err, ErrUnauthorized) {
		t.Errorf("error %v does not wrap ErrUnauthorized", err)
	}
	for _, id := range []PeerID{other.ID(), sep.ID()} {
		if !strings.Contains(err.Error(), id.String()) {
			t.Errorf("error %q does not name key %s", err, id)
		}
	}
	actx, acancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer acancel()
	if sc, err := ln.Accept(actx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("server Accept = %v, %v: want no connection (deadline exceeded)", sc, err)
	}
	// The server still serves a client pinning the right key.
	good := quicTestDial(t, cep, sep.ID(), ln.Addr(), cfg)
	sc := quicTestAccept(t, ln)
	if sc.Peer() != cep.ID() || good.Peer() != sep.ID() {
		t.Errorf("peers %s, %s: want %s, %s", sc.Peer(), good.Peer(), cep.ID(), sep.ID())
	}
	quicCloseBothAtEnd(t, good, sc)
}

// quicTestCert is a TLS certificate of key (signed by signer, or
// self-signed when signer is nil).
func quicTestCert(t *testing.T, pub, key any, signerCert *x509.Certificate, signer any) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: mrandSerial(),
		Subject:      pkix.Name{CommonName: "test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	parent, signKey := tmpl, key
	if signerCert != nil {
		parent, signKey = signerCert, signer
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func mrandSerial() *big.Int { return big.NewInt(mrand.Int64N(1<<62) + 1) }

// TestQUICClientWithoutValidCertificate dials with quic-go directly and a
// client certificate that is missing, ECDSA, RSA, an ed25519 one signed by
// another key, or an ed25519 one with a second certificate: the server
// must close each connection during the handshake and never return it
// from Accept, while still serving a proper client.
func TestQUICClientWithoutValidCertificate(t *testing.T) {
	sep := quicTestEndpoint(t)
	cfg := QUICConfig{MaxFrame: 1 << 10}
	ln := quicTestListen(t, sep, cfg)

	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	caPub, caKey, _ := ed25519.GenerateKey(rand.Reader)
	caCert, err := x509.ParseCertificate(quicTestCert(t, caPub, caKey, nil, nil).Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	selfSigned := quicTestCert(t, edPub, edKey, nil, nil)
	chain := selfSigned
	chain.Certificate = [][]byte{selfSigned.Certificate[0], caCert.Raw}
	cases := []struct {
		name  string
		certs []tls.Certificate
	}{
		{"none", nil},
		{"ecdsa", []tls.Certificate{quicTestCert(t, &ecKey.PublicKey, ecKey, nil, nil)}},
		{"rsa", []tls.Certificate{quicTestCert(t, &rsaKey.PublicKey, rsaKey, nil, nil)}},
		{"ed25519 signed by another key", []tls.Certificate{quicTestCert(t, edPub, edKey, caCert, caKey)}},
		{"ed25519 with a chain", []tls.Certificate{chain}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tlsConf := &tls.Config{
				InsecureSkipVerify: true,
				NextProtos:         []string{QUICNextProto},
				MinVersion:         tls.VersionTLS13,
				Certificates:       tc.certs,
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			qc, err := quic.DialAddr(ctx, ln.Addr(), tlsConf, &quic.Config{HandshakeIdleTimeout: 2 * time.Second})
			if err == nil {
				// TLS 1.3 clients finish before the server has checked
				// their certificate: the server must then close.
				if st, err := qc.OpenStream(); err == nil {
					st.Write([]byte{0})
				}
				select {
				case <-qc.Context().Done():
					var te *quic.TransportError
					if cause := context.Cause(qc.Context()); !errors.As(cause, &te) || !te.Remote {
						t.Errorf("connection ended with %v, want the server's handshake refusal", cause)
					}
				case <-time.After(5 * time.Second):
					qc.CloseWithError(0, "")
					t.Fatal("the server left the connection open for 5 s")
				}
			}
			actx, acancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer acancel()
			if sc, err := ln.Accept(actx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Accept = %v, %v: want no connection", sc, err)
			}
		})
	}
	cep := quicTestEndpoint(t)
	quicTestDial(t, cep, sep.ID(), ln.Addr(), cfg)
	if sc := quicTestAccept(t, ln); sc.Peer() != cep.ID() {
		t.Errorf("Peer %s, want %s", sc.Peer(), cep.ID())
	}
}

// TestQUICCertificateChecks checks the certificate checks directly: an
// endpoint's own certificate yields its key (and is the same each time);
// others are refused with the reason.
func TestQUICCertificateChecks(t *testing.T) {
	ep := quicTestEndpoint(t)
	c1, err := selfSignedCertificate(ep.key)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := selfSignedCertificate(ep.key)
	if !bytes.Equal(c1.Certificate[0], c2.Certificate[0]) {
		t.Error("two certificates of one key differ")
	}
	id, err := quicPeerFromCertificates([]*x509.Certificate{c1.Leaf})
	if err != nil || id != ep.ID() {
		t.Fatalf("peer of own certificate = %s, %v; want %s", id, err, ep.ID())
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecCert, _ := x509.ParseCertificate(quicTestCert(t, &ecKey.PublicKey, ecKey, nil, nil).Certificate[0])
	other := quicTestEndpoint(t)
	otherCert, err := selfSignedCertificate(other.key)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := x509.ParseCertificate(quicTestCert(t, ep.key.Public(), ep.key, otherCert.Leaf, other.key).Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		certs []*x509.Certificate
		want  string
	}{
		{nil, "0 certificates"},
		{[]*x509.Certificate{c1.Leaf, c1.Leaf}, "2 certificates"},
		{[]*x509.Certificate{ecCert}, "ECDSA"},
		{[]*x509.Certificate{foreign}, "not self-signed"},
	} {
		if _, err := quicPeerFromCertificates(tc.certs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check of %d certificates: %v, want an error about %q", len(tc.certs), err, tc.want)
		}
	}
}

// TestQUICFrameTooLarge writes a header claiming 1 GiB on a raw stream: the
// server's ReadFrame fails with ErrFrameTooLarge without allocating it and
// the client learns why; frames of exactly the limit pass.
func TestQUICFrameTooLarge(t *testing.T) {
	const limit = 1 << 16
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: limit})
	ctx := context.Background()
	exact := bytes.Repeat([]byte{0xa5}, limit)
	if err := client.WriteFrame(ctx, exact); err != nil {
		t.Fatal(err)
	}
	if got, err := server.ReadFrame(ctx); err != nil || !bytes.Equal(got, exact) {
		t.Fatalf("frame of exactly the limit: %d bytes, %v", len(got), err)
	}
	raw := client.(*quicConn).st
	if _, err := raw.Write(quicvarint.Append(nil, uint64(1<<30)<<1)); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := server.ReadFrame(ctx)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("ReadFrame of a 1 GiB claim: %v, want ErrFrameTooLarge", err)
	}
	if !strings.Contains(err.Error(), "1073741824") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
		t.Errorf("error %q does not give the claimed length and the limit", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
		t.Errorf("ReadFrame allocated %d bytes for a refused 1 GiB frame", d)
	}
	if _, err2 := server.ReadFrame(ctx); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second ReadFrame: %v, want the same error", err2)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, cerr := client.ReadFrame(cctx)
	if !errors.Is(cerr, net.ErrClosed) || !strings.Contains(cerr.Error(), "1073741824") {
		t.Errorf("client ReadFrame: %v, want the server's close naming the frame", cerr)
	}
}

// TestQUICReadRecordLimits checks the record reader on byte strings: the
// limit is inclusive, a refused claim allocates nothing of its size,
// headers of every varint length parse, and truncation is reported.
func TestQUICReadRecordLimits(t *testing.T) {
	read := func(b []byte, max int) ([]byte, bool, error) {
		return quicReadRecord(bufio.NewReader(bytes.NewReader(b)), max)
	}
	for _, n := range []int{0, 1, 63, 64, 16383, 16384, 70000} {
		body := bytes.Repeat([]byte{byte(n)}, n)
		rec := append(quicvarint.Append(nil, uint64(n)<<1), body...)
		if got, isClose, err := read(rec, n); err != nil || isClose || !bytes.Equal(got, body) {
			t.Errorf("frame of %d at limit %d: %d bytes, close %v, %v", n, n, len(got), isClose, err)
		}
		if n > 0 {
			if _, _, err := read(rec, n-1); !errors.Is(err, ErrFrameTooLarge) {
				t.Errorf("frame of %d at limit %d: %v, want ErrFrameTooLarge", n, n-1, err)
			}
			if _, _, err := read(rec[:len(rec)-1], n); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("truncated frame of %d: %v, want io.ErrUnexpectedEOF", n, err)
			}
		}
	}
	if _, _, err := read(nil, 10); err != io.EOF {
		t.Errorf("empty input: %v, want io.EOF", err)
	}
	if _, _, err := read([]byte{0x80, 0}, 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated header: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, _, err := read(quicvarint.Append(nil, uint64(quicMaxCloseRecord+1)<<1|1), 1<<30); !errors.Is(err, errQUICFraming) {
		t.Errorf("oversized close record: %v, want a framing error", err)
	}
	huge := quicvarint.Append(nil, quicvarint.Max&^1) // a 2^61-1 byte claim
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, _, err := read(huge, 1<<20); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := (after.TotalAlloc - before.TotalAlloc) / 100; d > 8<<10 {
		t.Errorf("a refused 2^61-byte claim allocated %d bytes per read", d)
	}
}

// TestQUICCloseReason closes one side with a reason after writing frames:
// the other side reads those frames, then gets an error carrying the
// reason (io.EOF for a normal close, ErrUnauthorized for a refusal), well
// within 5 s.
func TestQUICCloseReason(t *testing.T) {
	cases := []struct {
		reason      error
		text        string
		eof, unauth bool
	}{
		{nil, "closed", true, false},
		{errors.New("client shutting down: bye"), "client shutting down: bye", false, false},
		{fmt.Errorf("device 3 refused: %w", ErrUnauthorized), "device 3 refused", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 1 << 20})
			ctx := context.Background()
			got := make(chan error, 1)
			var frames [][]byte
			go func() {
				for {
					f, err := server.ReadFrame(ctx)
					if err != nil {
						got <- err
						return
					}
					frames = append(frames, f)
				}
			}()
			sent := [][]byte{[]byte("a"), bytes.Repeat([]byte("b"), 300<<10), {}}
			for _, f := range sent {
				if err := client.WriteFrame(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
			within(t, 5*time.Second, "Close", func() { client.Close(tc.reason) })
			var err error
			select {
			case err = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("the server's ReadFrame did not fail within 5 s of the client's Close")
			}
			if len(frames) != len(sent) {
				t.Fatalf("server read %d frames before the close, want %d", len(frames), len(sent))
			}
			for i := range sent {
				if !bytes.Equal(frames[i], sent[i]) {
					t.Errorf("frame %d differs", i)
				}
			}
			if !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("server error %q: want one wrapping net.ErrClosed and saying %q", err, tc.text)
			}
			if errors.Is(err, io.EOF) != tc.eof || errors.Is(err, ErrUnauthorized) != tc.unauth {
				t.Errorf("server error %q: io.EOF %v (want %v), ErrUnauthorized %v (want %v)",
					err, errors.Is(err, io.EOF), tc.eof, errors.Is(err, ErrUnauthorized), tc.unauth)
			}
			if err := server.WriteFrame(ctx, []byte("x")); !errors.Is(err, net.ErrClosed) {
				t.Errorf("server WriteFrame after the peer's close: %v, want net.ErrClosed", err)
			}
			if _, err := client.ReadFrame(ctx); !errors.Is(err, net.ErrClosed) {
				t.Errorf("client ReadFrame after its own Close: %v, want net.ErrClosed", err)
			}
			if err := client.WriteFrame(ctx, nil); !errors.Is(err, net.ErrClosed) {
				t.Errorf("client WriteFrame after its own Close: %v, want net.ErrClosed", err)
			}
			if err := client.Close(nil); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// TestQUICCloseWhilePeerNotReading closes while the peer is not reading:
// Close returns within its linger, and the peer's next ReadFrame still
// gets the reason.
func TestQUICCloseWhilePeerNotReading(t *testing.T) {
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 1 << 20})
	ctx := context.Background()
	if err := client.WriteFrame(ctx, []byte("last")); err != nil {
		t.Fatal(err)
	}
	within(t, quicCloseLinger+3*time.Second, "Close", func() { client.Close(errors.New("going away")) })
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	for err == nil {
		var f []byte
		f, err = server.ReadFrame(rctx)
		if err == nil && string(f) != "last" {
			t.Fatalf("read %q, want the frame written before Close", f)
		}
	}
	if !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "going away") {
		t.Errorf("server error %v: want the close reason", err)
	}
}

// TestQUICContextCancel checks ReadFrame and WriteFrame with contexts: a
// context already done, or ending before a frame began to arrive, leaves
// the Conn usable; one ending inside a frame fails it with the context's
// error and closes the connection.
func TestQUICContextCancel(t *testing.T) {
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 1 << 20})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := server.ReadFrame(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadFrame(done ctx): %v", err)
	}
	if err := client.WriteFrame(done, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteFrame(done ctx): %v", err)
	}
	ctx := context.Background()
	if err := client.WriteFrame(ctx, []byte("still usable")); err != nil {
		t.Fatal(err)
	}
	if f, err := server.ReadFrame(ctx); err != nil || string(f) != "still usable" {
		t.Fatalf("after done contexts: %q, %v", f, err)
	}
	// A context ending before any byte of a frame arrived leaves the Conn
	// usable.
	tctx, tcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer tcancel()
	if _, err := server.ReadFrame(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadFrame with an expiring ctx: %v, want DeadlineExceeded", err)
	}
	if err := client.WriteFrame(ctx, []byte("after a timed-out read")); err != nil {
		t.Fatal(err)
	}
	if f, err := server.ReadFrame(ctx); err != nil || string(f) != "after a timed-out read" {
		t.Fatalf("after a timed-out read: %q, %v", f, err)
	}
	// One ending inside a frame closes the connection.
	raw := client.(*quicConn).st
	if _, err := raw.Write(append(quicvarint.Append(nil, 100<<1), "ten bytes."...)); err != nil {
		t.Fatal(err)
	}
	mctx, mcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer mcancel()
	if _, err := server.ReadFrame(mctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connection is closed") {
		t.Fatalf("ReadFrame cut short inside a frame: %v, want DeadlineExceeded and a closed connection", err)
	}
	if _, err := server.ReadFrame(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ReadFrame after a cut-short one: %v, want the same error", err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	if _, err := client.ReadFrame(rctx); !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "read abandoned") {
		t.Errorf("client after the server abandoned a read: %v", err)
	}
}

// TestQUICWriteContextCancel blocks a WriteFrame on flow control (the peer
// does not read a 32 MiB frame) until its context ends: the write fails
// with the context's error and the peer learns the connection is gone.
func TestQUICWriteContextCancel(t *testing.T) {
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 64 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := client.WriteFrame(ctx, make([]byte, 32<<20))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connection is closed") {
		t.Fatalf("WriteFrame blocked past its ctx: %v, want DeadlineExceeded and a closed connection", err)
	}
	if err := client.WriteFrame(context.Background(), []byte("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WriteFrame after a cut-short one: %v, want the same error", err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, err := server.ReadFrame(rctx); !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "write abandoned") {
		t.Errorf("server after the client abandoned a write: %v", err)
	}
}

// quicRelay forwards UDP datagrams between one client and a server until
// drop is set, simulating a path or a peer that vanishes without a word.
type quicRelay struct {
	front  *net.UDPConn // the client's side
	back   *net.UDPConn // connected to the server
	client atomic.Pointer[net.UDPAddr]
	drop   atomic.Bool
	wg     sync.WaitGroup
}

func newQUICRelay(t *testing.T, server string) *quicRelay {
	t.Helper()
	saddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, saddr)
	if err != nil {
		t.Fatal(err)
	}
	r := &quicRelay{front: front, back: back}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			r.client.Store(from)
			if !r.drop.Load() {
				back.Write(buf[:n])
			}
		}
	}()
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			if to := r.client.Load(); to != nil && !r.drop.Load() {
				front.WriteToUDP(buf[:n], to)
			}
		}
	}()
	t.Cleanup(func() { front.Close(); back.Close(); r.wg.Wait() })
	return r
}

// quicVanish connects through a relay with cfg, checks an echo, cuts the
// relay and requires both sides' ReadFrame to fail with a timeout error
// before bound.
func quicVanish(t *testing.T, cfg QUICConfig, bound time.Duration) {
	sep, cep := quicTestEndpoint(t), quicTestEndpoint(t)
	ln := quicTestListen(t, sep, cfg)
	relay := newQUICRelay(t, ln.Addr())
	client := quicTestDial(t, cep, sep.ID(), relay.front.LocalAddr().String(), cfg)
	server := quicTestAccept(t, ln)
	ctx := context.Background()
	if err := client.WriteFrame(ctx, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if f, err := server.ReadFrame(ctx); err != nil || string(f) != "ping" {
		t.Fatalf("through the relay: %q, %v", f, err)
	}
	relay.drop.Store(true)
	errs := make(chan error, 2)
	for _, c := range []Conn{client, server} {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, bound)
			defer cancel()
			_, err := c.ReadFrame(rctx)
			errs <- err
		}()
	}
	for range 2 {
		err := <-errs
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("ReadFrame after the peer vanished: %v, want an idle timeout within %v", err, bound)
		}
	}
}

// TestQUICIdleTimeoutDetectsVanishedPeer cuts the path under a connection
// with a 1 s idle timeout: both sides find the other gone.
func TestQUICIdleTimeoutDetectsVanishedPeer(t *testing.T) {
	quicVanish(t, QUICConfig{MaxFrame: 1 << 10, IdleTimeout: time.Second}, 5*time.Second)
}

// TestQUICDefaultIdleTimeoutUnder5s checks the default: a vanished peer is
// found within 5 s.
func TestQUICDefaultIdleTimeoutUnder5s(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 4 s default idle timeout")
	}
	quicVanish(t, QUICConfig{MaxFrame: 1 << 10}, 5*time.Second)
}

// TestQUICKeepAlive leaves a connection with a 600 ms idle timeout idle for
// 2 s: keep-alives hold it open and a frame still passes.
func TestQUICKeepAlive(t *testing.T) {
	client, server, _, _ := quicPair(t, QUICConfig{MaxFrame: 1 << 10, IdleTimeout: 600 * time.Millisecond})
	time.Sleep(2 * time.Second)
	ctx := context.Background()
	if err := client.WriteFrame(ctx, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if f, err := server.ReadFrame(ctx); err != nil || string(f) != "still here" {
		t.Fatalf("after idling: %q, %v", f, err)
	}
}

// quicSettledGoroutines waits until the goroutine count stops falling and
// returns it.
func quicSettledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// TestQUICListenerCloseNoLeak runs a listener with three connections, then
// checks: Accept after Close wraps net.ErrClosed, an accepted Conn outlives
// the listener, and once everything is closed no goroutine is left.
func TestQUICListenerCloseNoLeak(t *testing.T) {
	before := quicSettledGoroutines()
	func() {
		sep := quicTestEndpoint(t)
		cfg := QUICConfig{MaxFrame: 1 << 16}
		ln, err := cfg.Listen(sep, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var clients, servers []Conn
		for range 3 {
			c, err := cfg.Dial(ctx, quicTestEndpoint(t), EndpointAddr{ID: sep.ID(), Addr: ln.Addr()})
			if err != nil {
				t.Fatal(err)
			}
			s, err := ln.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			clients, servers = append(clients, c), append(servers, s)
		}
		// A client dialed but never accepted: closed by the listener's Close.
		pending, err := cfg.Dial(ctx, quicTestEndpoint(t), EndpointAddr{ID: sep.ID(), Addr: ln.Addr()})
		if err != nil {
			t.Fatal(err)
		}
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		if _, err := ln.Accept(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Accept(canceled ctx): %v", err)
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ln.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if c, err := ln.Accept(ctx); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close = %v, %v: want net.ErrClosed", c, err)
		}
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := pending.ReadFrame(rctx); !errors.Is(err, net.ErrClosed) {
			t.Errorf("client never accepted, after the listener's Close: %v, want net.ErrClosed", err)
		}
		rcancel()
		pending.Close(nil)
		for i, c := range clients {
			f := []byte(fmt.Sprintf("after listener close %d", i))
			if err := c.WriteFrame(ctx, f); err != nil {
				t.Fatal(err)
			}
			if got, err := servers[i].ReadFrame(ctx); err != nil || !bytes.Equal(got, f) {
				t.Fatalf("conn %d after the listener's Close: %q, %v", i, got, err)
			}
		}
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The server reads, so the client's Close is prompt.
				go servers[i].ReadFrame(ctx)
				clients[i].Close(nil)
				servers[i].Close(nil)
			}()
		}
		wg.Wait()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines after closing everything, %d before:\n%s", n, before, buf)
	}
}

// TestQUICConfigErrors checks the clear errors for bad arguments.
func TestQUICConfigErrors(t *testing.T) {
	ep := quicTestEndpoint(t)
	other := quicTestEndpoint(t).ID()
	ctx := context.Background()
	if _, err := ListenQUIC(ep, "127.0.0.1:0", 0); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("ListenQUIC maxFrame 0: %v", err)
	}
	if _, err := DialQUIC(ctx, ep, EndpointAddr{ID: other, Addr: "127.0.0.1:1"}, -1); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("DialQUIC maxFrame -1: %v", err)
	}
	if _, err := (QUICConfig{MaxFrame: 1, IdleTimeout: -time.Second}).Listen(ep, "127.0.0.1:0"); err == nil {
		t.Error("negative idle timeout accepted")
	}
	for _, bad := range []*Endpoint{nil, {}} {
		if _, err := ListenQUIC(bad, "127.0.0.1:0", 1); err == nil || !strings.Contains(err.Error(), "no key") {
			t.Errorf("ListenQUIC with endpoint %#v: %v", bad, err)
		}
		if _, err := DialQUIC(ctx, bad, EndpointAddr{ID: other, Addr: "127.0.0.1:1"}, 1); err == nil || !strings.Contains(err.Error(), "no key") {
			t.Errorf("DialQUIC with endpoint %#v: %v", bad, err)
		}
	}
	if _, err := DialQUIC(ctx, ep, EndpointAddr{Addr: "127.0.0.1:1"}, 1); err == nil || !strings.Contains(err.Error(), "zero") {
		t.Errorf("DialQUIC without a pinned key: %v", err)
	}
	if _, err := ListenQUIC(ep, "256.0.0.1:0", 1); err == nil {
		t.Error("ListenQUIC on 256.0.0.1 succeeded")
	}
	// Nothing listens: the handshake times out.
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	start := time.Now()
	_, err = QUICConfig{MaxFrame: 1, HandshakeTimeout: 500 * time.Millisecond}.Dial(ctx, ep, EndpointAddr{ID: other, Addr: dead.LocalAddr().String()})
	if err == nil {
		t.Fatal("dial to a silent port succeeded")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("dial to a silent port took %v with a 500 ms handshake timeout", el)
	}
}

// BenchmarkQUICRoundTrip measures one frame's round trip through an echo
// server over loopback QUIC (bytes/s counts both directions).
func BenchmarkQUICRoundTrip(b *testing.B) {
	for _, size := range []int{64, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			client, server, _, _ := quicPair(b, QUICConfig{MaxFrame: 2 << 20})
			go quicEcho(server)
			frame := make([]byte, size)
			ctx := context.Background()
			b.SetBytes(int64(2 * size))
			b.ResetTimer()
			for b.Loop() {
				if err := client.WriteFrame(ctx, frame); err != nil {
					b.Fatal(err)
				}
				if _, err := client.ReadFrame(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzQUICReadRecord reads records from arbitrary bytes and checks each
// result against an independent parse of the header with
// quicvarint.Parse: lengths, kinds, payloads, the limit and the error at
// the end of the input.
func FuzzQUICReadRecord(f *testing.F) {
	f.Add([]byte{0}, uint16(0))
	f.Add(append(quicvarint.Append(nil, 5<<1), "hello"...), uint16(5))
	f.Add(append(quicvarint.Append(nil, 5<<1), "hell"...), uint16(5))
	f.Add(quicvarint.Append(nil, uint64(1<<30)<<1), uint16(1000))
	f.Add(append(quicvarint.Append(nil, 3<<1|1), 1, 'n', 'o'), uint16(10))
	f.Add([]byte{0xc0, 0, 0, 0, 0, 0, 0, 2, 'x'}, uint16(1))
	f.Add([]byte{0x40}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, max16 uint16) {
		max := int(max16)
		br := bufio.NewReader(bytes.NewReader(data))
		off := 0
		for {
			payload, isClose, err := quicReadRecord(br, max)
			if off == len(data) {
				if err != io.EOF {
					t.Fatalf("at the end of the input: %v, want io.EOF", err)
				}
				return
			}
			h, hl, perr := quicvarint.Parse(data[off:])
			if perr != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("truncated header at %d: %v, want io.ErrUnexpectedEOF", off, err)
				}
				return
			}
			n, wantClose := h>>1, h&1 == 1
			limit := uint64(max)
			if wantClose {
				limit = quicMaxCloseRecord
			}
			switch {
			case n > limit:
				if wantClose && !errors.Is(err, errQUICFraming) || !wantClose && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("record of %d bytes (close %v) over limit %d: %v", n, wantClose, limit, err)
				}
				return
			case uint64(len(data)-off-hl) < n:
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("record of %d bytes with %d left: %v", n, len(data)-off-hl, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("record of %d bytes at %d: %v", n, off, err)
			}
			if isClose != wantClose || uint64(len(payload)) != n || !bytes.Equal(payload, data[off+hl:off+hl+int(n)]) {
				t.Fatalf("record at %d: %d bytes, close %v; want %d, %v", off, len(payload), isClose, n, wantClose)
			}
			off += hl + int(n)
		}
	})
}

// ExampleDialQUIC connects a client to a server over loopback QUIC, each
// side knowing the other by key, and sends one frame.
func ExampleDialQUIC() {
	server, _ := GenerateEndpoint()
	client, _ := GenerateEndpoint()
	ln, err := ListenQUIC(server, "127.0.0.1:0", 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	ctx := context.Background()
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		defer c.Close(nil)
		fmt.Println("server sees the client's key:", c.Peer() == client.ID())
		f, _ := c.ReadFrame(ctx)
		c.WriteFrame(ctx, append(f, " back"...))
		c.ReadFrame(ctx) // until the client closes
	}()
	c, err := DialQUIC(ctx, client, EndpointAddr{ID: server.ID(), Addr: ln.Addr()}, 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.WriteFrame(ctx, []byte("hello"))
	f, _ := c.ReadFrame(ctx)
	fmt.Println(string(f))
	c.Close(nil)
	// Output:
	// server sees the client's key: true
	// hello back
}
