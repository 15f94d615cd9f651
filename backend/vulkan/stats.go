//go:build linux && (amd64 || arm64)

package vulkan

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emberml/ember/backend"
)

// PerformanceStats runs one micro-benchmark per key, in order; each value
// is the median of repeated runs timed on the host around a full
// submission and wait, after a warm-up:
//
//   - Memory: a device copy of 256 MiB (or half the largest binding),
//     bytes read plus written per second;
//   - Launch: host time per dispatch of a one-element kernel, over 256
//     dispatches submitted together (recording, descriptor and
//     submission cost).
//
// Other keys come back with Err set.
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
	case backend.ModeMemory:
		st.Value = b.statCopy()
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

func (b *Backend) statCopy() float64 {
	n := min(uint64(256<<20), b.d.maxRange/2) / 4 * 4
	elems := int(n / 4)
	src := b.empty("stats", []int{elems}, backend.F32)
	dst := b.empty("stats", []int{elems}, backend.F32)
	b.fill(src.buf, 0, src.strides, src.shape, backend.F32, 0x3f800000)
	d := b.timeMedian(2, 7, func() { b.copyInto(dst.buf, 0, dst.strides, src) })
	return float64(2*n) / d.Seconds()
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
