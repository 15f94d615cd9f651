package cuda

import (
	"os"
	"testing"
)

// TestGPUProbeSweep logs the matrix-unit rate of the mma.sync and wgmma
// probes over launch shapes (EMBER_PROBE_SWEEP=1 runs it): how the tile
// probe of PerformanceStats was sized.
func TestGPUProbeSweep(t *testing.T) {
	if os.Getenv("EMBER_PROBE_SWEEP") == "" {
		t.Skip("set EMBER_PROBE_SWEEP=1 to sweep the matrix-unit probes")
	}
	b := gpu(t)
	for _, bps := range []int{2, 4, 8} {
		for _, kn := range []string{"ember_stats_mma_bf16_k16", "ember_stats_mma_f16_k16"} {
			v, err := b.statMMA(mmaInstr{kernel: kn, k: 16}, bps)
			t.Logf("mma.sync %s blocks/SM %d: %.1f TFLOP/s %v", kn, bps, v/1e12, err)
		}
	}
	for _, c := range []struct{ n, chains int }{{16, 8}, {16, 4}, {16, 2}, {32, 4}} {
		for _, depth := range []int{0, 1} {
			for _, bps := range []int{2, 4, 6, 8} {
				v, err := b.statWGMMA("bf16", c.n, c.chains, depth, bps)
				t.Logf("wgmma bf16 m64n%dk16 chains %d depth %d blocks/SM %d: %.1f TFLOP/s %v", c.n, c.chains, depth, bps, v/1e12, err)
			}
		}
	}
}
