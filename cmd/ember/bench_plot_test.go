package main

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchPlot draws made-up results and checks the comparisons drawn,
// the image, the axis ticks and the refusals.
func TestBenchPlot(t *testing.T) {
	rows := []benchResult{
		{Bench: "matmul", Shape: "256x256x256", Backend: "cpu", DType: "f32", GFLOPS: 80, Ratios: map[string]float64{"openblas": 0.8, "gonum": 3.5}},
		{Bench: "matmul", Shape: "256x256x256", Backend: "openblas", DType: "f32", GFLOPS: 100},
		{Bench: "add", Shape: "16777216", Backend: "cpu", DType: "f32", GBPS: 12, Ratios: map[string]float64{"go-copy": 1.1}},
		{Bench: "gelu-chain", Shape: "16777216", Backend: "cpu", DType: "f32", GBPS: 9, Ratios: map[string]float64{"cpu-op-by-op": 4.2}},
		{Bench: "softmax", Shape: "4096x1024", Backend: "cpu", DType: "f32", GBPS: 10},
	}
	cs := comparisons(rows)
	want := []string{"matmul 256x256x256 f32: cpu vs gonum", "matmul 256x256x256 f32: cpu vs openblas", "add 16777216 f32: cpu vs go-copy", "gelu-chain 16777216 f32: cpu vs cpu-op-by-op"}
	if len(cs) != len(want) {
		t.Fatalf("%d comparisons, want %d: %+v", len(cs), len(want), cs)
	}
	for i, c := range cs {
		if c.label != want[i] {
			t.Errorf("comparison %d: %q, want %q", i, c.label, want[i])
		}
	}
	if peerColor("cpu-op-by-op") != peerOpByOp || peerColor("cpu-composed") != peerOpByOp || peerColor("openblas") == peerColor("gonum") ||
		peerColor("torch") == peerOther || peerColor("torch") == peerOpByOp {
		t.Error("peer colours")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bench.png")
	if err := writeBenchPlot(path, "cpu", rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 11*96 || b.Dy() < 150 {
		t.Fatalf("image %v", b)
	}
	var labels []string
	for _, tk := range (ratioTicks{}).Ticks(0.05, 9) {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, " ") != "1/16× 1/8× 1/4× 0.5× 1× 2× 4× 8×" {
		t.Errorf("ticks of [0.05, 9]: %v", labels)
	}
	for _, tk := range (ratioTicks{}).Ticks(1e-3, 1e4) {
		if l := math.Log10(tk.Value); math.Abs(l-math.Round(l)) > 1e-12 {
			t.Errorf("ticks of a wide range: %v is not a power of ten", tk.Value)
		}
	}
	if err := writeBenchPlot(filepath.Join(dir, "x.png"), "cpu", rows[4:]); err == nil || !strings.Contains(err.Error(), "peer") {
		t.Errorf("no peers: %v", err)
	}
	if err := writeBenchPlot(filepath.Join(dir, "x.gif"), "cpu", rows); err == nil {
		t.Error(".gif accepted")
	}
	if _, _, err := execute(t, "bench", "--plot", filepath.Join(dir, "x.bmp"), "add"); err == nil || !strings.Contains(err.Error(), "--plot") {
		t.Errorf("--plot x.bmp: %v", err)
	}
}

// TestBenchPlotRun runs two families at a tiny size with --plot.
func TestBenchPlotRun(t *testing.T) {
	tinyBench(t)
	path := filepath.Join(t.TempDir(), "bench.svg")
	out, _, err := execute(t, "bench", "--device", "cpu", "--plot", path, "add", "sum")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(out, "wrote the comparison with the peers to "+path) {
		t.Fatalf("plot file %d bytes (%v), output:\n%s", len(b), err, out)
	}
}
