package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// tinyBench shrinks the benchmark sizes and sample counts for the test.
func tinyBench(t *testing.T) {
	t.Helper()
	oldScale, oldMin, oldMax, oldT, oldMaxT := benchScale, minSamples, maxSamples, minTime, maxTime
	benchScale, minSamples, maxSamples, minTime, maxTime = 128, 1, 2, 0, time.Second
	oldRounds, oldIters, oldWarmup := kernelRounds, kernelIters, kernelWarmup
	kernelRounds, kernelIters, kernelWarmup = 1, 2, time.Millisecond
	t.Cleanup(func() {
		benchScale, minSamples, maxSamples, minTime, maxTime = oldScale, oldMin, oldMax, oldT, oldMaxT
		kernelRounds, kernelIters, kernelWarmup = oldRounds, oldIters, oldWarmup
	})
}

func TestBenchRejectsUnknownFamily(t *testing.T) {
	if _, _, err := execute(t, "bench", "nosuch"); err == nil || !strings.Contains(err.Error(), "unknown benchmark family") {
		t.Fatalf("err = %v", err)
	}
}

func TestBenchParsesFamiliesAndFlags(t *testing.T) {
	var got BenchConfig
	old := runBench
	runBench = func(c BenchConfig) error { got = c; return nil }
	t.Cleanup(func() { runBench = old })
	if _, _, err := execute(t, "bench", "--json", "--device", "flex", "matmul", "sum"); err != nil {
		t.Fatal(err)
	}
	if !got.JSON || got.Device != "flex" || strings.Join(got.Families, ",") != "matmul,sum" || got.Out == nil {
		t.Fatalf("config %+v", got)
	}
}

// TestBenchJSON runs every family at a tiny size and checks each line is
// one object with the documented fields and consistent rates.
func TestBenchJSON(t *testing.T) {
	tinyBench(t)
	out, _, err := execute(t, "bench", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	benches, seen := map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"bench", "shape", "backend", "dtype", "median_seconds"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("line %q lacks %q", l, k)
			}
		}
		if m["median_seconds"].(float64) <= 0 {
			t.Fatalf("line %q: non-positive median", l)
		}
		key := fmt.Sprint(m["bench"], " ", m["shape"], " ", m["backend"], " ", m["dtype"])
		if seen[key] {
			t.Fatalf("row %s twice in one run:\n%s", key, out)
		}
		seen[key] = true
		benches[m["bench"].(string)] = true
		if m["bench"] == "matmul" && m["backend"] == "cpu" {
			if _, ok := m["ratio_vs_gonum"]; !ok {
				t.Fatalf("matmul row without gonum ratio: %q", l)
			}
			shape := m["shape"].(string)
			var n float64
			for _, c := range shape {
				if c == 'x' {
					break
				}
				n = n*10 + float64(c-'0')
			}
			want := 2 * n * n * n / m["median_seconds"].(float64) / 1e9
			if g := m["gflops"].(float64); g < want*0.999 || g > want*1.001 {
				t.Fatalf("gflops %v, want %v from the median", g, want)
			}
		}
		if (m["bench"] == "add" || m["bench"] == "sum") && m["backend"] == "cpu" {
			if _, ok := m["ratio_vs_go_copy"]; !ok {
				t.Fatalf("%v row without go-copy ratio: %q", m["bench"], l)
			}
		}
	}
	for _, b := range []string{"matmul", "add", "sum", "conv2d", "conv_transpose2d", "softmax", "mnist-mlp-step"} {
		if !benches[b] {
			t.Fatalf("no %s result in\n%s", b, out)
		}
	}
}

func TestBenchTable(t *testing.T) {
	tinyBench(t)
	out, _, err := execute(t, "bench", "add")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "BENCH") || !strings.Contains(out, "go-copy") || !strings.Contains(out, "GB/s") {
		t.Fatalf("table:\n%s", out)
	}
}
