package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// encodeIDX builds an IDX file by hand from the format description: two
// zero bytes, the type code, the rank, big-endian uint32 dims, payload.
func encodeIDX(t IDXType, dims []uint32, payload []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, byte(t), byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(payload)
	return b.Bytes()
}

func gzipBytes(tb testing.TB, p []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(p); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func randomBytes(r *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(1 + r.IntN(255)) // non-zero
	}
	return p
}

func TestReadIDXValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		typ  IDXType
		dims []uint32
	}{
		{IDXUint8, []uint32{7}},
		{IDXUint8, []uint32{3, 4, 5}},
		{IDXInt8, []uint32{2, 2}},
		{IDXInt16, []uint32{3}},
		{IDXInt32, []uint32{2, 3}},
		{IDXFloat32, []uint32{1, 1, 1, 2}},
		{IDXFloat64, []uint32{5}},
	}
	for _, c := range cases {
		n := c.typ.Size()
		for _, d := range c.dims {
			n *= int(d)
		}
		payload := randomBytes(r, n)
		raw := encodeIDX(c.typ, c.dims, payload)
		for _, gz := range []bool{false, true} {
			in := raw
			if gz {
				in = gzipBytes(t, raw)
			}
			x, err := ReadIDX(bytes.NewReader(in), "mem")
			if err != nil {
				t.Fatalf("%v %v gz=%v: %v", c.typ, c.dims, gz, err)
			}
			if x.Type != c.typ || len(x.Dims) != len(c.dims) {
				t.Fatalf("%v %v gz=%v: got type %v dims %v", c.typ, c.dims, gz, x.Type, x.Dims)
			}
			for i, d := range c.dims {
				if x.Dims[i] != int(d) {
					t.Fatalf("%v: dims %v, want %v", c.typ, x.Dims, c.dims)
				}
			}
			if !bytes.Equal(x.Data, payload) {
				t.Fatalf("%v %v gz=%v: payload differs", c.typ, c.dims, gz)
			}
			if x.Len()*c.typ.Size() != n {
				t.Fatalf("Len() = %d, want %d", x.Len(), n/c.typ.Size())
			}
		}
	}
}

func TestReadIDXFile(t *testing.T) {
	dir := t.TempDir()
	payload := []byte{9, 8, 7, 6, 5, 4}
	raw := encodeIDX(IDXUint8, []uint32{2, 3}, payload)
	// A gzip stream is detected by content, not name; a plain file too.
	for name, content := range map[string][]byte{"a.gz": gzipBytes(t, raw), "b": raw, "c": gzipBytes(t, raw)} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		x, err := ReadIDXFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Data, payload) || x.Dims[0] != 2 || x.Dims[1] != 3 {
			t.Fatalf("%s: got %v %v", name, x.Dims, x.Data)
		}
	}
	_, err := ReadIDXFile(filepath.Join(dir, "missing"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestReadIDXErrors(t *testing.T) {
	good := encodeIDX(IDXUint8, []uint32{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	gz := gzipBytes(t, good)
	corrupt := append([]byte(nil), gz...)
	corrupt[len(corrupt)-5] ^= 0xff // damages the stored length/CRC trailer
	badDeflate := append([]byte(nil), gz...)
	badDeflate[12] ^= 0xff
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"empty":         {nil, "truncated while reading magic"},
		"short magic":   {[]byte{0, 0, 8}, "truncated while reading magic"},
		"bad magic":     {encodeIDX(IDXUint8, []uint32{1}, []byte{1})[1:], "bad magic"},
		"nonzero magic": {append([]byte{1}, good[1:]...), "bad magic"},
		"unknown type":  {encodeIDX(0x0A, []uint32{1}, []byte{1}), "unknown element type"},
		"rank zero":     {[]byte{0, 0, 8, 0}, "rank 0"},
		"rank too big":  {[]byte{0, 0, 8, 17}, "rank 17"},
		"short dims":    {good[:9], "truncated while reading dimensions"},
		"zero dim":      {encodeIDX(IDXUint8, []uint32{2, 0}, nil), "dimension 1 is zero"},
		"huge":          {encodeIDX(IDXFloat64, []uint32{1 << 16, 1 << 16}, nil), "limit"},
		"truncated":     {good[:len(good)-1], "truncated: dims [2 3]"},
		"trailing":      {append(append([]byte(nil), good...), 0), "trailing data"},
		"gzip trunc":    {gz[:len(gz)-6], "truncated"},
		"gzip trailer":  {corrupt, "corrupt gzip"},
		"gzip deflate":  {badDeflate, "corrupt gzip"},
		"gzip tail":     {append(append([]byte(nil), gz...), 1, 2, 3), "truncated"},
		"gzip garbage":  {append(append([]byte(nil), gz...), bytes.Repeat([]byte{1}, 20)...), "corrupt gzip"},
	}
	for name, c := range cases {
		_, err := ReadIDX(bytes.NewReader(c.in), "file-"+strings.ReplaceAll(name, " ", "-"))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v does not wrap ErrFormat", name, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "file-"+strings.ReplaceAll(name, " ", "-")) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q should name the file and contain %q", name, msg, c.want)
		}
	}
}

func TestIDXTypeString(t *testing.T) {
	if IDXFloat32.String() != "float32" || IDXType(0x42).String() != "IDXType(0x42)" || IDXType(0x42).Size() != 0 {
		t.Fatalf("got %q %q %d", IDXFloat32, IDXType(0x42), IDXType(0x42).Size())
	}
}

// FuzzReadIDX checks that ReadIDX never panics and that whatever it
// accepts is exactly one well-formed IDX array: re-encoding the result
// reproduces the (decompressed) input byte for byte. Rejections must wrap
// ErrFormat, since a bytes.Reader has no I/O errors.
func FuzzReadIDX(f *testing.F) {
	seeds := [][]byte{
		encodeIDX(IDXUint8, []uint32{2, 3}, []byte{1, 2, 3, 4, 5, 6}),
		encodeIDX(IDXUint8, []uint32{3, 2, 2}, bytes.Repeat([]byte{7}, 12)),
		encodeIDX(IDXInt32, []uint32{2}, []byte{0, 0, 0, 1, 255, 255, 255, 255}),
		encodeIDX(IDXFloat64, []uint32{1}, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}),
		encodeIDX(IDXInt16, []uint32{1, 1}, []byte{1}),
		{0, 0, 8, 1, 0, 0, 0, 0},
		{0, 0, 8, 1, 255, 255, 255, 255},
		{0, 0, 0x0e, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0},
		{1, 2, 3},
	}
	for _, s := range seeds {
		f.Add(s)
		f.Add(gzipBytes(f, s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := ReadIDX(bytes.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		plain := in
		if len(in) >= 2 && in[0] == 0x1f && in[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(in))
			if err != nil {
				t.Fatalf("accepted gzip input the gzip package rejects: %v", err)
			}
			var b bytes.Buffer
			if _, err := b.ReadFrom(zr); err != nil {
				t.Fatalf("accepted gzip input the gzip package rejects: %v", err)
			}
			plain = b.Bytes()
		}
		dims := make([]uint32, len(x.Dims))
		want := x.Type.Size()
		for i, d := range x.Dims {
			if d < 1 {
				t.Fatalf("dimension %d = %d", i, d)
			}
			dims[i] = uint32(d)
			want *= d
		}
		if len(x.Data) != want {
			t.Fatalf("len(Data) = %d, want %d", len(x.Data), want)
		}
		if re := encodeIDX(x.Type, dims, x.Data); !bytes.Equal(re, plain) {
			t.Fatalf("re-encoding differs from input")
		}
	})
}
