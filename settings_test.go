package ember

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
)

// sharedDriver opens, under a test-only type name, the backend of a real
// driver (flex, cpu, cuda), so that each test device has fresh settings
// while its ops run on that backend's kernels. It lists no devices.
type sharedDriver struct{ base string }

func (d sharedDriver) Open(backend.DeviceID) (backend.Backend, error) {
	drv, _ := backend.Lookup(d.base)
	return drv.Open(backend.DeviceID{Type: d.base})
}
func (sharedDriver) Devices() []backend.DeviceID { return nil }
func (sharedDriver) Priority() int               { return 0 }

var sharedDriverCount int

// settingsBases returns the local backends the settings tests run on:
// flex, cpu and cuda where a GPU can run.
func settingsBases(t *testing.T) []string {
	bases := []string{"flex", "cpu"}
	if drv, ok := backend.Lookup("cuda"); ok {
		if p, isP := drv.(backend.Placeholder); !isP || !p.Placeholder() {
			if CUDA(0).Init() == nil {
				bases = append(bases, "cuda")
			}
		}
	}
	return bases
}

// freshDeviceOn returns a device with fresh settings on base's backend.
func freshDeviceOn(t *testing.T, base string) Device {
	t.Helper()
	sharedDriverCount++
	name := fmt.Sprintf("settingstest-%s-%d", base, sharedDriverCount)
	backend.Register(name, sharedDriver{base: base})
	return DeviceFromID(backend.DeviceID{Type: name})
}

// Configure racing a device's first tensor operation: reading the default
// dtypes and locking the settings are one step, so either Configure wins
// and the first tensor has its dtypes, or Configure fails with
// ErrAlreadyInitialized and the tensor has the old ones. Never does
// Configure return nil while the first tensor used the old defaults.
func TestConfigureRacesFirstOp(t *testing.T) {
	first := []struct {
		name  string
		isInt bool
		op    func(Device) *Tensor
	}{
		{"Zeros", false, func(d Device) *Tensor { return Zeros([]int{2}, d) }},
		{"Full", false, func(d Device) *Tensor { return Full([]int{2}, 3, d) }},
		{"FromFloats", false, func(d Device) *Tensor { return FromFloats([]float32{1, 2}, []int{2}, d) }},
		{"Rand", false, func(d Device) *Tensor { return Rand([]int{2}, d) }},
		{"Linspace", false, func(d Device) *Tensor { return Linspace(0, 1, 3, d) }},
		{"Arange", true, func(d Device) *Tensor { return Arange(0, 3, d) }},
		{"FromInts", true, func(d Device) *Tensor { return FromInts([]int{1, 2}, []int{2}, d) }},
	}
	cfg := DeviceConfig{}.WithFloatDType(FloatF64).WithIntDType(IntI32)
	rounds := 60
	if testing.Short() {
		rounds = 10
	}
	for _, base := range settingsBases(t) {
		checkOpsLockSettings(t, base)
		for _, f := range first {
			t.Run(base+"/"+f.name, func(t *testing.T) {
				won, lost := 0, 0
				for range rounds {
					dev := freshDeviceOn(t, base)
					var (
						wg   sync.WaitGroup
						cerr error
						got  DType
					)
					start := make(chan struct{})
					wg.Add(2)
					go func() { defer wg.Done(); <-start; cerr = dev.Configure(cfg) }()
					go func() { defer wg.Done(); <-start; got = f.op(dev).DType() }()
					close(start)
					wg.Wait()
					newDT, oldDT := F64, F32
					if f.isInt {
						newDT, oldDT = I32, I64
					}
					switch {
					case cerr == nil:
						won++
						if got != newDT {
							t.Fatalf("Configure returned nil but the first tensor (%s) has dtype %v, want %v", f.name, got, newDT)
						}
						if s := dev.Settings(); s.FloatDType != FloatF64 || s.IntDType != IntI32 {
							t.Fatalf("Configure returned nil but Settings() = %+v", s)
						}
					case errors.Is(cerr, ErrAlreadyInitialized):
						lost++
						if got != oldDT {
							t.Fatalf("Configure failed (%v) but the first tensor (%s) has dtype %v, want the old default %v", cerr, f.name, got, oldDT)
						}
						if s := dev.Settings(); s != defaultSettings {
							t.Fatalf("Configure failed but Settings() = %+v", s)
						}
					default:
						t.Fatalf("Configure: %v", cerr)
					}
				}
				t.Logf("%d rounds: Configure first %d, the op first %d", rounds, won, lost)
			})
		}
	}
}

// checkOpsLockSettings checks, without a race, that every way an
// operation reads the default dtypes locks the settings (a later Configure
// fails and changes nothing) and that queries lock nothing.
func checkOpsLockSettings(t *testing.T, base string) {
	ops := map[string]func(Device){
		"Zeros":      func(d Device) { Zeros([]int{1}, d) },
		"Full":       func(d Device) { Full([]int{1}, 2, d) },
		"FromFloats": func(d Device) { FromFloats([]float64{1}, []int{1}, d) },
		"FromInts":   func(d Device) { FromInts([]int{1}, []int{1}, d) },
		"FromBools":  func(d Device) { FromBools([]bool{true}, []int{1}, d) },
		"Arange":     func(d Device) { Arange(0, 2, d) },
		"Linspace":   func(d Device) { Linspace(0, 1, 2, d) },
		"Randn":      func(d Device) { Randn([]int{1}, d) },
		"FullDType":  func(d Device) { FullDType([]int{1}, 1, I32, d) },
	}
	for name, op := range ops {
		dev := freshDeviceOn(t, base)
		op(dev)
		if err := dev.Configure(DeviceConfig{}.WithFloatDType(FloatF64)); !errors.Is(err, ErrAlreadyInitialized) {
			t.Errorf("%s: Configure after %s: %v, want ErrAlreadyInitialized", base, name, err)
		}
		if got := dev.Settings(); got != defaultSettings {
			t.Errorf("%s: settings after a failed Configure: %+v", base, got)
		}
	}
	// Queries lock nothing.
	dev := freshDeviceOn(t, base)
	_ = dev.Settings()
	_ = dev.SupportsDType(F64)
	_ = dev.Sync()
	dev.Seed(1)
	if err := dev.Configure(DeviceConfig{}.WithFloatDType(FloatF64)); err != nil {
		t.Errorf("%s: Configure after queries only: %v", base, err)
	}
	if dt := Ones([]int{1}, dev).DType(); dt != F64 {
		t.Errorf("%s: Ones after Configure(F64): %v", base, dt)
	}
}
