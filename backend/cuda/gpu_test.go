package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

var (
	gpuOnce sync.Once
	gpuB    *Backend
	gpuErr  error
)

// gpu returns the shared backend of GPU 0, or skips the test when there is
// no usable CUDA device. It compiles fused kernels at their first call
// (FusedTiering.Sync), as the tests of ExecFused's kernels expect; the
// tiers are tested on backends of their own (fused_tiering_test.go).
func gpu(t testing.TB) *Backend {
	t.Helper()
	gpuOnce.Do(func() {
		gpuB, gpuErr = Open(0)
		if gpuErr == nil {
			gpuB.SetFusedTiering(FusedTiering{Sync: true})
		}
	})
	if gpuErr != nil {
		t.Skipf("no CUDA device: %v", gpuErr)
	}
	return gpuB
}

// mustPanic runs f and returns the error it panicked with.
func mustPanic(t *testing.T, f func()) (err error) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("no panic")
		}
		e, ok := r.(error)
		if !ok {
			t.Fatalf("panic with %T %v, want an error", r, r)
		}
		err = e
	}()
	f()
	return nil
}

// randomData returns n random non-zero values of dt (Bool: 0 and 1).
func randomData(rng *rand.Rand, shape []int, dt backend.DType) *backend.TensorData {
	n := backend.NumElements(shape)
	f := make([]byte, 8*n)
	for i := range n {
		v := rng.NormFloat64() * 3
		switch {
		case dt == backend.Bool:
			v = float64(rng.IntN(2))
		case dt.IsInt():
			v = float64(rng.IntN(200) - 100)
			if !dt.IsSigned() {
				v = float64(rng.IntN(250) + 1)
			}
		}
		binary.LittleEndian.PutUint64(f[8*i:], math.Float64bits(v))
	}
	return (&backend.TensorData{Shape: shape, DType: backend.F64, Bytes: f}).Convert(dt)
}

func TestGPURoundTripAllDTypes(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dt := range backend.AllDTypes {
		for _, shape := range [][]int{{}, {0}, {7}, {3, 5, 11}, {1000, 37}} {
			want := randomData(rng, shape, dt)
			got, err := b.ToData(b.FromData(want))
			if err != nil {
				t.Fatalf("%v %v: %v", dt, shape, err)
			}
			if got.DType != dt || !slices.Equal(got.Shape, shape) || string(got.Bytes) != string(want.Bytes) {
				t.Fatalf("%v %v: round trip changed the data", dt, shape)
			}
		}
	}
	// Pinned staging gives the same values.
	d := randomData(rng, []int{513, 9}, backend.F32)
	orig := append([]byte(nil), d.Bytes...)
	b.Staging(d)
	got, err := b.ToData(b.FromData(d))
	if err != nil || string(got.Bytes) != string(orig) || string(d.Bytes) != string(orig) {
		t.Fatalf("staged round trip: err %v, equal %v", err, string(got.Bytes) == string(orig))
	}
}

func TestGPUFullArange(t *testing.T) {
	b := gpu(t)
	for _, dt := range backend.AllDTypes {
		for _, v := range []float64{-2.7, 3.25, 1e5} {
			if ir.ScalarFits(v, dt) != nil {
				continue // not a value of dt: Full refuses it (ir's tests)
			}
			got, err := b.ToData(ir.Full(b, []int{33, 5}, dt, v))
			if err != nil {
				t.Fatal(err)
			}
			one := (&backend.TensorData{Shape: []int{1}, DType: backend.F64, Bytes: binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))}).Convert(dt)
			for i := 0; i < 165; i++ {
				if got.Value(i) != one.Value(0) {
					t.Fatalf("Full(%v, %v)[%d] = %v, want %v", dt, v, i, got.Value(i), one.Value(0))
				}
			}
		}
		got, err := b.ToData(arangeOn(b, -3, 0.5, 20, dt))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			one := (&backend.TensorData{Shape: []int{1}, DType: backend.F64, Bytes: binary.LittleEndian.AppendUint64(nil, math.Float64bits(-3+0.5*float64(i)))}).Convert(dt)
			if got.Value(i) != one.Value(0) {
				t.Fatalf("Arange %v [%d] = %v, want %v", dt, i, got.Value(i), one.Value(0))
			}
		}
	}
}

// refMatmul is the float64 reference of [batch..., m, k] x [batch..., k, n]
// with both operands already broadcast to the same batch.
func refMatmul(a, c []float64, nb, m, k, n int, aBatch, cBatch func(int) int) []float64 {
	out := make([]float64, nb*m*n)
	for bi := 0; bi < nb; bi++ {
		ao, co := aBatch(bi)*m*k, cBatch(bi)*k*n
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += a[ao+i*k+p] * c[co+p*n+j]
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	return out
}

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		if math.IsNaN(got[i]) {
			return math.Inf(1)
		}
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func values(d *backend.TensorData) []float64 {
	out := make([]float64, d.NumElements())
	for i := range out {
		out[i] = d.Value(i)
	}
	return out
}

func TestGPUMatmulFloat(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(3, 4))
	// Tolerances on ||out-ref||/||ref|| (reference from the rounded inputs):
	// float32 arithmetic, float64, and the output rounding of F16 / BF16.
	tols := map[backend.DType]float64{backend.F32: 2e-6, backend.F64: 1e-13, backend.F16: 1e-3, backend.BF16: 6e-3}
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16} {
		// 2-d with odd sizes.
		m, k, n := 67, 45, 33
		ad, cd := randomData(rng, []int{m, k}, dt), randomData(rng, []int{k, n}, dt)
		got, err := b.ToData(ir.Matmul(b, b.FromData(ad), b.FromData(cd)))
		if err != nil {
			t.Fatal(err)
		}
		zero := func(int) int { return 0 }
		if e := relErr(values(got), refMatmul(values(ad), values(cd), 1, m, k, n, zero, zero)); e > tols[dt] {
			t.Errorf("%v 2-d: relative error %.3g > %.3g", dt, e, tols[dt])
		}
		// Batched [4, m, k] x [k, n] (stride-0 batch on the right) and a
		// transposed right operand (a permuted view, passed as OpT).
		ab := randomData(rng, []int{4, m, k}, dt)
		ct := randomData(rng, []int{n, k}, dt) // c = ct^T
		cView := ir.Permute(b, b.FromData(ct), []int{1, 0})
		got, err = b.ToData(ir.Matmul(b, b.FromData(ab), cView))
		if err != nil {
			t.Fatal(err)
		}
		cvals := make([]float64, k*n)
		tv := values(ct)
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				cvals[p*n+j] = tv[j*k+p]
			}
		}
		if e := relErr(values(got), refMatmul(values(ab), cvals, 4, m, k, n, func(i int) int { return i }, zero)); e > tols[dt] {
			t.Errorf("%v batched, transposed: relative error %.3g > %.3g", dt, e, tols[dt])
		}
		if !slices.Equal(got.Shape, []int{4, m, n}) {
			t.Errorf("%v batched shape %v", dt, got.Shape)
		}
	}
	// TF32: allowed error near 3e-4 (METHOD.md); float32 stays far below it.
	b.SetTF32(true)
	ad, cd := randomData(rng, []int{256, 512}, backend.F32), randomData(rng, []int{512, 128}, backend.F32)
	got, err := b.ToData(ir.Matmul(b, b.FromData(ad), b.FromData(cd)))
	b.SetTF32(false)
	if err != nil {
		t.Fatal(err)
	}
	zero := func(int) int { return 0 }
	e := relErr(values(got), refMatmul(values(ad), values(cd), 1, 256, 512, 128, zero, zero))
	t.Logf("tf32 relative error %.3g", e)
	if e > 3e-3 {
		t.Errorf("tf32 relative error %.3g > 3e-3", e)
	}
}

func TestGPUMatmulBroadcastBatch(t *testing.T) {
	b := gpu(t)
	if copyStrided == nil {
		t.Skip("strided copy kernel not built in")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	m, k, n := 9, 13, 7
	ad, cd := randomData(rng, []int{3, 1, m, k}, backend.F32), randomData(rng, []int{4, k, n}, backend.F32)
	got, err := b.ToData(ir.Matmul(b, b.FromData(ad), b.FromData(cd)))
	if err != nil {
		t.Fatal(err)
	}
	want := refMatmul(values(ad), values(cd), 12, m, k, n, func(i int) int { return i / 4 }, func(i int) int { return i % 4 })
	if e := relErr(values(got), want); e > 2e-6 || !slices.Equal(got.Shape, []int{3, 4, m, n}) {
		t.Errorf("broadcast batch: shape %v, relative error %.3g", got.Shape, e)
	}
}

func TestGPUMatmulInt(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dt := range []backend.DType{backend.I64, backend.I32, backend.I8, backend.U8} {
		m, k, n := 5, 17, 6
		ad, cd := randomData(rng, []int{2, m, k}, dt), randomData(rng, []int{k, n}, dt)
		got, err := b.ToData(ir.Matmul(b, b.FromData(ad), b.FromData(cd)))
		if err != nil {
			t.Fatal(err)
		}
		ref := refMatmul(values(ad), values(cd), 2, m, k, n, func(i int) int { return i }, func(int) int { return 0 })
		// Wrap the exact integer results to dt as the kernel does.
		raw := make([]byte, 8*len(ref))
		for i, v := range ref {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(int64(v)))
		}
		wrapped := (&backend.TensorData{Shape: []int{len(ref)}, DType: backend.U64, Bytes: raw}).Convert(dt)
		if string(got.Bytes) != string(wrapped.Bytes) {
			t.Errorf("%v matmul differs from the wrapped exact result", dt)
		}
	}
}

func TestGPUViews(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(9, 9))
	d := randomData(rng, []int{4, 6}, backend.F32)
	x := b.FromData(d)
	v := values(d)
	// A contiguous row slice and a reshape of it stay views of x's buffer.
	s := ir.Slice(b, x, []backend.Range{{Start: 1, End: 3, Step: 1}, {Start: 0, End: 6, Step: 1}}).(*Tensor)
	r := ir.Reshape(b, s, []int{3, 4}).(*Tensor)
	if r.buf != x.(*Tensor).buf || !r.IsContiguous() || r.offset != 6 {
		t.Fatalf("reshape of a row slice copied: offset %d contiguous %v", r.offset, r.IsContiguous())
	}
	got, err := b.ToData(r)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(values(got), v[6:18]); e != 0 {
		t.Fatalf("row slice values differ")
	}
	if copyStrided == nil {
		t.Skip("strided copy kernel not built in: non-contiguous reads not checked")
	}
	f := ir.Flip(b, ir.Permute(b, x, []int{1, 0}), []int{0})
	got, err = b.ToData(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		for j := 0; j < 4; j++ {
			if got.Value(i*4+j) != v[j*6+(5-i)] {
				t.Fatalf("flip(permute) [%d,%d] = %v, want %v", i, j, got.Value(i*4+j), v[j*6+(5-i)])
			}
		}
	}
}

func TestGPUAllocatorReuse(t *testing.T) {
	b := gpu(t)
	b.MemoryCleanup()
	// Eager release: one page serves every cycle.
	var first uint64
	for i := 0; i < 2000; i++ {
		x := b.Empty([]int{1 << 20}, backend.F32) // 4 MiB
		b.Release(x)
		if i == 0 {
			first, _ = reserved(b)
		}
	}
	if r, _ := reserved(b); r != first {
		t.Fatalf("eager release: reserved %d after 2000 cycles, %d after the first", r, first)
	}
	// Garbage-collected release: reserved grows during warm-up, then stays flat.
	var warm uint64
	for i := 0; i < 2000; i++ {
		_ = ir.Full(b, []int{1 << 20}, backend.F32, 1)
		if i == 200 {
			warm, _ = reserved(b)
		}
	}
	if r, _ := reserved(b); r != warm {
		t.Fatalf("GC release: reserved %d after 2000 cycles, %d after 200", r, warm)
	}
	t.Logf("reserved after GC-released cycles: %d MiB", warm>>20)
}

func reserved(b *Backend) (uint64, bool) {
	u, ok := b.MemoryPoolUsage()
	return u.BytesReserved, ok
}

func TestGPUInstallPoolsCycle(t *testing.T) {
	b := gpu(t)
	defer func() {
		if err := b.MemoryInstallPools(backend.Preset()); err != nil {
			t.Errorf("restoring the preset: %v", err)
		}
	}()
	u := func(v uint64) *uint64 { return &v }
	grow := []backend.SlicedPool{{PageSize: 16 << 20, MaxSlice: u(4 << 20)}}
	// Tensors of earlier tests return to the pools only once the garbage
	// collector has run their cleanups: retry at a quiescent point, as
	// PoolsInUseError asks.
	var err error
	for range 20 {
		if err = b.MemoryInstallPools(backend.Sliced(grow)); err == nil {
			break
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("install growable: %v", err)
	}
	workload := func() {
		var live []*Tensor
		for i := 0; i < 12; i++ {
			live = append(live, ir.Full(b, []int{3 << 18}, backend.F32, float64(i)).(*Tensor)) // 3 MiB
		}
		for _, x := range live {
			b.Release(x)
		}
	}
	workload()
	rep, ok := b.MemoryPoolReport()
	if !ok || len(rep) != 1 {
		t.Fatalf("report %v %v", rep, ok)
	}
	peak := rep[0].PagesPeak
	if peak != 3 || rep[0].LargestAlloc != 3<<20 { // five 3 MiB slices per 16 MiB page
		t.Fatalf("report %+v, want PagesPeak 3, LargestAlloc 3 MiB", rep[0])
	}
	capped := []backend.SlicedPool{{PageSize: 16 << 20, MaxSlice: u(4 << 20), Pages: &peak}}
	if err := b.MemoryInstallPools(backend.Sliced(capped)); err != nil {
		t.Fatalf("install capped: %v", err)
	}
	workload()
	workload()
	rep, _ = b.MemoryPoolReport()
	if rep[0].Pages != peak || rep[0].PagesPeak != peak {
		t.Fatalf("capped rerun grew: %+v", rep[0])
	}
	// A live dynamic buffer blocks a layout change, which then stays.
	x := ir.Full(b, []int{10}, backend.F32, 1)
	var inUse *backend.PoolsInUseError
	if err := b.MemoryInstallPools(backend.Preset()); !errors.As(err, &inUse) || inUse.BytesInUse < 40 {
		t.Fatalf("install with a live tensor: %v", err)
	}
	if rep, _ = b.MemoryPoolReport(); len(rep) != 1 || rep[0].PageSize != 16<<20 {
		t.Fatalf("layout changed by a refused install: %+v", rep)
	}
	b.Release(x.(*Tensor))
	var inv *backend.InvalidLayoutError
	if err := b.MemoryInstallPools(backend.Sliced([]backend.SlicedPool{{PageSize: 1 << 20, MaxSlice: u(2 << 20)}})); !errors.As(err, &inv) {
		t.Fatalf("invalid layout: %v", err)
	}
}

func TestGPUPersistent(t *testing.T) {
	b := gpu(t)
	var p *Tensor
	b.MemoryPersistentAllocations(func() { p = ir.Full(b, []int{1000}, backend.F32, 2).(*Tensor) })
	if p.buf.blk.kind != kindPersistent {
		t.Fatalf("allocation inside MemoryPersistentAllocations is %v", p.buf.blk.kind)
	}
	got, err := b.ToData(p)
	if err != nil || got.Value(999) != 2 {
		t.Fatalf("persistent tensor: %v %v", err, got)
	}
}

func TestGPUOutOfMemory(t *testing.T) {
	b := gpu(t)
	err := mustPanic(t, func() { b.Empty([]int{1 << 50}, backend.U8) })
	if !errors.Is(err, backend.ErrOutOfMemory) || !strings.Contains(err.Error(), "allocating 1125899906842624 bytes") ||
		!strings.Contains(err.Error(), "free ") {
		t.Fatalf("error %v: want ErrOutOfMemory with the requested and free bytes", err)
	}
	t.Log(err)
	// The device still works.
	if got, err := b.ToData(ir.Full(b, []int{3}, backend.I32, 7)); err != nil || got.Value(2) != 7 {
		t.Fatalf("after OOM: %v", err)
	}
}

func TestGPULaunchAndCompileErrors(t *testing.T) {
	b := gpu(t)
	k := b.Kernel("ember_stats_empty", statsSource)
	err := mustPanic(t, func() { b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{4096, 1, 1}, 0) })
	if !strings.Contains(err.Error(), "ember_stats_empty") || !strings.Contains(err.Error(), "CUDA_ERROR_INVALID_VALUE") {
		t.Fatalf("launch error %q: want the kernel and CUDA error names", err)
	}
	t.Log(err)
	err = mustPanic(t, func() { b.Kernel("ember_broken", `extern "C" __global__ void ember_broken() { undefined_thing(); }`) })
	if !strings.Contains(err.Error(), "ember_broken") || !strings.Contains(err.Error(), "undefined_thing") {
		t.Fatalf("compile error %q: want the kernel name and the NVRTC log", err)
	}
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync after non-sticky errors: %v", err)
	}
}

func TestGPUConcurrent(t *testing.T) {
	b := gpu(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < 50; i++ {
				d := randomData(rng, []int{64, 33}, backend.F32)
				got, err := b.ToData(b.FromData(d))
				if err != nil || string(got.Bytes) != string(d.Bytes) {
					t.Errorf("goroutine %d: round trip failed: %v", g, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestGPUPerformanceStats(t *testing.T) {
	b := gpu(t)
	keys := []backend.ThroughputKey{
		{Mode: backend.ModeComputeDirect, DType: backend.F32},
		{Mode: backend.ModeComputeDirect, DType: backend.F64},
		{Mode: backend.ModeComputeCMMA, DType: backend.BF16, M: 8192, N: 8192, K: 8192},
		{Mode: backend.ModeComputeCMMA, DType: backend.F16, M: 8192, N: 8192, K: 8192},
		{Mode: backend.ModeComputeCMMA, DType: backend.F32, M: 8192, N: 8192, K: 8192},
		{Mode: backend.ModeComputeCMMA, DType: backend.BF16, M: 16, N: 16, K: 16},
		{Mode: backend.ModeComputeCMMA, DType: backend.F16, M: 16, N: 16, K: 16},
		{Mode: backend.ModeComputeCMMA, DType: backend.BF16, M: 16, N: 8, K: 8},
		{Mode: backend.ModeComputeCMMA, DType: backend.F32, M: 16, N: 16, K: 8},
		{Mode: backend.ModeMemory}, {Mode: backend.ModeMemoryRead}, {Mode: backend.ModeMemoryWrite},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessSequential, Bytes: 32 << 10},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessSequential, Bytes: 16 << 20},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessSequential, Bytes: 1 << 30},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessRandom, Bytes: 16 << 20},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessRandom, Bytes: 1 << 30},
		{Mode: backend.ModeLaunch},
	}
	// Keys no probe covers come back with an error, not a panic.
	for _, k := range []backend.ThroughputKey{
		{Mode: backend.ModeComputeCMMA, DType: backend.BF16, M: 16, N: 16, K: 32},
		{Mode: backend.ModeComputeCMMA, DType: backend.F64, M: 16, N: 16, K: 16},
		{Mode: backend.ModeMemoryWorkingSet, Access: backend.AccessRandom, Bytes: 8},
	} {
		if s := b.PerformanceStats([]backend.ThroughputKey{k})[0]; s.Err == nil {
			t.Errorf("%+v: want an error, got %v", k, s)
		}
	}
	for _, s := range b.PerformanceStats(keys) {
		t.Log(s)
		if s.Err != nil || (s.Key.Mode != backend.ModeLaunch && !(s.Value > 0)) || (s.Key.Mode == backend.ModeLaunch && s.Latency <= 0) {
			t.Errorf("%v: %+v", s.Key.Mode, s)
		}
	}
}
