package ember

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
)

var (
	unfusedOnce sync.Once
	unfusedDev  Device
)

// unfusedCPU is a second cpu device, private to the tests, configured
// with fusion off: the tables run on it beside the default (fused) cpu
// device, so every case is checked with fusion on and off in one run.
func unfusedCPU() Device {
	unfusedOnce.Do(func() {
		d := Device{st: &deviceState{id: backend.DeviceID{Type: "cpu"}, settings: defaultSettings}}
		if err := d.Configure(DeviceConfig{}.WithFusion(false)); err != nil {
			panic(err)
		}
		unfusedDev = d
	})
	return unfusedDev
}

func TestFusionSettings(t *testing.T) {
	if Flex().Fusion() {
		t.Error("flex reports fusion on; it has no fused kernels")
	}
	_, fuses := backend.As[backend.Fuser](CPU().backend())
	if got, want := CPU().Fusion(), fusionDefault() && fuses; got != want {
		t.Errorf("CPU().Fusion() = %v, want %v (EMBER_FUSION=%q)", got, want, os.Getenv(FusionEnv))
	}
	u := unfusedCPU()
	if u.Fusion() {
		t.Error("a cpu device configured WithFusion(false) fuses")
	}
	if _, ok := u.FusionStats(); ok {
		t.Error("FusionStats reports counters on an unfused device")
	}
	// Fixed once the device has run.
	err := CPU().Configure(DeviceConfig{}.WithFusion(false))
	if !errors.Is(err, ErrAlreadyInitialized) {
		t.Errorf("Configure(WithFusion) on a used device: %v, want ErrAlreadyInitialized", err)
	}
}

// TestFusedChainMatchesUnfused runs gelu(x·a+b)·c and an Adam update on
// the fused cpu device and on an unfused one: equal bits, and the fused
// device ran the chain as a program.
func TestFusedChainMatchesUnfused(t *testing.T) {
	f, u := CPU(), unfusedCPU()
	if !f.Fusion() {
		t.Skip("fusion is off (EMBER_FUSION)")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 7, 1000, 70000} {
		vals := make([][]float32, 4)
		for i := range vals {
			vals[i] = make([]float32, n)
			for j := range vals[i] {
				vals[i][j] = float32(r.NormFloat64())
			}
		}
		chain := func(dev Device) []float32 {
			x := FromFloats(vals[0], []int{n}, dev)
			a := FromFloats(vals[1], []int{n}, dev)
			b := FromFloats(vals[2], []int{n}, dev)
			c := FromFloats(vals[3], []int{n}, dev)
			return x.Mul(a).Add(b).Gelu().Mul(c).Float32s()
		}
		before, _ := f.FusionStats()
		got, want := chain(f), chain(u)
		after, _ := f.FusionStats()
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: element %d: fused %v, unfused %v", n, i, got[i], want[i])
			}
		}
		if after.Programs <= before.Programs {
			t.Errorf("n=%d: no fused program ran (%+v → %+v)", n, before, after)
		}
	}
}

// TestFusionQueryDoesNotFix checks that asking Fusion before a device
// has run leaves its setting open to Configure, and that the answer
// follows the configuration.
func TestFusionQueryDoesNotFix(t *testing.T) {
	d := Device{st: &deviceState{id: backend.DeviceID{Type: "cpu"}, settings: defaultSettings}}
	_, fuses := backend.As[backend.Fuser](CPU().backend())
	if got, want := d.Fusion(), fusionDefault() && fuses; got != want {
		t.Fatalf("Fusion before any op = %v, want %v", got, want)
	}
	if err := d.Configure(DeviceConfig{}.WithFusion(false)); err != nil {
		t.Fatalf("Configure after a Fusion query: %v", err)
	}
	if d.Fusion() {
		t.Fatal("Fusion is true after WithFusion(false)")
	}
	x := FromFloats([]float32{1, 2}, []int{2}, d).MulScalar(3)
	if got := x.Float32s(); got[0] != 3 || got[1] != 6 {
		t.Fatalf("3·[1 2] = %v", got)
	}
	if d.Fusion() {
		t.Fatal("Fusion is true after running unfused")
	}
}
