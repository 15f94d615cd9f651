package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite checks a successful write (the bytes, mode 0644, no temporary
// file left), a failing write function (the previous file intact, its
// error returned, no temporary file left) and a missing directory (a
// *CreateError wrapping os.CreateTemp's *fs.PathError).
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	if err := Write(path, func(w io.Writer) error { _, err := w.Write([]byte("first")); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("stat %v, %v: want mode 0644", st, err)
	}
	boom := errors.New("encoder failed")
	err = Write(path, func(w io.Writer) error { w.Write([]byte("partial")); return boom })
	if err != boom {
		t.Fatalf("error %v, want the write function's", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("file holds %q after a failed write, want the previous %q", b, "first")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d entries in the directory, want only the file", len(ents))
	}
	err = Write(filepath.Join(dir, "absent", "f.bin"), func(io.Writer) error { return nil })
	var ce *CreateError
	var pe *os.PathError
	if !errors.As(err, &ce) || !errors.As(err, &pe) {
		t.Fatalf("missing directory: %T %v, want a *CreateError wrapping a *fs.PathError", err, err)
	}
}
