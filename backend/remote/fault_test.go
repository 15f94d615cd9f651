package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestHelperServerProcess is not a test: run by startServerProcess in a
// child process (EMBER_REMOTE_TEST_SERVER=1), it serves a cpu device on
// loopback, prints its address and serves until killed.
func TestHelperServerProcess(t *testing.T) {
	if os.Getenv("EMBER_REMOTE_TEST_SERVER") != "1" {
		t.Skip("run as a child process by the fault tests")
	}
	srv, err := NewServer(ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	l, err := ListenWebSocket("127.0.0.1:0", DefaultMaxFrame)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("addr", l.Addr())
	srv.Serve(context.Background(), l)
}

// startServerProcess starts a server in a child process and returns its
// address and the process.
func startServerProcess(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServerProcess$")
	cmd.Env = append(os.Environ(), "EMBER_REMOTE_TEST_SERVER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
				lines <- addr
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case addr := <-lines:
		return addr, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("the server process printed no address within 30 s")
	}
	return "", nil
}

// dialAddr connects a client to device 0 of the server at addr.
func dialAddr(t *testing.T, addr string, opts ClientOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := DialWebSocket(ctx, "ws://"+addr+"/", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, conn, backend.DeviceID{Type: "remote+ws", Addr: addr}, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestServerKilled kills the server process (SIGKILL) while a client
// runs ops and reads in a loop: the pending call and every later one
// (Sync, reads, SupportsDType) fail with an error wrapping ErrClosed that
// names the device, within the 5 s default timeout; Exec never blocks.
func TestServerKilled(t *testing.T) {
	addr, cmd := startServerProcess(t)
	c := dialAddr(t, addr, ClientOptions{})
	r := rand.New(rand.NewPCG(15, 16))
	d, _ := randData(r, 64, 64)
	x := c.FromData(d)
	errc := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		once := sync.Once{}
		for {
			y := c.Exec(binOp(t, ir.OpMul, x, x))[0]
			y = c.Exec(binOp(t, ir.OpAdd, y, x))[0]
			if _, err := c.ToData(y); err != nil {
				errc <- err
				return
			}
			once.Do(func() { close(started) })
		}
	}()
	<-started
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(DefaultTimeout):
		t.Fatalf("no error within %v of the server's death", DefaultTimeout)
	}
	t.Logf("the client failed %v after the kill: %v", time.Since(killed), err)
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %v: want one wrapping ErrClosed naming %s", err, addr)
	}
	c.Exec(binOp(t, ir.OpAdd, x, x))
	if err := c.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after the death: %v", err)
	}
	if c.SupportsDType(ir.F32) {
		t.Error("SupportsDType on a dead connection reports true")
	}
}

// TestSilentServer checks a server that stops answering without closing
// the connection (it takes the handshake, then never reads again): the
// client's pings go unanswered and a pending Sync fails within the
// client's timeout.
func TestSilentServer(t *testing.T) {
	l, err := ListenWebSocket("127.0.0.1:0", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv, _ := NewServer(ServerOptions{Backends: startServer(t, 1, ServerOptions{}).srv.opts.Backends})
	hold := make(chan struct{})
	defer close(hold)
	go func() {
		conn, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		conn.ReadFrame(context.Background())
		b, _ := marshal(srv.welcome())
		conn.WriteFrame(context.Background(), b)
		<-hold // silent from here on: nothing read, nothing answered
		conn.Close(nil)
	}()
	const timeout = time.Second
	c := dialAddr(t, l.Addr(), ClientOptions{Timeout: timeout})
	start := time.Now()
	err = c.Sync()
	took := time.Since(start)
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("Sync against a silent server: %v", err)
	}
	if took > 2*timeout {
		t.Fatalf("Sync failed after %v, beyond the %v timeout", took, timeout)
	}
	t.Logf("failed after %v: %v", took, err)
}

// TestBackpressure checks that the bounded send queue blocks the caller
// when the server does not read: with a queue of one batch of one task,
// a goroutine uploading 256 KiB tensors stalls; it is released, with an
// error wrapping ErrClosed, once the client finds the server dead (its
// pings are not answered either).
func TestBackpressure(t *testing.T) {
	l, err := ListenWebSocket("127.0.0.1:0", DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv, _ := NewServer(ServerOptions{Backends: startServer(t, 1, ServerOptions{}).srv.opts.Backends})
	hold := make(chan struct{})
	defer close(hold)
	go func() {
		conn, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		conn.ReadFrame(context.Background())
		b, _ := marshal(srv.welcome())
		conn.WriteFrame(context.Background(), b)
		<-hold
		conn.Close(nil)
	}()
	c := dialAddr(t, l.Addr(), ClientOptions{BatchTasks: 1, QueueFrames: 1, Timeout: 3 * time.Second})
	var n atomic.Int64
	done := make(chan struct{})
	const uploads = 200
	go func() {
		for range uploads {
			c.FromData(ir.FromSlice(make([]float32, 1<<16), []int{1 << 16}))
			n.Add(1)
		}
		close(done)
	}()
	// The caller is blocked when its count stops moving before the end.
	last, stalled := int64(-1), false
	for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(200 * time.Millisecond) {
		if cur := n.Load(); cur == last && cur < uploads {
			stalled = true
			break
		} else {
			last = cur
		}
	}
	if !stalled {
		t.Fatalf("the uploader never stalled (%d of %d uploads of 256 KiB queued) with nobody reading a queue of one frame", n.Load(), uploads)
	}
	t.Logf("%d uploads queued before the caller blocked", last)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked caller was not released when the client found the server dead")
	}
	if err := c.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after the connection failed: %v", err)
	}
}

// TestConcurrentClients runs 32 clients at once, each 200 ops (random
// binary ops on random data, checked against float64 references), then
// closes them all: the server's tables and bytes return to zero and its
// Go heap to its baseline.
func TestConcurrentClients(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	const clients, ops = 32, 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	cs := make([]*Client, clients)
	for k := range clients {
		c, err := ts.tryConnect(0, ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs[k] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runChain(c, uint64(k), ops)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := ts.srv.Stats(); st.Sessions != clients || st.Tensors == 0 {
		t.Fatalf("while the clients are connected: %+v", st)
	}
	for _, c := range cs {
		c.Close()
	}
	waitFor(t, "every session freed", func() bool {
		st := ts.srv.Stats()
		return st.Sessions == 0 && st.Tensors == 0 && st.Bytes == 0
	})
	cs = nil
	if after := heap(); after > base+16<<20 {
		t.Errorf("server heap %d MB after the clients left, %d MB before", after>>20, base>>20)
	} else {
		t.Logf("heap before %.1f MB, after %.1f MB", float64(base)/(1<<20), float64(after)/(1<<20))
	}
}

// runChain runs n random binary ops on c (each on the last result and a
// fresh random upload), keeping a float32 reference of every value; it
// reads and checks every tenth result and the last, exactly (the server
// rounds each op to float32 as the reference does).
func runChain(c *Client, seed uint64, n int) error {
	r := rand.New(rand.NewPCG(seed, 99))
	const size = 256
	d, ref := randData(r, size)
	x := c.FromData(d)
	cur := make([]float32, size)
	for j := range cur {
		cur[j] = float32(ref[j])
	}
	for i := range n {
		d, o := randData(r, size)
		y := c.FromData(d)
		sub := []ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMax, ir.OpMin}[r.IntN(4)]
		op := ir.Op{Kind: ir.KindBinary, Sub: uint8(sub), In: [3]ir.Tensor{x, y}}
		if err := op.Infer(); err != nil {
			return err
		}
		x = c.Exec(op)[0]
		for j := range cur {
			b := float32(o[j])
			switch sub {
			case ir.OpAdd:
				cur[j] += b
			case ir.OpSub:
				cur[j] -= b
			case ir.OpMax:
				cur[j] = max(cur[j], b)
			case ir.OpMin:
				cur[j] = min(cur[j], b)
			}
		}
		if i%10 == 9 || i == n-1 {
			got, err := c.ToData(x)
			if err != nil {
				return fmt.Errorf("client %d, op %d: %w", seed, i, err)
			}
			for j, v := range got.Float32s() {
				if v != cur[j] {
					return fmt.Errorf("client %d, op %d, element %d: %v, want %v", seed, i, j, v, cur[j])
				}
			}
		}
	}
	return c.Sync()
}

// TestDisconnectMidBatch drops a client's connection while its batches
// are in flight (no close task): the server ends the session, frees its
// tensors and keeps serving other clients.
func TestDisconnectMidBatch(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	r := rand.New(rand.NewPCG(17, 18))
	for range 3 {
		c, err := ts.tryConnect(0, ClientOptions{BatchTasks: 8})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := randData(r, 128, 128)
		x := c.FromData(d)
		for range 100 {
			x = c.Exec(binOp(t, ir.OpMul, x, x))[0]
		}
		c.conn.Close(nil) // the network goes, mid-batch
		c.Close()
	}
	waitFor(t, "the dropped sessions freed", func() bool {
		st := ts.srv.Stats()
		return st.Sessions == 0 && st.Tensors == 0 && st.Bytes == 0
	})
	checkWorks(t, "a new client after the drops", ts.connect(t, 0, ClientOptions{}), r)
}

// TestDropsFreeServerTensors checks that handles the program drops are
// freed on the server: after 500 discarded results and a collection, the
// session holds only the live tensors.
func TestDropsFreeServerTensors(t *testing.T) {
	ts := startServer(t, 1, ServerOptions{})
	c := ts.connect(t, 0, ClientOptions{})
	r := rand.New(rand.NewPCG(19, 20))
	d, ref := randData(r, 1024)
	x := c.FromData(d)
	for range 500 {
		c.Exec(binOp(t, ir.OpAdd, x, x))
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dropped results freed", func() bool {
		runtime.GC()
		c.Flush()
		c.Sync()
		return ts.srv.Stats().Tensors <= 2
	})
	near(t, "the live tensor", readUncached(t, c, x), ref, 0)
	if st := ts.srv.Stats(); st.Bytes > 8<<10 {
		t.Errorf("the session holds %d bytes for one 4 KiB tensor", st.Bytes)
	}
}

// TestSeedAndQueries checks that Seed, SupportsDType and the settings
// answer from the server: the same seed gives the same random values,
// a dtype the server's backend lacks is reported unsupported, and the
// device's settings are the server backend's.
func TestSeedAndQueries(t *testing.T) {
	inner := startServer(t, 1, ServerOptions{}).srv.opts.Backends[0]
	ts := startServer(t, 1, ServerOptions{Backends: []backend.Backend{reportingBackend{inner}}})
	c := ts.connect(t, 0, ClientOptions{})
	random := func() []float64 {
		op := ir.Op{Kind: ir.KindRandom, Sub: uint8(ir.DistNormal), DType: ir.F32, Shape: []int{64}, Scalars: [2]float64{0, 1}}
		return readUncached(t, c, c.Exec(op)[0])
	}
	c.Seed(42)
	a := random()
	c.Seed(42)
	b := random()
	c.Seed(43)
	other := random()
	near(t, "same seed", b, a, 0)
	same := 0
	for i := range a {
		if a[i] == other[i] {
			same++
		}
	}
	if same > 2 {
		t.Errorf("seeds 42 and 43 agree on %d of 64 values", same)
	}
	if !c.SupportsDType(ir.F32) || c.SupportsDType(ir.F16) || c.SupportsDType(ir.DType(200)) {
		t.Errorf("SupportsDType: f32 %v, f16 %v (the server lacks it)", c.SupportsDType(ir.F32), c.SupportsDType(ir.F16))
	}
	if s := c.DeviceSettings(); s.FloatDType != ir.FloatF64 || s.IntDType != ir.IntI32 {
		t.Errorf("settings %+v, want the server's f64 and i32", s)
	}
	if info := c.DeviceInfo(); info.Name == "" || info.MemoryBytes == 0 {
		t.Errorf("DeviceInfo %+v: want the server's model and memory", info)
	}
}

// reportingBackend is a cpu backend that reports settings of its own and
// lacks F16.
type reportingBackend struct{ backend.Backend }

func (r reportingBackend) Unwrap() backend.Backend { return r.Backend }
func (r reportingBackend) DeviceSettings() backend.Settings {
	return backend.Settings{FloatDType: ir.FloatF64, IntDType: ir.IntI32, BoolDType: ir.BoolNative}
}
func (r reportingBackend) SupportsDType(dt backend.DType) bool {
	return dt != ir.F16 && r.Backend.SupportsDType(dt)
}
