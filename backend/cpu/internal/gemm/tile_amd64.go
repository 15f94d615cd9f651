package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_tiles.go
//go:generate go run gen_dots.go

// The assembly tile kernels (tiles_amd64.s), by instruction set.
var (
	tileAVX512 = newTileSet("avx512", 16, tilesAVX512, dotsAVX512)
	tileAVX2   = newTileSet("avx2", 8, tilesAVX2, dotsAVX2)
)

func init() { tiles = tileSetByName(bestTileKernel()) }

// bestTileKernel names the fastest tile kernels this CPU supports.
func bestTileKernel() string {
	switch {
	case cpu.X86.HasAVX512F:
		return "avx512"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return "avx2"
	}
	return "generic"
}

// tileSetByName returns the named set if this CPU supports it, else nil.
func tileSetByName(name string) *tileSet {
	switch {
	case name == "avx512" && cpu.X86.HasAVX512F:
		return tileAVX512
	case name == "avx2" && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return tileAVX2
	}
	return nil
}
