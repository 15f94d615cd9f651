// Package vk is the small part of the Vulkan API (Khronos, Vulkan 1.2)
// that Ember's compute backend uses, bound at run time to the system's
// loader (libvulkan.so.1) with purego, so that it builds without cgo. The
// structs mirror the C declarations of vulkan_core.h field for field, so
// that their Go layout (amd64, arm64) is the C layout; handles of
// dispatchable objects are pointers (uintptr), the others 64-bit values.
//
// Only Linux on amd64 and arm64 has this package's loader; elsewhere the
// package holds nothing but this comment.
package vk
