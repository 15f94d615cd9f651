package autodiff

// CheckpointingStrategy says which forward results the graph keeps for
// Backward (Burn's CheckpointStrategy).
type CheckpointingStrategy uint8

const (
	// Disabled keeps, for every node, the inputs and output its backward
	// function needs. Fastest backward, most memory.
	Disabled CheckpointingStrategy = iota
	// Balanced keeps the outputs of compute-bound ops (Cost ComputeBound)
	// and recomputes memory-bound ones (Cost MemoryBound) during Backward
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

// Primitive names one method of backend.Backend that autodiff records.
// Creation ops (FromData, Full, Arange, Random) are not recorded: they
// return untracked tensors.
type Primitive uint8

// The recorded primitives, one per backend.Backend method.
const (
	PrimUnary Primitive = iota + 1
	PrimBinary
	PrimWhere
	PrimCast
	PrimReduce
	PrimReshape
	PrimPermute
	PrimExpand
	PrimSlice
	PrimPad
	PrimFlip
	PrimCat
	PrimGather
	PrimScatterAdd
	PrimIndexSelect
	PrimMatmul
	PrimConv2d
	PrimConvTranspose2d
	// PrimMaxPool2d is backend.MaxPool2der's MaxPool2d, an optional
	// method that Backend implements when its inner backend does.
	PrimMaxPool2d
)

var primNames = [...]string{"", "unary", "binary", "where", "cast", "reduce", "reshape", "permute", "expand", "slice", "pad", "flip", "cat", "gather", "scatter_add", "index_select", "matmul", "conv2d", "conv_transpose2d", "max_pool2d"}

// String returns the primitive's lower-case name.
func (p Primitive) String() string {
	if int(p) < len(primNames) {
		return primNames[p]
	}
	return "primitive?"
}

// Cost classifies a primitive for the Balanced checkpointing strategy.
type Cost uint8

const (
	// MemoryBound ops cost about one read and one write per element; under
	// Balanced their nodes keep no output and recompute it in Backward.
	MemoryBound Cost = iota + 1
	// ComputeBound ops cost more than their memory traffic (or, for
	// reductions, gathers and casts, are not worth re-running); their
	// nodes always keep their output.
	ComputeBound
)

// String returns "memory-bound" or "compute-bound".
func (c Cost) String() string {
	if c == MemoryBound {
		return "memory-bound"
	}
	return "compute-bound"
}

// balanced is the Balanced strategy's classification of every recorded
// primitive, following burn-autodiff's Balanced strategy (elementwise and
// movement ops are recomputed; matmul, convolutions, max pooling,
// reductions, gathers and casts keep their outputs). It is the single place that decides what
// a checkpointed graph keeps.
var balanced = map[Primitive]Cost{
	// Elementwise.
	PrimUnary:  MemoryBound,
	PrimBinary: MemoryBound,
	PrimWhere:  MemoryBound,
	PrimCast:   ComputeBound,
	// Reductions.
	PrimReduce: ComputeBound,
	// Movement.
	PrimReshape: MemoryBound,
	PrimPermute: MemoryBound,
	PrimExpand:  MemoryBound,
	PrimSlice:   MemoryBound,
	PrimPad:     MemoryBound,
	PrimFlip:    MemoryBound,
	PrimCat:     MemoryBound,
	// Indexing.
	PrimGather:      ComputeBound,
	PrimScatterAdd:  ComputeBound,
	PrimIndexSelect: ComputeBound,
	// Contractions.
	PrimMatmul:          ComputeBound,
	PrimConv2d:          ComputeBound,
	PrimConvTranspose2d: ComputeBound,
	// Pooling: max_pool2d reads kH·kW taps per output and its backward
	// needs the output (the maxima), which is at most a fraction of the
	// input; keeping it saves re-running the window scan in Backward.
	PrimMaxPool2d: ComputeBound,
}

// Classify returns the Balanced strategy's cost class of p (see the table
// in this file). It panics for a value that is not a declared Primitive.
func Classify(p Primitive) Cost {
	c, ok := balanced[p]
	if !ok {
		panic("autodiff: Classify: unknown primitive " + p.String())
	}
	return c
}
