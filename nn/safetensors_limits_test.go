package nn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// manyEmpty is a header of n empty F32 tensors.
func manyEmpty(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"t%d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`, i)
	}
	b.WriteString("}")
	return b.String()
}

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

// TestSafetensorsLimits checks the bounds on work and memory: a stream of
// more tensors than the limit (default MaxSafetensorsTensors, or the
// caller's) is refused with ErrSafetensorsLimit, a data block larger than
// the caller's limit is refused having read only the header, a stream
// within the limits reads as before, and Load bounds both by the module
// (a file with one extra tensor is an ErrMismatch).
func TestSafetensorsLimits(t *testing.T) {
	over := stFile(manyEmpty(MaxSafetensorsTensors+1), nil)
	_, _, err := ReadSafetensors(bytes.NewReader(over))
	if !errors.Is(err, ErrSafetensorsLimit) || !errors.Is(err, ErrInvalidSafetensors) {
		t.Fatalf("%d tensors: err %v, want ErrSafetensorsLimit", MaxSafetensorsTensors+1, err)
	}
	at := stFile(manyEmpty(10), nil)
	if ts, _, err := ReadSafetensorsWith(bytes.NewReader(at), SafetensorsLimits{MaxTensors: 10}); err != nil || len(ts) != 10 {
		t.Fatalf("10 tensors at a limit of 10: %d tensors, err %v", len(ts), err)
	}
	if _, _, err := ReadSafetensorsWith(bytes.NewReader(at), SafetensorsLimits{MaxTensors: 9}); !errors.Is(err, ErrSafetensorsLimit) {
		t.Fatalf("10 tensors at a limit of 9: err %v", err)
	}
	hdr := `{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`
	file := stFile(hdr, make([]byte, 16))
	cr := &countingReader{r: bytes.NewReader(file)}
	if _, _, err := ReadSafetensorsWith(cr, SafetensorsLimits{MaxDataBytes: 15}); !errors.Is(err, ErrSafetensorsLimit) {
		t.Fatalf("16 data bytes at a limit of 15: err %v", err)
	}
	if want := len(file) - 16; cr.n > want+4096 {
		t.Errorf("read %d bytes before refusing the data block, want about the %d of the header", cr.n, want)
	}
	ts, _, err := ReadSafetensorsWith(bytes.NewReader(file), SafetensorsLimits{MaxDataBytes: 16})
	if err != nil || len(ts["w"].Bytes) != 16 {
		t.Fatalf("16 data bytes at a limit of 16: err %v", err)
	}

	// Load: the module's tensors and bytes bound the read.
	dev := ember.CPU()
	l := NewLinear(2, 3, dev)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := Save(path, l); err != nil {
		t.Fatal(err)
	}
	if err := Load(path, l); err != nil {
		t.Fatalf("Load of its own file: %v", err)
	}
	// A file of far more tensors than the module is refused by the
	// limit before its entries are all parsed.
	hostile := filepath.Join(t.TempDir(), "hostile.safetensors")
	if err := os.WriteFile(hostile, stFile(manyEmpty(1000), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Load(hostile, l); !errors.Is(err, ErrMismatch) || !errors.Is(err, ErrSafetensorsLimit) {
		t.Errorf("Load of a file of 1000 tensors into a 2-tensor module: err %v, want ErrMismatch from the limit", err)
	}
}
