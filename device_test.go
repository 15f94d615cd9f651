package ember

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// testDriver opens flex backends under a unique name, so each test gets a
// device whose process-global state (settings, lock) is fresh. It lists no
// devices, so Enumerate and DefaultDevice never pick it. noF16 makes its
// backend refuse F16.
type testDriver struct{ noF16 bool }

type noF16Backend struct{ *flex.Backend }

func (b noF16Backend) SupportsDType(dt backend.DType) bool {
	return dt != F16 && b.Backend.SupportsDType(dt)
}

func (d testDriver) Open(id backend.DeviceID) (backend.Backend, error) {
	if d.noF16 {
		return noF16Backend{flex.New(id)}, nil
	}
	return flex.New(id), nil
}
func (testDriver) Devices() []backend.DeviceID { return nil }
func (testDriver) Priority() int               { return 0 }

var testDriverCount atomic.Int64

// freshDevice registers a new test driver and returns its device.
func freshDevice(t *testing.T, noF16 bool) Device {
	t.Helper()
	name := fmt.Sprintf("devtest%d", testDriverCount.Add(1))
	backend.Register(name, testDriver{noF16: noF16})
	return DeviceFromID(backend.DeviceID{Type: name})
}

func TestDeviceEqual(t *testing.T) {
	if !CPU().Autodiff().Equal(CPU()) || !CPU().Equal(CPU().Autodiff().GradientCheckpointing()) {
		t.Error("Equal must ignore autodiff and checkpointing")
	}
	if CPU().Equal(Flex()) || CUDA(0).Equal(CUDA(1)) || Vulkan(DiscreteGPU(0)).Equal(WGPU(DiscreteGPU(0))) {
		t.Error("Equal must compare type and index")
	}
	if CPU().Autodiff() == CPU() {
		t.Error("autodiff devices must differ as values")
	}
	if !CPU().Autodiff().IsAutodiff() || CPU().IsAutodiff() || CPU().Autodiff().Inner() != CPU() || CPU().Inner() != CPU() {
		t.Error("IsAutodiff/Inner")
	}
	if CUDA(DefaultIndex) != CUDA(0) {
		t.Error("DefaultIndex must select index 0")
	}
}

func TestDeviceStringParse(t *testing.T) {
	t.Setenv("EMBER_WGPU_DEFAULT_DEVICE", "")
	cases := []struct {
		d    Device
		want string
	}{
		{CPU(), "cpu"}, {Flex(), "flex"}, {NdArray(), "ndarray"}, {CUDA(0), "cuda:0"}, {CUDA(3), "cuda:3"},
		{ROCm(1), "rocm:1"}, {LibTorch(), "libtorch"}, {LibTorchCUDA(1), "libtorch:cuda:1"},
		{LibTorchMPS(), "libtorch:mps:0"}, {LibTorchVulkan(), "libtorch:vulkan:0"},
		{RemoteWebSocket("ws://host:3000", 2), "remote+ws://host:3000/2"}, {RemoteWebSocket("host:3000", 0), "remote+ws://host:3000/0"},
	}
	kinds := []struct {
		k    DeviceKind
		want string
	}{
		{DiscreteGPU(0), "discrete:0"}, {IntegratedGPU(1), "integrated:1"}, {VirtualGPU(2), "virtual:2"},
		{KindCPU, "cpu:0"}, {DefaultKind, "default:0"}, {Existing(7), "existing:7"},
	}
	ctors := map[string]func(DeviceKind) Device{"wgpu": WGPU, "vulkan": Vulkan, "metal": Metal, "webgpu": WebGPU}
	for _, name := range []string{"wgpu", "vulkan", "metal", "webgpu"} {
		for _, k := range kinds {
			cases = append(cases, struct {
				d    Device
				want string
			}{ctors[name](k.k), name + ":" + k.want})
		}
	}
	c := Capture()
	cases = append(cases, struct {
		d    Device
		want string
	}{c, fmt.Sprintf("capture:%d", c.Index())})
	if Capture().Equal(c) {
		t.Error("each Capture() must be a new device")
	}
	for _, tc := range cases {
		variants := []struct {
			d      Device
			suffix string
		}{{tc.d, ""}, {tc.d.Autodiff(), "+autodiff"}, {tc.d.Autodiff().GradientCheckpointing(), "+autodiff+checkpointing"}}
		for _, v := range variants {
			s := v.d.String()
			if s != tc.want+v.suffix {
				t.Errorf("String() = %q, want %q", s, tc.want+v.suffix)
			}
			p, err := ParseDevice(s)
			if err != nil || p != v.d {
				t.Errorf("ParseDevice(%q) = %v, %v; want %v", s, p, err, v.d)
			}
		}
	}
	t.Setenv("EMBER_WGPU_DEFAULT_DEVICE", "integrated:1")
	if got := WGPU(DefaultKind).String(); got != "wgpu:integrated:1" {
		t.Errorf("DefaultKind with EMBER_WGPU_DEFAULT_DEVICE=integrated:1: %q", got)
	}
}

func TestParseDeviceRejects(t *testing.T) {
	for _, s := range []string{"", "gpu", "cuda:x", "cuda:-1", "vulkan:weird:0", "cpu:1:2:3", "remote+ws://host",
		"remote+ws://host:3000/x", "cpu+checkpointing", "flex+autodiff+autodiff", ":0"} {
		d, err := ParseDevice(s)
		if err == nil {
			t.Errorf("ParseDevice(%q) = %v, want an error", s, d)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
			t.Errorf("ParseDevice(%q): error %q does not quote the input", s, err)
		}
	}
	if _, err := ParseDevice("gpu"); err == nil || !strings.Contains(err.Error(), "unknown device type") {
		t.Errorf("ParseDevice(gpu): %v", err)
	}
}

func TestDeviceConfigure(t *testing.T) {
	dev := freshDevice(t, false)
	if got := dev.Settings(); got != (DeviceSettings{FloatDType: FloatF32, IntDType: IntI64, BoolDType: BoolNative}) {
		t.Errorf("default settings %+v", got)
	}
	if err := dev.Configure(DeviceConfig{}.WithFloatDType(FloatF64).WithIntDType(IntI32)); err != nil {
		t.Fatalf("first Configure: %v", err)
	}
	if got := dev.Autodiff().Settings(); got.FloatDType != FloatF64 || got.IntDType != IntI32 {
		t.Errorf("settings after Configure (seen from the autodiff variant): %+v", got)
	}
	err := dev.Configure(DeviceConfig{}.WithFloatDType(FloatF32))
	var de *DeviceError
	if !errors.Is(err, ErrAlreadyInitialized) || !errors.As(err, &de) || de.Device != dev.String() {
		t.Errorf("second Configure: %v, want a *DeviceError naming %v wrapping ErrAlreadyInitialized", err, dev)
	}
	if dt := FromFloats([]float32{1, 2}, []int{2}, dev).DType(); dt != F64 {
		t.Errorf("FromFloats on a device configured for F64: %v", dt)
	}
	if dt := Arange(0, 3, dev).DType(); dt != I32 {
		t.Errorf("Arange on a device configured for I32: %v", dt)
	}

	used := freshDevice(t, false)
	_ = Zeros([]int{2}, used)
	if err := used.Configure(DeviceConfig{}.WithFloatDType(FloatBF16)); !errors.Is(err, ErrAlreadyInitialized) {
		t.Errorf("Configure after an op: %v, want ErrAlreadyInitialized", err)
	}

	limited := freshDevice(t, true)
	if err := limited.Configure(DeviceConfig{}.WithFloatDType(FloatF16)); !errors.Is(err, ErrUnsupportedDType) || !strings.Contains(err.Error(), "f16") {
		t.Errorf("Configure with an unsupported dtype: %v, want ErrUnsupportedDType naming f16", err)
	}
	if err := limited.Configure(DeviceConfig{FloatDType: FloatDType(I32)}); !errors.Is(err, ErrUnsupportedDType) {
		t.Errorf("Configure with an int as float dtype: %v, want ErrUnsupportedDType", err)
	}
	if limited.SupportsDType(F16) || !limited.SupportsDType(BF16) {
		t.Error("SupportsDType must report the backend's answer")
	}
	// A failed Configure changes nothing, so a valid one still works.
	if err := limited.Configure(DeviceConfig{}.WithFloatDType(FloatBF16)); err != nil {
		t.Errorf("Configure after failed attempts: %v", err)
	}
	if dt := Ones([]int{1}, limited).DType(); dt != BF16 {
		t.Errorf("Ones after Configure(BF16): %v", dt)
	}
	expectPanic(t, "cast to unsupported", func() { Ones([]int{1}, limited).Cast(F16) }, "f16", "not supported")
}

func TestDeviceSeed(t *testing.T) {
	dev := freshDevice(t, false)
	draw := func(seed uint64) []float64 {
		dev.Seed(seed)
		a := Randn([]int{50}, dev).Float64s()
		return append(a, Rand([]int{50}, dev).Float64s()...)
	}
	a, b, c := draw(42), draw(42), draw(43)
	if !slices.Equal(a, b) {
		t.Error("Seed(42) twice gave different values")
	}
	if slices.Equal(a, c) {
		t.Error("Seed(42) and Seed(43) gave equal values")
	}
}

func TestPickDefault(t *testing.T) {
	// The best local device: the first in priority order that initializes.
	var best Device
	for _, d := range Enumerate() {
		if d.Init() == nil {
			best = d
			break
		}
	}
	t.Setenv("EMBER_DEVICE", "")
	if got := pickDefault(); got != best {
		t.Errorf("without EMBER_DEVICE: %v, want %v", got, best)
	}
	if best.Type().String() == "flex" {
		t.Errorf("best device is flex although cpu is registered with a higher priority")
	}
	// EMBER_DEVICE chooses the hardware; DefaultDevice never returns an
	// autodiff device, so DefaultDevice().Autodiff() works whatever it
	// says.
	for _, name := range []string{"flex", "flex+autodiff", "flex+autodiff+checkpointing"} {
		t.Setenv("EMBER_DEVICE", name)
		got := pickDefault()
		if got != Flex() || got.IsAutodiff() {
			t.Errorf("EMBER_DEVICE=%s: %v, want flex without autodiff", name, got)
		}
		if msg := recoverString(func() { got = got.Autodiff() }); msg != "" {
			t.Errorf("EMBER_DEVICE=%s: DefaultDevice().Autodiff() panics: %s", name, msg)
		} else if got != Flex().Autodiff() || got.GradientCheckpointingStrategy() != Disabled {
			t.Errorf("EMBER_DEVICE=%s: DefaultDevice().Autodiff() = %v, want flex+autodiff", name, got)
		}
	}
	for _, bad := range []string{"nonsense", "cuda:17", "cpu:1", "cpu:0", " flex", "flex:42"} {
		if _, ok := backend.Lookup("cuda"); ok && bad == "cuda:17" {
			continue
		}
		t.Setenv("EMBER_DEVICE", bad)
		if got := pickDefault(); got != best {
			t.Errorf("EMBER_DEVICE=%s (unusable): %v, want the fallback %v", bad, got, best)
		}
	}
	if err := DefaultDevice().Init(); err != nil {
		t.Errorf("DefaultDevice cannot run: %v", err)
	}
	// The warning about an unusable EMBER_DEVICE has one "ember: ".
	for _, bad := range []string{"nonsense", "flex:42", "vulkan:discrete:0"} {
		d, err := ParseDevice(bad)
		if err == nil {
			err = d.Init()
		}
		if err == nil {
			continue
		}
		msg := unusableEnvDevice(bad, err)
		if want := fmt.Sprintf("ember: EMBER_DEVICE=%q is unusable, using the best available device instead: ", bad); !strings.HasPrefix(msg, want) ||
			strings.Count(msg, "ember: ") != 1 || !strings.HasSuffix(msg, strings.TrimPrefix(err.Error(), "ember: ")) {
			t.Errorf("EMBER_DEVICE=%s: warning %q (error %q)", bad, msg, err)
		}
	}
}

// recoverString runs f and returns the text of its panic ("" if none).
func recoverString(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func TestDevicePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"CUDA(-2)":          func() { CUDA(-2) },
		"ROCm(-5)":          func() { ROCm(-5) },
		"DiscreteGPU(-2)":   func() { DiscreteGPU(-2) },
		"Existing(-1)":      func() { Existing(-1) },
		"LibTorchCUDA(-3)":  func() { LibTorchCUDA(-3) },
		"RemoteWebSocket-2": func() { RemoteWebSocket("h:1", -2) },
	} {
		if msg := recoverString(f); !strings.Contains(msg, "device index must be non-negative") {
			t.Errorf("%s: panic %q", name, msg)
		}
	}
	if msg := recoverString(func() { CPU().Autodiff().Autodiff() }); !strings.Contains(msg, "only first-order autodiff is supported") {
		t.Errorf("Autodiff twice: panic %q", msg)
	}
	if msg := recoverString(func() { CPU().GradientCheckpointing() }); !strings.Contains(msg, "autodiff") {
		t.Errorf("GradientCheckpointing without autodiff: panic %q", msg)
	}
	if msg := recoverString(func() { CPU().GradientCheckpointingStrategy() }); msg == "" {
		t.Error("GradientCheckpointingStrategy without autodiff must panic")
	}
	if s := CPU().Autodiff().GradientCheckpointingStrategy(); s != Disabled {
		t.Errorf("strategy %v, want disabled", s)
	}
	if s := CPU().Autodiff().GradientCheckpointing().GradientCheckpointingStrategy(); s != Balanced {
		t.Errorf("strategy %v, want balanced", s)
	}
}

func TestMissingBackends(t *testing.T) {
	t.Setenv("EMBER_WGPU_DEFAULT_DEVICE", "")
	for _, d := range []Device{CUDA(0), Vulkan(DefaultKind), RemoteWebSocket("ws://127.0.0.1:1", 0), ROCm(0)} {
		if drv, ok := backend.Lookup(d.ID().Type); ok {
			if p, isP := drv.(backend.Placeholder); !isP || !p.Placeholder() {
				t.Logf("%v: backend %q is part of this build; skipped", d, d.ID().Type)
				continue
			}
		}
		err := d.Init()
		if !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), d.ID().Type) {
			t.Errorf("%v.Init() = %v, want ErrBackendUnavailable naming %q", d, err, d.ID().Type)
		}
		if d.SupportsDType(F32) {
			t.Errorf("%v: an unusable device supports no dtype", d)
		}
		// An op on the device panics with the same error.
		perr := Try(func() { Zeros([]int{1}, d) })
		if perr == nil || perr.Error() != err.Error() {
			t.Errorf("%v: op panicked with %v, want %v", d, perr, err)
		}
	}
}

func TestEnumerate(t *testing.T) {
	var names []string
	for _, d := range Enumerate() {
		names = append(names, d.String())
	}
	if !slices.Contains(names, "cpu") || !slices.Contains(names, "flex") {
		t.Errorf("Enumerate() = %v, want cpu and flex", names)
	}
	if i, j := slices.Index(names, "cpu"), slices.Index(names, "flex"); i > j {
		t.Errorf("Enumerate() = %v: cpu (priority 20) must come before flex (10)", names)
	}
	if got := Enumerate(TypeFlex); len(got) != 1 || got[0] != Flex() {
		t.Errorf("Enumerate(TypeFlex) = %v", got)
	}
	if got := Enumerate(TypeNdArray); len(got) != 1 || got[0] != NdArray() {
		t.Errorf("Enumerate(TypeNdArray) = %v, want [ndarray]", got)
	}
	if i, j := slices.Index(names, "flex"), slices.Index(names, "ndarray"); j < i {
		t.Errorf("Enumerate() = %v: ndarray (priority 5) must come after flex (10)", names)
	}
	nd, _ := backend.Lookup("ndarray")
	if fx, _ := backend.Lookup("flex"); nd == nil || fx == nil || nd.Priority() >= fx.Priority() {
		t.Error("the ndarray driver must be registered with a priority below flex's, so that it is never the default device")
	}
	ad := Enumerate(TypeFlex, TypeCPU).Autodiff()
	for _, d := range ad {
		if !d.IsAutodiff() {
			t.Errorf("Devices.Autodiff: %v", d)
		}
	}
}

func TestToAutodiffStaysUntracked(t *testing.T) {
	x := FromFloats([]float32{1, 2}, []int{2}, Flex())
	y := x.ToDevice(Flex().Autodiff())
	if !y.Device().IsAutodiff() || y.IsTracked() {
		t.Errorf("moved tensor: device %v tracked %v, want autodiff and untracked", y.Device(), y.IsTracked())
	}
	checkEq(t, "moved values", y, ref{[]int{2}, []float64{1, 2}}, F32)
	z := y.ToDevice(CPU())
	checkEq(t, "flex -> cpu", z, ref{[]int{2}, []float64{1, 2}}, F32)
	if z.Device() != CPU() {
		t.Errorf("device after move: %v", z.Device())
	}
}

func TestDeviceInfo(t *testing.T) {
	info, err := CPU().Info()
	if err != nil || info.Name != "cpu" {
		t.Fatalf("CPU().Info() = %+v, %v", info, err)
	}
	if hostMemory() != ^uint64(0) && info.MemoryBytes == 0 {
		t.Errorf("CPU().Info() has no memory size: %+v", info)
	}
	if _, err := ROCm(0).Info(); !errors.Is(err, ErrBackendUnavailable) {
		t.Errorf("ROCm(0).Info() error = %v, want ErrBackendUnavailable", err)
	}
}
