package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
)

// TestMNISTGather checks that Gather, on the aligned fast path and on a
// misaligned buffer, writes the images and labels ExampleInto gives.
func TestMNISTGather(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, 6, 1)
	ds, err := MNIST(dir, "train", Normalized())
	if err != nil {
		t.Fatal(err)
	}
	if ds.Schema().String() != "features f32[1 28 28], targets i64[]" {
		t.Fatalf("schema %v", ds.Schema())
	}
	idx := []int{5, 0, 3}
	for _, off := range []int{0, 1} {
		buf := make([]byte, off+len(idx)*4*MNISTImageSize)
		f := buf[off:]
		y := make([]byte, 8*len(idx))
		if err := ds.Gather(idx, f, y); err != nil {
			t.Fatal(err)
		}
		img := make([]float32, MNISTImageSize)
		for k, i := range idx {
			lbl := ds.ExampleInto(img, i)
			if got := int64(binary.LittleEndian.Uint64(y[8*k:])); got != int64(lbl) {
				t.Fatalf("offset %d example %d: label %d, want %d", off, i, got, lbl)
			}
			for j, v := range img {
				if got := math.Float32frombits(binary.LittleEndian.Uint32(f[4*(k*MNISTImageSize+j):])); got != v {
					t.Fatalf("offset %d example %d pixel %d: %v, want %v", off, i, j, got, v)
				}
			}
		}
	}
}

// writeIDX writes an IDX file of type t (big-endian elements from vals)
// and returns its path.
func writeIDX(t *testing.T, dir, name string, typ IDXType, dims []uint32, vals []float64) string {
	t.Helper()
	var payload []byte
	be := binary.BigEndian
	for _, v := range vals {
		switch typ {
		case IDXUint8:
			payload = append(payload, uint8(v))
		case IDXInt8:
			payload = append(payload, byte(int8(v)))
		case IDXInt16:
			payload = be.AppendUint16(payload, uint16(int16(v)))
		case IDXInt32:
			payload = be.AppendUint32(payload, uint32(int32(v)))
		case IDXFloat32:
			payload = be.AppendUint32(payload, math.Float32bits(float32(v)))
		case IDXFloat64:
			payload = be.AppendUint64(payload, math.Float64bits(v))
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, gzipBytes(t, encodeIDX(typ, dims, payload)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIDXTensorData(t *testing.T) {
	vals := []float64{-3, 0, 7, 100, -128, 5}
	for _, typ := range []IDXType{IDXUint8, IDXInt8, IDXInt16, IDXInt32, IDXFloat32, IDXFloat64} {
		v := slices.Clone(vals)
		if typ == IDXUint8 {
			for i := range v {
				v[i] = math.Abs(v[i])
			}
		}
		p := writeIDX(t, t.TempDir(), "x", typ, []uint32{2, 3}, v)
		x, err := ReadIDXFile(p)
		if err != nil {
			t.Fatal(err)
		}
		td := x.TensorData()
		if td.DType != typ.DType() || !slices.Equal(td.Shape, []int{2, 3}) || !slices.Equal(td.Float64s(), v) {
			t.Fatalf("%v: %v %v %v, want %v", typ, td.DType, td.Shape, td.Float64s(), v)
		}
	}
	if IDXType(0x42).DType().Valid() {
		t.Fatal("unknown type has a dtype")
	}
}

func TestReadIDXPair(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	const n = 9
	pix := make([]float64, n*4*2)
	for i := range pix {
		pix[i] = float64(r.IntN(256))
	}
	lbl := make([]float64, n)
	for i := range lbl {
		lbl[i] = float64(r.IntN(5))
	}
	fp := writeIDX(t, dir, "f", IDXUint8, []uint32{n, 4, 2}, pix)
	tp := writeIDX(t, dir, "t", IDXUint8, []uint32{n}, lbl)
	ds, err := ReadIDXPair(fp, tp, IDXOptions{Scale: 1.0 / 255})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != n || ds.Schema().String() != "features f32[4 2], targets i64[]" {
		t.Fatalf("Len %d schema %v", ds.Len(), ds.Schema())
	}
	b := collect(NewLoader(ds, n, LoaderOptions{}), 0)[0]
	for i, p := range pix {
		if want := float32(p * (1.0 / 255)); b.Images[i] != want {
			t.Fatalf("feature %d = %v, want %v", i, b.Images[i], want)
		}
	}
	for i, l := range lbl {
		if b.Labels[i] != int64(l) {
			t.Fatalf("label %d = %d, want %v", i, b.Labels[i], l)
		}
	}
	// Raw bytes, float targets [n 2].
	ft := writeIDX(t, dir, "ft", IDXFloat64, []uint32{n, 2}, append(slices.Clone(lbl), lbl...))
	raw, err := ReadIDXPair(fp, ft, IDXOptions{FeatureDType: ember.U8})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Schema().String() != "features u8[4 2], targets f32[2]" {
		t.Fatalf("schema %v", raw.Schema())
	}
	rb := collect(NewLoader(raw, n, LoaderOptions{}), 0)[0]
	if !slices.Equal(rb.Features.Float64s(), pix) {
		t.Fatal("raw features differ")
	}

	half := writeIDX(t, dir, "half", IDXFloat32, []uint32{n}, slices.Repeat([]float64{0.5}, n))
	short := writeIDX(t, dir, "short", IDXUint8, []uint32{n - 1}, lbl[:n-1])
	for name, c := range map[string]struct {
		f, t string
		o    IDXOptions
	}{
		"count":   {fp, short, IDXOptions{}},
		"lossy":   {fp, half, IDXOptions{TargetDType: ember.I64}},
		"missing": {fp, filepath.Join(dir, "nope"), IDXOptions{}},
	} {
		_, err := ReadIDXPair(c.f, c.t, c.o)
		if name == "missing" {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
	for name, o := range map[string]IDXOptions{
		"int scale": {FeatureDType: ember.I32, Scale: 2},
		"nan scale": {Scale: math.NaN()},
		"dtype":     {TargetDType: 99},
	} {
		if _, err := ReadIDXPair(fp, tp, o); err == nil || errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want an options error", name, err)
		}
	}
}

// writeShard writes a safetensors file holding the given tensors.
func writeShard(t *testing.T, path string, tensors map[string]*ember.TensorData) {
	t.Helper()
	var buf bytes.Buffer
	if err := nn.SaveSafetensors(&buf, tensors); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadSafetensorsShards(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var wantX []float32
	var wantY []int64
	for k, n := range []int{4, 2, 3} {
		x := make([]float32, 3*n)
		for i := range x {
			x[i] = float32(k) + float32(i)/16
		}
		y := make([]int64, n)
		for i := range y {
			y[i] = int64(10*k + i)
		}
		wantX, wantY = append(wantX, x...), append(wantY, y...)
		p := filepath.Join(dir, "shard"+string(rune('0'+k))+".safetensors")
		writeShard(t, p, map[string]*ember.TensorData{
			"x": ir.FromSlice(x, []int{n, 3}), "y": ir.FromSlice(y, []int{n}),
			"features": ir.FromSlice([]float32{1}, []int{1}), "meta": ir.FromSlice([]int64{7}, []int{1}),
		})
		paths = append(paths, p)
	}
	ds, err := ReadSafetensorsShards(paths, SafetensorsOptions{Features: "x", Targets: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 9 || ds.Schema().String() != "features f32[3], targets i64[]" {
		t.Fatalf("Len %d schema %v", ds.Len(), ds.Schema())
	}
	l := NewLoader(ds, 4, LoaderOptions{Shuffle: true, Seed: 1})
	defer l.Close()
	for b := range l.Epoch(0) {
		for k, i := range b.Indices {
			if !slices.Equal(b.Images[3*k:3*k+3], wantX[3*i:3*i+3]) || b.Labels[k] != wantY[i] {
				t.Fatalf("example %d: %v %d, want %v %d", i, b.Images[3*k:3*k+3], b.Labels[k], wantX[3*i:3*i+3], wantY[i])
			}
		}
	}

	bad := filepath.Join(dir, "bad.safetensors")
	writeShard(t, bad, map[string]*ember.TensorData{"x": ir.FromSlice([]float64{1, 2, 3}, []int{1, 3}), "y": ir.FromSlice([]int64{1}, []int{1})})
	misaligned := filepath.Join(dir, "mis.safetensors")
	writeShard(t, misaligned, map[string]*ember.TensorData{"x": ir.FromSlice([]float32{1, 2, 3}, []int{1, 3}), "y": ir.FromSlice([]int64{1, 2}, []int{2})})
	corrupt := filepath.Join(dir, "corrupt.safetensors")
	os.WriteFile(corrupt, []byte("\x05\x00\x00\x00\x00\x00\x00\x00{}"), 0o644)
	for name, c := range map[string]struct {
		paths []string
		want  string
	}{
		"dtype":      {[]string{paths[0], bad}, bad},
		"misaligned": {[]string{misaligned}, misaligned},
		"corrupt":    {[]string{corrupt}, corrupt},
		"no tensor":  {[]string{paths[0]}, `"targets"`},
	} {
		_, err := ReadSafetensorsShards(c.paths, SafetensorsOptions{Features: "x", Targets: "y"})
		if name == "no tensor" {
			_, err = ReadSafetensorsShards(c.paths, SafetensorsOptions{})
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrFormat naming %s", name, err, c.want)
		}
	}
	if _, err := ReadSafetensorsShards([]string{corrupt}, SafetensorsOptions{}); !errors.Is(err, nn.ErrInvalidSafetensors) {
		t.Errorf("corrupt file: %v, want nn.ErrInvalidSafetensors", err)
	}
	if _, err := ReadSafetensorsShards(nil, SafetensorsOptions{}); err == nil {
		t.Error("no files accepted")
	}
	if _, err := ReadSafetensorsShards([]string{filepath.Join(dir, "nope")}, SafetensorsOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
