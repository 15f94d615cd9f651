//go:build linux && (amd64 || arm64)

package vk

import "testing"

// TestInstance creates an instance and lists the physical devices with
// their properties and features; it skips where no loader is installed.
func TestInstance(t *testing.T) {
	if err := Load(""); err != nil {
		t.Skipf("no Vulkan loader: %v", err)
	}
	in, err := CreateInstance("ember-test", MakeAPIVersion(1, 2, 0))
	if err != nil {
		t.Skipf("no Vulkan instance: %v", err)
	}
	defer in.Destroy()
	pds, err := in.PhysicalDevices()
	if err != nil {
		t.Fatal(err)
	}
	for _, pd := range pds {
		p := in.Properties(pd)
		f := in.Features(pd)
		m := in.MemoryProperties(pd)
		drv, sg := in.DriverProperties(pd)
		t.Logf("%s type %d api %s driver %s sg %d f64 %d i64 %d 8bit %d 16bit %d f16 %d maxSSBO %d wgc %v types %d", p.Name(), p.DeviceType, APIVersionString(p.APIVersion),
			goString(drv.DriverName[:]), sg, f.Core.Features[FeatureShaderFloat64], f.Core.Features[FeatureShaderInt64],
			f.V12.Bools[Feature12StorageBuffer8BitAccess], f.V11.Bools[Feature11StorageBuffer16BitAccess], f.V12.Bools[Feature12ShaderFloat16],
			p.Limits.MaxStorageBufferRange, p.Limits.MaxComputeWorkGroupCount, m.MemoryTypeCount)
		if p.Name() == "" {
			t.Error("empty device name")
		}
	}
}
