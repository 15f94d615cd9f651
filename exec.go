package ember

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/autodiff"
	"github.com/emberml/ember/ir"
)

// Every tensor operation of this package ends here: the op, built as an
// ir.Op value from already normalized arguments, is validated and given its
// output shape by its kind's ir.Spec.Infer, checked against the device's
// memory, and run on the device's decorator stack with ir.Run (which lowers
// kinds the stack does not support into their decompositions).

// run executes op on d and wraps its first output. xs are the user's
// operands, described in the *Error raised when op does not infer (nil
// entries and a short list fall back to the op's own inputs).
func (d Device) run(op *ir.Op, xs ...*Tensor) *Tensor {
	st := d.stack()
	d.infer(op, xs)
	if spec := ir.SpecOf(op.Kind); spec.Decompose == nil {
		// A base kind: what ir.Run and the guard would do, two calls
		// fewer.
		if !spec.View {
			st.guard.check(op)
		}
		if st.adTop {
			return d.runTracked(st.ad, op)
		}
		return wrap(d, st.top.Exec(*op)[0])
	}
	return wrap(d, ir.Run(st.guard, *op)[0])
}

// trackedTensor is a Tensor whose tracked autodiff tensor lives in the same
// allocation.
type trackedTensor struct {
	Tensor
	slot autodiff.Slot
}

// runTracked runs base-kind op on ad, the top of d's stack, wrapping a
// tracked result together with its tracked tensor in one allocation.
func (d Device) runTracked(ad *autodiff.Backend, op *ir.Op) *Tensor {
	var tt *trackedTensor
	out := ad.ExecInto(*op, func() *autodiff.Slot {
		tt = new(trackedTensor)
		return &tt.slot
	})[0]
	if tt == nil {
		return wrap(d, out)
	}
	tt.Tensor = Tensor{dev: d, t: out}
	return &tt.Tensor
}

// runAll is run returning every output of op.
func (d Device) runAll(op ir.Op, xs ...*Tensor) ir.Outputs {
	st := d.stack()
	d.infer(&op, xs)
	return ir.Run(st.guard, op)
}

// infer infers op, panicking with an *Error naming the op and xs when it
// does not infer.
func (d Device) infer(op *ir.Op, xs []*Tensor) {
	if err := op.Infer(); err != nil {
		d.failOp(*op, err, xs)
	}
}

// guard is the executor the root runs ops on: the top of a device's
// stack, with each op's output checked against the device's memory before
// it runs (view kinds excepted). The parts of a decomposition that the
// stack lowers at the top go through the guard too, so an intermediate too
// large for the machine is an *Error wrapping ErrOutOfMemory, never a Go
// out-of-memory crash.
type guard struct {
	top backend.Backend
	// limit is the most bytes one output may take, the memory of where
	// (see deviceState.memoryLimit).
	limit uint64
	where string
}

// Supports reports what the top of the stack supports.
func (g *guard) Supports(k ir.Kind, dt ir.DType) bool { return g.top.Supports(k, dt) }

// Exec checks op's output size and runs it on the top of the stack.
func (g *guard) Exec(op ir.Op) ir.Outputs {
	if !ir.SpecOf(op.Kind).View {
		g.check(&op)
	}
	return g.top.Exec(op)
}

// check panics with an *Error wrapping ErrOutOfMemory when the output of
// op (inferred) could never fit in the memory of the device (its own
// memory where its backend reports it, as GPUs do; the host's otherwise),
// instead of letting the Go runtime abort the process with an
// unrecoverable out-of-memory error.
func (g *guard) check(op *ir.Op) {
	hi, n := bits.Mul64(uint64(backend.NumElements(op.Shape)), uint64(op.DType.Size()))
	if hi != 0 || n > g.limit {
		if hi != 0 {
			n = math.MaxUint64 // more bytes than a uint64 counts
		}
		failAlloc(op.Name(), op.Shape, op.DType, n, g.where, g.limit)
	}
}

// failOp panics with the *Error of an op that does not infer: the op's
// name, its operands (the user's tensors xs where given, else the op's
// inputs) and the reason.
func (d Device) failOp(op ir.Op, err error, xs []*Tensor) {
	spec := ir.SpecOf(op.Kind)
	n := 0
	if op.Kind.Valid() {
		n = op.NumInputs()
	}
	var ops []string
	for i := 0; i < max(n, len(xs)); i++ {
		name := operandName(spec, i)
		switch {
		case i < len(xs) && xs[i] != nil:
			ops = append(ops, describe(name, xs[i]))
		case i < n && op.Input(i) != nil:
			ops = append(ops, describeOn(name, op.Input(i), d))
		}
	}
	panic(&Error{Op: op.Name(), Operands: ops, Msg: err.Error()})
}

// operandName is the name of input i in messages.
func operandName(spec *ir.Spec, i int) string {
	if i < len(spec.Operands) {
		return spec.Operands[i]
	}
	return "x" + itoa(i)
}

// describeOn formats a backend tensor of device d like describe.
func describeOn(name string, t backend.Tensor, d Device) string {
	return fmt.Sprintf("%s %v %v on %v", name, t.Shape(), t.DType(), d)
}
