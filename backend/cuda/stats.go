package cuda

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// statsSource holds the micro-benchmark kernels: an FMA loop (8
// independent chains per thread), 16-byte vector copy, read and write
// kernels, a pseudo-random bit filler and an empty kernel.
const statsSource = `
template <typename T> __device__ void fma_loop(T* out, int iters, T seed) {
	T a0 = seed + threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
	const T m = (T)0.999999, c = (T)1e-7;
	for (int i = 0; i < iters; i++) {
		a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c;
		a4 = a4 * m + c; a5 = a5 * m + c; a6 = a6 * m + c; a7 = a7 * m + c;
	}
	T s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
	if (s == (T)-1.2345) out[0] = s; // never true; keeps the loop
}
extern "C" __global__ void ember_stats_fma_f32(float* out, int iters, float seed) { fma_loop<float>(out, iters, seed); }
extern "C" __global__ void ember_stats_fma_f64(double* out, int iters, double seed) { fma_loop<double>(out, iters, seed); }

extern "C" __global__ void ember_stats_copy(uint4* dst, const uint4* src, unsigned long long n) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
		dst[i] = src[i];
}
extern "C" __global__ void ember_stats_read(unsigned int* out, const uint4* src, unsigned long long n) {
	unsigned int x = 0;
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
		uint4 v = src[i];
		x ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (x == 0x9e3779b9u) out[0] = x; // data-dependent: the reads stay
}
extern "C" __global__ void ember_stats_write(uint4* dst, unsigned long long n) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
		dst[i] = make_uint4((unsigned int)i, 1u, 2u, 3u);
}
// ember_stats_random_bits fills n words (16- or 32-bit) with values
// sign | (expBase + r%2) << expShift | r & mantMask: magnitudes in [0.25, 1).
extern "C" __global__ void ember_stats_random_bits(void* p, unsigned long long n, int wide, unsigned int signShift,
		unsigned int expBase, unsigned int expShift, unsigned int mantMask) {
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
		unsigned long long z = i + 0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; z = (z ^ (z >> 27)) * 0x94d049bb133111ebull; z ^= z >> 31;
		unsigned int r = (unsigned int)z, s = (unsigned int)(z >> 32);
		unsigned int bits = ((s & 1u) << signShift) | ((expBase + ((s >> 1) & 1u)) << expShift) | (r & mantMask);
		if (wide) ((unsigned int*)p)[i] = bits; else ((unsigned short*)p)[i] = (unsigned short)bits;
	}
}
extern "C" __global__ void ember_stats_empty() {}
`

// PerformanceStats runs one micro-benchmark per key, in order; each value
// is the median of repeated runs timed with CUDA events after a warm-up:
//
//   - ComputeDirect F32/Flex32, F64: an FMA loop (2 FLOP per FMA) on every SM;
//   - ComputeCMMA F16, BF16 (F32: TF32 tensor cores) with an instruction
//     tile (every side at most 64: 16×8×K or 16×16×K, K 16 or 8, for
//     TF32 8 or 4): every warp of every SM issuing independent mma.sync
//     instructions of that shape from registers (statTile), the matrix
//     units' peak rate; larger keys (and M, N, K unset: 8192 each): a
//     cuBLAS GEMM of M×N×K on pseudo-random data in [-1, 1), 2·M·N·K FLOP;
//   - Memory: a 1 GiB device copy, bytes read plus written per second;
//     MemoryRead, MemoryWrite: 1 GiB read or written; MemoryWorkingSet:
//     4 GiB of 16-byte reads over a working set of Bytes, in order
//     (repeated passes) or hashed (Random), so sets within the L2 cache
//     measure it;
//   - Launch: host time per launch of an empty kernel, over 256 launches
//     after a Sync (the CPU-side cost of queueing one kernel).
//
// Other keys, and dtypes the kernels do not cover, come back with Err set.
func (b *Backend) PerformanceStats(keys []backend.ThroughputKey) []backend.ThroughputStat {
	out := make([]backend.ThroughputStat, len(keys))
	for i, k := range keys {
		out[i] = b.measure(k)
	}
	return out
}

func (b *Backend) measure(k backend.ThroughputKey) (st backend.ThroughputStat) {
	st.Key = k
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				st.Err = e
				return
			}
			st.Err = fmt.Errorf("%v", r)
		}
	}()
	if err := b.failed(); err != nil {
		st.Err = err
		return st
	}
	switch k.Mode {
	case backend.ModeComputeDirect:
		st.Value, st.Err = b.statFMA(k.DType)
	case backend.ModeComputeCMMA:
		if isTileKey(k) {
			st.Value, st.Err = b.statTile(k)
		} else {
			st.Value, st.Err = b.statGemm(k)
		}
	case backend.ModeMemoryWorkingSet:
		st.Value, st.Err = b.statWorkingSet(k)
	case backend.ModeMemory, backend.ModeMemoryRead, backend.ModeMemoryWrite:
		st.Value = b.statMemory(k.Mode)
	case backend.ModeLaunch:
		st.Latency = b.statLaunch()
	default:
		st.Err = errors.New("not measured by the cuda backend")
	}
	return st
}

// timeMedian runs f warm times, then reps times between CUDA events, and
// returns the median duration of one run.
func (b *Backend) timeMedian(warm, reps int, f func()) time.Duration {
	for range warm {
		f()
	}
	exit := b.enter()
	start, err := cu.EventCreate(cu.EventDefault)
	b.must(err)
	end, err := cu.EventCreate(cu.EventDefault)
	b.must(err)
	exit()
	defer func() {
		exit := b.enter()
		_ = cu.EventDestroy(start)
		_ = cu.EventDestroy(end)
		exit()
	}()
	ds := make([]time.Duration, reps)
	for i := range ds {
		exit := b.enter()
		b.must(cu.EventRecord(start, b.stream))
		exit()
		f()
		exit = b.enter()
		b.must(cu.EventRecord(end, b.stream))
		b.must(cu.EventSynchronize(end))
		ms, err := cu.EventElapsed(start, end)
		b.must(err)
		exit()
		ds[i] = time.Duration(float64(ms) * 1e6)
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func (b *Backend) statFMA(dt backend.DType) (float64, error) {
	name := "ember_stats_fma_f32"
	switch dt {
	case backend.F32, backend.Flex32:
	case backend.F64:
		name = "ember_stats_fma_f64"
	default:
		return 0, fmt.Errorf("compute-direct: dtype %v not measured (f32, f64)", dt)
	}
	k := b.Kernel(name, statsSource)
	const iters, threads = 4096, 256
	blocks := b.smCount * 16
	scratch := b.Empty([]int{1}, backend.F64)
	defer b.Release(scratch)
	d := b.timeMedian(2, 7, func() {
		if dt == backend.F64 {
			b.Launch(k, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{threads, 1, 1}, 0, scratch, int32(iters), float64(1))
		} else {
			b.Launch(k, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{threads, 1, 1}, 0, scratch, int32(iters), float32(1))
		}
	})
	flop := 2.0 * 8 * iters * float64(threads) * float64(blocks)
	return flop / d.Seconds(), nil
}

// randomFill fills t (F16, BF16 or F32) with pseudo-random values of
// magnitude in [0.25, 1) and random sign.
func (b *Backend) randomFill(t *Tensor) {
	k := b.Kernel("ember_stats_random_bits", statsSource)
	n := uint64(t.NumElements())
	grid, block := Grid1D(int(min(n, 1<<20)), 256)
	switch t.dtype {
	case backend.F16:
		b.Launch(k, grid, block, 0, t, n, int32(0), uint32(15), uint32(13), uint32(10), uint32(0x3ff))
	case backend.BF16:
		b.Launch(k, grid, block, 0, t, n, int32(0), uint32(15), uint32(125), uint32(7), uint32(0x7f))
	default:
		b.Launch(k, grid, block, 0, t, n, int32(1), uint32(31), uint32(125), uint32(23), uint32(0x7fffff))
	}
}

func (b *Backend) statGemm(key backend.ThroughputKey) (float64, error) {
	switch key.DType {
	case backend.F16, backend.BF16, backend.F32, backend.Flex32:
	default:
		return 0, fmt.Errorf("compute-cmma: dtype %v not measured (f16, bf16, f32 as tf32)", key.DType)
	}
	if !b.SupportsDType(key.DType) {
		return 0, fmt.Errorf("compute-cmma: %v needs compute capability 8.0", key.DType)
	}
	m, n, kk := key.M, key.N, key.K
	if m <= 0 || n <= 0 || kk <= 0 {
		m, n, kk = 8192, 8192, 8192
	}
	dt := key.DType
	if dt == backend.Flex32 {
		dt = backend.F32
	}
	a := b.Empty([]int{m, kk}, dt)
	c := b.Empty([]int{kk, n}, dt)
	defer b.Release(a)
	defer b.Release(c)
	b.randomFill(a)
	b.randomFill(c)
	if dt == backend.F32 {
		prev := b.tf32.Swap(true)
		defer b.tf32.Store(prev)
	}
	var last *Tensor
	outShape := []int{m, n}
	d := b.timeMedian(2, 9, func() {
		if last != nil {
			b.Release(last)
		}
		last = b.matmul(a, c, outShape)
	})
	b.Release(last)
	return 2 * float64(m) * float64(n) * float64(kk) / d.Seconds(), nil
}

func (b *Backend) statMemory(mode backend.ThroughputMode) float64 {
	const bytes = 1 << 30
	n := uint64(bytes / 16)
	src := b.Empty([]int{bytes}, backend.U8)
	defer b.Release(src)
	b.randomFill(&Tensor{buf: src.buf, shape: []int{bytes / 4}, strides: []int{1}, dtype: backend.F32})
	grid := [3]uint32{uint32(b.smCount * 8), 1, 1}
	block := [3]uint32{512, 1, 1}
	var d time.Duration
	moved := float64(bytes)
	switch mode {
	case backend.ModeMemory:
		dst := b.Empty([]int{bytes}, backend.U8)
		defer b.Release(dst)
		k := b.Kernel("ember_stats_copy", statsSource)
		d = b.timeMedian(2, 9, func() { b.Launch(k, grid, block, 0, dst, src, n) })
		moved *= 2
	case backend.ModeMemoryRead:
		out := b.Empty([]int{1}, backend.U32)
		defer b.Release(out)
		k := b.Kernel("ember_stats_read", statsSource)
		d = b.timeMedian(2, 9, func() { b.Launch(k, grid, block, 0, out, src, n) })
	default:
		k := b.Kernel("ember_stats_write", statsSource)
		d = b.timeMedian(2, 9, func() { b.Launch(k, grid, block, 0, src, n) })
	}
	return moved / d.Seconds()
}

func (b *Backend) statLaunch() time.Duration {
	k := b.Kernel("ember_stats_empty", statsSource)
	one := [3]uint32{1, 1, 1}
	// 256 launches per sample stay below the driver's queue depth, so the
	// host is not throttled by the GPU working through the queue.
	const launches = 256
	ds := make([]time.Duration, 9)
	for i := range ds {
		b.must(b.Sync())
		t0 := time.Now()
		for range launches {
			b.Launch(k, one, one, 0)
		}
		ds[i] = time.Since(t0) / launches
	}
	b.must(b.Sync())
	slices.Sort(ds)
	return ds[len(ds)/2]
}
