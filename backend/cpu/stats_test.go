package cpu

import (
	"errors"
	"testing"

	"github.com/emberml/ember/backend"
)

// TestPerformanceStats checks that supported keys produce positive
// measurements and unsupported ones an *UnsupportedError, in key order.
func TestPerformanceStats(t *testing.T) {
	be := newTestBackend()
	keys := []backend.ThroughputKey{
		{Mode: backend.ModeComputeDirect, DType: backend.F32},
		{Mode: backend.ModeComputeCMMA, DType: backend.F16, M: 16, N: 16, K: 16},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessSequential, Bytes: 32 << 10},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessRandom, Bytes: 32 << 10},
		{Mode: backend.ModeLaunch},
		{Mode: backend.ModeComputeDirect, DType: backend.I8},
	}
	got := be.PerformanceStats(keys)
	if len(got) != len(keys) {
		t.Fatalf("%d stats for %d keys", len(got), len(keys))
	}
	for i, s := range got {
		if s.Key != keys[i] {
			t.Fatalf("stat %d has key %+v, want %+v", i, s.Key, keys[i])
		}
		var ue *backend.UnsupportedError
		unsupported := i == 1 || i == 5
		switch {
		case unsupported && !errors.As(s.Err, &ue):
			t.Fatalf("%v: err %v, want UnsupportedError", s.Key.Mode, s.Err)
		case !unsupported && s.Err != nil:
			t.Fatalf("%v: %v", s.Key.Mode, s.Err)
		case !unsupported && s.Key.Mode == backend.ModeLaunch && s.Latency <= 0:
			t.Fatalf("launch latency %v", s.Latency)
		case !unsupported && s.Key.Mode != backend.ModeLaunch && s.Value <= 0:
			t.Fatalf("%v: value %v", s.Key.Mode, s.Value)
		}
	}
}
