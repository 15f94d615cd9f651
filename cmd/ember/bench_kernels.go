package main

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/torchpeer"
	"github.com/emberml/ember/ir"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
	"github.com/emberml/ember/train"
)

// The kernels family measures the kernels behind Ember's performance
// targets beside their peers in the same run: PyTorch (internal/torchpeer's
// embedded peer, on cuda when the device is a CUDA device, else on the
// cpu, at its best thread setting), Go's copy of the same bytes, or the
// composed form of a fused kernel. Each row runs kernelRounds rounds, each
// round the peers first and then Ember, every side timing the median of
// kernelIters calls after kernelWarmup of warm-up calls; a row's figure
// is the median over the rounds, so both sides see the same load on a
// shared machine. Ember's calls end with the device's Sync, PyTorch's on
// cuda with torch.cuda.synchronize().
func init() {
	benchFamilies = append(benchFamilies, benchFamily{name: "kernels", run: benchKernels})
}

// Timing of the kernels family (tests shrink them).
var (
	kernelRounds = 5
	kernelIters  = 15
	kernelWarmup = torchpeer.Warmup
)

// torchPeer returns the PyTorch peer, starting it on first use; when no
// interpreter with torch runs it, it returns nil and adds one note saying
// why.
func (b *bencher) torchPeer() *torchpeer.Peer {
	if !b.torchTried {
		b.torchTried = true
		b.progress("bench kernels: starting the PyTorch peer")
		p, err := torchpeer.Start(torchpeer.Options{Context: b.ctx, Warmup: kernelWarmup})
		if err != nil {
			b.notes = append(b.notes, "kernels: rows without the PyTorch peer: "+err.Error())
		}
		b.torch = p
	}
	return b.torch
}

// closePeers stops the PyTorch peer if it was started.
func (b *bencher) closePeers() {
	if b.torch != nil {
		b.torch.Close()
		b.torch = nil
	}
}

// kernelPeer is one peer of a kernels row other than PyTorch: a function
// timed like Ember's and its traffic for the rate (0: the row's).
type kernelPeer struct {
	name  string
	run   func()
	bytes float64
}

// kernelRow is one measurement of the kernels family.
type kernelRow struct {
	bench, shape, dtype string
	// run is one call of Ember's side, synchronized.
	run func()
	// bytes or flop give the rate (GB/s, GFLOP/s); neither: no rate.
	bytes, flop float64
	// torch are PyTorch's cases for the row (several: variants of which
	// the fastest counts each round, such as Adam's foreach, named by
	// torchVariants); none: no PyTorch peer.
	torch         []torchpeer.Case
	torchVariants []string
	// peers are the other peers.
	peers []kernelPeer
	note  string
}

// torchDevice is PyTorch's device for the bench device's rows: cuda for a
// CUDA device, else cpu.
func (b *bencher) torchDevice() string {
	if b.dev.Type() == ember.TypeCUDA {
		return "cuda"
	}
	return "cpu"
}

// measure runs the row's rounds and returns Ember's row, with ratios to
// each peer, followed by the peers' rows.
func (b *bencher) measure(k kernelRow) []benchResult {
	label := "kernels " + k.bench + " " + k.shape + " " + k.dtype
	var peer *torchpeer.Peer
	if len(k.torch) > 0 {
		peer = b.torchPeer()
	}
	var ours, theirs []float64
	others := make([][]float64, len(k.peers))
	wins := map[string]int{}
	var torchErr error
	for round := 0; round < max(kernelRounds, 1) && (round == 0 || b.ctx.Err() == nil); round++ {
		b.progress(fmt.Sprintf("bench %s, round %d", label, round+1))
		if peer != nil && torchErr == nil {
			var best torchpeer.Result
			bestAt := ""
			for i, c := range k.torch {
				r, err := peer.Best(c, kernelIters)
				if err != nil {
					torchErr = err
					break
				}
				if best.Seconds == 0 || r.Seconds < best.Seconds {
					best, bestAt = r, torchSetting(r)
					if c.Device == "cuda" {
						bestAt = "" // no thread settings
					}
					if i < len(k.torchVariants) {
						bestAt = strings.TrimPrefix(bestAt+", "+k.torchVariants[i], ", ")
					}
				}
			}
			if torchErr == nil {
				theirs = append(theirs, best.Seconds)
				wins[bestAt]++
			}
		}
		for i, p := range k.peers {
			others[i] = append(others[i], torchpeer.Time(kernelIters, kernelWarmup, p.run).Median)
		}
		ours = append(ours, torchpeer.Time(kernelIters, kernelWarmup, k.run).Median)
	}
	row := k.result(b.name, torchpeer.Median(ours), 0)
	row.Note = k.note
	var peerRows []benchResult
	for i, p := range k.peers {
		peerRows = append(peerRows, k.result(p.name, torchpeer.Median(others[i]), p.bytes))
	}
	switch {
	case torchErr != nil:
		row.Note = joinNotes(row.Note, "torch skipped: "+torchErr.Error())
	case peer != nil && len(theirs) > 0:
		t := k.result("torch", torchpeer.Median(theirs), 0)
		t.Note = fmt.Sprintf("torch %s on %s", peer.Version(), k.torch[0].Device)
		if k.torch[0].Device != "cuda" || len(k.torch) > 1 {
			t.Note += "; fastest per round: " + describeWins(wins)
		}
		peerRows = append([]benchResult{t}, peerRows...)
	}
	return withPeerRatios(row, peerRows...)
}

// measureOrNote is measure, or, when Ember fails to run the row (out of
// device memory, say), a row whose note says why, so that the family's
// other rows still run.
func (b *bencher) measureOrNote(k kernelRow) []benchResult {
	var res []benchResult
	if err := ember.Try(func() { res = b.measure(k) }); err != nil {
		return []benchResult{{Bench: k.bench, Shape: k.shape, Backend: b.name, DType: k.dtype, Note: "failed: " + err.Error()}}
	}
	return res
}

// torchSetting names the thread count of PyTorch's answer r.
func torchSetting(r torchpeer.Result) string {
	if r.Threads == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", r.Threads)
}

// describeWins lists the settings that were fastest and in how many
// rounds: "1 thread in 4 rounds, 2 threads in 1".
func describeWins(wins map[string]int) string {
	keys := slices.Collect(maps.Keys(wins))
	slices.SortFunc(keys, func(a, b string) int {
		if wins[a] != wins[b] {
			return wins[b] - wins[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, k := range keys {
		unit := ""
		if i == 0 {
			unit = " rounds"
			if wins[k] == 1 {
				unit = " round"
			}
		}
		parts = append(parts, fmt.Sprintf("%s in %d%s", k, wins[k], unit))
	}
	return strings.Join(parts, ", ")
}

// result is the row of backend at sec seconds per call, with the row's
// rate (bytes, when non-zero, replacing the row's traffic).
func (k kernelRow) result(backend string, sec, bytes float64) benchResult {
	r := benchResult{Bench: k.bench, Shape: k.shape, Backend: backend, DType: k.dtype, Median: sec}
	if bytes == 0 {
		bytes = k.bytes
	}
	switch {
	case !(sec > 0):
	case bytes > 0:
		r.GBPS = bytes / sec / 1e9
	case k.flop > 0:
		r.GFLOPS = k.flop / sec / 1e9
	}
	return r
}

// withPeerRatios sets the row's ratio to each peer's: the rate's over the
// peer's where both have rates (the peers may count other traffic, as Go's
// copy does), else the peer's median time over the row's (the same work):
// above 1, Ember is faster.
func withPeerRatios(row benchResult, peers ...benchResult) []benchResult {
	for _, p := range peers {
		ratio := math.NaN()
		switch {
		case row.rate() > 0 && p.rate() > 0:
			ratio = row.rate() / p.rate()
		case row.Median > 0 && p.Median > 0:
			ratio = p.Median / row.Median
		}
		if ratio > 0 && !math.IsInf(ratio, 0) {
			if row.Ratios == nil {
				row.Ratios = map[string]float64{}
			}
			row.Ratios[p.Backend] = ratio
		}
	}
	return append([]benchResult{row}, peers...)
}

func joinNotes(a, b string) string { return strings.TrimPrefix(a+"; "+b, "; ") }

// sync waits for the bench device.
func (b *bencher) sync() {
	if err := b.dev.Sync(); err != nil {
		panic(err)
	}
}

// benchKernels runs the family's rows: the normalizations, the axis sums,
// the Adam step, the MNIST MLP step and the MNIST CNN's convolutions on
// every device; the roofline rows on a CUDA device only.
func benchKernels(b *bencher) ([]benchResult, error) {
	return b.kernelGroups(kernelNorms, kernelAxisSums, kernelAdam, kernelMLPStep, kernelConvs, kernelCUDA)
}

// kernelGroups measures the rows of each group in turn.
func (b *bencher) kernelGroups(groups ...func(*bencher) []kernelRow) ([]benchResult, error) {
	var out []benchResult
	for _, group := range groups {
		err := ember.Try(func() {
			rows := group(b)
			for i := range rows {
				out = append(out, b.measureOrNote(rows[i])...)
				// The row's tensors go before the next row's are made
				// (the CUDA rows' take gigabytes).
				rows[i] = kernelRow{}
				if b.dev.Type() == ember.TypeCUDA {
					runtime.GC()
					b.dev.MemoryCleanup()
				}
				if b.ctx.Err() != nil {
					return
				}
			}
		})
		if err != nil {
			return out, err
		}
		if b.ctx.Err() != nil {
			break
		}
	}
	return out, nil
}

// kernelNorms are softmax, log-softmax and layer-norm (weight and bias,
// eps 1e-5) of [4096, 1024] f32 over the last axis; the rate counts one
// read and one write.
func kernelNorms(b *bencher) []kernelRow {
	r, c := max(4096/benchScale, 1), max(1024/benchScale, 2)
	x := ember.FromFloats(randFloats[float32](r*c, 11), []int{r, c}, b.dev)
	w := ember.FromFloats(randFloats[float32](c, 12), []int{c}, b.dev)
	bias := ember.FromFloats(randFloats[float32](c, 13), []int{c}, b.dev)
	shape := fmt.Sprintf("%dx%d", r, c)
	row := func(bench, peerCase string, f func() *ember.Tensor) kernelRow {
		return kernelRow{bench: bench, shape: shape, dtype: "f32", bytes: 2 * 4 * float64(r*c),
			run:   func() { f(); b.sync() },
			torch: []torchpeer.Case{{Name: peerCase, Device: b.torchDevice(), Dims: []int{r, c}}}}
	}
	return []kernelRow{
		row("softmax", "softmax", func() *ember.Tensor { return x.Softmax(1) }),
		row("log-softmax", "log_softmax", func() *ember.Tensor { return x.LogSoftmax(1) }),
		row("layer-norm", "layer_norm", func() *ember.Tensor {
			return x.LayerNorm([]int{c}, ember.NormParams{Weight: w, Bias: bias}, 1e-5)
		}),
	}
}

// kernelAxisSums are the sums of [4096, 4096] f32 along axis 0 and axis 1
// against Go's copy of the same bytes (whose rate counts the read and the
// write, as the sum family's does).
func kernelAxisSums(b *bencher) []kernelRow {
	n := max(4096/benchScale, 2)
	x := ember.FromFloats(randFloats[float32](n*n, 21), []int{n, n}, b.dev)
	src, dst := randFloats[float32](n*n, 22), make([]float32, n*n)
	cp := kernelPeer{name: "go-copy", run: func() { copy(dst, src) }, bytes: 2 * 4 * float64(n*n)}
	var rows []kernelRow
	for axis := range 2 {
		rows = append(rows, kernelRow{bench: fmt.Sprintf("sum-axis%d", axis), shape: fmt.Sprintf("%dx%d", n, n), dtype: "f32",
			bytes: 4 * float64(n*n), run: func() { x.SumAxis(axis, false); b.sync() }, peers: []kernelPeer{cp}})
	}
	return rows
}

// kernelAdam is one Adam update of the MNIST MLP's parameters (the
// gradients of one training step, the weights' as the transposed views
// backward gives) as training runs it, optim.Adam's Step (ember.AdamStep:
// the fused kernel where the device has one), against the composed
// update: optim.Adam's StepWith, the ops of AdamStep's decomposition
// (fused into elementwise programs on a device that fuses; op by op with
// EMBER_FUSION=0). The rate counts four reads and three writes of each
// float32 parameter.
func kernelAdam(b *bencher) []kernelRow {
	batch := max(64/benchScale, 2)
	adev := b.dev.Autodiff()
	// setup builds the MLP, its gradients on one synthetic batch and an
	// optimizer.
	setup := func() (*optim.Adam, []nn.NamedParam, *ember.Gradients, []*ember.Tensor) {
		model := train.NewMLP(adev)
		params := model.NamedParameters()
		x := ember.FromFloats(randFloats[float32](batch*784, 31), []int{batch, 1, 28, 28}, adev)
		y := ember.FromInts(mnistLabels(batch), []int{batch}, adev)
		grads := nn.CrossEntropy(model.Forward(x), y).Backward()
		gs := make([]*ember.Tensor, len(params))
		for i, p := range params {
			gs[i] = grads.Of(p.Param.Value)
		}
		return optim.NewAdam(params, optim.AdamConfig{LR: 1e-3}), params, grads, gs
	}
	// step runs update with the gradients filed under the parameters'
	// current values (each update replaces them).
	step := func(params []nn.NamedParam, grads *ember.Gradients, gs []*ember.Tensor, update func()) {
		old := make([]*ember.Tensor, len(params))
		for i, p := range params {
			old[i] = p.Param.Value
			grads.Set(old[i], gs[i])
		}
		update()
		for _, t := range old {
			grads.Remove(t)
		}
		b.sync()
	}
	fused, fp, fg, fgs := setup()
	composed, cp, cg, cgs := setup()
	n := 0
	for _, p := range fp {
		n += p.Param.Value.NumElements()
	}
	note := "composed: optim's StepWith, fused into elementwise programs"
	if !b.dev.Fusion() {
		note = "composed: optim's StepWith, op by op (fusion off)"
	}
	return []kernelRow{{
		bench: "adam-step", shape: fmt.Sprintf("mnist mlp %d params", n), dtype: "f32", bytes: 7 * 4 * float64(n), note: note,
		run: func() { step(fp, fg, fgs, func() { fused.Step(fg) }) },
		peers: []kernelPeer{{name: b.name + "-composed", run: func() {
			step(cp, cg, cgs, func() {
				s := ember.FromData(ir.FromSlice(composed.NextScalars(), []int{3}), adev)
				composed.StepWith(cg, s)
			})
		}}},
	}}
}

// mnistLabels are batch labels 0..9 in turn.
func mnistLabels(batch int) []int {
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = i % 10
	}
	return labels
}

// kernelMLPStep is one MNIST MLP training step (the mnist family's)
// against PyTorch's (bench/torch_mlp_step.py's), with torch.optim.Adam's
// foreach off and on (the faster counts).
func kernelMLPStep(b *bencher) []kernelRow {
	batch := max(64/benchScale, 2)
	dev := b.torchDevice()
	return []kernelRow{{
		bench: "mnist-mlp-step", shape: fmt.Sprintf("784-128-10 batch %d adam", batch), dtype: "f32",
		run: mnistStep(b.dev, batch),
		torch: []torchpeer.Case{{Name: "mlp_step", Device: dev, Dims: []int{batch, 0}},
			{Name: "mlp_step", Device: dev, Dims: []int{batch, 1}}},
		torchVariants: []string{"foreach off", "foreach on"},
	}}
}

// kernelConvs are the forward, input gradient and weight gradient of the
// MNIST CNN's two convolutions (train.NewCNN: batch 64, 5×5, stride 1, no
// padding; conv1 [64, 1, 28, 28] → 32 channels, conv2 [64, 32, 12, 12] →
// 64), the gradients as autodiff runs them (Backward of the convolution
// with only the input, or only the weights, tracked).
func kernelConvs(b *bencher) []kernelRow {
	n := max(64/benchScale, 1)
	layers := []struct {
		name          string
		cin, hw, cout int
	}{
		{"conv1", 1, 28, max(32/benchScale, 1)},
		{"conv2", max(32/benchScale, 1), 12, max(64/benchScale, 1)},
	}
	adev := b.dev.Autodiff()
	opts := ember.ConvOptions{}
	var rows []kernelRow
	for i, l := range layers {
		seed := uint64(40 + 10*i)
		xs, ws, ho := []int{n, l.cin, l.hw, l.hw}, []int{l.cout, l.cin, 5, 5}, l.hw-4
		xv, wv := randFloats[float32](n*l.cin*l.hw*l.hw, seed), randFloats[float32](l.cout*l.cin*25, seed+1)
		gv := randFloats[float32](n*l.cout*ho*ho, seed+2)
		x, w := ember.FromFloats(xv, xs, b.dev), ember.FromFloats(wv, ws, b.dev)
		g := ember.FromFloats(gv, []int{n, l.cout, ho, ho}, b.dev)
		// Only x tracked: Backward gives the input gradient; only w: the
		// weight gradient.
		yx := ember.FromFloats(xv, xs, adev).RequireGrad().Conv2d(ember.FromFloats(wv, ws, adev), nil, opts)
		yw := ember.FromFloats(xv, xs, adev).Conv2d(ember.FromFloats(wv, ws, adev).RequireGrad(), nil, opts)
		shape := fmt.Sprintf("%dx%dx%dx%d k5 ->%d", n, l.cin, l.hw, l.hw, l.cout)
		flop := 2 * float64(n*l.cout*ho*ho) * float64(l.cin*25)
		dims := []int{n, l.cin, l.hw, l.hw, l.cout, 5, 5, 0}
		for _, kind := range []struct {
			name string
			run  func()
		}{
			{"fwd", func() { x.Conv2d(w, nil, opts); b.sync() }},
			{"dgrad", func() { yx.BackwardWith(g); b.sync() }},
			{"wgrad", func() { yw.BackwardWith(g); b.sync() }},
		} {
			rows = append(rows, kernelRow{bench: "mnist-" + l.name + "-" + kind.name, shape: shape, dtype: "f32", flop: flop, run: kind.run,
				torch: []torchpeer.Case{{Name: "conv_" + kind.name, Device: b.torchDevice(), Dims: dims}}})
		}
	}
	return rows
}

// kernelCUDA are the roofline rows on a CUDA device (none elsewhere): the
// full sum of 2^28 f32, sums of [16384, 16384] f32 along each axis,
// softmax of [16384, 4096] f32, an add of two 2^28-element bf16 tensors
// (rates: bytes read and written), and a 3×3 convolution (padding 1) of
// [64, 64, 56, 56] to 64 channels in f32 (PyTorch's TF32 off) and bf16,
// against PyTorch on cuda (bench/torch_roofline.py's ops).
func kernelCUDA(b *bencher) []kernelRow {
	if b.dev.Type() != ember.TypeCUDA {
		return nil
	}
	return roofline(b)
}

// roofline are kernelCUDA's rows on any device (the tests run them on the
// cpu at a tiny size).
func roofline(b *bencher) []kernelRow {
	n := max((1<<28)/benchScale, 2)
	m := max(16384/benchScale, 2)
	sr, sc := max(16384/benchScale, 1), max(4096/benchScale, 2)
	cn, cc, chw := max(64/benchScale, 1), max(64/benchScale, 1), max(56/benchScale, 3)
	randn := func(dt ember.DType, shape ...int) *ember.Tensor {
		return ember.RandomDType(shape, ember.Normal(0, 1), dt, b.dev)
	}
	cuda := func(name, dtype string, dims ...int) []torchpeer.Case {
		return []torchpeer.Case{{Name: name, Device: "cuda", DType: dtype, Dims: dims}}
	}
	// Each row makes its tensors when it starts (lazy) and drops them
	// after, so that one row's gigabytes are freed before the next's.
	var rows []kernelRow
	lazy := func(k kernelRow, build func() func()) kernelRow {
		var f func()
		k.run = func() {
			if f == nil {
				f = build()
			}
			f()
		}
		return k
	}
	rows = append(rows, lazy(kernelRow{bench: "sum", shape: fmt.Sprint(n), dtype: "f32", bytes: 4 * float64(n), torch: cuda("sum", "f32", n)},
		func() func() {
			x := randn(ember.F32, n)
			return func() { x.Sum(); b.sync() }
		}))
	for axis := range 2 {
		rows = append(rows, lazy(kernelRow{bench: fmt.Sprintf("sum-axis%d", axis), shape: fmt.Sprintf("%dx%d", m, m), dtype: "f32",
			bytes: 4 * float64(m) * float64(m), torch: cuda("sum_axis", "f32", m, m, axis)},
			func() func() {
				x := randn(ember.F32, m, m)
				return func() { x.SumAxis(axis, false); b.sync() }
			}))
	}
	rows = append(rows, lazy(kernelRow{bench: "softmax", shape: fmt.Sprintf("%dx%d", sr, sc), dtype: "f32",
		bytes: 2 * 4 * float64(sr*sc), torch: cuda("softmax", "f32", sr, sc)},
		func() func() {
			x := randn(ember.F32, sr, sc)
			return func() { x.Softmax(1); b.sync() }
		}))
	rows = append(rows, lazy(kernelRow{bench: "add", shape: fmt.Sprint(n), dtype: "bf16", bytes: 3 * 2 * float64(n), torch: cuda("add", "bf16", n)},
		func() func() {
			x, y := randn(ember.BF16, n), randn(ember.BF16, n)
			return func() { x.Add(y); b.sync() }
		}))
	for _, dt := range []ember.DType{ember.F32, ember.BF16} {
		name := dt.String()
		rows = append(rows, lazy(kernelRow{bench: "conv2d", shape: fmt.Sprintf("%dx%dx%dx%d k3 ->%d", cn, cc, chw, chw, cc), dtype: name,
			flop: 2 * float64(cn*cc*chw*chw) * float64(cc*9), torch: cuda("conv_fwd", name, cn, cc, chw, chw, cc, 3, 3, 1)},
			func() func() {
				x, w := randn(dt, cn, cc, chw, chw), randn(dt, cc, cc, 3, 3).MulScalar(0.1)
				opts := ember.ConvOptions{Padding: [2]int{1, 1}}
				return func() { x.Conv2d(w, nil, opts); b.sync() }
			}))
	}
	return rows
}
