package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestBenchBackends runs the backends family at a tiny size: each work
// item gives the cpu row first, then one row per other backend that
// initializes, in backendNames order, whose ratio vs cpu is cpu's median
// over its own; the backends that do not initialize are named, with the
// reason, in the cpu rows' note.
func TestBenchBackends(t *testing.T) {
	tinyBench(t)
	out, _, err := execute(t, "bench", "--json", "backends")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	var skipped []string
	for _, n := range backendNames {
		d, err := ember.ParseDevice(n)
		if err == nil {
			err = d.Init()
		}
		if err != nil {
			skipped = append(skipped, n)
			continue
		}
		want = append(want, d.String())
	}
	type row struct {
		Bench    string  `json:"bench"`
		Backend  string  `json:"backend"`
		Median   float64 `json:"median_seconds"`
		RatioCPU float64 `json:"ratio_vs_cpu"`
		Note     string  `json:"note"`
	}
	byBench := map[string][]row{}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if !slices.Contains(order, r.Bench) {
			order = append(order, r.Bench)
		}
		byBench[r.Bench] = append(byBench[r.Bench], r)
	}
	if !slices.Equal(order, []string{"backends-matmul", "backends-add", "backends-mnist-mlp-step"}) {
		t.Fatalf("benches %v", order)
	}
	for _, b := range order {
		rows := byBench[b]
		var got []string
		for _, r := range rows {
			got = append(got, r.Backend)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: backends %v, want %v", b, got, want)
		}
		cpu := rows[0]
		if cpu.RatioCPU != 0 {
			t.Errorf("%s: the cpu row has a ratio vs itself", b)
		}
		for _, s := range skipped {
			if !strings.Contains(cpu.Note, s+" skipped (") || strings.Contains(cpu.Note, "ember: ") || strings.Contains(cpu.Note, s+": init: ") {
				t.Errorf("%s: cpu note %q does not say why %s was skipped, or repeats the prefixes of the table", b, cpu.Note, s)
			}
		}
		for _, r := range rows[1:] {
			if w := cpu.Median / r.Median; math.Abs(r.RatioCPU-w) > 1e-9*w {
				t.Errorf("%s %s: ratio vs cpu %v, want %v from the medians", b, r.Backend, r.RatioCPU, w)
			}
		}
	}
}
