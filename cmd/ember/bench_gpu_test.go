package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// The vs-cuda family times the sgemm and the addition on the named device
// and, where it runs, cuda:0: one row per device and kernel with a
// positive rate, the device's ratio to cuda:0 or a note saying why cuda:0
// is missing. It runs only when named.
func TestBenchVsCUDA(t *testing.T) {
	if err := ember.Vulkan(ember.DefaultKind).Init(); err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	tinyBench(t)
	out, _, err := execute(t, "bench", "--json", "--device", "vulkan", "vs-cuda")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		rows[m["bench"].(string)] = append(rows[m["bench"].(string)], m)
	}
	cudaRuns := ember.CUDA(0).Init() == nil
	for _, b := range []string{"vs-cuda-sgemm", "vs-cuda-add"} {
		rs := rows[b]
		if len(rs) == 0 || !strings.HasPrefix(rs[0]["backend"].(string), "vulkan:") {
			t.Fatalf("%s: rows %v, want the vulkan device first", b, rs)
		}
		rate, _ := rs[0]["gflops"].(float64)
		if r, ok := rs[0]["gbps"].(float64); ok {
			rate = r
		}
		if !(rate > 0) {
			t.Errorf("%s: rate %v", b, rs[0])
		}
		switch _, hasRatio := rs[0]["ratio_vs_cuda:0"]; {
		case cudaRuns && (len(rs) != 2 || !hasRatio):
			t.Errorf("%s: %v, want a cuda:0 row and the ratio to it", b, rs)
		case !cudaRuns && !strings.Contains(rs[0]["note"].(string), "cuda:0 skipped"):
			t.Errorf("%s: note %v, want it to say why cuda:0 is missing", b, rs[0]["note"])
		}
	}
	if out, _, err := execute(t, "bench", "--json", "--device", "flex", "sum"); err != nil || strings.Contains(out, "vs-cuda") {
		t.Errorf("a run that does not name vs-cuda ran it (%v)", err)
	}
}
