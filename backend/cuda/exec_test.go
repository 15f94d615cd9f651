package cuda

import (
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// TestSupports checks the kernel table without a device: every base kind
// (a kind without a decomposition) runs on every dtype, and a fast-path
// kind it supports has a kernel in the table.
func TestSupports(t *testing.T) {
	b := &Backend{}
	for _, k := range ir.Kinds() {
		for _, dt := range backend.AllDTypes {
			got := b.Supports(k, dt)
			if ir.SpecOf(k).Decompose == nil && !got {
				t.Errorf("Supports(%v, %v) = false for a base kind", k, dt)
			}
			if got && kernels[k].Run == nil {
				t.Errorf("Supports(%v, %v) = true without a kernel", k, dt)
			}
		}
	}
	if !b.Supports(ir.KindAdamStep, backend.F32) || b.Supports(ir.KindAdamStep, backend.I32) {
		t.Error("the fused Adam kernel must take F32 and not I32")
	}
	if b.Supports(ir.KindInvalid, backend.F32) || b.Supports(ir.Kind(ir.NumKinds), backend.F32) {
		t.Error("Supports accepts an invalid kind")
	}
}
