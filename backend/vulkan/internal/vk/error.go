//go:build linux && (amd64 || arm64)

package vk

import "fmt"

// Result is a VkResult.
type Result int32

// The VkResult values the backend tells apart.
const (
	Success                  Result = 0
	NotReady                 Result = 1
	Timeout                  Result = 2
	Incomplete               Result = 5
	ErrorOutOfHostMemory     Result = -1
	ErrorOutOfDeviceMemory   Result = -2
	ErrorInitializationFail  Result = -3
	ErrorDeviceLost          Result = -4
	ErrorMemoryMapFailed     Result = -5
	ErrorLayerNotPresent     Result = -6
	ErrorExtensionNotPresent Result = -7
	ErrorFeatureNotPresent   Result = -8
	ErrorIncompatibleDriver  Result = -9
	ErrorTooManyObjects      Result = -10
	ErrorFormatNotSupported  Result = -11
	ErrorFragmentedPool      Result = -12
	ErrorUnknown             Result = -13
	ErrorOutOfPoolMemory     Result = -1000069000
	ErrorInvalidShader       Result = -1000012000
)

var resultNames = map[Result]string{
	Success: "VK_SUCCESS", NotReady: "VK_NOT_READY", Timeout: "VK_TIMEOUT", Incomplete: "VK_INCOMPLETE",
	ErrorOutOfHostMemory: "VK_ERROR_OUT_OF_HOST_MEMORY", ErrorOutOfDeviceMemory: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorInitializationFail: "VK_ERROR_INITIALIZATION_FAILED", ErrorDeviceLost: "VK_ERROR_DEVICE_LOST",
	ErrorMemoryMapFailed: "VK_ERROR_MEMORY_MAP_FAILED", ErrorLayerNotPresent: "VK_ERROR_LAYER_NOT_PRESENT",
	ErrorExtensionNotPresent: "VK_ERROR_EXTENSION_NOT_PRESENT", ErrorFeatureNotPresent: "VK_ERROR_FEATURE_NOT_PRESENT",
	ErrorIncompatibleDriver: "VK_ERROR_INCOMPATIBLE_DRIVER", ErrorTooManyObjects: "VK_ERROR_TOO_MANY_OBJECTS",
	ErrorFormatNotSupported: "VK_ERROR_FORMAT_NOT_SUPPORTED", ErrorFragmentedPool: "VK_ERROR_FRAGMENTED_POOL",
	ErrorUnknown: "VK_ERROR_UNKNOWN", ErrorOutOfPoolMemory: "VK_ERROR_OUT_OF_POOL_MEMORY",
	ErrorInvalidShader: "VK_ERROR_INVALID_SHADER_NV",
}

// String returns the VkResult's name ("VK_ERROR_DEVICE_LOST").
func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// Error is a failed Vulkan call: the function and its VkResult.
type Error struct {
	Call   string
	Result Result
}

// Error reads "vkQueueSubmit: VK_ERROR_DEVICE_LOST".
func (e *Error) Error() string { return e.Call + ": " + e.Result.String() }

// DeviceLost reports whether the device was lost: every later call on it
// fails, so the error is sticky.
func (e *Error) DeviceLost() bool { return e.Result == ErrorDeviceLost }

// OutOfMemory reports whether the call ran out of host or device memory.
func (e *Error) OutOfMemory() bool {
	return e.Result == ErrorOutOfDeviceMemory || e.Result == ErrorOutOfHostMemory
}

// check returns nil for a success code (VK_SUCCESS and the other
// non-negative results) and an *Error naming name otherwise.
func check(name string, r Result) error {
	if r >= 0 {
		return nil
	}
	return &Error{Call: name, Result: r}
}
