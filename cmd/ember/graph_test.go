package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// captureCNNStep captures one training step of a small CNN — conv2d,
// relu, max-pool, linear, cross-entropy, backward, Adam — on an autodiff
// capture device and writes the graph to a file; it returns the graph and
// the file's path.
func captureCNNStep(t *testing.T) (*ember.CapturedGraph, string) {
	t.Helper()
	dev := ember.Capture().Autodiff()
	host := ember.Flex()
	host.Seed(3)
	model := nn.NewSequential(
		nn.NewConv2d(1, 4, 3, ember.ConvOptions{}, host), nn.Relu{}, nn.NewMaxPool2d(2, 2),
		nn.Flatten{}, nn.NewLinear(4*3*3, 3, host))
	if err := nn.ToDevice(model, dev); err != nil {
		t.Fatal(err)
	}
	x := ember.Randn([]int{4, 1, 8, 8}, host).ToDevice(dev)
	y := ember.FromInts([]int{0, 2, 1, 2}, []int{4}, host).ToDevice(dev)
	g, err := dev.CaptureScope(func(s *ember.CaptureScope) ember.CompletedCaptureScope {
		loss := nn.CrossEntropy(model.Forward(x), y)
		grads := loss.Backward()
		ps := model.NamedParameters()
		optim.NewAdam(ps, optim.AdamConfig{LR: 0.01}).Step(grads)
		outs := []ember.TensorID{loss.ID()}
		for _, p := range ps {
			outs = append(outs, p.Param.Value.ID())
		}
		return s.Complete([]ember.TensorID{x.ID(), y.ID()}, outs)
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cnn_step.graph")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return g, path
}

// idList formats ids as the listing does: "%3 %4", "_" for 0.
func idList(ts []ember.TensorID) string {
	var s []string
	for _, t := range ts {
		if t == 0 {
			s = append(s, "_")
		} else {
			s = append(s, fmt.Sprintf("%%%d", t))
		}
	}
	return strings.Join(s, " ")
}

// `ember graph show` prints a header (inputs, values, outputs) and one line
// per op with its index, name, input ids, output ids, shape and dtype.
func TestGraphShow(t *testing.T) {
	g, path := captureCNNStep(t)
	out, _, err := execute(t, "graph", "show", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := fmt.Sprintf("graph %s: %d ops, 2 inputs, 4 values, 5 outputs", path, len(g.Operations))
	if lines[0] != header {
		t.Fatalf("header %q, want %q", lines[0], header)
	}
	want := []string{
		fmt.Sprintf("input 0 %%%d [4 1 8 8] f32", g.Inputs[0].ID),
		fmt.Sprintf("input 1 %%%d [4] i64", g.Inputs[1].ID),
	}
	for _, s := range []string{"[4 1 3 3] f32", "[4] f32", "[3 36] f32", "[3] f32"} {
		want = append(want, "value "+s)
	}
	want = append(want, fmt.Sprintf("output 0 %%%d [] f32", g.Outputs[0]))
	for i, s := range []string{"[4 1 3 3] f32", "[4] f32", "[3 36] f32", "[3] f32"} {
		want = append(want, fmt.Sprintf("output %d %%%d %s", i+1, g.Outputs[i+1], s))
	}
	var gotValues, wantValues []string
	for id, v := range g.Values {
		gotValues = append(gotValues, fmt.Sprintf("value %%%d %v %v", id, v.Shape, v.DType))
	}
	for i, w := range want {
		got := strings.Join(strings.Fields(lines[1+i]), " ")
		if strings.HasPrefix(w, "value ") { // compared as a set below
			wantValues = append(wantValues, got)
			continue
		}
		if got != w {
			t.Errorf("line %d %q, want %q", 1+i, got, w)
		}
	}
	slices.Sort(gotValues)
	slices.Sort(wantValues)
	if !slices.Equal(gotValues, wantValues) {
		t.Errorf("value lines %q, want %q", wantValues, gotValues)
	}
	ops := lines[1+len(want):]
	if len(ops) != len(g.Operations) {
		t.Fatalf("%d op lines, want %d:\n%s", len(ops), len(g.Operations), out)
	}
	names := map[string]int{}
	for i, line := range ops {
		r := g.Operations[i]
		f := strings.Fields(line)
		if f[0] != fmt.Sprint(i) {
			t.Fatalf("op line %d starts with %q", i, f[0])
		}
		names[f[1]]++
		if !strings.HasPrefix(f[1], r.Kind.String()) {
			t.Errorf("op %d named %q, its kind is %v", i, f[1], r.Kind)
		}
		typ := fmt.Sprintf("%v %v", r.Shape, r.DType)
		if len(r.Shape) == 0 {
			typ = "[] " + r.DType.String()
		}
		io := idList(r.Inputs) + " -> " + idList(r.Outputs) + " " + typ
		if len(r.Inputs) == 0 {
			io = "_ -> " + idList(r.Outputs) + " " + typ
		}
		if !strings.Contains(strings.Join(f, " "), io) {
			t.Errorf("op line %d %q lacks %q", i, line, io)
		}
	}
	for _, n := range []string{"conv2d", "binary.le", "where", "max_pool2d", "matmul", "log_softmax", "log_softmax_grad",
		"gather", "scatter_add", "max_pool2d_grad", "conv2d_weight_grad", "adam_step"} {
		if names[n] == 0 {
			t.Errorf("no %s op in the listing (names %v)", n, names)
		}
	}
	if names["adam_step"] != 4 {
		t.Errorf("%d adam_step lines, want 4", names["adam_step"])
	}
	if !regexp.MustCompile(`adam_step +%\d+ %\d+ %\d+ %\d+ +-> +%\d+ %\d+ %\d+ +\[4 1 3 3\] f32 +lr=0.01 beta1=0.9 beta2=0.999 eps=1e-08 step=1`).MatchString(out) {
		t.Errorf("no adam_step line with four inputs, three outputs and its hyperparameters:\n%s", out)
	}
	if !regexp.MustCompile(`\n0 +conv2d +%\d+ %\d+ +-> +%\d+ +\[4 4 6 6\] f32 +stride=\[1 1\] padding=\[0 0\] dilation=\[1 1\] groups=1\n`).MatchString(out) {
		t.Errorf("the first op is not conv2d with its options:\n%s", out)
	}
}

// `ember graph show --dot` prints a Graphviz digraph: one node per input,
// value, op and output, one edge per use of a tensor.
func TestGraphShowDot(t *testing.T) {
	g, path := captureCNNStep(t)
	out, _, err := execute(t, "graph", "show", "--dot", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if lines[0] != "digraph ember {" || lines[len(lines)-1] != "}" {
		t.Fatalf("not a digraph:\n%s", out)
	}
	node := regexp.MustCompile(`^  (\w+) \[(.*)\];$`)
	edge := regexp.MustCompile(`^  (\w+) -> (\w+)( \[label=".*"\])?;$`)
	nodes := map[string]string{}
	edges := 0
	var ends [][2]string
	for _, l := range lines[1 : len(lines)-1] {
		if m := edge.FindStringSubmatch(l); m != nil {
			edges++
			ends = append(ends, [2]string{m[1], m[2]})
			continue
		}
		if m := node.FindStringSubmatch(l); m != nil {
			if m[1] != "node" {
				nodes[m[1]] = m[2]
			}
			continue
		}
		if strings.TrimSpace(l) != "rankdir=TB;" {
			t.Errorf("unexpected line %q", l)
		}
	}
	count := func(pattern string) int {
		n := 0
		for name, attrs := range nodes {
			if regexp.MustCompile(pattern).MatchString(name + " " + attrs) {
				n++
			}
		}
		return n
	}
	if n := count(`^op\d+ `); n != len(g.Operations) {
		t.Errorf("%d op nodes, want %d", n, len(g.Operations))
	}
	if n := count(`shape=ellipse`); n != 2 {
		t.Errorf("%d input nodes, want 2", n)
	}
	if n := count(`style=dashed`); n != 4 {
		t.Errorf("%d value nodes, want 4", n)
	}
	if n := count(`^out\d+ .*doubleoctagon`); n != 5 {
		t.Errorf("%d output nodes, want 5", n)
	}
	uses := len(g.Outputs)
	for i, r := range g.Operations {
		for _, id := range r.Inputs {
			if id != 0 {
				uses++
			}
		}
		if a := nodes[fmt.Sprintf("op%d", i)]; !strings.Contains(a, fmt.Sprintf(`label="%d: %s`, i, r.Kind)) {
			t.Errorf("op%d [%s] does not name op %d (%v)", i, a, i, r.Kind)
		}
	}
	if edges != uses {
		t.Errorf("%d edges, want %d (one per use of a tensor and per output)", edges, uses)
	}
	for _, e := range ends {
		if _, ok := nodes[e[0]]; !ok {
			t.Errorf("edge from undeclared node %s", e[0])
		}
		if _, ok := nodes[e[1]]; !ok {
			t.Errorf("edge to undeclared node %s", e[1])
		}
	}
}

// `ember graph show` reports missing, malformed and absent files.
func TestGraphShowErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := execute(t, "graph", "show", filepath.Join(dir, "missing.graph")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.graph")
	if err := os.WriteFile(bad, []byte("not a graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := execute(t, "graph", "show", bad); !errors.Is(err, ir.ErrFormat) {
		t.Errorf("malformed file: %v", err)
	}
	if _, _, err := execute(t, "graph", "show"); err == nil {
		t.Error("no file argument was accepted")
	}
	if out, _, err := execute(t, "graph"); err != nil || !strings.Contains(out, "show") {
		t.Errorf("ember graph: %q, %v; want the help listing show", out, err)
	}
}
