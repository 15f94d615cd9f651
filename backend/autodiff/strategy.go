package autodiff

import "github.com/emberml/ember/ir"

// CheckpointingStrategy says which forward results the graph keeps for
// Backward (Burn's CheckpointStrategy).
type CheckpointingStrategy uint8

const (
	// Disabled keeps, for every node, the inputs and outputs its gradient
	// rule reads. Fastest backward, most memory.
	Disabled CheckpointingStrategy = iota
	// Balanced keeps the outputs of compute-bound ops (ir.ComputeBound)
	// and recomputes memory-bound ones (ir.MemoryBound) during Backward
	// from the nearest kept state. Less memory, a little more compute.
	Balanced
)

// String returns "disabled" or "balanced".
func (s CheckpointingStrategy) String() string {
	if s == Balanced {
		return "balanced"
	}
	return "disabled"
}

// Classify returns the Balanced strategy's cost class of kind k, its
// ir.Spec's Cost: the one table that decides what a checkpointed graph
// keeps (following burn-autodiff's Balanced strategy, elementwise and
// movement ops are recomputed; matmul, convolutions, max pooling,
// reductions, scans, gathers and casts keep their outputs). It panics for
// an invalid kind.
func Classify(k ir.Kind) ir.Cost { return ir.SpecOf(k).Cost }
