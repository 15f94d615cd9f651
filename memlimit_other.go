//go:build !linux

package ember

func totalHostMemory() uint64 { return 0 }
