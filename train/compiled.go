package train

import (
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// compiledStep is a training step (forward, cross-entropy, backward,
// optimizer update) captured once on a capture device and replayed for
// every batch of the captured size (Config.Compile): the model's
// parameters and buffers and the optimizer's state are carried from run
// to run inside the compiled graph; the optimizer's per-step scalars are
// an input.
type compiledStep struct {
	c     *ember.CompiledGraph
	opt   optim.Capturable
	dev   ember.Device // the inner device the graph runs on
	adev  ember.Device // the autodiff device of the model
	cells []*nn.Param  // parameters, then buffers
	ntr   int          // how many cells are trainable parameters
	ns    int          // number of optimizer state tensors
	// stateDevs are the devices the optimizer keeps its state on.
	stateDevs []ember.Device
	batch     int
	// fresh makes the next Run take the model's and the optimizer's
	// values instead of the carried ones (at the first run and after an
	// eager step).
	fresh bool
	// synced reports that the model and the optimizer hold the carried
	// values.
	synced bool
}

// newCompiledStep captures the training step of model with opt for
// batches of size batch on a capture device, its gradients clipped by
// clipNorm and clipValue (when > 0; see clipGrads), and compiles it for
// fdev's hardware. fdev is the device batches are made on: the model's
// autodiff device, with autocast in mixed precision (the casts are
// captured). opt must have taken a step already (its state exists). The
// model's and the optimizer's tensors are left as they were.
func newCompiledStep(model nn.Module, opt optim.Optimizer, fdev ember.Device, batch int, clipNorm, clipValue float64) (_ *compiledStep, err error) {
	adev := fdev.WithoutAutocast()
	copt, ok := opt.(optim.Capturable)
	if !ok {
		return nil, fmt.Errorf("train: --compile needs an optimizer whose update can be captured (adam, adamw or sgd), not %T", opt)
	}
	cs := &compiledStep{opt: copt, dev: adev.Inner(), adev: adev, batch: batch, fresh: true, synced: true}
	for _, np := range model.NamedParameters() {
		cs.cells = append(cs.cells, np.Param)
	}
	cs.ntr = len(cs.cells)
	for _, np := range nn.NamedBuffers(model) {
		cs.cells = append(cs.cells, np.Param)
	}
	saved := make([]*ember.Tensor, len(cs.cells))
	for i, p := range cs.cells {
		saved[i] = p.Value
	}
	savedState := copt.State()
	cs.ns = len(savedState)
	for _, t := range savedState {
		cs.stateDevs = append(cs.stateDevs, t.Device())
	}
	defer func() {
		for i, p := range cs.cells {
			p.Value = saved[i]
		}
		copt.SetState(savedState)
	}()

	cdev := ember.Capture().Autodiff()
	if adev.GradientCheckpointingStrategy() == ember.Balanced {
		cdev = cdev.GradientCheckpointing()
	}
	var ins []ember.TensorID
	err = ember.Try(func() {
		for i, p := range cs.cells {
			v := saved[i].Detach().ToDevice(cdev)
			if i < cs.ntr && v.DType().IsFloat() {
				v = v.RequireGrad()
			}
			p.Value = v
			ins = append(ins, v.ID())
		}
		st := make([]*ember.Tensor, cs.ns)
		for i, s := range savedState {
			st[i] = s.Detach().ToDevice(cdev)
			ins = append(ins, st[i].ID())
		}
		copt.SetState(st)
	})
	if err != nil {
		return nil, fmt.Errorf("train: --compile: %w", err)
	}
	xdev := cdev
	if dt, ok := fdev.AutocastDType(); ok {
		xdev = cdev.Autocast(dt)
	}
	x := ember.FromFloats(make([]float32, batch*imagePixels), []int{batch, imageChannels, imageSize, imageSize}, xdev)
	y := ember.FromInts(make([]int, batch), []int{batch}, xdev)
	s := float64Tensor(make([]float64, len(copt.NextScalarsPeek())), cdev)
	ins = append(ins, x.ID(), y.ID(), s.ID())
	g, err := cdev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		loss := nn.CrossEntropy(model.Forward(x), y)
		grads := loss.Backward()
		clipGrads(grads, model.NamedParameters(), clipNorm, clipValue)
		copt.StepWith(grads, s)
		outs := []ember.TensorID{loss.ID()}
		for _, p := range cs.cells {
			outs = append(outs, p.Value.ID())
		}
		for _, t := range copt.State() {
			outs = append(outs, t.ID())
		}
		return sc.Complete(ins, outs)
	})
	if err != nil {
		return nil, fmt.Errorf("train: --compile: capturing the training step: %w", err)
	}
	var carry []ember.GraphCarry
	for i := range len(cs.cells) + cs.ns {
		carry = append(carry, ember.GraphCarry{Output: 1 + i, Input: i})
	}
	if cs.c, err = g.Compile(cs.dev, ember.CompileOptions{Carry: carry}); err != nil {
		return nil, fmt.Errorf("train: --compile: %w", err)
	}
	return cs, nil
}

// float64Tensor makes an F64 tensor [len(v)] of v on dev (FromFloats
// would cast it to the device's float dtype).
func float64Tensor(v []float64, dev ember.Device) *ember.Tensor {
	return ember.FromData(ir.FromSlice(v, []int{len(v)}), dev)
}

// fits reports whether batch b has the captured size.
func (cs *compiledStep) fits(b data.Batch) bool { return b.Size == cs.batch }

// run replays the step on batch b and returns its mean loss, a scalar
// tensor of its own (the graph's output buffer is overwritten by the next
// run; reading the copy later lets the device run ahead).
func (cs *compiledStep) run(b data.Batch) *ember.Tensor {
	ins := make([]*ember.Tensor, len(cs.cells)+cs.ns+3)
	if cs.fresh {
		for i, p := range cs.cells {
			ins[i] = p.Value.Detach().ToDevice(cs.dev)
		}
		for i, t := range cs.opt.State() {
			ins[len(cs.cells)+i] = t.Detach().ToDevice(cs.dev)
		}
	}
	n := len(cs.cells) + cs.ns
	ins[n] = ember.FromFloats(b.Images, []int{b.Size, imageChannels, imageSize, imageSize}, cs.dev)
	ins[n+1] = ember.FromInts(b.Labels, []int{b.Size}, cs.dev)
	ins[n+2] = float64Tensor(cs.opt.NextScalars(), cs.dev)
	outs, err := cs.c.Run(ins...)
	if err != nil {
		panic(err)
	}
	cs.fresh, cs.synced = false, false
	return outs[0].MulScalar(1) // x·1 = x exactly, NaN and −0 included
}

// sync puts the carried values into the model and the optimizer (copies:
// a device graph overwrites its buffers at the next run), so that the
// model can be evaluated, saved or stepped eagerly; the next run starts
// from them.
func (cs *compiledStep) sync() {
	if cs.synced {
		return
	}
	cs.synced, cs.fresh = true, true
	copyOf := func(t *ember.Tensor) *ember.Tensor { return ember.FromData(t.Data(), cs.dev) }
	for i, p := range cs.cells {
		v := copyOf(cs.c.State(i)).ToDevice(cs.adev)
		if i < cs.ntr && v.DType().IsFloat() {
			v = v.RequireGrad()
		}
		p.Value = v
	}
	st := make([]*ember.Tensor, cs.ns)
	for i := range st {
		st[i] = copyOf(cs.c.State(len(cs.cells) + i)).ToDevice(cs.stateDevs[i])
	}
	cs.opt.SetState(st)
}

// close syncs and releases the compiled graph.
func (cs *compiledStep) close() {
	cs.sync()
	_ = cs.c.Close()
}
