//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// PerformanceStats runs one micro-benchmark per key, in order; each value
// is the median of repeated runs timed on the host around a full
// submission and wait, after a warm-up (shaders/stats.comp):
//
//   - ComputeDirect F32 (and Flex32), F64: an FMA loop of 8 independent
//     chains per invocation over every workgroup the device takes, 2 FLOP
//     per FMA;
//   - ComputeCMMA F32 with a key of at least 64 on every side (M, N, K
//     unset: 4096 each): the backend's F32 matmul of M×N×K, 2·M·N·K FLOP
//     (the backend has no matrix-unit kernel; smaller instruction tiles
//     and other dtypes come back with Err set);
//   - Memory: a device copy of 256 MiB (or half the largest binding),
//     bytes read plus written per second; MemoryRead, MemoryWrite: 16-byte
//     reads or writes of as many bytes;
//   - Launch: host time per dispatch of a one-element kernel, over 256
//     dispatches submitted together (recording, descriptor and submission
//     cost).
//
// Other keys (working sets) come back with Err set.
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
	if err := b.d.failed(); err != nil {
		st.Err = err
		return st
	}
	switch k.Mode {
	case backend.ModeComputeDirect:
		st.Value, st.Err = b.statFMA(k.DType)
	case backend.ModeComputeCMMA:
		st.Value, st.Err = b.statGemm(k)
	case backend.ModeMemory:
		st.Value = b.statCopy()
	case backend.ModeMemoryRead, backend.ModeMemoryWrite:
		st.Value = b.statStream(k.Mode)
	case backend.ModeLaunch:
		st.Latency = b.statLaunch()
	default:
		st.Err = errors.New("not measured by the vulkan backend")
	}
	return st
}

// timeMedian runs f warm times, then reps times between waits for the
// device, and returns the median duration of one run.
func (b *Backend) timeMedian(warm, reps int, f func()) time.Duration {
	for range warm {
		f()
	}
	b.must("stats", b.d.waitIdle())
	ds := make([]time.Duration, reps)
	for i := range ds {
		start := time.Now()
		f()
		b.must("stats", b.d.waitIdle())
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// statBytes is the size of the memory benchmarks' buffers.
func (b *Backend) statBytes() uint64 { return min(uint64(256<<20), b.d.maxRange/2) / 16 * 16 }

func (b *Backend) statFMA(dt backend.DType) (float64, error) {
	mode := uint32(1)
	switch dt {
	case backend.F32, backend.Flex32:
	case backend.F64:
		mode = 2
	default:
		return 0, fmt.Errorf("the FMA loop runs in f32 and f64, not %v", dt)
	}
	out := b.empty("stats", []int{64}, backend.F64)
	groups := min(int(b.d.maxGroups[0]), b.d.groupCap)
	iters := uint32(4096)
	if b.d.adapter.Software() {
		iters = 256
	}
	ds := dispatch{key: pipeKey{name: "stats", c1: mode}, params: []uint32{iters}, bufs: []*Buffer{out.buf}, groups: [3]uint32{uint32(groups), 1, 1}}
	d := b.timeMedian(1, 5, func() { b.run("stats", ds) })
	return 2 * 8 * float64(iters) * float64(groups*workgroup) / d.Seconds(), nil
}

func (b *Backend) statGemm(k backend.ThroughputKey) (float64, error) {
	m, n, kk := k.M, k.N, k.K
	if m == 0 && n == 0 && kk == 0 {
		m, n, kk = 4096, 4096, 4096
	}
	if !isF32Store(k.DType) || min(m, n, kk) < 64 {
		return 0, fmt.Errorf("no matrix-unit kernel: only F32 GEMMs of at least 64 on every side are measured, not %v %dx%dx%d", k.DType, m, n, kk)
	}
	x := ir.Full(b, []int{m, kk}, backend.F32, 0.5)
	y := ir.Full(b, []int{kk, n}, backend.F32, 0.25)
	d := b.timeMedian(1, 5, func() { ir.Matmul(b, x, y) })
	return 2 * float64(m) * float64(n) * float64(kk) / d.Seconds(), nil
}

func (b *Backend) statCopy() float64 {
	n := b.statBytes()
	src := b.empty("stats", []int{int(n / 4)}, backend.F32)
	dst := b.empty("stats", []int{int(n / 4)}, backend.F32)
	b.fill(src.buf, 0, src.strides, src.shape, backend.F32, 0x3f800000)
	d := b.timeMedian(2, 7, func() { b.copyInto(dst.buf, 0, dst.strides, src) })
	return float64(2*n) / d.Seconds()
}

func (b *Backend) statStream(mode backend.ThroughputMode) float64 {
	n := b.statBytes()
	buf := b.empty("stats", []int{int(n / 4)}, backend.F32)
	c1 := uint32(4)
	if mode == backend.ModeMemoryRead {
		c1 = 3
		b.fill(buf.buf, 0, buf.strides, buf.shape, backend.F32, 0x3f800000)
	}
	ds := dispatch{key: pipeKey{name: "stats", c1: c1}, params: []uint32{uint32(n / 16)}, bufs: []*Buffer{buf.buf}, groups: b.d.groups1(int(n / 16))}
	d := b.timeMedian(2, 7, func() { b.run("stats", ds) })
	return float64(n) / d.Seconds()
}

func (b *Backend) statLaunch() time.Duration {
	src := b.empty("stats", []int{1}, backend.F32)
	dst := b.empty("stats", []int{1}, backend.F32)
	const launches = 256
	d := b.timeMedian(1, 5, func() {
		for range launches {
			b.copyInto(dst.buf, 0, dst.strides, src)
		}
	})
	return d / launches
}
