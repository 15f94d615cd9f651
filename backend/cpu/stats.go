package cpu

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/ir"
)

var _ backend.PerformanceStater = (*Backend)(nil)

// Sizes of the micro-benchmarks of PerformanceStats.
const (
	statGemmSize  = 512      // square GEMM for ComputeDirect
	statMemBytes  = 64 << 20 // buffers for Memory, MemoryRead, MemoryWrite
	statSamples   = 7        // samples per key; the median is reported
	statMinSample = 8 * time.Millisecond
)

// PerformanceStats measures each key in order (SPEC-device.md
// "Performance statistics"); every value is the median of statSamples
// timed samples, each repeating the work for at least 8 ms. The whole call
// takes about 1–2 s for the default keys.
//
//   - ComputeDirect F32/F64 (Flex32 as F32): a 512³ GEMM through the
//     backend's SIMD kernels on all workers, 2·512³ FLOP per run.
//   - Memory: a parallel copy between two 64 MiB buffers, counting bytes
//     read plus bytes written.
//   - MemoryRead, MemoryWrite: a parallel read (xor of 64-bit words) and
//     a parallel clear of 64 MiB.
//   - MemoryWorkingSet: one goroutine reading Bytes (at least 4 KiB)
//     again and again; Sequential reads 64-bit words in order, Random
//     follows a random cycle through the buffer's 64-byte lines and counts
//     64 bytes (one cache line) per dependent load.
//   - Launch: the time of one 1-element F32 Add through the backend, the
//     dispatch overhead of an op.
//
// Other keys (ComputeCMMA: the CPU has no matrix units Ember uses;
// ComputeDirect in other dtypes) have Err set to a *backend.UnsupportedError.
func (be *Backend) PerformanceStats(keys []backend.ThroughputKey) []backend.ThroughputStat {
	out := make([]backend.ThroughputStat, len(keys))
	for i, k := range keys {
		out[i] = be.stat(k)
	}
	return out
}

func (be *Backend) stat(k backend.ThroughputKey) backend.ThroughputStat {
	s := backend.ThroughputStat{Key: k}
	unsupported := &backend.UnsupportedError{Backend: "cpu"}
	switch k.Mode {
	case backend.ModeComputeDirect:
		switch k.DType {
		case backend.F32, backend.Flex32:
			s.Value = gemmRate[float32](gemm.Sgemm)
		case backend.F64:
			s.Value = gemmRate[float64](gemm.Dgemm)
		default:
			s.Err = unsupported
		}
	case backend.ModeMemory:
		src, dst := make([]byte, statMemBytes), make([]byte, statMemBytes)
		s.Value = rate(2*statMemBytes, func() {
			forChunks(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		})
	case backend.ModeMemoryRead:
		buf := make([]uint64, statMemBytes/8)
		var sink uint64
		s.Value = rate(statMemBytes, func() {
			w := workers.Workers()
			parts := make([]uint64, w)
			workers.ParallelFor(w, func(t int) { parts[t] = xorWords(buf[t*len(buf)/w : (t+1)*len(buf)/w]) })
			for _, p := range parts {
				sink ^= p
			}
		})
		_ = sink
	case backend.ModeMemoryWrite:
		buf := make([]byte, statMemBytes)
		s.Value = rate(statMemBytes, func() {
			forChunks(len(buf), func(lo, hi int) { clear(buf[lo:hi]) })
		})
	case backend.ModeMemoryWorkingSet:
		s.Value = workingSetRate(k.Access, k.Bytes)
	case backend.ModeLaunch:
		a := be.FromData(ir.FromSlice([]float32{1}, []int{1}))
		b := be.FromData(ir.FromSlice([]float32{2}, []int{1}))
		per := sample(func() { ir.Add(be, a, b) })
		s.Latency = time.Duration(per * 1e9)
	default:
		s.Err = unsupported
	}
	return s
}

// sample returns the median over statSamples of the seconds one call of f
// takes, each sample repeating f for at least statMinSample.
func sample(f func()) float64 {
	f() // warm up
	reps := 1
	for {
		start := time.Now()
		for range reps {
			f()
		}
		if d := time.Since(start); d >= statMinSample/4 || reps >= 1<<24 {
			reps = max(1, int(float64(reps)*float64(statMinSample)/float64(max(d, time.Microsecond))))
			break
		}
		reps *= 4
	}
	times := make([]float64, statSamples)
	for i := range times {
		start := time.Now()
		for range reps {
			f()
		}
		times[i] = time.Since(start).Seconds() / float64(reps)
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// rate is units per second of f, which does units of work per call.
func rate(units float64, f func()) float64 { return units / sample(f) }

func gemmRate[T float32 | float64](mm gemmFunc[T]) float64 {
	const n = statGemmSize
	a, b, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range a {
		a[i], b[i] = T(r.Float64()), T(r.Float64())
	}
	return rate(2*n*n*n, func() { mm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) })
}

// xorWords folds a buffer with four independent accumulators.
func xorWords(x []uint64) uint64 {
	var a, b, c, d uint64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		a ^= v[0]
		b ^= v[1]
		c ^= v[2]
		d ^= v[3]
	}
	for ; i < len(x); i++ {
		a ^= x[i]
	}
	return a ^ b ^ c ^ d
}

// workingSetRate measures bytes/s over a working set of the given size.
func workingSetRate(access backend.AccessPattern, bytes uint64) float64 {
	const line = 64 / 8 // words per cache line
	words := max(int(bytes/8), 4096/8)
	buf := make([]uint64, words)
	if access != backend.AccessRandom {
		var sink uint64
		r := rate(float64(words*8), func() { sink ^= xorWords(buf) })
		_ = sink
		return r
	}
	// A random cycle through the lines: buf[line·p] holds the next line's index.
	lines := words / line
	perm := rand.New(rand.NewPCG(3, 4)).Perm(lines)
	for i := range lines {
		buf[perm[i]*line] = uint64(perm[(i+1)%lines] * line)
	}
	var p uint64
	return rate(float64(lines*64), func() {
		for range lines {
			p = buf[p]
		}
	})
}
