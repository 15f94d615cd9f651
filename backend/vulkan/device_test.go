//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// Adapters are listed with a kind, an index per kind, a name and memory;
// every usable one opens by its DeviceID under both type names, and the
// two share the adapter's device.
func TestAdaptersOpen(t *testing.T) {
	as, err := Adapters()
	if err != nil {
		t.Skipf("no Vulkan: %v", err)
	}
	if len(as) == 0 {
		t.Skip("the loader lists no adapter")
	}
	for _, a := range as {
		if a.Name == "" || a.Kind == "" || a.Index < 0 {
			t.Errorf("adapter %+v lacks a name, kind or index", a)
		}
		if a.Unusable != nil {
			t.Logf("%s:%d %s: unusable: %v", a.Kind, a.Index, a.Name, a.Unusable)
			continue
		}
		if a.Memory == 0 {
			t.Errorf("%s reports no device-local memory", a.Name)
		}
		v, err := driver{typ: "vulkan"}.Open(a.ID("vulkan"))
		if err != nil {
			t.Fatalf("open %v: %v", a.ID("vulkan"), err)
		}
		w, err := driver{typ: "wgpu"}.Open(a.ID("wgpu"))
		if err != nil {
			t.Fatalf("open %v: %v", a.ID("wgpu"), err)
		}
		if v.(*Backend).d != w.(*Backend).d {
			t.Errorf("vulkan and wgpu backends of %s do not share the device", a.Name)
		}
		if v.ID() != a.ID("vulkan") || w.ID() != a.ID("wgpu") {
			t.Errorf("IDs %v, %v", v.ID(), w.ID())
		}
		info := v.(*Backend).DeviceInfo()
		if info.Name != a.Name || info.MemoryBytes != a.Memory {
			t.Errorf("DeviceInfo %+v, adapter %s %d", info, a.Name, a.Memory)
		}
	}
	ids := driver{typ: "vulkan"}.Devices()
	if len(ids) == 0 {
		t.Error("Devices lists no adapter although one is usable")
	}
}

// Existing, an index past the adapters of a kind and an unknown kind are
// refused with errors wrapping ErrBackendUnavailable that say why.
func TestOpenErrors(t *testing.T) {
	if _, err := Adapters(); err != nil {
		t.Skipf("no Vulkan: %v", err)
	}
	for id, frag := range map[backend.DeviceID]string{
		{Type: "vulkan", Kind: "existing", Index: 3}:  "Existing(3) is not supported",
		{Type: "vulkan", Kind: "discrete", Index: 99}: "no discrete adapter with index 99",
		{Type: "wgpu", Kind: "virtual", Index: 7}:     "no virtual adapter with index 7",
	} {
		_, err := driver{typ: id.Type}.Open(id)
		if err == nil || !errors.Is(err, backend.ErrBackendUnavailable) || !strings.Contains(err.Error(), frag) {
			t.Errorf("open %v: %v, want an error wrapping ErrBackendUnavailable containing %q", id, err, frag)
		}
	}
}

// A software adapter ranks below the cpu backend (priority 20) for
// DefaultDevice; hardware adapters rank above it.
func TestDevicePriority(t *testing.T) {
	dr := driver{typ: "vulkan"}
	if p := dr.DevicePriority(backend.DeviceID{Type: "vulkan", Kind: "cpu"}); p >= 20 {
		t.Errorf("software adapter priority %d, want below the cpu backend's 20", p)
	}
	for _, k := range []string{"discrete", "integrated", "virtual"} {
		if p := dr.DevicePriority(backend.DeviceID{Type: "vulkan", Kind: k}); p <= 20 {
			t.Errorf("%s adapter priority %d, want above the cpu backend's 20", k, p)
		}
	}
}

// A tensor larger than one storage-buffer binding is refused with an
// error wrapping ErrOutOfMemory that names the limit.
func TestBindingLimit(t *testing.T) {
	b := testBackend(t)
	_, err := b.d.newBuffer(b.d.maxRange+1, false)
	if err == nil || !errors.Is(err, backend.ErrOutOfMemory) || !strings.Contains(err.Error(), "maxStorageBufferRange") {
		t.Errorf("a buffer above maxStorageBufferRange: %v", err)
	}
}


// testBackend returns the backend of the default Vulkan adapter, or skips
// the test where none can run.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	b, err := driver{typ: "vulkan"}.Open(backend.DeviceID{Type: "vulkan", Kind: "default"})
	if err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	return b.(*Backend)
}
