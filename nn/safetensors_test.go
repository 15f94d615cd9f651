package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
)

// goldenTensors are the tensors of the golden files below.
func goldenTensors() map[string]*ember.TensorData {
	return map[string]*ember.TensorData{
		"weight": {Shape: []int{2, 2}, DType: ember.F32, Bytes: []byte{
			0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, // 1, -2
			0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x40, 0x40}}, // 0.5, 3
		"step": {Shape: []int{}, DType: ember.I64, Bytes: []byte{7, 0, 0, 0, 0, 0, 0, 0}},
		"half": {Shape: []int{2}, DType: ember.F16, Bytes: []byte{0x00, 0x3c, 0x00, 0xc0}}, // 1, -2
		"mask": {Shape: []int{3}, DType: ember.Bool, Bytes: []byte{1, 0, 1}},
	}
}

// goldenHeader is the header the reference writer produces for
// goldenTensors: entries ordered by descending dtype (I64, F32, F16, BOOL),
// compact JSON, padded with spaces from 234 to 240 bytes.
const goldenHeader = `{"step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},` +
	`"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]},` +
	`"half":{"dtype":"F16","shape":[2],"data_offsets":[24,28]},` +
	`"mask":{"dtype":"BOOL","shape":[3],"data_offsets":[28,31]}}` + "      "

// goldenData is the data block: I64 7; F32 1, -2, 0.5, 3; F16 1, -2; BOOL 1, 0, 1.
var goldenData = []byte{
	7, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x40, 0x40,
	0x00, 0x3c, 0x00, 0xc0,
	1, 0, 1,
}

func goldenFile() []byte {
	b := []byte{0xf0, 0, 0, 0, 0, 0, 0, 0} // header length 240
	b = append(b, goldenHeader...)
	return append(b, goldenData...)
}

// goldenMetaFile is the same tensors saved with metadata {"format": "pt"}
// (as transformers does): "__metadata__" comes first; 265 bytes padded to 272.
func goldenMetaFile() []byte {
	b := []byte{0x10, 0x01, 0, 0, 0, 0, 0, 0}
	b = append(b, `{"__metadata__":{"format":"pt"},`+goldenHeader[1:234]+"       "...)
	return append(b, goldenData...)
}

func TestSafetensorsGolden(t *testing.T) {
	got, err := LoadSafetensors(bytes.NewReader(goldenFile()))
	if err != nil {
		t.Fatal(err)
	}
	want := goldenTensors()
	assertSameTensors(t, got, want)
	// The values decode to the numbers the bytes spell.
	dev := ember.Flex()
	assertClose(t, "weight", ember.FromData(got["weight"], dev).Float64s(), []float64{1, -2, 0.5, 3}, 0)
	assertClose(t, "half", ember.FromData(got["half"], dev).Float64s(), []float64{1, -2}, 0)
	assertClose(t, "step", ember.FromData(got["step"], dev).Float64s(), []float64{7}, 0)
	if b := ember.FromData(got["mask"], dev).Bools(); !slices.Equal(b, []bool{true, false, true}) {
		t.Errorf("mask = %v", b)
	}

	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), goldenFile()) {
		t.Errorf("written file differs from the golden file:\n got %q\nwant %q", buf.Bytes(), goldenFile())
	}

	buf.Reset()
	if err := WriteSafetensors(&buf, want, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), goldenMetaFile()) {
		t.Errorf("written file with metadata differs:\n got %q\nwant %q", buf.Bytes(), goldenMetaFile())
	}
	tensors, meta, err := ReadSafetensors(bytes.NewReader(goldenMetaFile()))
	if err != nil {
		t.Fatal(err)
	}
	assertSameTensors(t, tensors, want)
	if len(meta) != 1 || meta["format"] != "pt" {
		t.Errorf("metadata %v", meta)
	}
}

func assertSameTensors(t *testing.T, got, want map[string]*ember.TensorData) {
	t.Helper()
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("names %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for name, w := range want {
		g := got[name]
		if g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) || !bytes.Equal(g.Bytes, w.Bytes) {
			t.Errorf("%s: got %v %v %x, want %v %v %x", name, g.DType, g.Shape, g.Bytes, w.DType, w.Shape, w.Bytes)
		}
	}
}

func TestSafetensorsAllDTypes(t *testing.T) {
	tensors := map[string]*ember.TensorData{}
	for i, dt := range backend.AllDTypes {
		shape := []int{2, i%3 + 1}
		b := make([]byte, numel(shape)*dt.Size())
		for j := range b {
			b[j] = byte(31*i + 7*j + 1)
			if dt == ember.Bool {
				b[j] &= 1
			}
		}
		tensors["t_"+dt.String()] = &ember.TensorData{Shape: shape, DType: dt, Bytes: b}
	}
	tensors["empty"] = &ember.TensorData{Shape: []int{0, 3}, DType: ember.F32, Bytes: []byte{}}
	tensors[`odd "name"\é`+"\n\x01"] = &ember.TensorData{Shape: []int{1}, DType: ember.U8, Bytes: []byte{9}}
	var buf bytes.Buffer
	if err := SaveSafetensors(&buf, tensors); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	got, err := LoadSafetensors(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Flex32 is stored as F32.
	want := maps.Clone(tensors)
	f := *want["t_flex32"]
	f.DType = ember.F32
	want["t_flex32"] = &f
	assertSameTensors(t, got, want)
}

// stFile builds a safetensors stream from a header (padded to 8 bytes) and data.
func stFile(header string, data []byte) []byte {
	for len(header)%8 != 0 {
		header += " "
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func TestSafetensorsRejects(t *testing.T) {
	f32x2 := func(off string) string { return `{"a":{"dtype":"F32","shape":[2],"data_offsets":` + off + `}}` }
	two := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2],"data_offsets":%s}}`
	data8 := make([]byte, 8)
	huge := binary.LittleEndian.AppendUint64(nil, MaxSafetensorsHeader+1)
	cases := map[string][]byte{
		"empty stream":        nil,
		"short length":        {1, 2, 3},
		"header too large":    append(huge, '{', '}'),
		"header length > len": append(binary.LittleEndian.AppendUint64(nil, 64), `{}`...),
		"not an object":       stFile(`[1,2]`, nil),
		"leading space":       stFile(` {}`, nil),
		"invalid UTF-8":       stFile("{\"\xff\":{}}", nil),
		"invalid JSON":        stFile(`{"a":`, nil),
		"trailing JSON":       stFile(`{}{}`, nil),
		"duplicate tensor":    stFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, []byte{1, 2}),
		"unknown key":         stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`, data8),
		"missing key":         stFile(`{"a":{"dtype":"F32","shape":[2]}}`, data8),
		"key case":            stFile(`{"a":{"DTYPE":"F32","shape":[2],"data_offsets":[0,8]}}`, data8),
		"duplicate field":     stFile(`{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data8),
		"unknown dtype":       stFile(`{"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}`, data8),
		"dtype not string":    stFile(`{"a":{"dtype":3,"shape":[2],"data_offsets":[0,8]}}`, data8),
		"negative shape":      stFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, data8),
		"fractional shape":    stFile(`{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, data8),
		"null in shape":       stFile(`{"a":{"dtype":"F32","shape":[null,2],"data_offsets":[0,8]}}`, data8),
		"shape overflow":      stFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, data8),
		"one offset":          stFile(f32x2(`[8]`), data8),
		"three offsets":       stFile(f32x2(`[0,8,8]`), data8),
		"size vs shape":       stFile(f32x2(`[0,4]`), data8[:4]),
		"reversed offsets":    stFile(f32x2(`[8,0]`), data8),
		"offset not at 0":     stFile(f32x2(`[4,12]`), make([]byte, 12)),
		"gap":                 stFile(strings.Replace(two, "%s", "[9,11]", 1), make([]byte, 11)),
		"overlap":             stFile(strings.Replace(two, "%s", "[6,8]", 1), make([]byte, 8)),
		"data too short":      stFile(f32x2(`[0,8]`), data8[:7]),
		"trailing bytes":      stFile(f32x2(`[0,8]`), make([]byte, 9)),
		"bool byte 2":         stFile(`{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}`, []byte{1, 2}),
		"metadata not string": stFile(`{"__metadata__":{"a":1}}`, nil),
		"tensor not object":   stFile(`{"a":[1]}`, nil),
	}
	for name, b := range cases {
		_, err := LoadSafetensors(bytes.NewReader(b))
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if !errors.Is(err, ErrInvalidSafetensors) {
			t.Errorf("%s: error %v does not wrap ErrInvalidSafetensors", name, err)
		}
	}
	// Accepted edge cases: no tensors, null metadata, whitespace padding,
	// zero-size tensors sharing an offset, entries in any order.
	ok := map[string][]byte{
		"empty":         stFile(`{}`, nil),
		"null metadata": stFile(`{"__metadata__":null}`, nil),
		"newline pad":   stFile("{}\n", nil),
		"zero-size":     stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"F64","shape":[2,0],"data_offsets":[0,0]}}`, nil),
		"any order":     stFile(`{"b":{"dtype":"U8","shape":[1],"data_offsets":[8,9]},"a":{"shape":[2],"data_offsets":[0,8],"dtype":"F32"}}`, make([]byte, 9)),
	}
	for name, b := range ok {
		if _, err := LoadSafetensors(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSafetensorsWriteRejects(t *testing.T) {
	good := &ember.TensorData{Shape: []int{2}, DType: ember.F32, Bytes: make([]byte, 8)}
	for name, m := range map[string]map[string]*ember.TensorData{
		"reserved name": {"__metadata__": good},
		"bad UTF-8":     {"\xff": good},
		"nil tensor":    {"a": nil},
		"bad size":      {"a": {Shape: []int{3}, DType: ember.F32, Bytes: make([]byte, 8)}},
		"bad dtype":     {"a": {Shape: []int{2}, DType: 0, Bytes: make([]byte, 8)}},
		"negative size": {"a": {Shape: []int{-1}, DType: ember.F32, Bytes: nil}},
	} {
		var buf bytes.Buffer
		if err := SaveSafetensors(&buf, m); !errors.Is(err, ErrInvalidSafetensors) {
			t.Errorf("%s: error %v, want ErrInvalidSafetensors", name, err)
		}
	}
}

// FuzzLoadSafetensors checks that the reader never panics and that any
// stream it accepts survives a write/read round trip unchanged, with
// consistent TensorData.
func FuzzLoadSafetensors(f *testing.F) {
	f.Add(goldenFile())
	f.Add(goldenMetaFile())
	f.Add(stFile(`{}`, nil))
	f.Add(stFile(`{"a":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]},"b":{"dtype":"U64","shape":[],"data_offsets":[4,12]}}`, make([]byte, 12)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"__metadata__":{"k":"v\u0000"},"x":{"dtype":"BOOL","shape":[0],"data_offsets":[0,0]}}`, nil))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, b []byte) {
		tensors, meta, err := ReadSafetensors(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrInvalidSafetensors) {
				t.Fatalf("error %v does not wrap ErrInvalidSafetensors", err)
			}
			return
		}
		total := 0
		for name, d := range tensors {
			n, ok := numBytes(d.Shape, d.DType.Size())
			if !ok || n != uint64(len(d.Bytes)) || !d.DType.Valid() {
				t.Fatalf("%s: inconsistent tensor data %v %v (%d bytes)", name, d.Shape, d.DType, len(d.Bytes))
			}
			total += len(d.Bytes)
		}
		if total > len(b) {
			t.Fatalf("%d data bytes from a %d-byte stream", total, len(b))
		}
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, tensors, meta); err != nil {
			t.Fatalf("rewriting an accepted stream: %v", err)
		}
		again, meta2, err := ReadSafetensors(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("reading the rewritten stream: %v", err)
		}
		assertSameTensors(t, again, tensors)
		if !maps.Equal(meta, meta2) {
			t.Fatalf("metadata %v became %v", meta, meta2)
		}
	})
}
