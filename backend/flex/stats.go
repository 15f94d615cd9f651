package flex

import (
	"math/rand/v2"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/internal/measure"
	"github.com/emberml/ember/ir"
)

var _ backend.PerformanceStater = (*Backend)(nil)

// Sizes of the micro-benchmarks of PerformanceStats (flex runs on one
// goroutine, so they are smaller than cpu's).
const (
	statMatmulSize = 128      // square matmul for ComputeDirect
	statMemBytes   = 16 << 20 // buffers for Memory, MemoryRead, MemoryWrite
)

// PerformanceStats measures each key in order, one backend.ThroughputStat
// per key in the unit of its backend.ThroughputMode, on the goroutine flex
// computes on; every value is the median of measure.Samples timed samples,
// each repeating the work for at least measure.MinSample. The whole call
// takes about 1–2 s for the default keys.
//
//   - ComputeDirect F32/F64 (Flex32 as F32): a 128³ matmul through Exec,
//     2·128³ FLOP per run.
//   - Memory: a copy between two 16 MiB buffers, counting bytes read plus
//     bytes written; MemoryRead, MemoryWrite: a read (xor of 64-bit words)
//     and a clear of 16 MiB.
//   - MemoryWorkingSet: as on cpu (measure.WorkingSetRate).
//   - Launch: the time of one 1-element F32 Add through Exec, the dispatch
//     overhead of an op.
//
// Other keys (ComputeCMMA; ComputeDirect in other dtypes) have Err set to
// a *backend.UnsupportedError.
func (be *Backend) PerformanceStats(keys []backend.ThroughputKey) []backend.ThroughputStat {
	out := make([]backend.ThroughputStat, len(keys))
	for i, k := range keys {
		out[i] = be.stat(k)
	}
	return out
}

func (be *Backend) stat(k backend.ThroughputKey) backend.ThroughputStat {
	s := backend.ThroughputStat{Key: k}
	switch k.Mode {
	case backend.ModeComputeDirect:
		switch k.DType {
		case backend.F32, backend.Flex32, backend.F64:
			dt := k.DType
			if dt == backend.Flex32 {
				dt = backend.F32
			}
			const n = statMatmulSize
			r := rand.New(rand.NewPCG(1, 2))
			v := make([]float64, n*n)
			for i := range v {
				v[i] = r.Float64()
			}
			a := be.FromData(ir.FromSlice(v, []int{n, n}).Convert(dt))
			b := be.FromData(ir.FromSlice(v, []int{n, n}).Convert(dt))
			s.Value = measure.Rate(2*n*n*n, func() { ir.Matmul(be, a, b) })
		default:
			s.Err = &backend.UnsupportedError{Backend: "flex"}
		}
	case backend.ModeMemory:
		src, dst := make([]byte, statMemBytes), make([]byte, statMemBytes)
		s.Value = measure.Rate(2*statMemBytes, func() { copy(dst, src) })
	case backend.ModeMemoryRead:
		buf := make([]uint64, statMemBytes/8)
		var sink uint64
		s.Value = measure.Rate(statMemBytes, func() { sink ^= measure.XorWords(buf) })
		_ = sink
	case backend.ModeMemoryWrite:
		buf := make([]byte, statMemBytes)
		s.Value = measure.Rate(statMemBytes, func() { clear(buf) })
	case backend.ModeMemoryWorkingSet:
		s.Value = measure.WorkingSetRate(k.Access, k.Bytes)
	case backend.ModeLaunch:
		a := be.FromData(ir.FromSlice([]float32{1}, []int{1}))
		b := be.FromData(ir.FromSlice([]float32{2}, []int{1}))
		s.Latency = time.Duration(measure.Sample(func() { ir.Add(be, a, b) }) * 1e9)
	default:
		s.Err = &backend.UnsupportedError{Backend: "flex"}
	}
	return s
}
