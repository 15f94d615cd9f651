package main

import (
	"testing"

	"github.com/emberml/ember"
)

// A bare graphics-API type names its DefaultKind device; every other
// name is ParseDevice's.
func TestParseDeviceArg(t *testing.T) {
	for name, want := range map[string]ember.Device{
		"vulkan":          ember.Vulkan(ember.DefaultKind),
		"wgpu":            ember.WGPU(ember.DefaultKind),
		"vulkan:cpu:0":    ember.Vulkan(ember.KindCPU),
		"cpu":             ember.CPU(),
		"cuda:1+autodiff": ember.CUDA(1).Autodiff(),
	} {
		got, err := parseDeviceArg(name)
		if err != nil || got != want {
			t.Errorf("parseDeviceArg(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := parseDeviceArg("vulkan:0"); err == nil {
		t.Error(`parseDeviceArg("vulkan:0") accepted a malformed name`)
	}
}
