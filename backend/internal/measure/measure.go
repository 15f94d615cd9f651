// Package measure holds the timing and memory micro-benchmarks the host
// backends (flex, cpu) report through PerformanceStats: a median-of-samples
// timer and the working-set read rates, so that both measure alike.
package measure

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/emberml/ember/backend"
)

// Samples is the number of timed samples per measurement (the median is
// reported); MinSample the least time one sample repeats the work for.
const (
	Samples   = 7
	MinSample = 8 * time.Millisecond
)

// Sample returns the median over Samples of the seconds one call of f
// takes, each sample repeating f for at least MinSample (after a warm-up
// call and a calibration of the repeat count).
func Sample(f func()) float64 {
	f() // warm up
	reps := 1
	for {
		start := time.Now()
		for range reps {
			f()
		}
		if d := time.Since(start); d >= MinSample/4 || reps >= 1<<24 {
			reps = max(1, int(float64(reps)*float64(MinSample)/float64(max(d, time.Microsecond))))
			break
		}
		reps *= 4
	}
	times := make([]float64, Samples)
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

// Rate is units per second of f, which does units of work per call.
func Rate(units float64, f func()) float64 { return units / Sample(f) }

// XorWords folds a buffer with four independent accumulators (a read of
// every word that the compiler cannot drop).
func XorWords(x []uint64) uint64 {
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

// WorkingSetRate measures bytes/s of one goroutine reading a working set
// of the given size (at least 4 KiB) again and again: Sequential reads
// 64-bit words in order, Random follows a random cycle through the
// buffer's 64-byte lines and counts 64 bytes (one cache line) per
// dependent load.
func WorkingSetRate(access backend.AccessPattern, bytes uint64) float64 {
	const line = 64 / 8 // words per cache line
	words := max(int(bytes/8), 4096/8)
	buf := make([]uint64, words)
	if access != backend.AccessRandom {
		var sink uint64
		r := Rate(float64(words*8), func() { sink ^= XorWords(buf) })
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
	return Rate(float64(lines*64), func() {
		for range lines {
			p = buf[p]
		}
	})
}
