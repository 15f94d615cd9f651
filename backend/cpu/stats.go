package cpu

import (
	"math/rand/v2"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/gemm"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/measure"
	"github.com/emberml/ember/ir"
)

var _ backend.PerformanceStater = (*Backend)(nil)

// Sizes of the micro-benchmarks of PerformanceStats.
const (
	statGemmSize = 512      // square GEMM for ComputeDirect
	statMemBytes = 64 << 20 // buffers for Memory, MemoryRead, MemoryWrite
)

// PerformanceStats measures each key in order and returns one
// backend.ThroughputStat per key, in the unit of its backend.ThroughputMode;
// every value is the median of measure.Samples timed samples, each
// repeating the work for at least 8 ms. The whole call takes about 1–2 s
// for the default keys.
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
		s.Value = measure.Rate(2*statMemBytes, func() {
			forChunks(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		})
	case backend.ModeMemoryRead:
		buf := make([]uint64, statMemBytes/8)
		var sink uint64
		s.Value = measure.Rate(statMemBytes, func() {
			w := workers.Workers()
			parts := make([]uint64, w)
			workers.ParallelFor(w, func(t int) { parts[t] = measure.XorWords(buf[t*len(buf)/w : (t+1)*len(buf)/w]) })
			for _, p := range parts {
				sink ^= p
			}
		})
		_ = sink
	case backend.ModeMemoryWrite:
		buf := make([]byte, statMemBytes)
		s.Value = measure.Rate(statMemBytes, func() {
			forChunks(len(buf), func(lo, hi int) { clear(buf[lo:hi]) })
		})
	case backend.ModeMemoryWorkingSet:
		s.Value = measure.WorkingSetRate(k.Access, k.Bytes)
	case backend.ModeLaunch:
		a := be.FromData(ir.FromSlice([]float32{1}, []int{1}))
		b := be.FromData(ir.FromSlice([]float32{2}, []int{1}))
		per := measure.Sample(func() { ir.Add(be, a, b) })
		s.Latency = time.Duration(per * 1e9)
	default:
		s.Err = unsupported
	}
	return s
}

func gemmRate[T float32 | float64](mm gemmFunc[T]) float64 {
	const n = statGemmSize
	a, b, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range a {
		a[i], b[i] = T(r.Float64()), T(r.Float64())
	}
	return measure.Rate(2*n*n*n, func() { mm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) })
}
