package flex

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestPerformanceStats checks that every supported key gets a measurement
// and unsupported ones an *UnsupportedError, in key order, and that the
// ComputeDirect rate agrees with an independent timing of the same matmul
// (2·128³ FLOP over the mean time of a loop of them) within a factor of 4,
// a bound far wider than timing noise and far narrower than a wrong FLOP
// count or unit.
func TestPerformanceStats(t *testing.T) {
	be := New(backend.DeviceID{Type: "flex"})
	keys := []backend.ThroughputKey{
		{Mode: backend.ModeComputeDirect, DType: backend.F32},
		{Mode: backend.ModeComputeCMMA, DType: backend.F16, M: 16, N: 16, K: 16},
		{Mode: backend.ModeMemory},
		{Mode: backend.ModeMemoryRead},
		{Mode: backend.ModeMemoryWrite},
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
		unsupported := i == 1 || i == 8
		switch {
		case unsupported && !errors.As(s.Err, &ue):
			t.Errorf("%v: err %v, want UnsupportedError", s.Key.Mode, s.Err)
		case !unsupported && s.Err != nil:
			t.Errorf("%v: %v", s.Key.Mode, s.Err)
		case !unsupported && s.Key.Mode == backend.ModeLaunch && (s.Latency <= 0 || s.Latency > time.Second):
			t.Errorf("launch latency %v", s.Latency)
		case !unsupported && s.Key.Mode != backend.ModeLaunch && (s.Value <= 0 || math.IsInf(s.Value, 0)):
			t.Errorf("%v: value %v", s.Key.Mode, s.Value)
		}
	}

	const n = statMatmulSize
	v := make([]float32, n*n)
	for i := range v {
		v[i] = float32(i%7) * 0.25
	}
	a := be.FromData(ir.FromSlice(v, []int{n, n}))
	const reps = 20
	start := time.Now()
	for range reps {
		ir.Matmul(be, a, a)
	}
	indep := 2 * n * n * n * reps / time.Since(start).Seconds()
	if r := got[0].Value / indep; r < 0.25 || r > 4 {
		t.Errorf("ComputeDirect F32 %.3g FLOP/s, an independent timing %.3g FLOP/s (ratio %.2f)", got[0].Value, indep, r)
	}
}
