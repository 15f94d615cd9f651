package ember

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/remote"
)

// The remote devices of the cross-backend table: a WebSocket device of a
// cpu server started once per test binary on loopback, and every device
// named in EMBER_TEST_REMOTE (comma-separated device names, such as
// remote+ws://gpu-host:3000/0 of an `ember serve --device cuda`).

var (
	testServerOnce sync.Once
	testServerAddr string
	testServerQUIC remote.EndpointAddr
	testServerErr  error
	testServerSrv  *remote.Server
)

// testRemoteServer starts (once) an in-process server of two cpu devices
// on 127.0.0.1, over WebSocket and over QUIC, and returns its WebSocket
// address.
func testRemoteServer(t *testing.T) (string, *remote.Server) {
	t.Helper()
	testServerOnce.Do(func() {
		testServerErr = func() error {
			ep, err := remote.GenerateEndpoint()
			if err != nil {
				return err
			}
			srv, err := remote.NewServer(remote.ServerOptions{
				Backends: []backend.Backend{cpu.New(backend.DeviceID{Type: "cpu"}), cpu.New(backend.DeviceID{Type: "cpu", Index: 1})},
				Peer:     ep.ID(),
				Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				return err
			}
			l, err := remote.ListenWebSocket("127.0.0.1:0", remote.DefaultMaxFrame)
			if err != nil {
				return err
			}
			q, err := remote.ListenQUIC(ep, "127.0.0.1:0", remote.DefaultMaxFrame)
			if err != nil {
				return err
			}
			testServerAddr, testServerSrv = l.Addr(), srv
			testServerQUIC = remote.EndpointAddr{ID: ep.ID(), Addr: q.Addr()}
			// The table's devices wait for a server that a slow op (the
			// race detector on two cores) keeps from reading for seconds;
			// the fault tests use their own servers and timeouts.
			remote.SetDeviceOptions(backend.DeviceID{Type: "remote+ws", Addr: testServerAddr, Index: -1}, remote.ClientOptions{Timeout: time.Minute})
			remote.SetDeviceOptions(backend.DeviceID{Type: "remote+quic", Addr: testServerQUIC.String(), Index: -1}, remote.ClientOptions{Timeout: time.Minute})
			go srv.Serve(context.Background(), l)
			go srv.Serve(context.Background(), q)
			return nil
		}()
	})
	if testServerErr != nil {
		t.Fatalf("remote test server: %v", testServerErr)
	}
	return testServerAddr, testServerSrv
}

// remoteTestDevices returns the remote devices the table runs on.
func remoteTestDevices(t *testing.T) []Device {
	t.Helper()
	if runtime.GOOS == "wasip1" || runtime.GOOS == "js" {
		// WebAssembly runs one thread, so a loopback server in the same
		// process starves the QUIC keep-alives; the native runs cover
		// the remote devices.
		return nil
	}
	addr, _ := testRemoteServer(t)
	out := []Device{RemoteWebSocket("ws://"+addr, 0), RemoteQUIC(nil, testServerQUIC, 0)}
	for name := range strings.SplitSeq(os.Getenv("EMBER_TEST_REMOTE"), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		d, err := ParseDevice(name)
		if err != nil {
			t.Fatalf("EMBER_TEST_REMOTE: %v", err)
		}
		out = append(out, d)
	}
	return out
}

// remoteDev returns device i of the in-process test server.
func remoteDev(t *testing.T, i DeviceIndex) Device {
	t.Helper()
	addr, _ := testRemoteServer(t)
	d := RemoteWebSocket("ws://"+addr, i)
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	return d
}

// remoteClient is d's remote backend.
func remoteClient(t *testing.T, d Device) *remote.Client {
	t.Helper()
	c, ok := backend.As[*remote.Client](d.Inner().Backend())
	if !ok {
		t.Fatalf("%v has no remote client", d)
	}
	return c
}

// mlpLoss is a small network's loss: mean cross-entropy of
// tanh(x·w1)·w2 against labels, built from the public API.
func mlpLoss(x, w1, w2 *Tensor, labels []int) *Tensor {
	logits := x.Matmul(w1).Tanh().Matmul(w2)
	y := FromInts(labels, []int{len(labels)}, x.Device())
	hot := OneHot(y, w2.Dim(1)).Cast(logits.DType())
	return logits.LogSoftmax(1).Mul(hot).Sum().MulScalar(-1 / float64(len(labels)))
}

// TestRemoteAutodiff checks autodiff on the client over a remote device
// (the server sees a flat op stream): the loss and gradients of a small
// network, with and without checkpointing, are bit-identical to those of
// the cpu device (the server runs cpu's kernels in the same order) and
// agree with central differences.
func TestRemoteAutodiff(t *testing.T) {
	rng := newRNG(61)
	ins := []ref{randRef([]int{5, 4}, F64, nonZero(rng, 0.2, 1)), randRef([]int{4, 6}, F64, nonZero(rng, 0.2, 1)), randRef([]int{6, 3}, F64, nonZero(rng, 0.2, 1))}
	labels := []int{0, 2, 1, 1, 0}
	grads := func(dev Device) (float64, [][]float64) {
		xs := mkF64(dev, ins)
		w1, w2 := xs[1].RequireGrad(), xs[2].RequireGrad()
		loss := mlpLoss(xs[0], w1, w2, labels)
		g := loss.Backward()
		return loss.Item(), [][]float64{g.Of(w1).Float64s(), g.Of(w2).Float64s()}
	}
	rdev := remoteDev(t, 0)
	wantLoss, want := grads(CPU().Autodiff())
	num := numericGrads(ins, fdStep, func(rs []ref) float64 {
		xs := mkF64(CPU(), rs)
		return mlpLoss(xs[0], xs[1], xs[2], labels).Item()
	})
	for _, dev := range []Device{rdev.Autodiff(), rdev.Autodiff().GradientCheckpointing()} {
		loss, got := grads(dev)
		if math.Float64bits(loss) != math.Float64bits(wantLoss) {
			t.Errorf("%v: loss %v, cpu's %v", dev, loss, wantLoss)
		}
		for k := range got {
			if !bitsEqual(got[k], want[k]) {
				t.Errorf("%v: gradient of w%d differs from cpu's:\n%v\n%v", dev, k+1, got[k], want[k])
			}
			for i, n := range num[k+1] {
				if math.Abs(got[k][i]-n) > fdTol*max(1, math.Abs(n)) {
					t.Fatalf("%v: d loss / d w%d[%d] = %v, central difference %v", dev, k+1, i, got[k][i], n)
				}
			}
		}
	}
	if err := rdev.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteToDevice moves tensors cpu → remote → cpu, and between the
// two devices of one server, where the data stays on the server: the
// client sends a few hundred bytes for a 1 MiB tensor. A tracked tensor
// moved between the remote devices stays differentiable.
func TestRemoteToDevice(t *testing.T) {
	r0, r1 := remoteDev(t, 0), remoteDev(t, 1)
	rng := newRNG(62)
	want := randRef([]int{512, 512}, F32, nonZero(rng, 0.5, 2))
	x := mk(CPU(), want, F32)
	on0 := x.ToDevice(r0)
	checkEq(t, "cpu → remote 0", on0, want, F32)
	c0, c1 := remoteClient(t, r0), remoteClient(t, r1)
	s0, s1 := c0.Stats().BytesSent, c1.Stats().BytesSent
	on1 := on0.ToDevice(r1)
	if err := r1.Sync(); err != nil {
		t.Fatal(err)
	}
	if d0, d1 := c0.Stats().BytesSent-s0, c1.Stats().BytesSent-s1; d0 > 1024 || d1 > 1024 {
		t.Errorf("moving 1 MiB between two devices of one server sent %d + %d bytes from the client", d0, d1)
	}
	if !on1.Device().Equal(r1) {
		t.Fatalf("moved to %v, want %v", on1.Device(), r1)
	}
	checkEq(t, "remote 0 → remote 1 → cpu", on1.ToDevice(CPU()), want, F32)
	// Gradients flow back across the server-side move.
	w := mk(r0.Autodiff(), randRef([]int{3}, F32, nonZero(rng, 0.5, 2)), F32).RequireGrad()
	y := w.MulScalar(3).ToDevice(r1.Autodiff()).Sum()
	g := y.Backward().Of(w)
	if g == nil || !g.Device().Equal(r0) {
		t.Fatalf("gradient of a tensor moved between remote devices: %v", g)
	}
	checkEq(t, "d sum(3w) / dw", g, ref{[]int{3}, []float64{3, 3, 3}}, F32)
}

// TestRemoteEnumerate lists the test server's devices through Enumerate
// and checks their names, order and memory.
func TestRemoteEnumerate(t *testing.T) {
	addr, _ := testRemoteServer(t)
	ds := Enumerate(RemoteWebSocketType("ws://" + addr))
	if len(ds) != 2 || ds[0].String() != "remote+ws://"+addr+"/0" || ds[1].String() != "remote+ws://"+addr+"/1" {
		t.Fatalf("Enumerate(RemoteWebSocketType) = %v", ds)
	}
	for _, d := range ds {
		info, err := d.Info()
		if err != nil || info.MemoryBytes == 0 || info.Name == "" {
			t.Errorf("%v: info %+v, %v", d, info, err)
		}
	}
	if got := Enumerate(RemoteWebSocketType("127.0.0.1:1")); len(got) != 0 {
		t.Errorf("Enumerate of an address nobody serves: %v", got)
	}
	qs := Enumerate(RemoteQUICType(nil, testServerQUIC))
	if len(qs) != 2 || qs[1].String() != "remote+quic://"+testServerQUIC.String()+"/1" {
		t.Fatalf("Enumerate(RemoteQUICType) = %v", qs)
	}
	if d, err := ParseDevice(qs[1].String()); err != nil || !d.Equal(qs[1]) {
		t.Errorf("ParseDevice(%q) = %v, %v", qs[1], d, err)
	}
}

// reportingCPU is a cpu backend whose device reports F64 and I32 as its
// default dtypes.
type reportingCPU struct{ backend.Backend }

func (r reportingCPU) Unwrap() backend.Backend { return r.Backend }
func (reportingCPU) DeviceSettings() backend.Settings {
	return backend.Settings{FloatDType: FloatF64, IntDType: IntI32, BoolDType: BoolNative}
}

// TestRemoteSettingsFromServer checks that a remote device's settings are
// its server device's: FromFloats makes F64 tensors and FromInts I32 ones
// on a server whose device defaults to them, and Configure still
// overrides them on another device of that server.
func TestRemoteSettingsFromServer(t *testing.T) {
	srv, err := remote.NewServer(remote.ServerOptions{
		Backends: []backend.Backend{reportingCPU{cpu.New(backend.DeviceID{Type: "cpu"})}, reportingCPU{cpu.New(backend.DeviceID{Type: "cpu", Index: 1})}},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := remote.ListenWebSocket("127.0.0.1:0", remote.DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, l)
	d := MustParseDevice("remote+ws://" + l.Addr() + "/0") // lazily opened
	if s := d.Settings(); s.FloatDType != FloatF64 || s.IntDType != IntI32 {
		t.Fatalf("settings %+v, want the server's f64 and i32", s)
	}
	x := FromFloats([]float32{1.5, -2}, []int{2}, d)
	n := FromInts([]int{3, 4}, []int{2}, d)
	if x.DType() != F64 || n.DType() != I32 {
		t.Fatalf("FromFloats gave %v, FromInts %v; want f64, i32", x.DType(), n.DType())
	}
	checkEq(t, "x·2 in f64", x.MulScalar(2), ref{[]int{2}, []float64{3, -4}}, F64)
	d1 := RemoteWebSocket(l.Addr(), 1)
	if err := d1.Configure(DeviceConfig{}.WithFloatDType(FloatBF16)); err != nil {
		t.Fatal(err)
	}
	if s := d1.Settings(); s.FloatDType != FloatBF16 || s.IntDType != IntI32 {
		t.Fatalf("configured settings %+v, want bf16 and the server's i32", s)
	}
}

// TestRemoteUnauthorized checks that a device whose server refuses its
// credential fails Init with an error matching remote.ErrUnauthorized,
// and that an op on it panics with that error.
func TestRemoteUnauthorized(t *testing.T) {
	srv, err := remote.NewServer(remote.ServerOptions{
		Backends:   []backend.Backend{cpu.New(backend.DeviceID{Type: "cpu"})},
		Authorizer: credentialOnly("right"),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := remote.ListenWebSocket("127.0.0.1:0", remote.DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, l)
	t.Setenv("EMBER_REMOTE_CREDENTIAL", "wrong")
	d := RemoteWebSocket(l.Addr(), 0)
	err = d.Init()
	if !errors.Is(err, remote.ErrUnauthorized) || !strings.Contains(err.Error(), "wrong credential") {
		t.Fatalf("Init with a wrong credential: %v", err)
	}
	if perr := Try(func() { Zeros([]int{2}, d) }); !errors.Is(perr, remote.ErrUnauthorized) {
		t.Fatalf("an op on the refused device: %v", perr)
	}
	if st := srv.Stats(); st.Opened != 0 || st.Refused != 1 {
		t.Fatalf("server after the refusal: %+v", st)
	}
	// The right credential: the constructor replaces the refused device
	// with a new one, which connects.
	t.Setenv("EMBER_REMOTE_CREDENTIAL", "right")
	d2 := RemoteWebSocket(l.Addr(), 0)
	if d2.Equal(d) {
		t.Fatal("the constructor returned the refused device again")
	}
	checkEq(t, "ones on the admitted device", Ones([]int{2}, d2), ref{[]int{2}, []float64{1, 1}}, F32)
}

// credentialOnly admits the clients that present one credential.
type credentialOnly string

func (c credentialOnly) Authorize(_ remote.PeerID, _ int, cred []byte) error {
	if string(cred) != string(c) {
		return errors.New("wrong credential")
	}
	return nil
}

// TestRemoteDeviceNames checks the remote device names: remote+wss and
// remote+quic parse to the devices their constructors make and print
// back unchanged; QUIC names need the server's key in its canonical text
// form and a port.
func TestRemoteDeviceNames(t *testing.T) {
	ep, err := remote.GenerateEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	peer := remote.EndpointAddr{ID: ep.ID(), Addr: "10.1.2.3:4433"}
	for name, want := range map[string]backend.DeviceID{
		"remote+wss://gpu.example:8443/1":                webSocketID("wss://gpu.example:8443", 1),
		"remote+quic://" + peer.String() + "/2":          {Type: "remote+quic", Addr: peer.String(), Index: 2},
		"remote+quic://" + peer.String() + "/0+autodiff": {Type: "remote+quic", Addr: peer.String()},
	} {
		d, err := ParseDevice(name)
		if err != nil || d.ID() != want || d.String() != name {
			t.Errorf("ParseDevice(%q) = %v (%+v), %v; want %+v", name, d, d.ID(), err, want)
		}
	}
	id := ep.ID().String()
	for name, frag := range map[string]string{
		"remote+quic://" + id + "@10.1.2.3/0":             "needs a port",
		"remote+quic://10.1.2.3:4433/0":                   "names the server's key",
		"remote+quic://" + strings.ToUpper(id) + "@h:1/0": "peer id",
		"remote+quic://" + id[:len(id)-1] + "@h:1/0":      "peer id",
		"remote+quic":        "PEERID@HOST:PORT",
		"remote+wss://h:0/0": "port",
	} {
		if _, err := ParseDevice(name); err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("ParseDevice(%q) = %v, want an error containing %q", name, err, frag)
		}
	}
}
