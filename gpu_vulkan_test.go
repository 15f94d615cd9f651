package ember_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// vulkanDevice returns Vulkan(DefaultKind) or skips the test where no
// Vulkan adapter can run.
func vulkanDevice(tb testing.TB) ember.Device {
	tb.Helper()
	dev := ember.Vulkan(ember.DefaultKind)
	if err := dev.Init(); err != nil {
		tb.Skipf("no Vulkan device: %v", err)
	}
	return dev
}

// Enumerate lists the Vulkan adapters under both vulkan and wgpu, with
// their model name and memory; a software adapter (lavapipe) is never
// the automatic default device, which stays on a faster backend.
func TestVulkanEnumerate(t *testing.T) {
	vulkanDevice(t)
	vs, ws := ember.Enumerate(ember.TypeVulkan), ember.Enumerate(ember.TypeWGPU)
	if len(vs) == 0 || len(vs) != len(ws) {
		t.Fatalf("Enumerate(TypeVulkan) = %v, Enumerate(TypeWGPU) = %v: want the same adapters, at least one", vs, ws)
	}
	for i, d := range vs {
		info, err := d.Info()
		if err != nil || info.Name == "" || info.MemoryBytes == 0 {
			t.Errorf("%v: Info() = %+v, %v", d, info, err)
		}
		if w := ws[i]; w.ID().Kind != d.ID().Kind || w.ID().Index != d.ID().Index {
			t.Errorf("wgpu device %v does not name the adapter of %v", w, d)
		}
		if d.ID().Kind == "cpu" && ember.DefaultDevice().Equal(d) {
			t.Errorf("DefaultDevice() is the software adapter %v", d)
		}
	}
	if def := ember.DefaultDevice(); def.Type() == ember.TypeVulkan && def.ID().Kind == "cpu" {
		t.Errorf("DefaultDevice() = %v, a software Vulkan adapter", def)
	}
}

// WGPU selects the Vulkan backend on Linux and computes there; KindCPU
// names the software adapter where there is one.
func TestWGPUIsVulkan(t *testing.T) {
	vulkanDevice(t)
	dev := ember.WGPU(ember.DefaultKind)
	if err := dev.Init(); err != nil {
		t.Fatalf("WGPU(DefaultKind) does not open where Vulkan does: %v", err)
	}
	x := ember.FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, dev)
	got := x.Matmul(x).Float32s()
	want := []float32{7, 10, 15, 22}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("WGPU matmul = %v, want %v", got, want)
		}
	}
	for _, d := range ember.Enumerate(ember.TypeVulkan) {
		if d.ID().Kind == "cpu" {
			if err := ember.Vulkan(ember.KindCPU).Init(); err != nil {
				t.Errorf("Vulkan(KindCPU): %v", err)
			}
		}
	}
}

// Existing and absent adapters fail Init with ErrBackendUnavailable and a
// message saying why; Metal and WebGPU say that this platform has none.
func TestVulkanUnavailableKinds(t *testing.T) {
	for _, c := range []struct {
		d    ember.Device
		frag string
	}{
		{ember.Vulkan(ember.Existing(2)), "Existing(2) is not supported"},
		{ember.WGPU(ember.VirtualGPU(41)), "no virtual adapter with index 41"},
	} {
		err := c.d.Init()
		if runtime.GOOS != "linux" {
			c.frag = "runs on Linux"
		} else if lerr := ember.Vulkan(ember.DefaultKind).Init(); lerr != nil && c.frag != "Existing(2) is not supported" {
			c.frag = "" // no Vulkan loader or adapter here: any reason
		}
		if err == nil || !errors.Is(err, ember.ErrBackendUnavailable) || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%v.Init() = %v, want ErrBackendUnavailable mentioning %q", c.d, err, c.frag)
		}
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		if err := ember.Metal(ember.DefaultKind).Init(); err == nil || !strings.Contains(err.Error(), "has no Metal") {
			t.Errorf("Metal Init = %v, want it to say the platform has no Metal", err)
		}
	}
	if runtime.GOOS != "js" {
		if err := ember.WebGPU(ember.DefaultKind).Init(); err == nil || !strings.Contains(err.Error(), "has no WebGPU") {
			t.Errorf("WebGPU Init = %v, want it to say the platform has no WebGPU", err)
		}
	}
}

// On the Vulkan device, as on every other, integer division by zero and
// an index out of range panic with an *ember.Error naming the op (the
// divisor and the indices are checked before the shader runs).
func TestVulkanMisuseIsAnError(t *testing.T) {
	dev := vulkanDevice(t)
	for _, dt := range []ember.DType{ember.I64, ember.I32, ember.U8} {
		x := ember.FromInts([]int{4, 5, 6}, []int{3}, dev).Cast(dt)
		z := ember.FromInts([]int{1, 0, 2}, []int{3}, dev).Cast(dt)
		for name, f := range map[string]func() *ember.Tensor{
			"div": func() *ember.Tensor { return x.Div(z) }, "rem": func() *ember.Tensor { return x.Rem(z) },
			"floor_div": func() *ember.Tensor { return x.FloorDiv(z) }, "mod": func() *ember.Tensor { return x.Mod(z) },
		} {
			err := ember.Try(func() { f() })
			var e *ember.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), "division by zero") {
				t.Errorf("%s of %v by zero on %v: %v, want an *ember.Error about division by zero", name, dt, dev, err)
			}
		}
	}
	a := ember.Zeros([]int{2, 3}, dev)
	err := ember.Try(func() { a.Gather(1, ember.FromInts([]int{0, 3}, []int{1, 2}, dev)) })
	var e *ember.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "index 3") {
		t.Errorf("gather with index 3 of size 3: %v", err)
	}
}
