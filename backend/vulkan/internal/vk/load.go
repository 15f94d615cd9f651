//go:build linux && (amd64 || arm64)

package vk

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Library is the name of the Vulkan loader Load opens (Debian's libvulkan1,
// the Khronos ICD loader); EMBER_VULKAN_LIBRARY, read by the caller, may
// name another file.
const Library = "libvulkan.so.1"

var (
	loadOnce sync.Once
	loadErr  error

	pGetInstanceProcAddr                  uintptr
	pCreateInstance                       uintptr
	pEnumerateInstanceVersion             uintptr
	pEnumerateInstanceExtensionProperties uintptr
)

// Load opens the Vulkan loader (path, or Library when empty) and resolves
// its global entry points. Later calls return the first result. The error
// names the library and the loader's message.
func Load(path string) error {
	loadOnce.Do(func() { loadErr = load(path) })
	return loadErr
}

func load(path string) error {
	if path == "" {
		path = Library
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return fmt.Errorf("the Vulkan loader %s is not installed or cannot be loaded (Debian: apt-get install libvulkan1 mesa-vulkan-drivers): %w", path, err)
	}
	if pGetInstanceProcAddr, err = purego.Dlsym(h, "vkGetInstanceProcAddr"); err != nil {
		return fmt.Errorf("%s: symbol vkGetInstanceProcAddr missing: %w", path, err)
	}
	pCreateInstance = instanceProc(0, "vkCreateInstance")
	pEnumerateInstanceVersion = instanceProc(0, "vkEnumerateInstanceVersion")
	pEnumerateInstanceExtensionProperties = instanceProc(0, "vkEnumerateInstanceExtensionProperties")
	if pCreateInstance == 0 {
		return fmt.Errorf("%s: vkCreateInstance is missing", path)
	}
	return nil
}

// instanceProc returns vkGetInstanceProcAddr(instance, name) (0 when the
// loader does not have it).
func instanceProc(instance Instance, name string) uintptr {
	b := cstr(name)
	r, _, _ := purego.SyscallN(pGetInstanceProcAddr, uintptr(instance), uintptr(unsafe.Pointer(&b[0])))
	return r
}

// cstr returns name as a NUL-terminated byte slice.
func cstr(name string) []byte {
	b := make([]byte, len(name)+1)
	copy(b, name)
	return b
}

// goString copies a NUL-terminated C string held in a fixed array.
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// call calls the C function fn. The objects that unsafe.Pointer arguments
// point to are moved to the heap and kept alive for the call
// (go:uintptrescapes, as purego.SyscallN).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return Result(int32(r))
}

// callVoid calls a C function that returns nothing.
//
//go:uintptrescapes
func callVoid(fn uintptr, args ...uintptr) {
	purego.SyscallN(fn, args...)
}

// syscallN is purego.SyscallN for calls whose result is not a VkResult.
//
//go:uintptrescapes
func syscallN(fn uintptr, args ...uintptr) (uintptr, uintptr, uintptr) {
	return purego.SyscallN(fn, args...)
}

// keep keeps its arguments reachable until this call (objects whose
// addresses were stored in structs handed to the driver as integers).
func keep(xs ...any) {
	for _, x := range xs {
		runtime.KeepAlive(x)
	}
}
