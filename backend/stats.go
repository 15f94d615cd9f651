package backend

import (
	"fmt"
	"time"
)

// ThroughputMode names what a ThroughputKey measures.
type ThroughputMode uint8

// The throughput modes: one per micro-benchmark that a backend's
// PerformanceStats runs for a ThroughputKey, each with its unit.
const (
	// ModeComputeDirect: arithmetic on the general-purpose units, FLOP/s
	// (an FMA counts 2).
	ModeComputeDirect ThroughputMode = iota + 1
	// ModeComputeCMMA: matrix units (tensor cores) on an M×N×K tile, FLOP/s.
	ModeComputeCMMA
	// ModeMemory: device-to-device copy, bytes read plus written per second.
	ModeMemory
	// ModeMemoryRead: bytes read per second.
	ModeMemoryRead
	// ModeMemoryWrite: bytes written per second.
	ModeMemoryWrite
	// ModeMemoryWorkingSet: bytes per second with a working set of Bytes
	// accessed in Access order (cache behaviour).
	ModeMemoryWorkingSet
	// ModeLaunch: time per kernel launch / op dispatch.
	ModeLaunch
)

var modeNames = [...]string{"", "compute-direct", "compute-cmma", "memory", "memory-read", "memory-write", "memory-working-set", "launch"}

// String returns the mode's name ("compute-direct", "memory", "launch", ...).
func (m ThroughputMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode?"
}

// AccessPattern is the order of a working-set measurement.
type AccessPattern uint8

// The access patterns.
const (
	AccessSequential AccessPattern = iota + 1
	AccessRandom
)

// ThroughputKey is one micro-benchmark to run: Mode with, where the mode
// takes them, DType (compute modes), M, N, K (CMMA tile) and Access, Bytes
// (working set).
type ThroughputKey struct {
	Mode    ThroughputMode
	DType   DType
	M, N, K int
	Access  AccessPattern
	Bytes   uint64
}

// ThroughputStat is a measured rate: Value in FLOP/s for compute modes,
// bytes/s for memory modes; Latency for ModeLaunch.
type ThroughputStat struct {
	Key     ThroughputKey
	Value   float64
	Latency time.Duration
	// Err is set when the key is not supported on the device.
	Err error
}

// String prints an aligned row: the mode, the key's parameters (the
// dtype of compute modes, with the tile of CMMA; the access order and
// size of a working set; blank otherwise) and the value with its unit:
//
//	compute-direct       f32                       102.3 GFLOP/s
//	compute-cmma         bf16 8192x8192x8192       750.1 GFLOP/s
//	memory-working-set   random 64MiB                0.2 GB/s
//	launch                                         850ns
//
// The parameters take up to 20 columns (a CMMA key of three 4-digit
// sides, a working set "sequential 512KiB"), so the values line up.
func (s ThroughputStat) String() string {
	var detail string
	switch s.Key.Mode {
	case ModeComputeDirect:
		detail = s.Key.DType.String()
	case ModeComputeCMMA:
		detail = fmt.Sprintf("%v %dx%dx%d", s.Key.DType, s.Key.M, s.Key.N, s.Key.K)
	case ModeMemoryWorkingSet:
		detail = s.Key.Access.String() + " " + sizeString(s.Key.Bytes)
	}
	var v string
	switch {
	case s.Err != nil:
		v = "unsupported: " + s.Err.Error()
	case s.Key.Mode == ModeLaunch:
		v = fmt.Sprintf("%10v", s.Latency)
	case s.Key.Mode == ModeComputeDirect || s.Key.Mode == ModeComputeCMMA:
		v = fmt.Sprintf("%10.1f GFLOP/s", s.Value/1e9)
	default:
		v = fmt.Sprintf("%10.1f GB/s", s.Value/1e9)
	}
	return fmt.Sprintf("%-20s %-20s %s", s.Key.Mode, detail, v)
}

// String returns "sequential" or "random".
func (a AccessPattern) String() string {
	switch a {
	case AccessSequential:
		return "sequential"
	case AccessRandom:
		return "random"
	}
	return "access?"
}

// sizeString prints a byte count in the largest binary unit that divides
// it (64MiB, 32KiB, 1000B).
func sizeString(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// PerformanceStater is implemented by backends that can measure their own
// throughput. Keys a backend cannot measure come back with Err set.
type PerformanceStater interface {
	// PerformanceStats measures each key, in order, and returns one
	// stat per key.
	PerformanceStats(keys []ThroughputKey) []ThroughputStat
}
