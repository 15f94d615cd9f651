package backend

import "github.com/emberml/ember/ir"

// Fuser is implemented by base backends that evaluate fused elementwise
// programs (ir.FusedProgram) in one pass over memory: the cpu backend as a
// parallel loop over cache-sized blocks, the cuda backend as one generated
// kernel. The fusion decorator (backend/fusion) builds the programs and
// finds a Fuser with As; a backend without one runs unfused.
type Fuser interface {
	// FusesNode reports whether ExecFused evaluates nodes like n, whose
	// first operand has dtype in (n.DType for KindFull). The answer
	// depends only on n's kind, sub-op and dtypes.
	FusesNode(n *ir.FusedNode, in DType) bool
	// ExecFused evaluates p, valid and made of nodes FusesNode accepted,
	// over inputs (this backend's tensors, one per p.Inputs, of those
	// dtypes and shapes) and returns one new tensor of p.Shape per
	// p.Outputs, each value bit-identical to running the node's op alone
	// on this backend. ok is false when the backend declines the program
	// (an input layout it does not take, or, for now, a program whose
	// code it is still compiling: cuda's FusedTiering): the caller then
	// runs p.Run, and may offer programs of the same signature again.
	// Run-time failures panic as Exec's do.
	ExecFused(p *ir.FusedProgram, inputs []Tensor) (outs []Tensor, ok bool)
}

// Keeper is implemented by decorators that defer elementwise work (the
// fusion decorator). Keep marks t, one of the decorator's tensors, as read
// again after the work that produces it, so that the deferred computation
// writes t instead of leaving it to be recomputed from its operands at
// each later use (as an intermediate that only its own pass reads would
// be). A compiled graph keeps its outputs this way: an optimizer's new
// moments are both intermediates of the update and the next step's
// inputs. Keeping a computed tensor, or one of another backend, does
// nothing.
type Keeper interface {
	Keep(t Tensor)
}
