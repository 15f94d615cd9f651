// Package torchpeer measures PyTorch beside Ember in the same run: it
// starts a Python interpreter that has torch on the peer code embedded
// here (torch_peer.py, the one copy of the PyTorch side of Ember's kernel
// comparisons; the scripts of bench/ import it) and asks it for the median
// seconds of repeated calls of a named case at a thread count, on the cpu
// or on cuda. `ember bench kernels` and the benchmarks of backend/cpu use
// it, timing their own side with Time so that both sides follow one
// discipline: Warmup of warm-up calls, then the median of the timed calls.
//
// No exchange with the peer can hang: each waits at most the Options'
// timeouts, after which the peer is stopped; an error names the case, and a
// peer that died, answered something that is not an answer or did not
// answer in time is not used again.
package torchpeer

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// Source is the peer's Python code (torch_peer.py): the cases, the timing
// loop and the --serve protocol its doc describes.
//
//go:embed torch_peer.py
var Source string

// Warmup is how long each side calls a function before timing it. After
// an idle gap of 200 ms or more (the other side's turn), a 2-vCPU machine
// was seen to run two-worker kernels at one worker's speed for 30–50 ms
// (bench/NOTES.md, "half-speed phases"): two warm-up calls left those
// inside the median.
const Warmup = 100 * time.Millisecond

// Env is the environment variable naming the Python interpreter to run
// the peer with; when it is set (non-empty), no other interpreter is
// tried.
const Env = "EMBER_TORCH_PYTHON"

// Interpreters returns the interpreters Start tries by default, in order:
// $EMBER_TORCH_PYTHON alone when set, else python3 (from PATH) and
// /usr/bin/python3.
func Interpreters() []string {
	if py := os.Getenv(Env); py != "" {
		return []string{py}
	}
	return []string{"python3", "/usr/bin/python3"}
}

// Case is one measurement the peer knows: a case of torch_peer.py's CASES
// (softmax, log_softmax, layer_norm and their _grad kinds over the last
// axis of [rows, cols]; sum [n]; sum_axis [rows, cols, axis]; add [n];
// conv_fwd, conv_dgrad and conv_wgrad [n, cin, h, w, cout, kh, kw, pad];
// mlp_step and cnn_step [batch, foreach]) with its dimensions, on a device
// in a dtype.
type Case struct {
	// Name is the case's name in CASES.
	Name string
	// Device is "cpu" ("" means cpu) or "cuda" (each call then ends with
	// torch.cuda.synchronize()).
	Device string
	// DType is "f32" ("" means f32), "bf16" or "f64".
	DType string
	// Dims are the case's dimensions, as many as it takes.
	Dims []int
}

func (c Case) device() string { return cmp(c.Device, "cpu") }
func (c Case) dtype() string  { return cmp(c.DType, "f32") }

func cmp(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// String names the case in errors: "softmax [4096 1024] f32 on cpu".
func (c Case) String() string {
	return fmt.Sprintf("%s %v %s on %s", c.Name, c.Dims, c.dtype(), c.device())
}

// Options configure Start. The zero value runs Interpreters with the
// default timeouts.
type Options struct {
	// Pythons are the interpreters to try, in order (nil: Interpreters()).
	Pythons []string
	// Context, when cancelled, stops the peer (nil: never).
	Context context.Context
	// StartTimeout bounds the wait for an interpreter's first line
	// (importing torch); 0 means one minute.
	StartTimeout time.Duration
	// RequestTimeout bounds the wait for each answer; 0 means five
	// minutes.
	RequestTimeout time.Duration
	// Warmup is the peer's warm-up before the timed calls of each request;
	// 0 means the package's Warmup, a negative value none (two calls).
	Warmup time.Duration
}

// Result is the peer's answer to one request.
type Result struct {
	// Seconds is the median seconds of the timed calls.
	Seconds float64
	// CPUSeconds is the peer process's CPU seconds per call (all
	// threads), the warm-up calls included.
	CPUSeconds float64
	// Calls is the number of calls made, the warm-up included.
	Calls int
	// Threads is the thread count PyTorch ran with.
	Threads int
}

// Peer is a running peer process. Its methods may be called from several
// goroutines; requests are answered one at a time.
type Peer struct {
	python   string
	version  string
	threads  int
	cuda     bool
	warmup   float64
	timeout  time.Duration
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *lineWriter
	stderr   *tailBuffer
	waitDone chan struct{} // closed when Wait returned
	waitErr  error
	stop     sync.Once

	mu  sync.Mutex
	err error // set once the peer is unusable
}

// Start runs the peer on the first interpreter of opts.Pythons that
// answers as one with torch does. When none does, the error lists each
// interpreter tried and why it failed.
func Start(opts Options) (*Peer, error) {
	pythons := opts.Pythons
	if pythons == nil {
		pythons = Interpreters()
	}
	if len(pythons) == 0 {
		return nil, errors.New("torchpeer: no Python interpreter to try")
	}
	var tried []string
	for _, py := range pythons {
		p, err := start(py, opts)
		if err == nil {
			return p, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", py, err))
	}
	hint := "set " + Env + " to an interpreter that has torch"
	if opts.Pythons == nil && os.Getenv(Env) != "" {
		hint = Env + " names the only interpreter tried"
	}
	return nil, fmt.Errorf("torchpeer: no Python with torch (tried %s; %s)", strings.Join(tried, "; "), hint)
}

// ready is the peer's first line.
type ready struct {
	Ready   bool   `json:"ready"`
	Torch   string `json:"torch"`
	Threads int    `json:"threads"`
	CUDA    bool   `json:"cuda"`
}

func start(py string, opts Options) (*Peer, error) {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	cmd := exec.CommandContext(ctx, py, "-c", Source, "--serve")
	// A process the peer left behind holding its output open does not
	// keep Wait waiting.
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p := &Peer{python: py, cmd: cmd, in: in, stderr: &tailBuffer{max: 4096}, waitDone: make(chan struct{}),
		out: &lineWriter{lines: make(chan string, 16), done: make(chan struct{})}}
	cmd.Stdout, cmd.Stderr = p.out, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.waitDone)
	}()
	switch {
	case opts.Warmup == 0:
		p.warmup = Warmup.Seconds()
	case opts.Warmup > 0:
		p.warmup = opts.Warmup.Seconds()
	}
	p.timeout = opts.RequestTimeout
	if p.timeout <= 0 {
		p.timeout = 5 * time.Minute
	}
	startTimeout := opts.StartTimeout
	if startTimeout <= 0 {
		startTimeout = time.Minute
	}
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	for {
		line, err := p.next(deadline.C)
		if err != nil {
			p.kill()
			if err == errTimeout {
				return nil, fmt.Errorf("not ready after %v (importing torch); stopped%s", startTimeout, p.stderrTail())
			}
			return nil, p.ended(err, "before it was ready")
		}
		var r ready
		if json.Unmarshal([]byte(line), &r) != nil || !r.Ready {
			continue // something the interpreter printed before its first line
		}
		p.version, p.threads, p.cuda = r.Torch, r.Threads, r.CUDA
		return p, nil
	}
}

// next returns the peer's next line of output, or an *endedError when the
// process ended, or errTimeout when timeout fired.
func (p *Peer) next(timeout <-chan time.Time) (string, error) {
	select {
	case l := <-p.out.lines:
		return l, nil
	case <-p.waitDone:
		select {
		case l := <-p.out.lines: // written before the end
			return l, nil
		default:
		}
		status := "exit status 0"
		if p.waitErr != nil {
			status = p.waitErr.Error()
		}
		return "", &endedError{status}
	case <-timeout:
		return "", errTimeout
	}
}

// errTimeout is next's error when its timeout fired.
var errTimeout = errors.New("timeout")

// endedError is next's error when the process ended.
type endedError struct{ status string }

func (e *endedError) Error() string { return "the peer ended (" + e.status + ")" }

// ended describes err, an error of next, as what happened when, with the
// last line of the peer's standard error.
func (p *Peer) ended(err error, when string) error {
	if e, ok := err.(*endedError); ok {
		return fmt.Errorf("the peer ended %s (%s)%s", when, e.status, p.stderrTail())
	}
	return fmt.Errorf("%v %s%s", err, when, p.stderrTail())
}

// kill stops the process and waits for it.
func (p *Peer) kill() {
	p.stop.Do(func() {
		close(p.out.done)
		if p.cmd.Process != nil {
			p.cmd.Process.Kill()
		}
	})
	<-p.waitDone
}

// stderrTail is ": " and the last line of the peer's standard error, or
// "" when it wrote none.
func (p *Peer) stderrTail() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + s
}

// Python is the interpreter the peer runs on.
func (p *Peer) Python() string { return p.python }

// Version is the peer's torch version.
func (p *Peer) Version() string { return p.version }

// DefaultThreads is PyTorch's default thread count in the peer.
func (p *Peer) DefaultThreads() int { return p.threads }

// CUDA reports whether the peer's torch has a CUDA device.
func (p *Peer) CUDA() bool { return p.cuda }

// ThreadSettings are the thread counts Best tries on the cpu: 1, 2 and
// PyTorch's default, each once.
func (p *Peer) ThreadSettings() []int {
	s := []int{1, 2}
	if !slices.Contains(s, p.threads) && p.threads > 0 {
		s = append(s, p.threads)
	}
	return s
}

// request is one line to the peer.
type request struct {
	Case    string  `json:"case"`
	Device  string  `json:"device"`
	DType   string  `json:"dtype"`
	Dims    []int   `json:"dims"`
	Threads int     `json:"threads"`
	Iters   int     `json:"iters"`
	Warmup  float64 `json:"warmup"`
}

// answer is one line from the peer.
type answer struct {
	Seconds    *float64 `json:"seconds"`
	CPUSeconds float64  `json:"cpu_seconds"`
	Calls      int      `json:"calls"`
	Threads    int      `json:"threads"`
	Error      *string  `json:"error"`
}

// Median asks for the median seconds of iters calls of c at threads
// threads (0: PyTorch's default; ignored on cuda) after the warm-up. The
// error names c; after one that is not the peer's own report (an unknown
// case, a device it lacks, an exception in the case), the peer is stopped
// and every later call fails.
func (p *Peer) Median(c Case, threads, iters int) (Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return Result{}, fmt.Errorf("torchpeer: %v: %w", c, p.err)
	}
	if iters < 1 {
		return Result{}, fmt.Errorf("torchpeer: %v: %d timed calls; at least one is needed", c, iters)
	}
	dims := c.Dims
	if dims == nil {
		dims = []int{}
	}
	b, err := json.Marshal(request{Case: c.Name, Device: c.device(), DType: c.dtype(), Dims: dims, Threads: threads, Iters: iters, Warmup: p.warmup})
	if err != nil {
		return Result{}, fmt.Errorf("torchpeer: %v: %w", c, err)
	}
	fail := func(err error) (Result, error) {
		p.err = err
		p.kill()
		return Result{}, fmt.Errorf("torchpeer: %v: %w", c, err)
	}
	ended := func(err error, when string) (Result, error) {
		if err == errTimeout {
			return fail(fmt.Errorf("no answer within %v; the peer was stopped", p.timeout))
		}
		p.kill()
		return fail(p.ended(err, when))
	}
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	if _, werr := p.in.Write(append(b, '\n')); werr != nil {
		// The peer no longer reads: it ended, or will be stopped.
		if _, err := p.next(timer.C); err != nil {
			return ended(err, "before the request could be sent")
		}
		return fail(fmt.Errorf("the request could not be sent (%v); the peer was stopped", werr))
	}
	line, err := p.next(timer.C)
	if err != nil {
		return ended(err, "without answering")
	}
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		return fail(fmt.Errorf("the peer answered %q, which is not an answer; it was stopped", clip(line)))
	}
	if a.Error != nil {
		return Result{}, fmt.Errorf("torchpeer: %v: the peer reported: %s", c, *a.Error)
	}
	if a.Seconds == nil || !(*a.Seconds > 0) || math.IsInf(*a.Seconds, 0) || a.Calls < iters {
		return fail(fmt.Errorf("the peer answered %q, which is not a valid answer; it was stopped", clip(line)))
	}
	return Result{Seconds: *a.Seconds, CPUSeconds: a.CPUSeconds, Calls: a.Calls, Threads: a.Threads}, nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Best asks for the median of iters calls of c at each of ThreadSettings
// (on cuda only at PyTorch's default) and returns the fastest answer.
func (p *Peer) Best(c Case, iters int) (Result, error) {
	settings := p.ThreadSettings()
	if c.device() == "cuda" {
		settings = []int{0}
	}
	var best Result
	for _, n := range settings {
		r, err := p.Median(c, n, iters)
		if err != nil {
			return Result{}, err
		}
		if best.Seconds == 0 || r.Seconds < best.Seconds {
			best = r
		}
	}
	return best, nil
}

// Close asks the peer to stop and waits for it (stopping it after a few
// seconds).
func (p *Peer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = errors.New("the peer was closed")
	}
	fmt.Fprintln(p.in, `{"quit": true}`)
	p.in.Close()
	select {
	case <-p.waitDone:
	case <-time.After(5 * time.Second):
	}
	p.kill()
	return nil
}

// lineWriter hands each line written to it to lines, dropping them once
// done is closed.
type lineWriter struct {
	lines   chan string
	done    chan struct{}
	partial []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := slices.Index(b, '\n')
		if i < 0 {
			w.partial = append(w.partial, b...)
			if len(w.partial) > 1<<20 {
				w.partial = w.partial[:0] // no answer is that long
			}
			return n, nil
		}
		line := string(append(w.partial, b[:i]...))
		w.partial, b = w.partial[:0], b[i+1:]
		select {
		case w.lines <- line:
		case <-w.done:
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// Timing is what Time measured.
type Timing struct {
	// Median is the median seconds of the timed calls.
	Median float64
	// Calls is the number of calls made, the warm-up included.
	Calls int
	// Times are the timed calls' seconds, in order.
	Times []float64
}

// Time calls f for warmup (at least twice), then times iters calls of it
// (at least one): the Go side of the discipline the peer follows.
func Time(iters int, warmup time.Duration, f func()) Timing {
	iters = max(iters, 1)
	var r Timing
	for t0 := time.Now(); r.Calls < 2 || time.Since(t0) < warmup; r.Calls++ {
		f()
	}
	r.Times = make([]float64, iters)
	for i := range r.Times {
		t0 := time.Now()
		f()
		r.Times[i] = time.Since(t0).Seconds()
	}
	r.Calls += iters
	r.Median = Median(r.Times)
	return r
}

// Median is the median of v (the upper one of an even count; NaN for
// none), v left unchanged.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
