package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// credentialAuthorizer admits clients that present want on a device index
// below devices, and counts its calls.
type credentialAuthorizer struct {
	want    string
	devices int
	mu      sync.Mutex
	calls   int
}

func (a *credentialAuthorizer) Authorize(peer PeerID, index int, cred []byte) error {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	if string(cred) != a.want {
		return errors.New("wrong credential")
	}
	if index >= a.devices {
		return fmt.Errorf("device %d is not for this client", index)
	}
	return nil
}

// TestUnauthorizedRefusedBeforeSession checks that a wrong credential and
// an authorizer's refusal of a device are refused in the handshake: the
// client's error wraps ErrUnauthorized and carries the authorizer's
// reason, no session is opened on the server, and the right credential
// then works.
func TestUnauthorizedRefusedBeforeSession(t *testing.T) {
	auth := &credentialAuthorizer{want: "s3cret", devices: 1}
	ts := startServer(t, 2, ServerOptions{Authorizer: auth})
	for _, c := range []struct {
		cred   string
		index  int
		reason string
	}{
		{"", 0, "wrong credential"},
		{"S3CRET", 0, "wrong credential"},
		{"s3cret", 1, "device 1 is not for this client"},
	} {
		_, err := ts.tryConnect(c.index, ClientOptions{Credential: []byte(c.cred)})
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("credential %q, device %d: %v, want an error wrapping ErrUnauthorized saying %q", c.cred, c.index, err, c.reason)
		}
	}
	if st := ts.srv.Stats(); st.Opened != 0 || st.Sessions != 0 || st.Refused != 3 || st.Tensors != 0 {
		t.Fatalf("after three refusals: %+v, want no session opened and 3 refused", st)
	}
	if auth.calls != 3 {
		t.Errorf("the authorizer ran %d times, want once per client", auth.calls)
	}
	// A device index the server does not have is refused too, before the
	// authorizer runs.
	if _, err := ts.tryConnect(5, ClientOptions{Credential: []byte("s3cret")}); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "no device 5") {
		t.Errorf("device 5 of 2: %v", err)
	}
	c := ts.connect(t, 0, ClientOptions{Credential: []byte("s3cret")})
	r := rand.New(rand.NewPCG(3, 4))
	d, ref := randData(r, 5)
	near(t, "upload and read", values(t, c, c.FromData(d)), ref, 0)
	if st := ts.srv.Stats(); st.Opened != 1 {
		t.Errorf("after an admitted client: %+v", st)
	}
}

// TestAuthorizerPanicRefuses checks that a panicking authorizer refuses
// the client instead of killing the server.
func TestAuthorizerPanicRefuses(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{Authorizer: panicAuthorizer{}})
	_, err := ts.tryConnect(0, ClientOptions{})
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "authorizer failed") {
		t.Fatalf("panicking authorizer: %v", err)
	}
	if st := ts.srv.Stats(); st.Opened != 0 {
		t.Fatalf("a session was opened: %+v", st)
	}
}

type panicAuthorizer struct{}

func (panicAuthorizer) Authorize(PeerID, int, []byte) error { panic("boom") }

// TestVersionMismatch checks both directions: a client of another
// protocol version is refused with a message naming both versions, which
// the server also logs, and a client talking to a server of another
// version reports both versions, wrapping ErrVersion.
func TestVersionMismatch(t *testing.T) {
	var logs lockedLog
	ts := startServer(t, 1, ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := DialWebSocket(ctx, "ws://"+ts.addr+"/", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := marshal(&hello{Version: 99, Session: make([]byte, sessionIDLen), MaxFrame: DefaultMaxFrame})
	if err := conn.WriteFrame(ctx, b); err != nil {
		t.Fatal(err)
	}
	resp, err := conn.ReadFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ver, w, err := decodeWelcome(resp)
	if err != nil || ver != ProtocolVersion || w.Refusal == nil || w.Refusal.Code != codeVersion ||
		!strings.Contains(w.Refusal.Msg, "version 99") || !strings.Contains(w.Refusal.Msg, fmt.Sprintf("version %d", ProtocolVersion)) {
		t.Fatalf("welcome to a version-99 client: %d %+v %v", ver, w, err)
	}
	conn.Close(nil)
	waitFor(t, "the server's log of the mismatch", func() bool {
		return strings.Contains(logs.String(), "protocol version mismatch") && strings.Contains(logs.String(), "client_version=99")
	})
	if st := ts.srv.Stats(); st.Opened != 0 || st.Refused != 1 {
		t.Errorf("after the mismatch: %+v", st)
	}

	// A server of version 7 (a fake one) answers a client of this build.
	l, err := ListenWebSocket("127.0.0.1:0", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		c.ReadFrame(context.Background())
		b, _ := marshal(&struct {
			Version uint64     `cbor:"1,keyasint"`
			Refusal *wireError `cbor:"2,keyasint"`
			Future  string     `cbor:"99,keyasint"`
		}{7, &wireError{Code: codeVersion, Msg: "this server speaks version 7"}, "a field of version 7"})
		c.WriteFrame(context.Background(), b)
		time.Sleep(100 * time.Millisecond)
		c.Close(nil)
	}()
	conn, err = DialWebSocket(ctx, "ws://"+l.Addr()+"/", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Connect(ctx, conn, backend.DeviceID{Type: "remote+ws", Addr: l.Addr()}, 0, ClientOptions{})
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "version 7") || !strings.Contains(err.Error(), fmt.Sprintf("version %d", ProtocolVersion)) ||
		!strings.Contains(err.Error(), "this server speaks version 7") {
		t.Fatalf("client against a version-7 server: %v", err)
	}
}

// lockedLog collects log output from the server's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSessionIsolation checks that ids are per session: session B cannot
// read, use or drop the tensors of session A (it gets unknown-tensor
// errors), and A's tensors keep their values.
func TestSessionIsolation(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	a := ts.connect(t, 0, ClientOptions{})
	b := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(5, 6))
	d1, ref1 := randData(r, 4, 4)
	d2, ref2 := randData(r, 4, 4)
	x1, x2 := a.FromData(d1), a.FromData(d2)
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	id1, id2 := x1.(*Tensor).id, x2.(*Tensor).id

	// Read A's id from B.
	req, cl := b.newCall(64)
	res := b.request(&task{Read: &idRequest{Req: req, ID: id1}}, req, cl)
	if !errors.Is(res.err, ir.ErrUnknownTensor) || !errors.Is(res.err, backend.ErrExecution) {
		t.Errorf("B reads A's tensor %d: %v, want an unknown-tensor error", id1, res.err)
	}
	// Use A's ids in an op of B.
	op := binOp(t, ir.OpAdd, x1, x2)
	rec := ir.Encode(op, tensorID, []ir.TensorID{1000})
	raw, _ := b.encode(&task{Op: &rec})
	b.enqueue(raw, false)
	if err := b.Sync(); !errors.Is(err, ir.ErrUnknownTensor) || !strings.Contains(err.Error(), "add") {
		t.Errorf("B adds A's tensors: %v, want an unknown-tensor error naming add", err)
	}
	// B's failed output cannot be read as anything but that failure.
	req, cl = b.newCall(64)
	if res := b.request(&task{Read: &idRequest{Req: req, ID: 1000}}, req, cl); !errors.Is(res.err, ir.ErrUnknownTensor) {
		t.Errorf("B reads its failed result: %v", res.err)
	}
	// Drop A's ids from B.
	raw, _ = b.encode(&task{Drop: []ir.TensorID{id1, id2}})
	b.enqueue(raw, false)
	if err := b.Sync(); !errors.Is(err, ir.ErrUnknownTensor) || !strings.Contains(err.Error(), "drop") {
		t.Errorf("B drops A's tensors: %v, want an unknown-tensor error naming drop", err)
	}
	// B works on its own tensors, with ids that coincide with A's.
	d3, ref3 := randData(r, 4, 4)
	x3 := b.FromData(d3)
	if x3.(*Tensor).id != id1 {
		t.Fatalf("B's first tensor has id %d, A's %d: the test expects equal per-session numbering", x3.(*Tensor).id, id1)
	}
	near(t, "B's own tensor", values(t, b, x3), ref3, 0)
	// A's tensors are intact, and usable.
	want := make([]float64, len(ref1))
	for i := range want {
		want[i] = float64(float32(ref1[i]) + float32(ref2[i]))
	}
	near(t, "A's tensor after B's attempts", readUncached(t, a, x1), ref1, 0)
	near(t, "A's sum after B's attempts", values(t, a, a.Exec(binOp(t, ir.OpAdd, x1, x2))[0]), want, 1e-7)
	if err := a.Sync(); err != nil {
		t.Errorf("A's Sync reports B's failures: %v", err)
	}
}

// readUncached reads x from the server even when the client holds a copy.
func readUncached(t *testing.T, c *Client, x backend.Tensor) []float64 {
	t.Helper()
	rt := x.(*Tensor)
	rt.host.Store(nil)
	return values(t, c, x)
}
