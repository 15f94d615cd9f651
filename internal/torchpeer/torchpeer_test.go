package torchpeer

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fake writes an executable shell script body into a temporary file and
// returns its path: an interpreter that ignores its arguments.
func fake(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

const readyLine = `echo '{"ready": true, "torch": "0.fake", "threads": 4, "cuda": false}'`

// startFake starts a peer on a fake interpreter, failing t otherwise.
func startFake(t *testing.T, body string, opts Options) *Peer {
	t.Helper()
	opts.Pythons = []string{fake(t, body)}
	p, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

var softmax = Case{Name: "softmax", Dims: []int{8, 16}}

// within fails t when f takes longer than d (a hang), returning its error.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("no return within %v", d)
		return nil
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, s := range parts {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q lacks %q", err, s)
		}
	}
}

func TestInterpreters(t *testing.T) {
	t.Setenv(Env, "")
	if got := Interpreters(); strings.Join(got, ",") != "python3,/usr/bin/python3" {
		t.Fatalf("without %s: %v", Env, got)
	}
	t.Setenv(Env, "/opt/py/bin/python")
	if got := Interpreters(); strings.Join(got, ",") != "/opt/py/bin/python" {
		t.Fatalf("with %s: %v", Env, got)
	}
}

// TestStartWithoutTorch: every interpreter tried is named with why it
// failed.
func TestStartWithoutTorch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	noTorch := fake(t, `echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1`)
	err := within(t, 30*time.Second, func() error {
		_, err := Start(Options{Pythons: []string{missing, noTorch}})
		return err
	})
	wantErr(t, err, "no Python with torch", missing, noTorch, "No module named 'torch'", "exit status 1", Env)

	t.Setenv(Env, missing)
	_, err = Start(Options{})
	wantErr(t, err, missing, Env+" names the only interpreter tried")
}

func TestStartTimeout(t *testing.T) {
	py := fake(t, `exec sleep 30`)
	err := within(t, 20*time.Second, func() error {
		_, err := Start(Options{Pythons: []string{py}, StartTimeout: 200 * time.Millisecond})
		return err
	})
	wantErr(t, err, "not ready after 200ms")
}

// TestStartSkipsNoise: lines before the ready line are ignored.
func TestStartSkipsNoise(t *testing.T) {
	p := startFake(t, "echo hello; "+readyLine+"; cat >/dev/null", Options{})
	if p.Version() != "0.fake" || p.DefaultThreads() != 4 || p.CUDA() {
		t.Fatalf("version %q threads %d cuda %v", p.Version(), p.DefaultThreads(), p.CUDA())
	}
	if got := p.ThreadSettings(); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 4 {
		t.Fatalf("thread settings %v", got)
	}
}

// TestPeerDiesMidRun: the error names the case, the exit status and the
// peer's last words; the peer is not used again.
func TestPeerDiesMidRun(t *testing.T) {
	p := startFake(t, readyLine+`; read line; echo "RuntimeError: boom" >&2; exit 3`, Options{})
	err := within(t, 30*time.Second, func() error { _, err := p.Median(softmax, 1, 3); return err })
	wantErr(t, err, "softmax [8 16] f32 on cpu", "ended without answering", "exit status 3", "RuntimeError: boom")
	conv := Case{Name: "conv_fwd", Dims: []int{1, 1, 8, 8, 2, 3, 3, 1}}
	_, err = p.Best(conv, 3)
	wantErr(t, err, "conv_fwd [1 1 8 8 2 3 3 1]", "ended without answering")
}

// TestGarbageAnswer: an answer that is not one stops the peer.
func TestGarbageAnswer(t *testing.T) {
	p := startFake(t, readyLine+`; while read line; do echo 'hello there'; done`, Options{})
	err := within(t, 30*time.Second, func() error { _, err := p.Median(softmax, 0, 3); return err })
	wantErr(t, err, "softmax [8 16]", `answered "hello there"`, "not an answer")
	_, err = p.Median(softmax, 0, 3)
	wantErr(t, err, "softmax [8 16]", "hello there")
}

// TestInvalidAnswer: JSON that is no valid answer (a negative time, too
// few calls) stops the peer.
func TestInvalidAnswer(t *testing.T) {
	for _, a := range []string{`{"seconds": -1, "calls": 9}`, `{"seconds": 0.001, "calls": 1}`, `{"calls": 9}`} {
		p := startFake(t, readyLine+`; while read line; do echo '`+a+`'; done`, Options{})
		_, err := p.Median(softmax, 1, 3)
		wantErr(t, err, "softmax [8 16]", "not a valid answer")
	}
}

// TestReportedError: the peer's own error names the case and leaves it
// usable.
func TestReportedError(t *testing.T) {
	p := startFake(t, readyLine+`
read line; echo '{"error": "unknown case '"'"'nosuch'"'"'"}'
read line; echo '{"seconds": 0.002, "cpu_seconds": 0.004, "calls": 12, "threads": 2}'
cat >/dev/null`, Options{})
	_, err := p.Median(Case{Name: "nosuch"}, 1, 3)
	wantErr(t, err, "nosuch [] f32 on cpu", "unknown case 'nosuch'")
	r, err := p.Median(softmax, 2, 3)
	if err != nil || r.Seconds != 0.002 || r.CPUSeconds != 0.004 || r.Calls != 12 || r.Threads != 2 {
		t.Fatalf("%+v, %v", r, err)
	}
}

// TestNoAnswer: a peer that does not answer in time is stopped.
func TestNoAnswer(t *testing.T) {
	p := startFake(t, readyLine+`; while read line; do :; done`, Options{RequestTimeout: 300 * time.Millisecond})
	err := within(t, 30*time.Second, func() error { _, err := p.Median(softmax, 1, 3); return err })
	wantErr(t, err, "softmax [8 16]", "no answer within 300ms")
}

// TestCancel: cancelling the context stops a peer that is being waited
// for.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := startFake(t, readyLine+`; while read line; do :; done`, Options{Context: ctx})
	time.AfterFunc(200*time.Millisecond, cancel)
	err := within(t, 30*time.Second, func() error { _, err := p.Median(softmax, 1, 3); return err })
	wantErr(t, err, "softmax [8 16]", "ended without answering")
}

// TestBestTakesFastest: Best asks at each thread setting and keeps the
// fastest answer.
func TestBestTakesFastest(t *testing.T) {
	p := startFake(t, readyLine+`
read line; echo '{"seconds": 0.003, "cpu_seconds": 0.003, "calls": 5, "threads": 1}'
read line; echo '{"seconds": 0.001, "cpu_seconds": 0.002, "calls": 5, "threads": 2}'
read line; echo '{"seconds": 0.002, "cpu_seconds": 0.008, "calls": 5, "threads": 4}'
cat >/dev/null`, Options{})
	r, err := p.Best(softmax, 3)
	if err != nil || r.Seconds != 0.001 || r.Threads != 2 {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestTimeAndMedian(t *testing.T) {
	calls := 0
	r := Time(5, 0, func() { calls++ })
	if calls != 7 || r.Calls != 7 || len(r.Times) != 5 {
		t.Fatalf("calls %d, timing %+v", calls, r)
	}
	calls = 0
	r = Time(3, 30*time.Millisecond, func() { calls++; time.Sleep(time.Millisecond) })
	if calls != r.Calls || calls < 3+10 || r.Median < 1e-3 {
		t.Fatalf("calls %d, timing %+v", calls, r)
	}
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("median %v", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 3 {
		t.Fatalf("median %v", m)
	}
	if !math.IsNaN(Median(nil)) {
		t.Fatal("median of nothing")
	}
}

// realPeer starts the peer on the default interpreters, skipping t where
// none has torch.
func realPeer(t *testing.T) *Peer {
	t.Helper()
	p, err := Start(Options{Warmup: -1, RequestTimeout: 2 * time.Minute})
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestRealPeer runs every case of torch_peer.py at a tiny size on the cpu
// and the protocol's refusals, with the interpreter that has torch.
func TestRealPeer(t *testing.T) {
	p := realPeer(t)
	if p.Version() == "" || p.DefaultThreads() < 1 {
		t.Fatalf("version %q threads %d", p.Version(), p.DefaultThreads())
	}
	for _, c := range []Case{
		{Name: "softmax", Dims: []int{4, 8}}, {Name: "log_softmax", Dims: []int{4, 8}}, {Name: "layer_norm", Dims: []int{4, 8}},
		{Name: "softmax_grad", Dims: []int{4, 8}}, {Name: "log_softmax_grad", Dims: []int{4, 8}}, {Name: "layer_norm_grad", Dims: []int{4, 8}},
		{Name: "sum", Dims: []int{64}}, {Name: "sum_axis", Dims: []int{8, 8, 0}}, {Name: "sum_axis", Dims: []int{8, 8, 1}},
		{Name: "add", Dims: []int{64}}, {Name: "add", DType: "bf16", Dims: []int{64}},
		{Name: "conv_fwd", Dims: []int{2, 3, 8, 8, 4, 3, 3, 1}}, {Name: "conv_dgrad", Dims: []int{2, 3, 8, 8, 4, 5, 5, 0}},
		{Name: "conv_wgrad", Dims: []int{2, 3, 8, 8, 4, 5, 5, 0}},
		{Name: "mlp_step", Dims: []int{4, 0}}, {Name: "mlp_step", Dims: []int{4, 1}}, {Name: "cnn_step", Dims: []int{2, 0}},
	} {
		r, err := p.Median(c, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !(r.Seconds > 0) || r.Calls < 4 || r.Threads != 1 {
			t.Fatalf("%v: %+v", c, r)
		}
	}
	r, err := p.Best(Case{Name: "softmax", Dims: []int{4, 8}}, 2)
	if err != nil || !(r.Seconds > 0) {
		t.Fatalf("best: %+v, %v", r, err)
	}
	// Refusals name the case and leave the peer usable.
	_, err = p.Median(Case{Name: "nosuch", Dims: []int{1}}, 1, 2)
	wantErr(t, err, "nosuch [1]", "unknown case 'nosuch'")
	_, err = p.Median(Case{Name: "softmax", Dims: []int{4}}, 1, 2)
	wantErr(t, err, "softmax [4]", "takes 2 integer dimensions")
	_, err = p.Median(Case{Name: "softmax", DType: "u7", Dims: []int{4, 8}}, 1, 2)
	wantErr(t, err, "unknown dtype 'u7'")
	if !p.CUDA() {
		_, err = p.Median(Case{Name: "sum", Device: "cuda", Dims: []int{64}}, 0, 2)
		wantErr(t, err, "sum [64] f32 on cuda", "no CUDA device")
	}
	if _, err := p.Median(Case{Name: "sum", Dims: []int{64}}, 1, 2); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	p.Close()
	_, err = p.Median(softmax, 1, 2)
	wantErr(t, err, "softmax [8 16]", "closed")
}

// TestRealPeerKilled: the real peer killed mid-run gives an error naming
// the case.
func TestRealPeerKilled(t *testing.T) {
	p := realPeer(t)
	p.cmd.Process.Kill()
	err := within(t, 30*time.Second, func() error { _, err := p.Median(softmax, 1, 2); return err })
	wantErr(t, err, "softmax [8 16]", "the peer ended", "killed")
}
