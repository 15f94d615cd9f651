package cuda

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// TestGPUStickyFault runs a kernel that writes to an invalid address in a
// child process (a sticky fault ruins the primary context for the whole
// process) and checks that the child saw the documented errors.
func TestGPUStickyFault(t *testing.T) {
	if os.Getenv("EMBER_CUDA_FAULT_CHILD") == "1" {
		faultChild(t)
		return
	}
	gpu(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUStickyFault$", "-test.v")
	cmd.Env = append(os.Environ(), "EMBER_CUDA_FAULT_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil {
		t.Fatalf("child failed: %v", err)
	}
	if !strings.Contains(string(out), "CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Fatal("child did not report CUDA_ERROR_ILLEGAL_ADDRESS")
	}
}

func faultChild(t *testing.T) {
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	k := b.Kernel("ember_test_fault", `extern "C" __global__ void ember_test_fault(float* p) { p[threadIdx.x] = 1.0f; }`)
	b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, uint64(0x10))
	err = b.Sync()
	var ce *cu.Error
	if !errors.Is(err, backend.ErrExecution) || !errors.As(err, &ce) || ce.Name != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Fatalf("Sync after a fault: %v", err)
	}
	t.Logf("Sync: %v", err)
	if err2 := b.Sync(); !errors.Is(err2, backend.ErrExecution) {
		t.Fatalf("second Sync: %v", err2)
	}
	// Later ops fail with the same error: ToData returns it, others panic with it.
	if _, err := b.ToData(&Tensor{buf: &Buffer{blk: &block{}}, shape: []int{0}, strides: []int{1}, dtype: backend.F32}); !errors.Is(err, backend.ErrExecution) {
		t.Fatalf("ToData after a fault: %v", err)
	}
	func() {
		defer func() {
			r := recover()
			e, ok := r.(error)
			if !ok || !errors.Is(e, backend.ErrExecution) {
				t.Fatalf("FromData after a fault panicked with %v", r)
			}
		}()
		b.FromData(&backend.TensorData{Shape: []int{2}, DType: backend.F32, Bytes: make([]byte, 8)})
	}()
	if st := b.PerformanceStats([]backend.ThroughputKey{{Mode: backend.ModeLaunch}}); !errors.Is(st[0].Err, backend.ErrExecution) {
		t.Fatalf("stats after a fault: %+v", st[0])
	}
}
