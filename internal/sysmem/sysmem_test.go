package sysmem

import (
	"runtime"
	"testing"
)

// TestTotal checks that Linux reports a plausible amount of memory: more
// than the Go heap in use and less than 2^50 bytes.
func TestTotal(t *testing.T) {
	n := Total()
	if runtime.GOOS != "linux" {
		if n != 0 {
			t.Errorf("Total() = %d on %s, want 0", n, runtime.GOOS)
		}
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if n <= ms.Sys || n >= 1<<50 {
		t.Errorf("Total() = %d bytes, want between %d and 2^50", n, ms.Sys)
	}
}
