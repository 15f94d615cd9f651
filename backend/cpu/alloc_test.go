package cpu

import (
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func TestClassOf(t *testing.T) {
	for _, n := range []int{minPooled, minPooled + 1, 1280, 1281, 1 << 20, 3<<20 + 1, 1<<30 - 5} {
		c, size := classOf(n)
		if size < n || float64(size) > 1.25*float64(n)+1 || classSize(c) != size {
			t.Fatalf("classOf(%d) = %d, %d (classSize %d)", n, c, size, classSize(c))
		}
		if c > 0 && classSize(c-1) >= n {
			t.Fatalf("classOf(%d) = %d, but class %d (%d) fits", n, c, c-1, classSize(c-1))
		}
	}
}

// TestPooledClass checks the bounds of pooling: requests below minPooled
// and above the largest class (maxPooled elements, 2^37) are not pooled,
// and the largest class is the last one.
func TestPooledClass(t *testing.T) {
	if _, _, ok := pooledClass(minPooled - 1); ok {
		t.Errorf("%d elements pooled", minPooled-1)
	}
	if c, size, ok := pooledClass(minPooled); !ok || size != minPooled || c < 0 {
		t.Errorf("pooledClass(minPooled) = %d, %d, %v", c, size, ok)
	}
	if int64(classSize(numClass-1)) != maxPooled {
		t.Fatalf("the largest class holds %d elements, want %d", classSize(numClass-1), maxPooled)
	}
	big := maxPooled // a variable: int(maxPooled) does not compile where int has 32 bits
	if int64(int(big)) != big {
		return // such an int cannot reach the largest class
	}
	top := int(big)
	if c, size, ok := pooledClass(top); !ok || c != numClass-1 || int64(size) != maxPooled {
		t.Errorf("pooledClass(2^37) = %d, %d, %v; want the last class", c, size, ok)
	}
	if c, size, ok := pooledClass(top - 1); !ok || c != numClass-1 || int64(size) != maxPooled {
		t.Errorf("pooledClass(2^37-1) = %d, %d, %v; want the last class", c, size, ok)
	}
	if _, _, ok := pooledClass(top + 1); ok {
		t.Error("a request above the largest class is pooled")
	}
}

// TestAllocatorRecycles drops a kernel's output and checks that, after a
// collection runs its finalizer, the next request of the same size gets
// the same memory back, and that a recycled buffer full of NaN (stale
// contents) does not leak into a later result: products overwrite it.
func TestAllocatorRecycles(t *testing.T) {
	be := newTestBackend()
	buf := be.f32(5000)
	first := &buf[0]
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	addr := uintptr(unsafeAddr(first))
	buf, first = nil, nil
	for range 20 {
		runtime.GC()
		runtime.Gosched()
		if be.alloc.cachedBytes() > 0 {
			break
		}
	}
	if be.alloc.cachedBytes() == 0 {
		t.Fatal("finalizer did not return the buffer")
	}
	got := be.f32(4900) // same size class
	if uintptr(unsafeAddr(&got[0])) != addr || be.alloc.hits.Load() != 1 {
		t.Fatalf("buffer not reused (hits %d)", be.alloc.hits.Load())
	}
	// Put the NaN buffer back and run ops whose outputs land in it.
	for i := range got {
		got[i] = float32(math.NaN())
	}
	got = nil
	for range 20 {
		runtime.GC()
		runtime.Gosched()
		if be.alloc.cachedBytes() > 0 {
			break
		}
	}
	a := tensorOf(be, randVals(70*70, 1), []int{70, 70}, backend.F32)
	p := ir.Matmul(be, a, a) // 4900 elements: the recycled class
	want, _ := refMatmul(values(t, be, a), []int{70, 70}, values(t, be, a), []int{70, 70})
	closeTo(t, "matmul into recycled buffer", values(t, be, p), want, 1e-4)
	be.MemoryCleanup()
	if be.alloc.cachedBytes() != 0 {
		t.Fatalf("cleanup left %d bytes", be.alloc.cachedBytes())
	}
}

// unsafeAddr returns p's address (for checks of buffer identity).
func unsafeAddr[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }
