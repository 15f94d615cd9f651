// Package atomicfile writes files whole or not at all: through a
// temporary file in the same directory, renamed into place once written.
package atomicfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// CreateError is the error of Write when the temporary file could not be
// created (a missing or read-only directory): Err is os.CreateTemp's,
// naming the temporary file's pattern.
type CreateError struct{ Err error }

func (e *CreateError) Error() string { return e.Err.Error() }

// Unwrap returns os.CreateTemp's error.
func (e *CreateError) Unwrap() error { return e.Err }

// Write writes the file at path through write: to a temporary file in the
// same directory (mode 0644, as os.Create makes files, not CreateTemp's
// 0600), buffered, renamed into place once write, the flush and the close
// succeed, so that readers never see a partial file and a failure leaves
// any previous file intact (the temporary file is removed). It returns a
// *CreateError when the temporary file cannot be created, and otherwise
// the first error of write, the file system or the rename, unwrapped.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return &CreateError{err}
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	w := bufio.NewWriter(f)
	if err == nil {
		err = write(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
