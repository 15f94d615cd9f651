package cudnn

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestAlgoPerfLayout checks AlgoPerf against the C layout of
// cudnnConvolutionFwdAlgoPerf_t on LP64: int algo, int status, float time,
// 4 bytes of padding, size_t memory at 16, int determinism at 24, int
// mathType at 28, int reserved[3], padded to 48 bytes.
func TestAlgoPerfLayout(t *testing.T) {
	var p AlgoPerf
	got := []uintptr{unsafe.Sizeof(p), unsafe.Offsetof(p.Status), unsafe.Offsetof(p.Time),
		unsafe.Offsetof(p.Memory), unsafe.Offsetof(p.Determinism), unsafe.Offsetof(p.MathType)}
	want := []uintptr{48, 4, 8, 16, 24, 28}
	if !slices.Equal(got, want) {
		t.Fatalf("size and offsets %v, want %v", got, want)
	}
}

func TestLibraries(t *testing.T) {
	t.Setenv(PathVariable, "")
	if got := Libraries(); !slices.Equal(got, []string{"libcudnn.so.9", "libcudnn.so"}) {
		t.Errorf("without %s: %v", PathVariable, got)
	}
	dir := t.TempDir()
	t.Setenv(PathVariable, dir)
	want := []string{filepath.Join(dir, "libcudnn.so.9"), filepath.Join(dir, "libcudnn.so"), "libcudnn.so.9", "libcudnn.so"}
	if got := Libraries(); !slices.Equal(got, want) {
		t.Errorf("directory: %v, want %v", got, want)
	}
	file := filepath.Join(dir, "libcudnn.so.9.14.0")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(PathVariable, file)
	if got := Libraries(); !slices.Equal(got, []string{file, "libcudnn.so.9", "libcudnn.so"}) {
		t.Errorf("file: %v", got)
	}
}

func TestErrorKinds(t *testing.T) {
	cases := []struct {
		status      int32
		unsupported bool
	}{
		{2000, true}, {2002, true}, {3000, true}, {3007, true},
		{1001, false}, {4000, false}, {5000, false}, {5003, false},
	}
	for _, c := range cases {
		e := &Error{Call: "cudnnConvolutionForward", Status: c.status, Text: "CUDNN_STATUS_X"}
		if e.Unsupported() != c.unsupported {
			t.Errorf("status %d: Unsupported %v, want %v", c.status, e.Unsupported(), c.unsupported)
		}
		if msg := e.Error(); !strings.Contains(msg, "cudnnConvolutionForward") || !strings.Contains(msg, "CUDNN_STATUS_X") {
			t.Errorf("status %d: message %q does not name the call and the status", c.status, msg)
		}
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{91400: "9.14.0", 90000: "9.0.0", 90102: "9.1.2", 100203: "10.2.3", 8907: "8.9.7"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %q, want %q", v, got, want)
		}
	}
	if Direction(7).String() != "Direction(7)" || BackwardFilter.String() != "backward-filter" {
		t.Error("Direction.String")
	}
}

// TestLoad loads cuDNN where it is installed; where it is absent the
// error must name the libraries tried and the variable that points at a
// wheel's.
func TestLoad(t *testing.T) {
	err := Load()
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "not found") && (!strings.Contains(msg, "libcudnn.so.9") || !strings.Contains(msg, PathVariable)) {
			t.Errorf("Load error %q does not name libcudnn.so.9 and %s", msg, PathVariable)
		}
		t.Skipf("no cuDNN here: %v", err)
	}
	if Version() < MinVersion || LibraryName() == "" {
		t.Errorf("loaded %q version %d", LibraryName(), Version())
	}
	if n := strings.Count(VersionString(), "."); n != 2 {
		t.Errorf("VersionString %q", VersionString())
	}
}
