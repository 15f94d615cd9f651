//go:build !linux

package sysmem

func total() uint64 { return 0 }
