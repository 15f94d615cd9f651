package cuda

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend/internal/tiering"
)

// Kernels of fused programs are compiled by tiers, as JIT compilers do:
// NVRTC takes milliseconds to seconds per kernel, and a program whose
// signature changes from one drain of the fusion decorator to the next
// (groups of other sizes, other outputs) would otherwise compile on the
// path of every op. ExecFused declines a program whose kernel is not
// built (the decorator runs it op by op, on the per-op kernels, with the
// same bits), counts it, and once its signature and layout have been seen
// Threshold times queues the compilation to a few background workers;
// later calls use the kernel once it is built. See FusedTiering.

// SyncCompileEnv is the environment variable that makes Open's backends
// compile every fused kernel on the calling goroutine at its first call
// (FusedTiering.Sync) when it is "1", "true", "on" or "yes": results are
// the same bits either way, so it is for benchmarks that must measure the
// fused kernels from the first call, and for comparing with earlier trees.
const SyncCompileEnv = "EMBER_CUDA_SYNC_COMPILE"

// FusedTiering configures how ExecFused obtains the kernel of a fused
// program whose signature and input layout it has not compiled yet (see
// SetFusedTiering).
type FusedTiering struct {
	// Sync compiles such a kernel with NVRTC on the calling goroutine at
	// the program's first call (the program waits for it), instead of
	// declining it and compiling it in the background. A recording of a
	// CUDA graph always does so, since the graph keeps the kernels it
	// records.
	Sync bool
	// Threshold is the number of calls of a signature and layout that
	// queue its compilation (0: DefaultFusedThreshold; 1 queues it at the
	// first call).
	Threshold int
	// Workers is the number of background compilations that run at once
	// (0: DefaultFusedWorkers()).
	Workers int
	// Queue bounds the compilations waiting for a worker (0:
	// DefaultFusedQueue); a program that becomes hot on a full queue runs
	// op by op and is queued by a later call.
	Queue int
}

// Defaults of FusedTiering's zero fields.
const (
	// DefaultFusedThreshold: a program seen once (the tail of an irregular
	// op sequence) is never compiled; one seen twice is.
	DefaultFusedThreshold = 2
	// DefaultFusedQueue bounds the background compilations waiting.
	DefaultFusedQueue = 64
)

// DefaultFusedWorkers is the number of background compilations that run
// at once by default: a quarter of GOMAXPROCS, between 1 and 4 (NVRTC
// uses one core per compilation; the rest stay with the program).
func DefaultFusedWorkers() int { return max(1, min(4, runtime.GOMAXPROCS(0)/4)) }

// FusedCompileStats count the work of the fused kernels' tiers since
// Open (monotonic; SetFusedTiering does not reset them).
type FusedCompileStats struct {
	// Declined counts the ExecFused calls declined because their kernel
	// was not built (the caller ran the program op by op).
	Declined int64
	// Queued counts the kernels queued for a background compilation, and
	// QueueFull the programs that became hot while the queue was full.
	Queued, QueueFull int64
	// Built and Failed count the background compilations that finished.
	Built, Failed int64
	// Loaded counts the kernels found in the disk cache at their first
	// call and loaded there (no NVRTC run, no decline).
	Loaded int64
	// Sync counts the kernels compiled on the calling goroutine (with
	// FusedTiering.Sync, or while recording a graph).
	Sync int64
}

// fusedKernelKey identifies a fused kernel: its plan (one per backend and
// signature) and its variant.
type fusedKernelKey struct {
	pl      *fusedPlan
	variant string
}

// fusedTier is the tiering in effect: its settings and its policy.
type fusedTier struct {
	cfg FusedTiering
	pol *tiering.Policy[fusedKernelKey, *Kernel]
}

// fusedCounters are the counters of FusedCompileStats that the policies
// do not keep (Declined, Loaded, Sync), and the policies that
// SetFusedTiering replaced (their builds may still run; their counts
// stay in the totals).
type fusedCounters struct {
	declined, loaded, sync atomic.Int64
	mu                     sync.Mutex
	retired                []*tiering.Policy[fusedKernelKey, *Kernel]
}

// newFusedTier returns the tiering of cfg, zero fields defaulted.
func newFusedTier(cfg FusedTiering) *fusedTier {
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultFusedThreshold
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultFusedWorkers()
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultFusedQueue
	}
	return &fusedTier{cfg: cfg, pol: tiering.New[fusedKernelKey, *Kernel](tiering.Options{
		Threshold: cfg.Threshold, Workers: cfg.Workers, Queue: cfg.Queue,
	})}
}

// envSyncCompile reports whether SyncCompileEnv asks for synchronous
// compilation.
func envSyncCompile() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(SyncCompileEnv))) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}

// tier returns the tiering in effect, making the default one (as Open
// does, following SyncCompileEnv) on a backend that has none.
func (b *Backend) tier() *fusedTier {
	if t := b.fusedTier.Load(); t != nil {
		return t
	}
	b.fusedTier.CompareAndSwap(nil, newFusedTier(FusedTiering{Sync: envSyncCompile()}))
	return b.fusedTier.Load()
}

// SetFusedTiering replaces the tiering of the fused kernels by t (zero
// fields take their defaults) for the ExecFused calls that follow. It
// does not wait: kernels already built stay, compilations under way
// finish and their kernels are used, but the programs the former
// settings had counted start from zero.
func (b *Backend) SetFusedTiering(t FusedTiering) {
	if old := b.fusedTier.Swap(newFusedTier(t)); old != nil {
		b.fusedStats.mu.Lock()
		b.fusedStats.retired = append(b.fusedStats.retired, old.pol)
		b.fusedStats.mu.Unlock()
	}
}

// FusedTieringOf returns the tiering in effect, its defaults filled in.
func (b *Backend) FusedTieringOf() FusedTiering { return b.tier().cfg }

// policies returns the policy in effect and those it replaced.
func (b *Backend) policies() []*tiering.Policy[fusedKernelKey, *Kernel] {
	cur := b.tier().pol
	b.fusedStats.mu.Lock()
	defer b.fusedStats.mu.Unlock()
	return append(slices.Clone(b.fusedStats.retired), cur)
}

// FusedCompileStats returns the fused kernels' tiering counters.
func (b *Backend) FusedCompileStats() FusedCompileStats {
	s := FusedCompileStats{
		Declined: b.fusedStats.declined.Load(),
		Loaded:   b.fusedStats.loaded.Load(),
		Sync:     b.fusedStats.sync.Load(),
	}
	for _, p := range b.policies() {
		st := p.Stats()
		s.Queued += st.Queued
		s.QueueFull += st.QueueFull
		s.Built += st.Built
		s.Failed += st.Failed
	}
	return s
}

// WaitFusedCompiles blocks until no background compilation of a fused
// kernel is queued or running (for tests and benchmarks that want the
// compiled tier; programs never need to call it).
func (b *Backend) WaitFusedCompiles() {
	for _, p := range b.policies() {
		p.Wait()
	}
}

// fusedKernel returns the kernel of spec's variant of plan pl, or ok
// false when the program is to run op by op because the kernel is not
// built yet (see FusedTiering). A failed compilation panics, as Kernel's.
func (b *Backend) fusedKernel(pl *fusedPlan, spec *fusedSpec) (k *Kernel, ok bool) {
	variant := spec.variant()
	if k, ok := pl.kernels.Load(variant); ok {
		return k.(*Kernel), true
	}
	t := b.tier()
	if t.cfg.Sync || b.rec.Load() != nil {
		return pl.kernel(b, spec), true
	}
	s := pl.spec(spec, variant)
	if _, seen := pl.probed.LoadOrStore(variant, struct{}{}); !seen {
		// First call: a kernel in the disk cache costs a file read and a
		// module load, so it is built now.
		if src := fusedSource(s); b.onDisk(src, nil) {
			k, err := b.kernelWith(s.name, src, nil, true)
			if err != nil {
				panic(err)
			}
			pl.kernels.Store(variant, k)
			b.fusedStats.loaded.Add(1)
			return k, true
		}
	}
	k, ok, err := t.pol.Get(fusedKernelKey{pl, variant}, func() (*Kernel, error) {
		k, err := b.kernelWith(s.name, fusedSource(s), nil, false)
		if err == nil {
			pl.kernels.Store(variant, k)
		}
		return k, err
	})
	if err != nil {
		panic(err)
	}
	if !ok {
		b.fusedStats.declined.Add(1)
	}
	return k, ok
}
