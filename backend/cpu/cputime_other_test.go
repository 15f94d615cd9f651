//go:build !unix

package cpu

import "time"

// processCPUTime reports false: no per-process CPU time here.
func processCPUTime() (time.Duration, bool) { return 0, false }
