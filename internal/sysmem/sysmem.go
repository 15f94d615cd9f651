// Package sysmem reports the host's physical memory, for the CPU backends'
// device descriptions and the root package's allocation guard.
package sysmem

// Total returns the machine's physical memory in bytes, or 0 where this
// platform does not say.
func Total() uint64 { return total() }
