package nn

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// testNet is a small network with parameters and buffers.
func testNet(dev ember.Device) *Sequential {
	return NewSequential(NewConv2d(2, 3, 3, ember.ConvOptions{Padding: [2]int{1, 1}}, dev),
		NewBatchNorm(3, dev), Relu{}, Flatten{}, NewLinear(3*4*4, 5, dev), NewEmbedding(4, 2, dev))
}

func snapshot(m Module) map[string][]byte {
	all, _ := StateDict(m)
	out := map[string][]byte{}
	for _, p := range all {
		d := p.Param.Value.Data()
		out[p.Name] = append([]byte(d.DType.String()+":"), d.Bytes...)
	}
	return out
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dev := ember.Flex().Autodiff()
	dev.Seed(1)
	a := testNet(dev)
	// Run training steps so the BatchNorm buffers hold non-trivial values.
	x := ember.Randn([]int{4, 2, 4, 4}, dev)
	NewSequential(a.Modules[:5]...).Forward(x)
	NewSequential(a.Modules[:5]...).Forward(x.MulScalar(2))
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := Save(path, a); err != nil {
		t.Fatal(err)
	}
	dev.Seed(2)
	b := testNet(dev)
	if maps := snapshot(b); string(maps["0.weight"]) == string(snapshot(a)["0.weight"]) {
		t.Fatal("differently seeded networks are equal")
	}
	if err := Load(path, b); err != nil {
		t.Fatal(err)
	}
	sa, sb := snapshot(a), snapshot(b)
	if len(sa) != 10 {
		t.Errorf("%d tensors saved, want 10", len(sa))
	}
	for name, v := range sa {
		if string(sb[name]) != string(v) {
			t.Errorf("%s differs after Load", name)
		}
	}
	for _, p := range b.NamedParameters() {
		if !p.Param.Value.IsTracked() {
			t.Errorf("loaded parameter %s is not a tracked leaf", p.Name)
		}
	}
	for _, p := range NamedBuffers(b) {
		if p.Param.Value.IsTracked() {
			t.Errorf("loaded buffer %s is tracked", p.Name)
		}
	}
	// The file is a safetensors file with PyTorch's state-dict names.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tensors, err := LoadSafetensors(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0.bias", "0.weight", "1.bias", "1.num_batches_tracked", "1.running_mean", "1.running_var", "1.weight", "4.bias", "4.weight", "5.weight"}
	if got := mapsKeys(tensors); !slices.Equal(got, want) {
		t.Errorf("file holds %v", got)
	}
	// Loaded models compute the same function.
	SetTraining(a, false)
	SetTraining(b, false)
	ya := NewSequential(a.Modules[:5]...).Forward(x).Float64s()
	yb := NewSequential(b.Modules[:5]...).Forward(x).Float64s()
	assertClose(t, "output after load", yb, ya, 0)
}

func mapsKeys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestLoadErrors(t *testing.T) {
	dev := ember.Flex().Autodiff()
	dir := t.TempDir()
	save := func(name string, tensors map[string]*ember.TensorData) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := SaveSafetensors(f, tensors); err != nil {
			t.Fatal(err)
		}
		return path
	}
	m := NewSequential(NewLinear(3, 2, dev), NewBatchNorm(2, dev))
	full := map[string]*ember.TensorData{}
	all, _ := StateDict(m)
	for _, p := range all {
		full[p.Name] = p.Param.Value.Data()
	}
	variant := func(f func(map[string]*ember.TensorData)) map[string]*ember.TensorData {
		c := map[string]*ember.TensorData{}
		for k, v := range full {
			c[k] = v
		}
		f(c)
		return c
	}
	f32 := func(shape ...int) *ember.TensorData {
		return &ember.TensorData{Shape: shape, DType: ember.F32, Bytes: make([]byte, 4*numel(shape))}
	}
	cases := []struct {
		name, want string
		tensors    map[string]*ember.TensorData
	}{
		{"missing", `missing tensor "0.bias"`, variant(func(c map[string]*ember.TensorData) { delete(c, "0.bias") })},
		{"missing buffer", `missing tensor "1.running_var"`, variant(func(c map[string]*ember.TensorData) { delete(c, "1.running_var") })},
		{"extra", `unexpected tensor "2.weight"`, variant(func(c map[string]*ember.TensorData) { c["2.weight"] = f32(1) })},
		{"shape", `tensor "0.weight" has shape [3 2]`, variant(func(c map[string]*ember.TensorData) { c["0.weight"] = f32(3, 2) })},
		{"dtype", `tensor "1.weight" has dtype f64`, variant(func(c map[string]*ember.TensorData) {
			c["1.weight"] = &ember.TensorData{Shape: []int{2}, DType: ember.F64, Bytes: make([]byte, 16)}
		})},
	}
	before := snapshot(m)
	for _, c := range cases {
		err := Load(save(c.name, c.tensors), m)
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrMismatch naming %s", c.name, err, c.want)
		}
	}
	if err := Load(filepath.Join(dir, "absent"), m); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junk"), []byte("not a safetensors file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Load(filepath.Join(dir, "junk"), m); !errors.Is(err, ErrInvalidSafetensors) {
		t.Errorf("junk file: %v", err)
	}
	after := snapshot(m)
	for name, v := range before {
		if string(after[name]) != string(v) {
			t.Errorf("%s was modified by a failed Load", name)
		}
	}
	// The unmodified state dict loads.
	if err := Load(save("ok", full), m); err != nil {
		t.Errorf("loading the module's own tensors: %v", err)
	}
}
