package backend

// Settings are a device's default dtypes: the dtype of float tensors made
// without one, of integer tensors, and how Bool tensors are stored. Zero
// fields mean "the root package's default" (F32, I64, BoolNative).
type Settings struct {
	FloatDType FloatDType
	IntDType   IntDType
	BoolDType  BoolDType
}

// SettingsReporter is implemented by backends whose device has default
// dtypes of its own, such as a remote device, which reports its server
// device's settings from the connection handshake. The root package's
// Device.Settings starts from them (instead of its own defaults) until
// Configure changes them. A backend without it gets the root's defaults.
type SettingsReporter interface {
	// DeviceSettings returns the device's default dtypes.
	DeviceSettings() Settings
}
