package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// rule is the gradient rule of one kind: which forward values its
// backward function reads (so that a node keeps exactly those) and the
// function itself. Rules are registered by init in the file of their
// kind's group.
type rule struct {
	// in has bit i set when backward reads input i; out has bit j set
	// when it reads output j.
	in  uint64
	out uint8
	// saves, when set, replaces in and out for kinds whose needs depend
	// on the op (its Sub) or on which inputs are tracked (bit i of
	// tracked: input i, for the first 64 inputs).
	saves func(op *ir.Op, tracked uint64) (in uint64, out uint8)
	// backward stores in dx[i] the gradient of input i (nil when input i
	// is not tracked or gets no gradient), given gs[j], the gradient of
	// output j (nil when output j got none). It computes with ir
	// builders on s.e, the inner backend, and records nothing.
	backward func(s *state, gs *ir.Outputs, dx []backend.Tensor)
	// whole marks a kind whose gradient is not its decomposition's
	// (max pooling routes to the selected tap; its decomposition, a max
	// reduction, would split ties): autodiff records it as one node even
	// where the inner backend lowers it.
	whole bool
	// nondiff marks kinds that are run untracked: creation kinds, the
	// gradient kernels that appear only in backward functions and the
	// optimizer steps. Their outputs are never tracked.
	nondiff bool
}

// rules is the gradient-rule table, indexed by kind.
var rules [ir.NumKinds]rule

// register installs the rule of k; it panics when k already has one.
func register(k ir.Kind, r rule) {
	if rules[k].backward != nil || rules[k].nondiff {
		panic("autodiff: rule for " + k.String() + " registered twice")
	}
	if r.backward == nil {
		panic("autodiff: rule for " + k.String() + " has no backward function")
	}
	rules[k] = r
}

// nondifferentiable marks ks as run untracked (see rule.nondiff).
func nondifferentiable(ks ...ir.Kind) {
	for _, k := range ks {
		if rules[k].backward != nil || rules[k].nondiff {
			panic("autodiff: rule for " + k.String() + " registered twice")
		}
		rules[k].nondiff = true
	}
}

// needs returns the inputs and outputs r's backward reads for op.
func (r *rule) needs(op *ir.Op, tracked uint64) (in uint64, out uint8) {
	if r.saves != nil {
		return r.saves(op, tracked)
	}
	return r.in, r.out
}

func init() {
	// Creation ops have no inputs: their results are constants.
	nondifferentiable(ir.KindFull, ir.KindArange, ir.KindRandom)
	// Optimizer steps update parameters outside the graph.
	nondifferentiable(ir.KindAdamStep, ir.KindSGDStep)
}
