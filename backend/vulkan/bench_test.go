//go:build linux && (amd64 || arm64)

package vulkan

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// BenchmarkCopy64MiB times a device copy of 64 MiB (bytes read plus
// written per second).
func BenchmarkCopy64MiB(bb *testing.B) {
	b := testBackend(bb)
	n := 16 << 20
	src := b.empty("bench", []int{n}, backend.F32)
	dst := b.empty("bench", []int{n}, backend.F32)
	b.fill(src.buf, 0, src.strides, src.shape, backend.F32, 0x3f800000)
	b.Sync()
	bb.SetBytes(int64(8 * n))
	bb.ResetTimer()
	for range bb.N {
		b.copyInto(dst.buf, 0, dst.strides, src)
		b.Sync()
	}
}

// BenchmarkAdd64MiB times an F32 addition of two 16M-element vectors
// (bytes read plus written per second).
func BenchmarkAdd64MiB(bb *testing.B) {
	b := testBackend(bb)
	n := 16 << 20
	x := ir.Full(b, []int{n}, backend.F32, 1)
	y := ir.Full(b, []int{n}, backend.F32, 2)
	b.Sync()
	bb.SetBytes(int64(12 * n))
	bb.ResetTimer()
	for range bb.N {
		ir.Add(b, x, y)
		b.Sync()
	}
}
