package backend

// DeviceInfo describes a device's hardware: the model name the driver
// reports ("NVIDIA H200") and its memory in bytes (0 where unknown).
type DeviceInfo struct {
	Name        string
	MemoryBytes uint64
}

// DeviceDescriber is implemented by backends that can name their hardware;
// the root package's Device.Info uses it.
type DeviceDescriber interface {
	DeviceInfo() DeviceInfo
}
