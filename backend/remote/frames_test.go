package remote

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/emberml/ember/ir"
)

// checkWorks runs an add on c and checks it against float64 values.
func checkWorks(t *testing.T, what string, c *Client, r *rand.Rand) {
	t.Helper()
	da, ra := randData(r, 8)
	db, rb := randData(r, 8)
	want := make([]float64, 8)
	for i := range want {
		want[i] = float64(float32(ra[i]) + float32(rb[i]))
	}
	near(t, what, values(t, c, c.Exec(binOp(t, ir.OpAdd, c.FromData(da), c.FromData(db)))[0]), want, 1e-7)
}

// TestBadFramesCloseOnlyTheirSession sends an oversize frame and a
// malformed one on two sessions while a third keeps working: each bad
// session is closed with an error that says why (ErrFrameTooLarge,
// ErrProtocol), its tensors are freed, and the other session and the
// server are unaffected.
func TestBadFramesCloseOnlyTheirSession(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{MaxFrame: minFrame})
	r := rand.New(rand.NewPCG(7, 8))
	good := ts.connect(t, 0, ClientOptions{})
	checkWorks(t, "before", good, r)
	for _, c := range []struct {
		name  string
		frame []byte
		want  error
	}{
		{"oversize", make([]byte, 2*minFrame), ErrFrameTooLarge},
		{"not cbor", []byte{0xff, 0x00, 0x13}, ErrProtocol},
		{"unknown field", mustMarshal(t, map[int]int{7: 1}), ErrProtocol},
		{"two requests in a task", mustMarshal(t, map[int]any{1: []any{map[int]any{6: map[int]int{1: 1}, 10: true}}}), ErrProtocol},
		{"indefinite length", []byte{0xbf, 0x01, 0x9f, 0xff, 0xff}, ErrProtocol},
		{"a tag", []byte{0xc1, 0x00}, ErrProtocol},
	} {
		bad := ts.connect(t, 0, ClientOptions{})
		bad.FromData(ir.FromSlice([]float32{1, 2, 3}, []int{3}))
		bad.Flush()
		waitFor(t, c.name+": the upload", func() bool { return ts.srv.Stats().Tensors >= 4 })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := bad.conn.WriteFrame(ctx, c.frame)
		cancel()
		if err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		select {
		case <-bad.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the session was not closed within 10 s", c.name)
		}
		if err := bad.Sync(); !errors.Is(err, c.want) || !errors.Is(err, ErrClosed) {
			t.Errorf("%s: the client's error is %v, want one wrapping %v", c.name, err, c.want)
		}
		waitFor(t, c.name+": the bad session's tensors freed", func() bool {
			st := ts.srv.Stats()
			return st.Sessions == 1
		})
		checkWorks(t, "after a "+c.name+" frame on another session", good, r)
	}
	if err := good.Sync(); err != nil {
		t.Fatal(err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := encMode.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFailedTasksKeepTheSession runs ops that fail on the server (an out
// of range gather index, an integer division by zero, a record whose
// shape contradicts its inputs, an op on a tensor whose op failed): each
// is reported by the next Sync as an error wrapping ErrExecution that
// names the op, later reads of its result fail with the same cause, and
// the session keeps working.
func TestFailedTasksKeepTheSession(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	c := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(9, 10))
	x := c.FromData(ir.FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}))
	idx := c.FromData(ir.FromSlice([]int64{0, 3, 1, 2, 0, 1}, []int{2, 3}))
	gather := ir.Op{Kind: ir.KindGather, Axis: 1, In: [3]ir.Tensor{x, idx}}
	if err := gather.Infer(); err != nil {
		t.Fatal(err)
	}
	g := c.Exec(gather)[0]
	// An op on the failed result fails with the gather's cause, once.
	y := c.Exec(binOp(t, ir.OpAdd, g, g))[0]
	err := c.Sync()
	if !errors.Is(err, errExecution) || !strings.Contains(err.Error(), "gather") || !strings.Contains(err.Error(), "index 3") ||
		!strings.Contains(err.Error(), "size 3") || strings.Contains(err.Error(), "more failed") {
		t.Fatalf("Sync after a bad gather: %v", err)
	}
	if _, err := c.ToData(y); err == nil || !strings.Contains(err.Error(), "gather") {
		t.Fatalf("reading a result of the failed gather: %v", err)
	}
	if err := c.Sync(); err != nil {
		t.Fatalf("the session stays failed: %v", err)
	}
	checkWorks(t, "after the bad gather", c, r)
	// Reading the failed result reports the failure; it is not reported
	// again by the next read of a valid tensor.
	g2 := c.Exec(gather)[0]
	if _, err := c.ToData(g2); err == nil || !strings.Contains(err.Error(), "gather") {
		t.Fatalf("reading a failed gather: %v", err)
	}
	up := c.FromData(ir.FromSlice([]float32{2, 4}, []int{2}))
	fine := c.Exec(binOp(t, ir.OpAdd, up, up))[0] // computed on the server
	if d, err := c.ToData(fine); err != nil || len(d.Bytes) != 8 {
		t.Fatalf("a valid read after a reported failure: %v", err)
	}

	a := c.FromData(ir.FromSlice([]int32{7, 8, 9}, []int{3}))
	z := c.FromData(ir.FromSlice([]int32{1, 0, 3}, []int{3}))
	c.Exec(binOp(t, ir.OpDiv, a, z))
	if err := c.Sync(); !errors.Is(err, errExecution) || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("integer division by zero: %v", err)
	}
	// A record that lies about its output shape.
	op := binOp(t, ir.OpMul, a, a)
	op.Shape = []int{1000}
	out := c.Exec(op)[0]
	if err := c.Sync(); !errors.Is(err, errExecution) || !strings.Contains(err.Error(), "record says") {
		t.Fatalf("a record with a wrong shape: %v", err)
	}
	if _, err := c.ToData(out); err == nil {
		t.Fatal("the result of a rejected record reads")
	}
	checkWorks(t, "after the failures", c, r)
}

// TestLimits checks the per-session limits: a tensor over MaxTensorBytes
// (uploaded or computed, decompositions' intermediates included) and a
// tensor past MaxTensors fail their task with an error wrapping ErrLimit;
// the session then still works.
func TestLimits(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{MaxTensorBytes: 4096, MaxTensors: 8})
	c := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(11, 12))
	big, _ := randData(r, 2048) // 8 KiB
	c.FromData(big)
	if err := c.Sync(); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "4096") {
		t.Fatalf("an 8 KiB upload under a 4 KiB limit: %v", err)
	}
	small := c.FromData(ir.FromSlice(make([]float32, 1000), []int{1000}))
	full := ir.Op{Kind: ir.KindExpand, Shape: []int{2, 1000}, In: [3]ir.Tensor{small}}
	if err := full.Infer(); err != nil {
		t.Fatal(err)
	}
	view := c.Exec(full)[0] // a view: no bytes of its own
	c.Exec(binOp(t, ir.OpAdd, view, view))
	if err := c.Sync(); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "add") {
		t.Fatalf("an 8 KB result: %v", err)
	}
	var keep []any
	for range 8 {
		keep = append(keep, c.FromData(ir.FromSlice([]float32{1}, []int{1})))
	}
	if err := c.Sync(); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "limit is 8") {
		t.Fatalf("more than 8 tensors: %v", err)
	}
	_ = keep
}

// TestChunkedTransfers moves a tensor larger than both sides' frames up
// and back: it travels in parts and keeps every byte.
func TestChunkedTransfers(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{MaxFrame: minFrame})
	c := ts.connect(t, 0, ClientOptions{MaxFrame: minFrame})
	r := rand.New(rand.NewPCG(13, 14))
	d, ref := randData(r, 300, 250) // 300 KB
	x := c.FromData(d)
	neg := c.Exec(ir.Op{Kind: ir.KindUnary, Sub: uint8(ir.OpNeg), DType: ir.F32, Shape: []int{300, 250}, In: [3]ir.Tensor{x}})[0]
	got := values(t, c, neg)
	for i := range ref {
		ref[i] = -ref[i]
	}
	near(t, "-x of 300 KB through 64 KiB frames", got, ref, 0)
	if st := c.Stats(); st.FramesReceived < 5 || st.FramesSent < 5 {
		t.Errorf("300 KB in 64 KiB frames took %d frames up and %d down", st.FramesSent, st.FramesReceived)
	}
}

// TestDecodedFramesOwnTheirBytes checks that decoded frames copy their
// byte strings out of the frame (the WebSocket Conn reuses its read
// buffer): overwriting the input after decoding leaves the values intact.
func TestDecodedFramesOwnTheirBytes(t *testing.T) {
	data := ir.FromSlice([]float32{1.5, -2, 3}, []int{3})
	in := mustMarshal(t, &clientFrame{Tasks: []task{{Upload: &uploadTask{ID: 1, Data: data}}, {Part: &partTask{ID: 2, Bytes: []byte{7, 8, 9}}}}})
	f, err := decodeClientFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	out := mustMarshal(t, &serverFrame{Replies: []reply{{Req: 1, Data: data}, {Req: 2, Part: []byte{4, 5}, More: true}, {Req: 3, Token: make([]byte, tokenLen)}}})
	g, err := decodeServerFrame(out)
	if err != nil {
		t.Fatal(err)
	}
	clear(in)
	clear(out)
	if got := f.Tasks[0].Upload.Data.Float32s(); got[0] != 1.5 || got[1] != -2 || got[2] != 3 {
		t.Errorf("upload after the frame was overwritten: %v", got)
	}
	if p := f.Tasks[1].Part.Bytes; p[0] != 7 || p[2] != 9 {
		t.Errorf("part after the frame was overwritten: %v", p)
	}
	if got := g.Replies[0].Data.Float32s(); got[0] != 1.5 || got[2] != 3 {
		t.Errorf("read reply after the frame was overwritten: %v", got)
	}
	if p := g.Replies[1].Part; p[0] != 4 || p[1] != 5 {
		t.Errorf("reply part after the frame was overwritten: %v", p)
	}
}
