package ember

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// GraphCarry links an output of a compiled graph to one of its inputs:
// after each CompiledGraph.Run the output's value is the input's value in
// the next run. A training step carries the model's parameters and the
// optimizer's state from one batch to the next this way.
type GraphCarry struct {
	// Output indexes CapturedGraph.Outputs and Input indexes
	// CapturedGraph.Inputs; the two have one shape and dtype.
	Output, Input int
}

// CompileOptions configure CapturedGraph.Compile.
type CompileOptions struct {
	// Carry lists the carried inputs (each input and each output at most
	// once).
	Carry []GraphCarry
	// NoDeviceGraph keeps a device that records device graphs (CUDA)
	// running the plan op by op, as every other device does.
	NoDeviceGraph bool
}

// CompiledGraphMode says how a CompiledGraph runs.
type CompiledGraphMode int

const (
	// CompiledPlan runs the graph's ops one by one through the device's
	// stack (its fusion included), as CapturedGraph.Run does, from a plan
	// made once: the graph validated, its tensors given slots and their
	// releases placed, its values moved onto the device. Each op is still
	// decoded and inferred per run.
	CompiledPlan CompiledGraphMode = iota + 1
	// CompiledDeviceGraph replays a device graph (a CUDA graph) recorded
	// from the plan: one launch per run over buffers that stay put.
	CompiledDeviceGraph
)

// String is "plan" or "device graph".
func (m CompiledGraphMode) String() string {
	switch m {
	case CompiledPlan:
		return "plan"
	case CompiledDeviceGraph:
		return "device graph"
	}
	return fmt.Sprintf("CompiledGraphMode(%d)", int(m))
}

// CompiledGraph is a CapturedGraph prepared for many runs on one device
// with inputs of the shapes it was captured with (CapturedGraph.Compile):
// a compiled training step. Run serializes concurrent callers, but on a
// device graph every run writes the same output buffers, so callers on
// several goroutines see each other's results: use one goroutine. While
// the second Run records the device graph, no other goroutine may use the
// device (its work would be recorded too).
type CompiledGraph struct {
	mu   sync.Mutex
	g    *CapturedGraph
	dev  Device
	opts CompileOptions

	// carryOf maps a carried input to its output, outOf the reverse.
	carryOf map[int]int
	outOf   map[int]int

	// The plan: slots hold the tensors of a run (inputs first, then the
	// values, then the ops' results).
	numSlots int
	slotOf   map[TensorID]int32
	producer map[TensorID]*ir.Record // the op making each result
	values   []*Tensor               // the graph's values on dev, in slot order after the inputs
	steps    []planStep
	outSlots []int32
	// hostChecks marks a plan with ops that read operands on the host
	// (indices and integer divisors on a device that does not check them
	// itself): such a plan is never recorded.
	hostChecks bool
	random     bool

	// state holds the carried inputs' current values (by input index).
	state []*Tensor
	runs  int

	// keeper is the device's deferring decorator (fusion), told to write
	// the graph's outputs rather than recompute them; keep marks the
	// slots of the outputs.
	keeper backend.Keeper
	keep   []bool

	// The device graph, once recorded.
	rec      backend.GraphRecorder
	dg       backend.DeviceGraph
	inStatic []*Tensor // per input
	outStat  []*Tensor // per output (carried outputs: their input's)
	noGraph  bool      // the device cannot record
	graphErr error     // why, when recording failed
	closed   bool
}

// planStep is one op of the plan.
type planStep struct {
	rec  *ir.Record
	in   []int32 // the slot of each input (-1 for an absent one)
	out  []int32 // the slot of each kept output (-1 for one never read)
	free []int32 // slots whose last reader this op is
}

// Compile prepares g to run many times on dev (CompiledGraph.Run): the ops
// are validated, their tensors given slots and the graph's values moved
// onto dev once. On a device that records device graphs (cuda, through
// backend.GraphRecorder) the first Run executes the plan, compiling the
// kernels it needs, the second records it into a CUDA graph, and every
// later Run is one graph launch over buffers that stay put — unless
// opt.NoDeviceGraph, the graph has random ops (a device graph would draw
// the same numbers every run), integer divisions or (on a device that does
// not check indices itself) gathers, scatters or index selections whose
// operands must be checked on the host, or dev is an autodiff device. Everywhere else each
// Run executes the plan through dev's stack, fusion included. Either way
// the results equal CapturedGraph.Run's on dev.
//
// When the recording fails (the driver lacks graph support, or an op or
// call refuses the capture), that run and every later one execute the
// plan instead, and DeviceGraphError says why. Compile copies g: later
// changes to it do not reach the compiled graph.
//
// Errors: dev's *DeviceError when it cannot run, or one wrapping
// ErrInvalidDevice for a capture device; an error wrapping ErrInvalidGraph
// when g does not validate; an *Error naming the carry when a GraphCarry
// is out of range, repeats an input or output, or links tensors of
// different shapes or dtypes.
func (g *CapturedGraph) Compile(dev Device, opt CompileOptions) (*CompiledGraph, error) {
	if g == nil {
		return nil, &Error{Op: "compile", Msg: "nil *CapturedGraph"}
	}
	if err := dev.Init(); err != nil {
		return nil, err
	}
	if dev.isCapture() {
		return nil, &DeviceError{Device: dev.Inner().String(), Op: "compile", Err: fmt.Errorf(
			"%w: a capture device records ops and runs none; compile the graph for the device it should run on", ErrInvalidDevice)}
	}
	g = g.clone() // later edits of the caller's graph do not reach the compiled one
	ig := g.Graph()
	if err := ig.Validate(); err != nil {
		return nil, fmt.Errorf("ember: compile on %v: %w", dev, err)
	}
	c := &CompiledGraph{g: g, dev: dev, opts: opt, carryOf: map[int]int{}, outOf: map[int]int{},
		state: make([]*Tensor, len(g.Inputs))}
	c.producer = make(map[TensorID]*ir.Record, len(g.Operations))
	for i := range g.Operations {
		for _, id := range g.Operations[i].Outputs {
			if id != 0 {
				c.producer[id] = &g.Operations[i]
			}
		}
	}
	if err := c.checkCarry(); err != nil {
		return nil, err
	}
	if err := c.plan(); err != nil {
		return nil, err
	}
	if !opt.NoDeviceGraph && !dev.IsAutodiff() && !c.hostChecks && !c.random {
		c.rec, _ = backend.As[backend.GraphRecorder](dev.backend())
	}
	return c, nil
}

// checkCarry validates c.opts.Carry and fills carryOf and outOf.
func (c *CompiledGraph) checkCarry() error {
	g := c.g
	for i, k := range c.opts.Carry {
		bad := func(format string, args ...any) error {
			return &Error{Op: "compile", Operands: []string{c.dev.String()},
				Msg: fmt.Sprintf("carry %d (output %d → input %d): ", i, k.Output, k.Input) + fmt.Sprintf(format, args...)}
		}
		switch {
		case k.Output < 0 || k.Output >= len(g.Outputs):
			return bad("the graph has %d outputs", len(g.Outputs))
		case k.Input < 0 || k.Input >= len(g.Inputs):
			return bad("the graph has %d inputs", len(g.Inputs))
		}
		if _, dup := c.carryOf[k.Input]; dup {
			return bad("input %d is carried twice", k.Input)
		}
		if _, dup := c.outOf[k.Output]; dup {
			return bad("output %d is carried twice", k.Output)
		}
		shape, dt := c.tensorInfo(g.Outputs[k.Output])
		in := g.Inputs[k.Input]
		if dt != in.DType || !slices.Equal(shape, in.Shape) {
			return bad("the output is %v %v, the input %v %v", shape, dt, in.Shape, in.DType)
		}
		c.carryOf[k.Input] = k.Output
		c.outOf[k.Output] = k.Input
	}
	return nil
}

// clone returns a copy of g that shares nothing mutable with it but the
// values' data (which Compile only reads).
func (g *CapturedGraph) clone() *CapturedGraph {
	out := &CapturedGraph{Outputs: slices.Clone(g.Outputs), Values: maps.Clone(g.Values)}
	out.Inputs = make([]ir.GraphInput, len(g.Inputs))
	for i, in := range g.Inputs {
		in.Shape = slices.Clone(in.Shape)
		out.Inputs[i] = in
	}
	out.Operations = make([]ir.Record, len(g.Operations))
	for i, r := range g.Operations {
		r.Shape, r.Ints = slices.Clone(r.Shape), slices.Clone(r.Ints)
		r.Inputs, r.Outputs = slices.Clone(r.Inputs), slices.Clone(r.Outputs)
		if r.Attrs != nil {
			a := *r.Attrs
			r.Attrs = &a
		}
		out.Operations[i] = r
	}
	return out
}

// tensorInfo returns the shape and dtype of tensor id of a validated graph
// (an input, a value or an op's result; every output of a multi-output
// kind has output 0's). It needs c.producer (see plan) for results.
func (c *CompiledGraph) tensorInfo(id TensorID) ([]int, DType) {
	g := c.g
	for _, in := range g.Inputs {
		if in.ID == id {
			return in.Shape, in.DType
		}
	}
	if v, ok := g.Values[id]; ok {
		return v.Shape, v.DType
	}
	if r := c.producer[id]; r != nil {
		return r.Shape, r.DType
	}
	return nil, 0
}

// plan gives every tensor a slot, moves the values onto the device and
// records each op's input, output and release slots.
func (c *CompiledGraph) plan() error {
	g, dev := c.g, c.dev
	c.slotOf = make(map[TensorID]int32, len(g.Inputs)+len(g.Values)+len(g.Operations))
	next := int32(0)
	for _, in := range g.Inputs {
		c.slotOf[in.ID] = next
		next++
	}
	for _, id := range slices.Sorted(maps.Keys(g.Values)) {
		var v *Tensor
		if err := recoverError(func() { v = FromData(g.Values[id], dev) }); err != nil {
			return fmt.Errorf("ember: compile on %v: moving value %d onto the device: %w", dev, id, err)
		}
		c.slotOf[id] = next
		c.values = append(c.values, v)
		next++
	}
	last := map[TensorID]int{}
	for i := range g.Operations {
		for _, id := range g.Operations[i].Inputs {
			last[id] = i
		}
	}
	outputs := map[TensorID]bool{}
	for _, id := range g.Outputs {
		outputs[id] = true
	}
	checksIndices, checksDivisors := checksIndicesOnDevice(dev), checksDivisorsOnDevice(dev)
	c.steps = make([]planStep, len(g.Operations))
	for i := range g.Operations {
		r := &g.Operations[i]
		s := planStep{rec: r, in: make([]int32, len(r.Inputs)), out: make([]int32, len(r.Outputs))}
		for k, id := range r.Inputs {
			s.in[k] = -1
			if id != 0 {
				s.in[k] = c.slotOf[id]
			}
		}
		for k, id := range r.Outputs {
			s.out[k] = -1
			if _, read := last[id]; id != 0 && (read || outputs[id]) {
				c.slotOf[id] = next
				s.out[k] = next
				next++
			}
		}
		for _, id := range r.Inputs {
			if id != 0 && last[id] == i && !outputs[id] && !c.isInputOrValue(id) {
				s.free = append(s.free, c.slotOf[id])
			}
		}
		switch {
		case r.Kind == ir.KindRandom:
			c.random = true
		case r.Kind == ir.KindGather || r.Kind == ir.KindScatterAdd || r.Kind == ir.KindIndexSelect:
			if !checksIndices {
				c.hostChecks = true
			}
		case r.Kind == ir.KindBinary && r.DType.IsInt():
			switch ir.BinaryOp(r.Sub) {
			case ir.OpDiv, ir.OpFloorDiv, ir.OpRem, ir.OpMod:
				if !checksDivisors {
					c.hostChecks = true
				}
			}
		}
		c.steps[i] = s
	}
	c.outSlots = make([]int32, len(g.Outputs))
	c.numSlots = int(next)
	c.keep = make([]bool, c.numSlots)
	for j, id := range g.Outputs {
		c.outSlots[j] = c.slotOf[id]
		c.keep[c.outSlots[j]] = true
	}
	c.keeper, _ = backend.As[backend.Keeper](dev.backend())
	return nil
}

// aliasesInput reports whether tensor id of the graph may share memory
// with one of its inputs: the input itself, or a chain of views (and
// casts, which may return their operand) starting at one.
func (c *CompiledGraph) aliasesInput(id TensorID) bool {
	for {
		if s, ok := c.slotOf[id]; ok && int(s) < len(c.g.Inputs) {
			return true
		}
		r := c.producer[id]
		if r == nil || len(r.Inputs) == 0 || !(ir.SpecOf(r.Kind).View || r.Kind == ir.KindCast) {
			return false
		}
		id = r.Inputs[0]
	}
}

// isInputOrValue reports whether id is one of the graph's inputs or
// values (their slots are filled once per run and never released by it).
func (c *CompiledGraph) isInputOrValue(id TensorID) bool {
	s, ok := c.slotOf[id]
	return ok && int(s) < len(c.g.Inputs)+len(c.values)
}

// Device returns the device the graph runs on (the zero Device for a nil
// graph).
func (c *CompiledGraph) Device() Device {
	if c == nil {
		return Device{}
	}
	return c.dev
}

// Mode says how the last Run ran: CompiledDeviceGraph once a device graph
// was recorded, else CompiledPlan (also for a nil graph).
func (c *CompiledGraph) Mode() CompiledGraphMode {
	if c == nil {
		return CompiledPlan
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dg != nil {
		return CompiledDeviceGraph
	}
	return CompiledPlan
}

// DeviceGraphError returns why a device that records device graphs runs
// this graph as a plan instead: the error of recording it (the device
// lacks graph support, or an op or driver call refused the capture), nil
// when it was recorded, not tried yet, or never to be tried (see Compile).
func (c *CompiledGraph) DeviceGraphError() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.graphErr
}

// Runs is the number of completed Runs (0 for a nil graph).
func (c *CompiledGraph) Runs() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// Run runs the graph with inputs, one per graph input in order, each of
// that input's shape and dtype and on the graph's device, and returns its
// outputs in order. A carried input (CompileOptions.Carry) may be nil
// after the first Run: it then takes the value its output had at the end
// of the previous Run; a non-nil one replaces the carried value.
//
// The outputs of a Run that replayed a device graph are the graph's own
// buffers: the next Run overwrites them (read one, or copy it with an op
// such as MulScalar(1), to keep its value), and the output of a carried
// pair is the buffer its input is read from. Ops already called on an
// output are not affected: Run dispatches the work the device defers
// before it launches the graph again. On a device graph Run queues the
// copies of its inputs and the launch and returns without waiting;
// reading an output waits.
//
// Errors: an *Error for a wrong number of inputs, a nil input that is not
// carried (or carried before the first Run), or an input of another
// device, shape or dtype; after Close an *Error; and the errors of
// CapturedGraph.Run for an op that fails. In plan mode the carried values
// after an error are those of the last successful Run; on a device graph a
// failed input copy or launch leaves them unspecified (pass new values to
// start again), and errors the device detects while it runs (CUDA's
// index checks) surface at the next read or Sync, not from Run.
func (c *CompiledGraph) Run(inputs ...*Tensor) (outputs []*Tensor, err error) {
	if c == nil {
		return nil, &Error{Op: "compiled_run", Msg: "nil *CompiledGraph"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &Error{Op: "compiled_run", Operands: []string{c.dev.String()}, Msg: "the compiled graph was closed"}
	}
	ins, err := c.resolveInputs(inputs)
	if err != nil {
		return nil, err
	}
	switch {
	case c.dg != nil:
		outputs, err = c.launch(inputs)
	case c.rec != nil && !c.noGraph && c.runs >= 1:
		outputs, err = c.record(ins)
		if err != nil {
			// The device cannot record this graph (no graph support, or
			// an op or call a capture rejects): run the plan from now on.
			c.noGraph, c.graphErr = true, err
			outputs, err = c.runPlan(ins)
		}
	default:
		outputs, err = c.runPlan(ins)
	}
	if err != nil {
		return nil, err
	}
	if c.dg == nil {
		for in, out := range c.carryOf {
			c.state[in] = outputs[out]
		}
	}
	c.runs++
	return outputs, nil
}

// resolveInputs checks inputs against the graph and returns them with
// nil carried inputs replaced by their current values.
func (c *CompiledGraph) resolveInputs(inputs []*Tensor) ([]*Tensor, error) {
	g, dev := c.g, c.dev
	if len(inputs) != len(g.Inputs) {
		return nil, &Error{Op: "compiled_run", Operands: []string{dev.String()},
			Msg: fmt.Sprintf("got %d inputs, the graph takes %d", len(inputs), len(g.Inputs))}
	}
	ins := make([]*Tensor, len(inputs))
	for i, in := range g.Inputs {
		x := inputs[i]
		name := fmt.Sprintf("input %d (tensor %d)", i, in.ID)
		if x == nil {
			if _, carried := c.carryOf[i]; carried && c.runs > 0 {
				if c.dg != nil {
					ins[i] = c.inStatic[i]
				} else {
					ins[i] = c.state[i]
				}
				continue
			}
			msg := "input is nil"
			if _, carried := c.carryOf[i]; carried {
				msg = "a carried input needs a value in the first run"
			}
			return nil, &Error{Op: "compiled_run", Operands: []string{name, dev.String()}, Msg: msg}
		}
		if x.t == nil {
			return nil, &Error{Op: "compiled_run", Operands: []string{name, dev.String()}, Msg: "the input is a zero Tensor"}
		}
		switch {
		case !x.dev.Equal(dev):
			return nil, &Error{Op: "compiled_run", Operands: []string{describe(name, x)},
				Msg: fmt.Sprintf("the input must be on %v; move it with ToDevice first", dev)}
		case x.DType() != in.DType || !slices.Equal(x.shape(), in.Shape):
			return nil, &Error{Op: "compiled_run", Operands: []string{describe(name, x)},
				Msg: fmt.Sprintf("the graph takes %v %v there", in.Shape, in.DType)}
		}
		ins[i] = x
	}
	return ins, nil
}

// runPlan executes the plan once with inputs ins.
func (c *CompiledGraph) runPlan(ins []*Tensor) ([]*Tensor, error) {
	dev := c.dev
	slots := make([]*Tensor, c.numSlots)
	copy(slots, ins)
	copy(slots[len(ins):], c.values)
	lookup := func(id TensorID) (ir.Tensor, bool) {
		s, ok := c.slotOf[id]
		if !ok || slots[s] == nil {
			return nil, false
		}
		return slots[s].on(dev), true
	}
	var xs []*Tensor
	for i := range c.steps {
		s := &c.steps[i]
		xs = xs[:0]
		for _, k := range s.in {
			if k < 0 {
				xs = append(xs, nil)
			} else {
				xs = append(xs, slots[k])
			}
		}
		outs, err := runRecord(dev, "compiled_run", i, s.rec, xs, lookup)
		if err != nil {
			return nil, err
		}
		for k, o := range s.out {
			if o < 0 {
				continue
			}
			if outs[k] == nil {
				return nil, fmt.Errorf("ember: compiled_run on %v: op %d (%s): %w: output %d was not produced", dev, i, (&ir.Op{Kind: s.rec.Kind, Sub: s.rec.Sub}).Name(), ErrInvalidGraph, k)
			}
			slots[o] = wrap(dev, outs[k])
			if c.keep[o] && c.keeper != nil {
				c.keeper.Keep(outs[k])
			}
		}
		for _, f := range s.free {
			slots[f] = nil
		}
	}
	outputs := make([]*Tensor, len(c.outSlots))
	for j, s := range c.outSlots {
		outputs[j] = slots[s]
	}
	return outputs, nil
}

// record copies ins into static buffers, records the plan into a device
// graph that ends by copying its results into static buffers (a carried
// output into its input's), and launches it.
func (c *CompiledGraph) record(ins []*Tensor) (outputs []*Tensor, err error) {
	dev, g, rec := c.dev, c.g, c.rec
	// stage holds, for a carried output that may share memory with an
	// input (a view of it, or the input itself), a buffer it goes through,
	// so that no output reads an input buffer a carried copy already
	// overwrote.
	var stage []*Tensor
	if err := recoverError(func() {
		c.inStatic = make([]*Tensor, len(ins))
		for i, x := range ins {
			c.inStatic[i] = wrap(dev, rec.NewStatic(g.Inputs[i].Shape, g.Inputs[i].DType))
			if err := rec.CopyInto(c.inStatic[i].t, x.on(dev)); err != nil {
				panic(err)
			}
		}
		c.outStat = make([]*Tensor, len(g.Outputs))
		stage = make([]*Tensor, len(g.Outputs))
		for j, id := range g.Outputs {
			shape, dt := c.tensorInfo(id)
			if in, carried := c.outOf[j]; carried {
				c.outStat[j] = c.inStatic[in]
				if c.aliasesInput(id) {
					stage[j] = wrap(dev, rec.NewStatic(shape, dt))
				}
				continue
			}
			c.outStat[j] = wrap(dev, rec.NewStatic(shape, dt))
		}
	}); err != nil {
		c.inStatic, c.outStat = nil, nil
		return nil, fmt.Errorf("ember: compiled_run on %v: preparing the device graph: %w", dev, err)
	}
	if err := rec.BeginGraph(); err != nil {
		c.inStatic, c.outStat = nil, nil
		return nil, fmt.Errorf("ember: compiled_run on %v: %w", dev, err)
	}
	outs, err := c.runPlan(c.inStatic)
	if err == nil {
		err = recoverError(func() {
			cp := func(dst *Tensor, src *Tensor) {
				if e := rec.CopyInto(dst.t, src.on(dev)); e != nil {
					panic(e)
				}
			}
			// Every read of the inputs first: the outputs that are not
			// carried, and the staged carried ones; then the writes into
			// the inputs.
			for j, o := range outs {
				if _, carried := c.outOf[j]; !carried {
					cp(c.outStat[j], o)
				} else if stage[j] != nil {
					cp(stage[j], o)
				}
			}
			for j, o := range outs {
				if _, carried := c.outOf[j]; carried && stage[j] == nil {
					cp(c.outStat[j], o)
				}
			}
			for j := range outs {
				if stage[j] != nil {
					cp(c.outStat[j], stage[j])
				}
			}
		})
	}
	dg, endErr := rec.EndGraph()
	if err == nil && endErr != nil {
		err = fmt.Errorf("ember: compiled_run on %v: recording the device graph: %w", dev, endErr)
	}
	if err != nil {
		if dg != nil {
			_ = dg.Close()
		}
		c.inStatic, c.outStat = nil, nil
		return nil, err
	}
	c.dg = dg
	return c.launch(nil)
}

// launch copies the given (non-nil) inputs that are not already the
// graph's buffers into them and launches the device graph.
func (c *CompiledGraph) launch(inputs []*Tensor) ([]*Tensor, error) {
	dev := c.dev
	// Work the device still defers (the fusion decorator's queue) may read
	// the last run's outputs, which this launch overwrites: dispatch it
	// first, so that the stream orders it before the graph.
	if err := recoverError(dev.Flush); err != nil {
		return nil, fmt.Errorf("ember: compiled_run on %v: %w", dev, err)
	}
	for i, x := range inputs {
		if x == nil || x.t == c.inStatic[i].t {
			continue
		}
		if err := recoverError(func() {
			if e := c.rec.CopyInto(c.inStatic[i].t, x.on(dev)); e != nil {
				panic(e)
			}
		}); err != nil {
			return nil, fmt.Errorf("ember: compiled_run on %v: input %d: %w", dev, i, err)
		}
	}
	if err := c.dg.Launch(); err != nil {
		return nil, fmt.Errorf("ember: compiled_run on %v: launching the device graph: %w", dev, err)
	}
	return slices.Clone(c.outStat), nil
}

// State returns the current value of carried input i (nil for an input
// that is not carried, before the first Run and after Close). On a device
// graph it is the graph's buffer, which the next Run overwrites.
func (c *CompiledGraph) State(i int) *Tensor {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, carried := c.carryOf[i]; !carried || c.runs == 0 || c.closed {
		return nil
	}
	if c.dg != nil {
		return c.inStatic[i]
	}
	return c.state[i]
}

// Close releases the device graph and its memory; the tensors its Runs
// returned must not be read afterwards (copy what you keep first). Run
// fails after Close, State returns nil; Close is idempotent.
func (c *CompiledGraph) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.dg != nil {
		err = c.dg.Close()
		c.dg = nil
	}
	c.inStatic, c.outStat, c.state, c.values = nil, nil, nil, nil
	return err
}
