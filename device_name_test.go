package ember

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// ParseDevice accepts exactly the names Device.String prints: a name that
// denotes a device parses to it and prints back unchanged; any other is an
// error that quotes the name and says what is wrong, for every malformed
// form of every device type.
func TestParseDeviceNames(t *testing.T) {
	t.Setenv("EMBER_WGPU_DEFAULT_DEVICE", "")
	accepted := map[string]Device{
		"cpu":                           CPU(),
		"flex":                          Flex(),
		"ndarray":                       NdArray(),
		"cuda:0":                        CUDA(0),
		"cuda:12":                       CUDA(12),
		"cuda:" + strconv.Itoa(maxInt):  CUDA(DeviceIndex(maxInt)),
		"rocm:3":                        ROCm(3),
		"vulkan:discrete:0":             Vulkan(DiscreteGPU(0)),
		"wgpu:integrated:10":            WGPU(IntegratedGPU(10)),
		"metal:virtual:1":               Metal(VirtualGPU(1)),
		"webgpu:existing:7":             WebGPU(Existing(7)),
		"vulkan:cpu:0":                  Vulkan(KindCPU),
		"wgpu:default:0":                WGPU(DefaultKind),
		"libtorch":                      LibTorch(),
		"libtorch:cuda:2":               LibTorchCUDA(2),
		"libtorch:mps:0":                LibTorchMPS(),
		"libtorch:vulkan:0":             LibTorchVulkan(),
		"remote+ws://host:3000/0":       RemoteWebSocket("host:3000", 0),
		"remote+ws://example.com/4":     RemoteWebSocket("ws://example.com", 4),
		"remote+ws://10.0.0.1:80/1":     RemoteWebSocket("10.0.0.1:80", 1),
		"remote+ws://[::1]:65535/0":     RemoteWebSocket("[::1]:65535", 0),
		"remote+ws://[fe80::1]/2":       RemoteWebSocket("[fe80::1]", 2),
		"capture:5":                     DeviceFromID(backend.DeviceID{Type: "capture", Index: 5}),
		"cpu+autodiff":                  CPU().Autodiff(),
		"cuda:1+autodiff+checkpointing": CUDA(1).Autodiff().GradientCheckpointing(),
		"remote+ws://h:1/0+autodiff":    RemoteWebSocket("h:1", 0).Autodiff(),
	}
	for s, want := range accepted {
		d, err := ParseDevice(s)
		if err != nil || d != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", s, d, err, want)
			continue
		}
		if d.String() != s {
			t.Errorf("ParseDevice(%q).String() = %q", s, d.String())
		}
	}
	// The parsed cpu is the cpu: its tensors mix with CPU()'s.
	x := Ones([]int{2}, MustParseDevice("cpu")).Add(Ones([]int{2}, CPU()))
	checkEq(t, "cpu + parsed cpu", x, ref{[]int{2}, []float64{2, 2}}, F32)

	cases := map[string]string{
		// single-device backends take no index or kind
		"cpu:0":          "single device",
		"cpu:1":          "single device",
		"flex:42":        "single device",
		"cpu:discrete:0": "single device",
		"ndarray:0":      "single device",
		"flex:":          "single device",
		// indices: digits only, no sign, no leading zero, in range
		"cuda:+1":                      "digits only, no sign",
		"cuda:-1":                      "digits only, no sign",
		"cuda:-0":                      "digits only, no sign",
		"cuda:1.0":                     "digits only",
		"cuda:0x1":                     "digits only",
		"cuda:1e3":                     "digits only",
		"cuda:01":                      `leading zero (write "1")`,
		"cuda:00":                      `leading zero (write "0")`,
		"cuda:":                        "empty device index",
		"cuda":                         `needs a device index, as in "cuda:0"`,
		"cuda:99999999999999999999999": "out of range",
		"cuda:" + strconv.FormatUint(uint64(maxInt)+1, 10): "out of range",
		"cuda:1:2":          "too many ':' segments",
		"cuda:discrete:0":   "too many ':' segments",
		"rocm:x":            "digits only",
		"capture":           "needs a device index",
		"capture:3:1":       "too many ':' segments",
		"cuda:1+autodiff:2": "too many ':' segments",
		// whitespace and other bytes
		" cpu":     "byte 0",
		"cpu ":     "byte 3",
		"cpu\n":    "byte 3",
		"cuda:\t1": "byte 5",
		"cpu\x00":  "byte 3",
		"ｃpu":      "printable ASCII",
		"cuda:٣":   "printable ASCII",
		// types
		"":           "empty name",
		":0":         "empty device type",
		"gpu":        "unknown device type",
		"CPU":        "unknown device type",
		"Cuda:0":     "unknown device type",
		"cpu+fusion": "only suffixes are +autodiff, +checkpointing and +autocast:DTYPE",
		// graphics-API kinds
		"vulkan":              "needs an adapter kind and an index",
		"vulkan:0":            "needs an adapter kind and an index",
		"vulkan:discrete":     "needs an adapter kind and an index",
		"vulkan:discrete:":    "empty device index",
		"vulkan:discrete:+0":  "no sign",
		"vulkan:discrete:0:1": "needs an adapter kind and an index",
		"vulkan:weird:0":      "unknown adapter kind",
		"wgpu:Discrete:0":     "unknown adapter kind",
		"vulkan:cpu":          "needs an adapter kind and an index",
		"vulkan:cpu:1":        "one adapter, index 0",
		"metal:default:2":     "one adapter, index 0",
		"webgpu:default:00":   "one adapter, index 0",
		// libtorch
		"libtorch:0":          "libtorch devices are",
		"libtorch:cuda":       "libtorch devices are",
		"libtorch:discrete:0": "libtorch devices are",
		"libtorch:mps:1":      "one mps device",
		"libtorch:cuda:01":    "leading zero",
		// remote
		"remote+ws://host":               "want remote+ws://HOST[:PORT]/N",
		"remote+ws://host:3000":          "want remote+ws://HOST[:PORT]/N",
		"remote+ws://host:3000/x":        "digits only",
		"remote+ws://host:3000/":         "empty device index",
		"remote+ws:///0":                 "empty server address",
		"remote+ws://:3000/0":            "has no host",
		"remote+ws://host:0/0":           "not 1 to 65535",
		"remote+ws://host:65536/0":       "not 1 to 65535",
		"remote+ws://host:030/0":         "not 1 to 65535",
		"remote+ws://host:+30/0":         "not 1 to 65535",
		"remote+ws://ws://host:1/0":      "not HOST:PORT",
		"remote+ws://host/path/0":        "not a letter",
		"remote+ws://ho@st:1/0":          "not a letter",
		"remote+ws://[::1/0":             "not HOST:PORT",
		"remote+ws://[1.2.3.4]:1/0":      "not a bracketed IPv6",
		"remote+ws://[::1]x/0":           "not HOST:PORT",
		"remote+ws://[host]:1/0":         "not a bracketed IPv6",
		"remote+ws://[::ffff:1.2.3.4]/0": "not a bracketed IPv6",
		"remote+ws://[0::1]:1/0":         "write the IPv6 address as [::1]",
		"remote+ws://[::1%eth0]/0":       "not a bracketed IPv6",
		"remote+ws://host./0":            "empty label",
		"remote+ws://a..b:1/0":           "empty label",
		"remote+ws://-host:1/0":          "starts or ends with '-'",
		"remote+ws://::1:3000/0":         "not HOST:PORT",
		"remote+ws:host:1/0":             "want remote+ws://HOST[:PORT]/N",
		"remote+ws":                      "want remote+ws://HOST[:PORT]/N",
		"remote+ws://host:1/01":          "leading zero",
		// suffixes
		"cpu+checkpointing":                        "+checkpointing needs +autodiff",
		"cpu+checkpointing+autodiff":               "in that order",
		"cpu+autodiff+autodiff":                    "each at most once",
		"+autodiff":                                "empty device type",
		"cpu:0+autodiff":                           "single device",
		"cpu+autodiff+checkpointing+checkpointing": "each at most once",
	}
	for s, why := range cases {
		d, err := ParseDevice(s)
		if err == nil {
			t.Errorf("ParseDevice(%q) = %v, want an error", s, d)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, fmt.Sprintf("ember: parse device %q: ", s)) || !strings.Contains(msg, why) {
			t.Errorf("ParseDevice(%q): error %q, want one quoting the name and saying %q", s, msg, why)
		}
		if !d.IsZero() {
			t.Errorf("ParseDevice(%q) failed but returned %v", s, d)
		}
	}
}

// EMBER_WGPU_DEFAULT_DEVICE is spelled like the DeviceKind variants;
// anything else is ignored (with a note on standard error), so
// DefaultKind stays the backend's default adapter.
func TestDefaultKindEnvironment(t *testing.T) {
	for env, want := range map[string]string{
		"discrete:0":   "vulkan:discrete:0",
		"integrated:1": "vulkan:integrated:1",
		"existing:3":   "vulkan:existing:3",
		"cpu":          "vulkan:cpu:0",
		"default":      "vulkan:default:0",
		// malformed: ignored
		"cpu:5":       "vulkan:default:0",
		"default:1":   "vulkan:default:0",
		"discrete":    "vulkan:default:0",
		"discrete:":   "vulkan:default:0",
		"discrete:+1": "vulkan:default:0",
		"existing:01": "vulkan:default:0",
		"virtual:0:1": "vulkan:default:0",
		"gpu:0":       "vulkan:default:0",
	} {
		t.Setenv("EMBER_WGPU_DEFAULT_DEVICE", env)
		d := Vulkan(DefaultKind)
		if got := d.String(); got != want {
			t.Errorf("EMBER_WGPU_DEFAULT_DEVICE=%q: Vulkan(DefaultKind) = %q, want %q", env, got, want)
		}
		if p, err := ParseDevice(d.String()); err != nil || p != d {
			t.Errorf("EMBER_WGPU_DEFAULT_DEVICE=%q: %q does not parse back: %v", env, d, err)
		}
	}
}

// FuzzParseDevice: no input panics; an accepted name is the device's
// canonical name (String gives it back), so it parses back to the same
// device; a rejected one gets an error that quotes it.
func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{
		"cpu", "flex", "ndarray", "cuda:0", "cuda:17", "rocm:2", "capture:3", "vulkan:discrete:0",
		"wgpu:integrated:1", "metal:cpu:0", "webgpu:default:0", "vulkan:existing:7", "libtorch",
		"libtorch:cuda:1", "libtorch:mps:0", "remote+ws://host:3000/0", "remote+ws://[::1]:1/2",
		"cpu+autodiff", "cuda:1+autodiff+checkpointing", "cpu:1", "flex:42", "cpu:discrete:0",
		"cuda:+1", "cuda:01", "cuda:99999999999999999999", " cpu", "cpu+checkpointing+autodiff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDevice(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("ember: parse device %q: ", s)) {
				t.Fatalf("ParseDevice(%q): error %q does not quote the name", s, err)
			}
			if !d.IsZero() {
				t.Fatalf("ParseDevice(%q) failed but returned %v", s, d)
			}
			return
		}
		if d.IsZero() {
			t.Fatalf("ParseDevice(%q) returned the zero Device", s)
		}
		if got := d.String(); got != s {
			t.Fatalf("ParseDevice(%q).String() = %q: an accepted name must be canonical", s, got)
		}
		again, err := ParseDevice(d.String())
		if err != nil || again != d || !again.Equal(d) {
			t.Fatalf("ParseDevice(%q) = %v, but ParseDevice(%q) = %v, %v", s, d, d.String(), again, err)
		}
	})
}
