package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/torchpeer"
)

// kernelRows are the kernels family's rows on the cpu at the tests' scale,
// and whether each has a PyTorch peer.
var kernelRows = map[string]bool{
	"softmax": true, "log-softmax": true, "layer-norm": true,
	"sum-axis0": false, "sum-axis1": false, "adam-step": false, "mnist-mlp-step": true,
	"mnist-conv1-fwd": true, "mnist-conv1-dgrad": true, "mnist-conv1-wgrad": true,
	"mnist-conv2-fwd": true, "mnist-conv2-dgrad": true, "mnist-conv2-wgrad": true,
}

// kernelsJSON runs `ember bench --json kernels` at a tiny size and returns
// Ember's rows by bench name (the peers' rows by name and backend in
// peers) and the standard error.
func kernelsJSON(t *testing.T) (rows map[string]map[string]any, peers map[string]map[string]any, stderr string) {
	t.Helper()
	tinyBench(t)
	out, errOut, err := execute(t, "bench", "--json", "kernels")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	rows, peers = map[string]map[string]any{}, map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if !(m["median_seconds"].(float64) > 0) {
			t.Fatalf("line %q: no positive median", l)
		}
		name := m["bench"].(string)
		if m["backend"] == "cpu" {
			rows[name] = m
		} else {
			peers[name+"/"+m["backend"].(string)] = m
		}
	}
	for name := range kernelRows {
		if rows[name] == nil {
			t.Errorf("no cpu row %s in\n%s", name, out)
		}
	}
	for name, r := range rows {
		if _, ok := kernelRows[name]; !ok {
			t.Errorf("unexpected row %s: %v", name, r)
		}
	}
	// The peers that do not depend on PyTorch.
	for _, name := range []string{"sum-axis0", "sum-axis1"} {
		ratio(t, rows[name], "go_copy")
		if peers[name+"/go-copy"] == nil {
			t.Errorf("%s: no go-copy row", name)
		}
	}
	ratio(t, rows["adam-step"], "cpu_composed")
	if peers["adam-step/cpu-composed"] == nil {
		t.Error("adam-step: no composed row")
	}
	return rows, peers, errOut
}

// ratio returns row's positive, finite ratio to peer, failing t otherwise.
func ratio(t *testing.T, row map[string]any, peer string) float64 {
	t.Helper()
	v, ok := row["ratio_vs_"+peer].(float64)
	if !ok || !(v > 0) || math.IsInf(v, 0) {
		t.Fatalf("%v: ratio_vs_%s %v", row["bench"], peer, row["ratio_vs_"+peer])
	}
	return v
}

// TestBenchKernelsWithoutTorch: with no interpreter that has torch, every
// row is there without a PyTorch ratio, one line says why, and the
// command succeeds.
func TestBenchKernelsWithoutTorch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent-python")
	t.Setenv(torchpeer.Env, missing)
	rows, peers, errOut := kernelsJSON(t)
	for name, r := range rows {
		if _, ok := r["ratio_vs_torch"]; ok {
			t.Errorf("%s has a torch ratio without torch: %v", name, r)
		}
	}
	for k := range peers {
		if strings.HasSuffix(k, "/torch") {
			t.Errorf("a torch row without torch: %s", k)
		}
	}
	if n := strings.Count(errOut, "kernels: rows without the PyTorch peer"); n != 1 || !strings.Contains(errOut, missing) {
		t.Fatalf("%d notes in stderr %q", n, errOut)
	}

	// The table prints the note after the rows.
	out, _, err := execute(t, "bench", "kernels")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "kernels: rows without the PyTorch peer: ") || !strings.Contains(last, torchpeer.Env) {
		t.Fatalf("last line %q of\n%s", last, out)
	}
	if !strings.Contains(out, "layer-norm") || !strings.Contains(out, "go-copy") {
		t.Fatalf("table:\n%s", out)
	}

	// --plot draws the peers there are (Go's copy, the composed Adam).
	plot := filepath.Join(t.TempDir(), "kernels.svg")
	if out, _, err = execute(t, "bench", "--plot", plot, "kernels"); err != nil || !strings.Contains(out, "wrote the comparison") {
		t.Fatalf("--plot: %v\n%s", err, out)
	}
	if svg, err := os.ReadFile(plot); err != nil || !strings.Contains(string(svg), "adam-step") {
		t.Fatalf("plot: %v", err)
	}
}

// TestBenchKernelsWithTorch: with PyTorch (skipped without), every row
// that has a PyTorch peer carries a positive, finite ratio to it, and the
// peer's row says which setting was fastest.
func TestBenchKernelsWithTorch(t *testing.T) {
	p, err := torchpeer.Start(torchpeer.Options{})
	if err != nil {
		t.Skip(err)
	}
	p.Close()
	rows, peers, errOut := kernelsJSON(t)
	if errOut != "" {
		t.Errorf("stderr %q", errOut)
	}
	for name, withTorch := range kernelRows {
		if !withTorch {
			continue
		}
		ratio(t, rows[name], "torch")
		peer := peers[name+"/torch"]
		if peer == nil {
			t.Fatalf("%s: no torch row", name)
		}
		if note, _ := peer["note"].(string); !strings.Contains(note, "on cpu; fastest per round: ") {
			t.Errorf("%s: torch note %q", name, note)
		}
		if r := rows[name]; r["shape"] != peer["shape"] {
			t.Errorf("%s: shapes %v and %v", name, r["shape"], peer["shape"])
		}
	}
}

// TestWithPeerRatios checks the ratios by hand: by rate where both rows
// have one, else by time.
func TestWithPeerRatios(t *testing.T) {
	row := benchResult{Backend: "cpu", Median: 2e-3, GBPS: 8}
	rows := withPeerRatios(row,
		benchResult{Backend: "go-copy", Median: 1e-3, GBPS: 32},
		benchResult{Backend: "torch", Median: 3e-3},
		benchResult{Backend: "broken"})
	got := rows[0].Ratios
	if len(rows) != 4 || len(got) != 2 || got["go-copy"] != 0.25 || math.Abs(got["torch"]-1.5) > 1e-12 {
		t.Fatalf("ratios %v", got)
	}
	if s := describeWins(map[string]int{"2 threads": 1, "1 thread": 4}); s != "1 thread in 4 rounds, 2 threads in 1" {
		t.Fatalf("describeWins: %q", s)
	}
}

// TestBenchRoofline runs the CUDA rows on the cpu at a tiny size: Ember's
// side of each, and PyTorch's cuda cases refused by a torch without CUDA
// (a note on the row, no failure).
func TestBenchRoofline(t *testing.T) {
	tinyBench(t)
	benchScale = 1 << 12
	b, err := newBencher(BenchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.closePeers()
	var got []string
	for _, k := range roofline(b) {
		rows := b.measure(k)
		r := rows[0]
		got = append(got, r.Bench+" "+r.DType)
		if !(r.Median > 0) || !(r.rate() > 0) {
			t.Fatalf("%+v", r)
		}
		if p := b.torch; p != nil && !p.CUDA() && !strings.Contains(r.Note, "torch skipped: torchpeer: ") {
			t.Errorf("%s: note %q", r.Bench, r.Note)
		}
		if p := b.torch; p != nil && !p.CUDA() && len(rows) != 1 {
			t.Errorf("%s: peer rows %+v", r.Bench, rows[1:])
		}
	}
	if want := "sum f32,sum-axis0 f32,sum-axis1 f32,softmax f32,add bf16,conv2d f32,conv2d bf16"; strings.Join(got, ",") != want {
		t.Fatalf("rows %q, want %q", strings.Join(got, ","), want)
	}
	if kernelCUDA(b) != nil {
		t.Fatal("CUDA rows on the cpu")
	}
}

// TestBenchKernelRowFails: a row Ember cannot run gives a row whose note
// says why instead of failing the family.
func TestBenchKernelRowFails(t *testing.T) {
	tinyBench(t)
	b, err := newBencher(BenchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	x := ember.Zeros([]int{2, 3}, b.dev)
	rows := b.measureOrNote(kernelRow{bench: "bad", shape: "2x3", dtype: "f32", run: func() { x.Matmul(x) }})
	if len(rows) != 1 || rows[0].Median != 0 || !strings.HasPrefix(rows[0].Note, "failed: ") || !strings.Contains(rows[0].Note, "matmul") {
		t.Fatalf("%+v", rows)
	}
}
