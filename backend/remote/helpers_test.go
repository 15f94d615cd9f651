package remote

import (
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/ir"
)

// testServer is a server on a loopback WebSocket listener, stopped at the
// end of the test.
type testServer struct {
	srv  *Server
	addr string
	stop func()
	done chan error
}

// startServer serves n fresh cpu devices (1 when n is 0) with opts.
func startServer(t testing.TB, n int, opts ServerOptions) *testServer {
	t.Helper()
	if n == 0 {
		n = 1
	}
	if opts.Backends == nil {
		for i := range n {
			opts.Backends = append(opts.Backends, cpu.New(backend.DeviceID{Type: "cpu", Index: i}))
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ListenWebSocket("127.0.0.1:0", srv.opts.MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{srv: srv, addr: l.Addr(), stop: cancel, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not shut down within 10 s")
		}
	})
	return ts
}

// connect opens a client on device index of ts.
func (ts *testServer) connect(t testing.TB, index int, opts ClientOptions) *Client {
	t.Helper()
	c, err := ts.tryConnect(index, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (ts *testServer) tryConnect(index int, opts ClientOptions) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := DialWebSocket(ctx, "ws://"+ts.addr+"/", DefaultMaxFrame)
	if err != nil {
		return nil, err
	}
	id := backend.DeviceID{Type: "remote+ws", Addr: ts.addr, Index: index}
	return Connect(ctx, conn, id, index, opts)
}

// randData returns n random non-zero f32 values in ±[0.5, 2) as tensor
// data of shape, with their float64 values.
func randData(r *rand.Rand, shape ...int) (*ir.TensorData, []float64) {
	n := ir.NumElements(shape)
	vs := make([]float32, n)
	ref := make([]float64, n)
	for i := range vs {
		v := float32(0.5 + 1.5*r.Float64())
		if r.IntN(2) == 0 {
			v = -v
		}
		vs[i], ref[i] = v, float64(v)
	}
	return ir.FromSlice(vs, shape), ref
}

// binOp is the op of a binary primitive of two tensors, inferred.
func binOp(t *testing.T, sub ir.BinaryOp, a, b ir.Tensor) ir.Op {
	t.Helper()
	op := ir.Op{Kind: ir.KindBinary, Sub: uint8(sub), In: [3]ir.Tensor{a, b}}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	return op
}

// values reads t as float64s.
func values(t *testing.T, c *Client, x ir.Tensor) []float64 {
	t.Helper()
	d, err := c.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d.Float64s()
}

// near checks got against want within tol relative to max(|want|, 1).
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*math.Max(math.Abs(want[i]), 1) {
			t.Fatalf("%s: element %d is %v, want %v (tol %g)", what, i, got[i], want[i], tol)
		}
	}
}
