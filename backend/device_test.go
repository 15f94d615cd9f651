package backend

import (
	"testing"
	"time"
)

type fakeDriver struct{ placeholder bool }

func (fakeDriver) Open(id DeviceID) (Backend, error) { return nil, nil }
func (fakeDriver) Devices() []DeviceID               { return nil }
func (fakeDriver) Priority() int                     { return 0 }
func (f fakeDriver) Placeholder() bool               { return f.placeholder }

// TestRegisterReplacesPlaceholders checks that a real driver replaces a
// placeholder registered before or after it, and that two real drivers of
// one name still panic.
func TestRegisterReplacesPlaceholders(t *testing.T) {
	real1, real2 := fakeDriver{}, fakeDriver{}
	RegisterPlaceholder("test-before", fakeDriver{placeholder: true})
	Register("test-before", real1)
	if d, _ := Lookup("test-before"); d != Driver(real1) {
		t.Errorf("placeholder registered first: Lookup = %#v, want the real driver", d)
	}
	Register("test-after", real2)
	RegisterPlaceholder("test-after", fakeDriver{placeholder: true})
	if d, _ := Lookup("test-after"); d != Driver(real2) {
		t.Errorf("placeholder registered second: Lookup = %#v, want the real driver", d)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second real driver of one name did not panic")
		}
	}()
	Register("test-after", fakeDriver{})
}

// TestThroughputStatString checks the rows' columns: every value starts in
// the same column whatever the mode, and each key's parameters show.
func TestThroughputStatString(t *testing.T) {
	stats := []ThroughputStat{
		{Key: ThroughputKey{Mode: ModeComputeDirect, DType: F32}, Value: 102.3e9},
		{Key: ThroughputKey{Mode: ModeComputeCMMA, DType: F16, M: 16, N: 16, K: 16}, Value: 750.1e9},
		{Key: ThroughputKey{Mode: ModeMemory}, Value: 21.4e9},
		{Key: ThroughputKey{Mode: ModeMemoryWorkingSet, Access: AccessSequential, Bytes: 32 << 10}, Value: 28.7e9},
		{Key: ThroughputKey{Mode: ModeMemoryWorkingSet, Access: AccessRandom, Bytes: 64 << 20}, Value: 0.2e9},
		{Key: ThroughputKey{Mode: ModeMemoryWorkingSet, Access: AccessRandom, Bytes: 1000}, Value: 1e9},
		{Key: ThroughputKey{Mode: ModeLaunch}, Latency: 850 * time.Nanosecond},
		{Key: ThroughputKey{Mode: ModeComputeCMMA, DType: BF16, M: 8192, N: 8192, K: 8192}, Value: 750.1e12},
		{Key: ThroughputKey{Mode: ModeMemoryWorkingSet, Access: AccessSequential, Bytes: 512 << 10}, Value: 5.5e12},
	}
	want := []string{
		"compute-direct       f32                       102.3 GFLOP/s",
		"compute-cmma         f16 16x16x16              750.1 GFLOP/s",
		"memory                                          21.4 GB/s",
		"memory-working-set   sequential 32KiB           28.7 GB/s",
		"memory-working-set   random 64MiB                0.2 GB/s",
		"memory-working-set   random 1000B                1.0 GB/s",
		"launch                                         850ns",
		"compute-cmma         bf16 8192x8192x8192    750100.0 GFLOP/s",
		"memory-working-set   sequential 512KiB        5500.0 GB/s",
	}
	for i, s := range stats {
		if got := s.String(); got != want[i] {
			t.Errorf("row %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
}
