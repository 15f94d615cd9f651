package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Capturable is implemented by Adam, AdamW and SGD: optimizers whose
// update can be recorded once, as part of a training step captured on an
// autodiff capture device (Device.CaptureScope on
// ember.Capture().Autodiff()), and replayed for every batch
// (CapturedGraph.Run). Step cannot be replayed that way: it builds the
// step's numbers (learning rate, bias corrections) into the recorded ops as
// constants, and it keeps the optimizer state out of sight. StepWith reads
// those numbers from a tensor, which the graph takes as an input, and
// State and SetState expose the state as tensors, which the graph takes as
// inputs and returns as outputs:
//
//	opt.SetState(state)          // values on the capture device (State's order)
//	first := opt.NextScalars()   // the numbers of the step being recorded
//	s := ember.FromData(ir.FromSlice(first, []int{len(first)}), dev) // F64 as is (FromFloats would cast it to the float dtype)
//	g, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
//		grads := loss(model, x, y).Backward()
//		opt.StepWith(grads, s)
//		// inputs: the parameters' values, state, s, x and y as they were
//		// before the step (their IDs, listed, make them graph inputs rather
//		// than values); outputs: each parameter's Value after StepWith
//		// and opt.State().
//		return sc.Complete(inputIDs, outputIDs)
//	})
//	// batch k: run g with the parameters and state of the previous run,
//	// the numbers of step k as s (first, then opt.NextScalars()), batch k;
//	// or compile it with CapturedGraph.Compile, carrying each output to
//	// its input (train's compiled steps do this).
//
// (ir is github.com/emberml/ember/ir; ExampleCapturable is a complete
// program.)
// The parameters of one Capturable must be at one step count for
// NextScalars; the state order and the parameter order are those given to
// the constructor, a cell listed twice counted once.
type Capturable interface {
	Optimizer
	// State returns the optimizer state tensors in a stable order: for
	// Adam and AdamW the moment estimates m then v of each parameter in
	// parameter order, [m₀, v₀, m₁, v₁, …] (zeros, created on the
	// parameter's inner device and kept as its state, for a parameter that
	// has none yet); for SGD with momentum the momentum buffer of each
	// parameter; nil for SGD without momentum. Each tensor has its
	// parameter's shape and dtype (for state that Step or SetState made).
	// It panics with an *ember.Error for state that cannot exist yet: an
	// SGD momentum buffer before the parameter's first Step or StepWith
	// (the first step sets the buffer to the gradient; SetState may set it
	// earlier), and for a parameter whose Value is nil. On a capture
	// device, where no op runs outside a scope, set the state with
	// SetState before calling State.
	State() []*ember.Tensor
	// SetState replaces the state with the tensors of state, in State's
	// order, each of its parameter's shape and dtype (on any device: they
	// are used as given, and the following steps compute there). Step
	// counts are left as they are. It panics with an *ember.Error, changing
	// nothing, on a count, shape or dtype mismatch or a nil tensor.
	SetState(state []*ember.Tensor)
	// NextScalars advances the step count of every parameter by one, as
	// Step does for each parameter it updates, and returns the per-step
	// numbers of that step t as float64 values: for Adam and AdamW
	// [1 − lr·λ, √(1 − β₂ᵗ), lr / (1 − β₁ᵗ)] (the numbers of
	// ember.AdamStep's decomposition; Adam does not use the first), for
	// SGD [lr] (SGD has no step count). lr is the current learning rate
	// (SetLR). It panics with an *ember.Error, changing nothing, when the
	// parameters are at different step counts (which Step with
	// AllowMissingGrads can leave). With no parameters it returns the
	// numbers of step 1.
	NextScalars() []float64
	// NextScalarsPeek returns what NextScalars would return now (the
	// numbers of the next step; their count is the length StepWith's s
	// must have) without advancing any step count. It panics like
	// NextScalars.
	NextScalarsPeek() []float64
	// StepWith applies the update Step would apply for the step that
	// NextScalars last advanced to, reading that step's numbers from s, a
	// float64 tensor of shape [len(NextScalars())] on the parameters'
	// device (autodiff or not; on a capture device it may be a recorded
	// tensor or a graph input), instead of from the configuration and the
	// step counts. It is built from elementwise tensor ops only and reads
	// nothing back to the host, so it records on a capture device. It does
	// not advance step counts (a parameter it skips for lack of a gradient
	// keeps the count NextScalars gave it, unlike Step, which leaves the
	// count of a skipped parameter behind). For F32 and F64 parameters the
	// new parameters and state equal Step's bit for bit on devices that run
	// ember.AdamStep and ember.SGDStep as their elementwise ops (every
	// device without a fused optimizer kernel). It panics with an
	// *ember.Error, updating nothing, for what makes Step panic (a missing
	// gradient unless AllowMissingGrads, a gradient of another shape), for
	// a nil s, an s of another dtype or shape or on another device, a
	// parameter that is not of a float dtype, and, for Adam and AdamW, a
	// parameter at step count 0 (NextScalars was not called).
	StepWith(grads *ember.Gradients, s *ember.Tensor)
}

var (
	_ Capturable = (*Adam)(nil)
	_ Capturable = (*AdamW)(nil)
	_ Capturable = (*SGD)(nil)
)

// stepScalars are the numbers of one StepWith: the float64 tensor s and
// its elements converted to each dtype they were needed in, as rank-0
// tensors (so that they broadcast over a parameter of any shape, rank 0
// included).
type stepScalars struct {
	s    *ember.Tensor
	byDT map[ember.DType][]*ember.Tensor
}

// at returns element i of the numbers, cast from float64 to dt.
func (sc *stepScalars) at(i int, dt ember.DType) *ember.Tensor {
	row := sc.byDT[dt]
	if row == nil {
		row = make([]*ember.Tensor, sc.s.Dim(0))
		sc.byDT[dt] = row
	}
	if row[i] == nil {
		row[i] = sc.s.Narrow(0, i, 1).Reshape().Cast(dt)
	}
	return row[i]
}

// checkStepWith panics with an *ember.Error of op unless s is a float64
// tensor of shape [n] on the inner device of every parameter in ups and
// every such parameter is of a float dtype; it returns s's numbers.
func checkStepWith(op string, s *ember.Tensor, n int, ups []update, params []nn.NamedParam) *stepScalars {
	if s == nil {
		panic(&ember.Error{Op: op, Msg: "StepWith needs the tensor of the step's numbers (NextScalars), got nil"})
	}
	desc := fmt.Sprintf("scalars %v %v on %v", s.Shape(), s.DType(), s.Device())
	if s.DType() != ember.F64 || !slices.Equal(s.Shape(), []int{n}) {
		panic(&ember.Error{Op: op, Operands: []string{desc},
			Msg: fmt.Sprintf("StepWith needs the step's numbers as a float64 tensor of shape [%d] (NextScalars)", n)})
	}
	inner := s.Device().Inner()
	for _, u := range ups {
		i := paramIndex(params, u.p)
		if !u.v.Device().Equal(inner) {
			panic(&ember.Error{Op: op, Operands: []string{desc, describeParam(i, params[i])},
				Msg: "the step's numbers must be on the parameters' device"})
		}
		if !u.v.DType().IsFloat() {
			panic(&ember.Error{Op: op, Operands: []string{describeParam(i, params[i])}, Msg: "StepWith needs float parameters"})
		}
	}
	return &stepScalars{s: s.Inner(), byDT: map[ember.DType][]*ember.Tensor{}}
}

// paramIndex returns the index of cell p in params (-1 if absent).
func paramIndex(params []nn.NamedParam, p *nn.Param) int {
	return slices.IndexFunc(params, func(np nn.NamedParam) bool { return np.Param == p })
}

// checkValues panics with an *ember.Error of op when a parameter's Value
// is nil.
func checkValues(op string, params []nn.NamedParam) {
	for i, np := range params {
		if np.Param.Value == nil {
			panic(&ember.Error{Op: op, Msg: fmt.Sprintf("parameter %d %q has a nil Value", i, np.Name)})
		}
	}
}

// checkStateTensor panics with an *ember.Error of op unless x, the state
// tensor k (what: its role) given to SetState for parameter i, is non-nil
// and of the parameter's shape and dtype.
func checkStateTensor(op string, k int, what string, i int, np nn.NamedParam, x *ember.Tensor) {
	name := fmt.Sprintf("state %d (%s of parameter %d)", k, what, i)
	if x == nil {
		panic(&ember.Error{Op: op, Operands: []string{describeParam(i, np)}, Msg: "SetState: " + name + " is nil"})
	}
	v := np.Param.Value
	if x.DType() != v.DType() || !slices.Equal(x.Shape(), v.Shape()) {
		panic(&ember.Error{Op: op, Operands: []string{fmt.Sprintf("%s %v %v on %v", name, x.Shape(), x.DType(), x.Device()), describeParam(i, np)},
			Msg: "SetState: a state tensor must have its parameter's shape and dtype"})
	}
}

// checkStateCount panics with an *ember.Error of op unless got == want.
func checkStateCount(op string, got, want int, what string) {
	if got != want {
		panic(&ember.Error{Op: op, Msg: fmt.Sprintf("SetState got %d tensors, want %d (%s)", got, want, what)})
	}
}

// ---- Adam and AdamW ----

// stateTensors is State for Adam and AdamW.
func (o *adamCore) stateTensors(op string) []*ember.Tensor {
	checkValues(op, o.params)
	out := make([]*ember.Tensor, 0, 2*len(o.params))
	for _, np := range o.params {
		s := o.entry(np.Param)
		if s.m == nil {
			v := np.Param.Value.Inner()
			s.m, s.v = ember.ZerosLike(v), ember.ZerosLike(v)
		}
		out = append(out, s.m, s.v)
	}
	return out
}

// setState is SetState for Adam and AdamW.
func (o *adamCore) setState(op string, state []*ember.Tensor) {
	checkValues(op, o.params)
	checkStateCount(op, len(state), 2*len(o.params), "m and v of each parameter")
	for i, np := range o.params {
		checkStateTensor(op, 2*i, "m", i, np, state[2*i])
		checkStateTensor(op, 2*i+1, "v", i, np, state[2*i+1])
	}
	for i, np := range o.params {
		s := o.entry(np.Param)
		s.m, s.v = state[2*i], state[2*i+1]
	}
}

// nextScalars is NextScalars for Adam and AdamW.
func (o *adamCore) nextScalars(op string) []float64 {
	t := o.stepCount(op) + 1
	for _, np := range o.params {
		o.entry(np.Param).t = t
	}
	return o.scalars(t)
}

// peekScalars is NextScalarsPeek for Adam and AdamW.
func (o *adamCore) peekScalars(op string) []float64 { return o.scalars(o.stepCount(op) + 1) }

// scalars returns the numbers of step t.
func (o *adamCore) scalars(t int) []float64 {
	c := o.cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(t))
	bc2 := 1 - math.Pow(c.Beta2, float64(t))
	return []float64{1 - c.LR*c.WeightDecay, math.Sqrt(bc2), c.LR / bc1}
}

// stepCount returns the step count of every parameter (0 without
// parameters), panicking with an *ember.Error of op when they differ.
func (o *adamCore) stepCount(op string) int {
	count := func(p *nn.Param) int {
		if s := o.state[p]; s != nil {
			return s.t
		}
		return 0
	}
	t := 0
	for i, np := range o.params {
		n := count(np.Param)
		if i == 0 {
			t = n
		} else if n != t {
			panic(&ember.Error{Op: op, Operands: []string{
				fmt.Sprintf("parameter 0 %q at step %d", o.params[0].Name, t),
				fmt.Sprintf("parameter %d %q at step %d", i, np.Name, n)},
				Msg: "NextScalars needs every parameter at one step count (Step with AllowMissingGrads leaves skipped parameters behind)"})
		}
	}
	return t
}

// stepWith is StepWith for Adam (decoupled false) and AdamW: the ops of
// ember.AdamStep's decomposition (ir's decomposeAdamStep), with
// 1 − lr·λ, √(1 − β₂ᵗ) and lr / (1 − β₁ᵗ) read from s.
func (o *adamCore) stepWith(op string, grads *ember.Gradients, s *ember.Tensor, decoupled bool) {
	c := o.cfg
	ups := gather(op, o.params, grads, c.AllowMissingGrads)
	sc := checkStepWith(op, s, 3, ups, o.params)
	for _, u := range ups {
		if st := o.state[u.p]; st == nil || st.t < 1 {
			i := paramIndex(o.params, u.p)
			panic(&ember.Error{Op: op, Operands: []string{describeParam(i, o.params[i])},
				Msg: "the parameter is at step 0: call NextScalars before StepWith"})
		}
	}
	for _, u := range ups {
		// The numbers first: their slices are not elementwise ops, and
		// taking them between the elementwise ops of an update would
		// split that update's fused pass.
		sc.at(1, u.v.DType())
		sc.at(2, u.v.DType())
		if decoupled {
			sc.at(0, u.v.DType())
		}
	}
	for _, u := range ups {
		st := o.state[u.p]
		if st.m == nil {
			st.m, st.v = ember.ZerosLike(u.g), ember.ZerosLike(u.g)
		}
		theta, g, m, v := u.v, u.g, st.m, st.v
		dt := theta.DType()
		if decoupled {
			theta = theta.Mul(sc.at(0, dt))
		} else if c.WeightDecay != 0 {
			g = g.Add(theta.MulScalar(c.WeightDecay))
		}
		m = m.MulScalar(c.Beta1).Add(g.MulScalar(1 - c.Beta1))
		v = v.MulScalar(c.Beta2).Add(g.Mul(g).MulScalar(1 - c.Beta2))
		denom := v.Sqrt().Div(sc.at(1, dt)).AddScalar(c.Eps)
		theta = theta.Sub(m.Div(denom).Mul(sc.at(2, dt)))
		st.m, st.v = m, v
		commit(u.p, theta)
	}
}

// State returns [m₀, v₀, m₁, v₁, …] (see Capturable).
func (o *Adam) State() []*ember.Tensor { return o.stateTensors("adam") }

// SetState replaces the moment estimates with state, [m₀, v₀, m₁, v₁, …]
// (see Capturable).
func (o *Adam) SetState(state []*ember.Tensor) { o.setState("adam", state) }

// NextScalars advances every step count and returns
// [1 − lr·λ, √(1 − β₂ᵗ), lr / (1 − β₁ᵗ)] (see Capturable).
func (o *Adam) NextScalars() []float64 { return o.nextScalars("adam") }

// NextScalarsPeek returns what NextScalars would return, advancing
// nothing (see Capturable).
func (o *Adam) NextScalarsPeek() []float64 { return o.peekScalars("adam") }

// StepWith applies Step's update with the step's numbers read from s, a
// float64 tensor [3] (see Capturable).
func (o *Adam) StepWith(grads *ember.Gradients, s *ember.Tensor) {
	o.stepWith("adam", grads, s, false)
}

// State returns [m₀, v₀, m₁, v₁, …] (see Capturable).
func (o *AdamW) State() []*ember.Tensor { return o.stateTensors("adamw") }

// SetState replaces the moment estimates with state, [m₀, v₀, m₁, v₁, …]
// (see Capturable).
func (o *AdamW) SetState(state []*ember.Tensor) { o.setState("adamw", state) }

// NextScalars advances every step count and returns
// [1 − lr·λ, √(1 − β₂ᵗ), lr / (1 − β₁ᵗ)] (see Capturable).
func (o *AdamW) NextScalars() []float64 { return o.nextScalars("adamw") }

// NextScalarsPeek returns what NextScalars would return, advancing
// nothing (see Capturable).
func (o *AdamW) NextScalarsPeek() []float64 { return o.peekScalars("adamw") }

// StepWith applies Step's update with the step's numbers read from s, a
// float64 tensor [3] (see Capturable).
func (o *AdamW) StepWith(grads *ember.Gradients, s *ember.Tensor) {
	o.stepWith("adamw", grads, s, true)
}

// ---- SGD ----

// State returns the momentum buffer of each parameter, or nil without
// momentum; it panics with an *ember.Error before a parameter's first
// step (see Capturable).
func (o *SGD) State() []*ember.Tensor {
	if o.cfg.Momentum == 0 {
		return nil
	}
	checkValues("sgd", o.params)
	out := make([]*ember.Tensor, len(o.params))
	for i, np := range o.params {
		b := o.buf[np.Param]
		if b == nil {
			panic(&ember.Error{Op: "sgd", Operands: []string{describeParam(i, np)},
				Msg: "the parameter has no momentum buffer yet: its first Step makes it (or SetState sets it)"})
		}
		out[i] = b
	}
	return out
}

// SetState replaces the momentum buffers with state, one per parameter
// (none without momentum; see Capturable).
func (o *SGD) SetState(state []*ember.Tensor) {
	checkValues("sgd", o.params)
	if o.cfg.Momentum == 0 {
		checkStateCount("sgd", len(state), 0, "SGD without momentum has no state")
		return
	}
	checkStateCount("sgd", len(state), len(o.params), "a momentum buffer per parameter")
	for i, np := range o.params {
		checkStateTensor("sgd", i, "momentum buffer", i, np, state[i])
	}
	for i, np := range o.params {
		o.buf[np.Param] = state[i]
	}
}

// NextScalars returns [lr] (SGD has no step count; see Capturable).
func (o *SGD) NextScalars() []float64 { return []float64{o.cfg.LR} }

// NextScalarsPeek returns [lr], as NextScalars (see Capturable).
func (o *SGD) NextScalarsPeek() []float64 { return []float64{o.cfg.LR} }

// StepWith applies Step's update with the learning rate read from s, a
// float64 tensor [1]: the ops of ember.SGDStep's decomposition (ir's
// decomposeSGDStep), the first step of a parameter without a momentum
// buffer setting it to the gradient (see Capturable).
func (o *SGD) StepWith(grads *ember.Gradients, s *ember.Tensor) {
	c := o.cfg
	ups := gather("sgd", o.params, grads, c.AllowMissingGrads)
	sc := checkStepWith("sgd", s, 1, ups, o.params)
	for _, u := range ups {
		sc.at(0, u.v.DType()) // before the updates' elementwise ops (see Adam's)
	}
	for _, u := range ups {
		theta, g := u.v, u.g
		if c.WeightDecay != 0 {
			g = g.Add(theta.MulScalar(c.WeightDecay))
		}
		if c.Momentum != 0 {
			b := o.buf[u.p]
			if b == nil {
				b = g
			} else {
				b = b.MulScalar(c.Momentum).Add(g)
			}
			if c.Nesterov {
				g = g.Add(b.MulScalar(c.Momentum))
			} else {
				g = b
			}
			o.buf[u.p] = b
		}
		commit(u.p, theta.Sub(g.Mul(sc.at(0, theta.DType()))))
	}
}
