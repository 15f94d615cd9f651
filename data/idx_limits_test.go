package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

// TestIDXLimits checks that ReadIDXWith refuses a payload over MaxBytes or
// a header its Check rejects before reading any payload byte, and that
// reading a small gzip stream that inflates to 32 MiB allocates about
// twice the payload in all (a buffer that doubles up to exactly the
// declared size), not several times it.
func TestIDXLimits(t *testing.T) {
	payload := make([]byte, 32<<20)
	for i := range payload {
		payload[i] = byte(i % 7)
	}
	plain := encodeIDX(IDXUint8, []uint32{32, 1 << 20}, payload)
	gz := gzipBytes(t, plain)

	cr := &countingReader{r: bytes.NewReader(plain)}
	if _, err := ReadIDXWith(cr, "big", IDXLimits{MaxBytes: 1 << 20}); !errors.Is(err, ErrFormat) {
		t.Fatalf("32 MiB payload at a 1 MiB limit: err %v, want ErrFormat", err)
	}
	if cr.n > 4096+16 {
		t.Errorf("read %d bytes before refusing the payload, want only the header", cr.n)
	}
	cr = &countingReader{r: bytes.NewReader(plain)}
	_, err := ReadIDXWith(cr, "big", IDXLimits{Check: func(tp IDXType, dims []int) error {
		if len(dims) != 3 {
			return fmt.Errorf("want rank 3")
		}
		return nil
	}})
	if !errors.Is(err, ErrFormat) || cr.n > 4096+16 {
		t.Fatalf("Check rejecting the header: err %v after %d bytes, want ErrFormat after the header", err, cr.n)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, err := ReadIDX(bytes.NewReader(gz), "big.gz")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Data, payload) || cap(x.Data) != len(payload) {
		t.Fatalf("payload differs or has slack (cap %d, len %d)", cap(x.Data), len(payload))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(2.2*float64(len(payload))) {
		t.Errorf("reading a %d-byte gzip stream of a %d-byte payload allocated %d bytes, want at most 2.2x the payload", len(gz), len(payload), alloc)
	}
}
