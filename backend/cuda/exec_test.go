package cuda

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestSupports checks the kernel table without a device: every base kind
// (a kind without a decomposition) runs on every dtype, AdamStep on F32,
// Flex32 and F64, CumSum on every dtype but Bool, and the other fast-path
// kinds are left to their decompositions.
func TestSupports(t *testing.T) {
	b := &Backend{}
	for _, k := range ir.Kinds() {
		for _, dt := range backend.AllDTypes {
			var want bool
			switch {
			case ir.SpecOf(k).Decompose == nil:
				want = true
			case k == ir.KindAdamStep:
				want = dt == backend.F32 || dt == backend.Flex32 || dt == backend.F64
			case k == ir.KindCumSum:
				want = dt != backend.Bool
			}
			if got := b.Supports(k, dt); got != want {
				t.Errorf("Supports(%v, %v) = %v, want %v", k, dt, got, want)
			}
		}
	}
	if b.Supports(ir.KindInvalid, backend.F32) || b.Supports(ir.Kind(ir.NumKinds), backend.F32) {
		t.Error("Supports accepts an invalid kind")
	}
}
