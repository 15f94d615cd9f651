package nn

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// TestSaveToLoadFrom round-trips a module and metadata through a buffer.
func TestSaveToLoadFrom(t *testing.T) {
	dev := ember.Flex().Autodiff()
	dev.Seed(1)
	a := testNet(dev)
	meta := map[string]string{"epoch": "3", "note": "ünïcode"}
	var buf bytes.Buffer
	if err := SaveTo(&buf, a, meta); err != nil {
		t.Fatal(err)
	}
	dev.Seed(2)
	b := testNet(dev)
	res, err := LoadFrom(bytes.NewReader(buf.Bytes()), b, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(res.Metadata, meta) || len(res.MissingKeys)+len(res.UnexpectedKeys) != 0 {
		t.Fatalf("result %+v, want metadata %v and nothing missing", res, meta)
	}
	if sa, sb := snapshot(a), snapshot(b); !maps.EqualFunc(sa, sb, bytes.Equal) {
		t.Fatal("tensors differ after SaveTo/LoadFrom")
	}
	// The file form keeps the metadata too.
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := SaveFile(path, a, meta); err != nil {
		t.Fatal(err)
	}
	if res, err := LoadFile(path, b, LoadOptions{}); err != nil || !maps.Equal(res.Metadata, meta) {
		t.Fatalf("LoadFile: %v, %+v", err, res)
	}
}

// TestLoadNonStrict loads a model into one whose last layer sits at
// another position: the shared tensors load, the rest are reported
// (PyTorch's missing_keys and unexpected_keys) and keep their values.
func TestLoadNonStrict(t *testing.T) {
	dev := ember.Flex().Autodiff()
	dev.Seed(1)
	src := NewSequential(NewLinear(4, 3, dev), Relu{}, NewLinear(3, 2, dev))
	var buf bytes.Buffer
	if err := SaveTo(&buf, src, map[string]string{"m": "1"}); err != nil {
		t.Fatal(err)
	}
	srcW := src.Modules[0].(*Linear).Weight.Value.Float32s()
	dev.Seed(2)
	// Layer 2 of another shape: an error even when not strict.
	wide := NewSequential(NewLinear(4, 3, dev), Relu{}, NewLinear(3, 5, dev))
	if _, err := LoadFrom(bytes.NewReader(buf.Bytes()), wide, LoadOptions{NonStrict: true}); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `"2.weight" has shape [2 3]`) {
		t.Fatalf("shape mismatch when not strict: %v", err)
	}
	dst := NewSequential(NewLinear(4, 3, dev), Relu{}, Relu{}, NewLinear(3, 2, dev))
	keepW := dst.Modules[3].(*Linear).Weight.Value.Float32s()
	// Strict: the error lists both kinds and nothing changes.
	_, err := LoadFrom(bytes.NewReader(buf.Bytes()), dst, LoadOptions{})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `missing tensors "3.weight", "3.bias"`) || !strings.Contains(err.Error(), `unexpected tensors "2.bias", "2.weight"`) {
		t.Fatalf("strict load: %v", err)
	}
	if slices.Equal(dst.Modules[0].(*Linear).Weight.Value.Float32s(), srcW) {
		t.Fatal("a refused strict load changed the module")
	}
	res, err := LoadFrom(bytes.NewReader(buf.Bytes()), dst, LoadOptions{NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3.weight", "3.bias"}; !slices.Equal(res.MissingKeys, want) {
		t.Errorf("missing %v, want %v", res.MissingKeys, want)
	}
	if want := []string{"2.bias", "2.weight"}; !slices.Equal(res.UnexpectedKeys, want) {
		t.Errorf("unexpected %v, want %v", res.UnexpectedKeys, want)
	}
	if res.Metadata["m"] != "1" {
		t.Errorf("metadata %v", res.Metadata)
	}
	if got := dst.Modules[0].(*Linear).Weight.Value; !slices.Equal(got.Float32s(), srcW) || !got.IsTracked() || !got.Device().Equal(dev) {
		t.Errorf("the shared layer did not load as a tracked leaf on %v", dev)
	}
	if !slices.Equal(dst.Modules[3].(*Linear).Weight.Value.Float32s(), keepW) {
		t.Error("a missing tensor changed")
	}
	// The map form: PyTorch's load_state_dict(dict, strict=False).
	all, _ := StateDict(src)
	tensors := map[string]*ember.Tensor{"head.extra": ember.Zeros([]int{7}, ember.CPU())}
	for _, p := range all {
		tensors[strings.Replace(p.Name, "2.", "3.", 1)] = p.Param.Value.MulScalar(2)
	}
	res, err = LoadStateDict(dst, tensors, LoadOptions{NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MissingKeys) != 0 || !slices.Equal(res.UnexpectedKeys, []string{"head.extra"}) {
		t.Errorf("map load: %+v", res)
	}
	want := src.Modules[2].(*Linear).Weight.Value.MulScalar(2).Float32s()
	if got := dst.Modules[3].(*Linear).Weight.Value; !slices.Equal(got.Float32s(), want) || !got.IsTracked() {
		t.Errorf("map load: 3.weight = %v, want %v", got.Float32s(), want)
	}
	if _, err := LoadStateDict(dst, tensors, LoadOptions{}); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `unexpected tensor "head.extra"`) {
		t.Errorf("strict map load: %v", err)
	}
}

// TestLoadTensorsAndSaveTensors round-trips a map with mixed dtypes.
func TestLoadTensorsAndSaveTensors(t *testing.T) {
	dev := ember.Flex()
	in := map[string]*ember.Tensor{
		"a": ember.FromFloats([]float32{1.5, -2}, []int{2}, dev),
		"b": ember.FromInts([]int64{7, 8, 9}, []int{3, 1}, dev),
		"c": ember.FromFloats([]float64{0.1}, []int{}, dev).Cast(ember.F64),
	}
	var buf bytes.Buffer
	if err := SaveTensors(&buf, in, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	out, meta, err := LoadTensors(&buf, ember.CPU())
	if err != nil {
		t.Fatal(err)
	}
	if meta["k"] != "v" || len(out) != 3 {
		t.Fatalf("got %d tensors, metadata %v", len(out), meta)
	}
	for name, x := range in {
		y := out[name]
		if y.DType() != x.DType() || !slices.Equal(y.Shape(), x.Shape()) || !bytes.Equal(y.Data().Bytes, x.Data().Bytes) || !y.Device().Equal(ember.CPU()) {
			t.Errorf("%s: %v %v on %v, want %v %v", name, y.Shape(), y.DType(), y.Device(), x.Shape(), x.DType())
		}
	}
	if err := SaveTensors(&buf, map[string]*ember.Tensor{"x": nil}, nil); err == nil {
		t.Error("nil tensor accepted")
	}
	if _, _, err := LoadTensors(strings.NewReader("junk"), dev); !errors.Is(err, ErrInvalidSafetensors) {
		t.Errorf("junk: %v", err)
	}
	if _, err := LoadStateDict(NewLinear(1, 1, dev), map[string]*ember.Tensor{"weight": nil}, LoadOptions{}); err == nil {
		t.Error("nil tensor accepted by LoadStateDict")
	}
}

// TestSaveLoadErrorText checks the messages of failed saves and loads:
// one "nn: " prefix each, the path asked for (not the temporary file a
// save writes first), and the sentinels still reachable with errors.Is.
func TestSaveLoadErrorText(t *testing.T) {
	dev := ember.Flex()
	m := NewLinear(3, 2, dev)
	var buf bytes.Buffer
	if err := SaveTo(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	cut := buf.Bytes()[:buf.Len()-5]
	path := filepath.Join(t.TempDir(), "cut.safetensors")
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errFrom := LoadFrom(bytes.NewReader(cut), m, LoadOptions{})
	_, _, errTensors := LoadTensors(bytes.NewReader(cut), dev)
	errFile := Load(path, m)
	absent := filepath.Join(t.TempDir(), "no", "such", "dir", "m.safetensors")
	errSave := Save(absent, m)
	for _, c := range []struct {
		name, prefix string
		err, is      error
	}{
		{"LoadFrom", "nn: load: safetensors: invalid safetensors data: stream ends", errFrom, ErrInvalidSafetensors},
		{"LoadTensors", "nn: load: safetensors: invalid safetensors data: stream ends", errTensors, ErrInvalidSafetensors},
		{"Load", "nn: load " + path + ": safetensors: invalid safetensors data: stream ends", errFile, ErrInvalidSafetensors},
		{"Save", "nn: save " + absent + ": no such file or directory", errSave, os.ErrNotExist},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.prefix) || strings.Count(c.err.Error(), "nn: ") != 1 || !errors.Is(c.err, c.is) {
			t.Errorf("%s: %v, want a message starting %q with one \"nn: \", wrapping %v", c.name, c.err, c.prefix, c.is)
		}
	}
}
