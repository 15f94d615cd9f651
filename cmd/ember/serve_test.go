package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend/remote"
)

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs `ember serve` with args on a free loopback port and
// returns its ws address and the function that interrupts it and returns
// its error and output.
func startServe(t *testing.T, args ...string) (string, func() (error, string)) {
	t.Helper()
	m, stop := startServeMatching(t, regexp.MustCompile(`on ws://(127\.0\.0\.1:\d+)`), args...)
	return m[1], stop
}

// startServeMatching is startServe returning the submatches of re in the
// output.
func startServeMatching(t *testing.T, re *regexp.Regexp, args ...string) ([]string, func() (error, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, logs lockedBuffer
	root := newRootCmd()
	root.SetArgs(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...))
	root.SetOut(&out)
	root.SetErr(&logs)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			stop := func() (error, string) {
				cancel()
				select {
				case err := <-done:
					return err, out.String()
				case <-time.After(15 * time.Second):
					t.Fatal("ember serve did not stop within 15 s of its context's end")
				}
				return nil, ""
			}
			return m, stop
		}
		select {
		case err := <-done:
			t.Fatalf("ember serve ended at start: %v\n%s\n%s", err, out.String(), logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ember serve printed no address within 10 s:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServe runs ember serve --device cpu, computes on its device through
// ember.RemoteWebSocket against values worked by hand, lists it with
// ember devices --remote, and stops it through its context.
func TestServe(t *testing.T) {
	addr, stop := startServe(t, "--device", "cpu")
	dev := ember.RemoteWebSocket("ws://"+addr, 0)
	if err := dev.Init(); err != nil {
		t.Fatal(err)
	}
	x := ember.FromFloats([]float32{1.5, -2, 3.25, 4}, []int{2, 2}, dev)
	y := x.Matmul(x).Add(x) // [[1.5 -2] [3.25 4]]² + x
	want := []float32{1.5*1.5 - 2*3.25 + 1.5, 1.5*-2 - 2*4 - 2, 3.25*1.5 + 4*3.25 + 3.25, 3.25*-2 + 16 + 4}
	got := y.Float32s()
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("x·x + x on %v = %v, want %v", dev, got, want)
		}
	}
	out, _, err := execute(t, "devices", "--remote", addr)
	if err != nil {
		t.Fatalf("devices --remote: %v", err)
	}
	if !strings.Contains(out, "remote+ws://"+addr+"/0") || !strings.Contains(out, "GiB") {
		t.Errorf("devices --remote output lacks the device and its memory:\n%s", out)
	}
	err, text := stop()
	if err != nil || !strings.Contains(text, "shut down") {
		t.Fatalf("serve after its context ended: %v\n%s", err, text)
	}
	// The server is gone: the device's calls fail instead of hanging.
	if err := dev.Sync(); err == nil {
		t.Error("Sync on the device of a stopped server returned nil")
	}
}

// TestServeFlags checks the flag combinations serve refuses and a
// backend it does not have.
func TestServeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--authorized-keys", "keys.txt"}, "needs --quic"},
		{[]string{"--key", "server.key"}, "needs --quic"},
		{[]string{"--device", "nosuchbackend"}, `no backend "nosuchbackend"`},
	} {
		_, _, err := execute(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("serve %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestServeQUIC runs ember serve --quic with a key file, an authorized
// keys file and a credentials file: a client with an authorized key and a
// good credential computes on it (checked against values worked by hand);
// an unknown key and a wrong credential are refused with errors matching
// remote.ErrUnauthorized.
func TestServeQUIC(t *testing.T) {
	dir := t.TempDir()
	client, err := remote.GenerateEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "clients.txt")
	creds := filepath.Join(dir, "credentials.txt")
	if err := os.WriteFile(keys, []byte("# the test client\n"+client.ID().String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("tok3n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, stop := startServeMatching(t, regexp.MustCompile(`on quic://(127\.0\.0\.1:\d+), peer id (\S+)`),
		"--quic", "--key", filepath.Join(dir, "server.key"), "--authorized-keys", keys, "--credentials", creds)
	defer stop()
	id, err := remote.ParsePeerID(m[2])
	if err != nil {
		t.Fatal(err)
	}
	peer := remote.EndpointAddr{ID: id, Addr: m[1]}
	stranger, err := remote.GenerateEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	// Each refused device is dead: the next constructor call for the
	// same server device is a new device, with its own identity.
	for _, c := range []struct {
		what string
		ep   *remote.Endpoint
		cred string
	}{{"an unknown key", stranger, "tok3n"}, {"a wrong credential", client, "nope"}, {"no credential", client, ""}} {
		if err := ember.RemoteQUICAuthorized(c.ep, peer, 0, []byte(c.cred)).Init(); !errors.Is(err, remote.ErrUnauthorized) {
			t.Errorf("%s: Init = %v, want remote.ErrUnauthorized", c.what, err)
		}
	}
	dev := ember.RemoteQUICAuthorized(client, peer, 0, []byte("tok3n"))
	if err := dev.Init(); err != nil {
		t.Fatal(err)
	}
	got := ember.FromFloats([]float32{1, -2, 3}, []int{3}, dev).MulScalar(2.5).Float32s()
	if want := []float32{2.5, -5, 7.5}; !slices.Equal(got, want) {
		t.Fatalf("2.5·x over QUIC = %v, want %v", got, want)
	}
}
