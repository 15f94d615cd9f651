package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// linearData returns n examples of y = x·w + b + noise (σ = sigma), x
// standard normal, as F32 features [n, len(w)] and targets [n, 1], and the
// same values in float64.
func linearData(n int, w []float64, b, sigma float64, seed uint64) (*data.TensorDataset, [][]float64, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	d := len(w)
	x32, y32 := make([]float32, n*d), make([]float32, n)
	xs, ys := make([][]float64, n), make([]float64, n)
	for i := range n {
		xs[i] = make([]float64, d)
		y := b
		for j := range d {
			v := float64(float32(r.NormFloat64()))
			xs[i][j], x32[i*d+j] = v, float32(v)
			y += w[j] * v
		}
		y += sigma * r.NormFloat64()
		ys[i] = float64(float32(y))
		y32[i] = float32(y)
	}
	ds, err := data.FromSlices(x32, []int{n, d}, y32, []int{n, 1})
	if err != nil {
		panic(err)
	}
	return ds, xs, ys
}

// leastSquares solves the normal equations of y ≈ [x 1]·θ in float64 by
// Gaussian elimination with partial pivoting and returns θ (weights, then
// the bias).
func leastSquares(xs [][]float64, ys []float64) []float64 {
	d := len(xs[0]) + 1
	a := make([][]float64, d)
	for i := range a {
		a[i] = make([]float64, d+1)
	}
	for k, x := range xs {
		row := append(slices.Clone(x), 1)
		for i := range d {
			for j := range d {
				a[i][j] += row[i] * row[j]
			}
			a[i][d] += row[i] * ys[k]
		}
	}
	for c := range d {
		p := c
		for i := c + 1; i < d; i++ {
			if math.Abs(a[i][c]) > math.Abs(a[p][c]) {
				p = i
			}
		}
		a[c], a[p] = a[p], a[c]
		for i := range d {
			if i != c {
				f := a[i][c] / a[c][c]
				for j := c; j <= d; j++ {
					a[i][j] -= f * a[c][j]
				}
			}
		}
	}
	out := make([]float64, d)
	for i := range d {
		out[i] = a[i][d] / a[i][i]
	}
	return out
}

// rows returns the float64 rows of ds's examples (features, targets).
func rows(t *testing.T, ds data.Dataset) ([][]float64, []float64) {
	t.Helper()
	var xs [][]float64
	var ys []float64
	for i := range ds.Len() {
		x, y, err := data.Example(ds, i)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x.Float64s())
		ys = append(ys, y.Float64s()[0])
	}
	return xs, ys
}

// TestTrainerRegression fits a linear model to y = x·w + b + noise and
// checks that it converges to the least-squares solution of its training
// split (computed in float64 by the normal equations), that the
// validation MSE is near the noise variance, and that the reported
// metrics equal a float64 evaluation of the trained model.
func TestTrainerRegression(t *testing.T) {
	wTrue, bTrue, sigma := []float64{1.5, -2, 0.5}, 0.3, 0.05
	ds, _, _ := linearData(512, wTrue, bTrue, sigma, 1)
	dev := ember.Flex()
	dev.Seed(1)
	adev := dev.Autodiff()
	lin := nn.NewLinear(3, 1, adev)
	tr := &Trainer{
		Model:           lin,
		Loss:            nn.MSE,
		Optimizer:       optim.NewAdam(lin.NamedParameters(), optim.AdamConfig{LR: 0.05}),
		Metrics:         []Metric{MSE(), MAE()},
		Epochs:          40,
		BatchSize:       32,
		Seed:            2,
		ValidationSplit: 0.25,
	}
	hist, err := tr.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 40 || tr.State.Epoch != 40 || tr.State.Step != 40*12 || len(hist.StepLosses) != 40*12 {
		t.Fatalf("%d epochs, state %+v, %d steps; want 40 epochs of 384/32 = 12 steps", len(hist.Epochs), tr.State, len(hist.StepLosses))
	}
	last := hist.Epochs[39].Values
	t.Logf("last epoch %v", last)
	// The noise variance is 0.0025: the validation error of the exact
	// model is about that.
	if v := last["val_mse"]; !(v < 0.004) {
		t.Fatalf("validation MSE %v, want < 0.004 (noise variance %v)", v, sigma*sigma)
	}
	if last["val_loss"] != last["val_loss"] || math.Abs(last["val_loss"]-last["val_mse"]) > 1e-6 {
		t.Fatalf("val_loss %v and val_mse %v should agree", last["val_loss"], last["val_mse"])
	}
	// Reference: least squares over the training split the Trainer used.
	trainSet, valSet := data.RandomSplit(ds, 0.25, 2^splitSeed)
	xs, ys := rows(t, trainSet)
	theta := leastSquares(xs, ys)
	w, b := lin.Weight.Value.Float64s(), lin.Bias.Value.Float64s()[0]
	for j := range wTrue {
		if math.Abs(theta[j]-wTrue[j]) > 0.02 {
			t.Fatalf("least squares weight %d = %v, true %v: the reference is off", j, theta[j], wTrue[j])
		}
		if math.Abs(w[j]-theta[j]) > 0.003 {
			t.Errorf("weight %d = %v, least squares %v (true %v), want within 0.003", j, w[j], theta[j], wTrue[j])
		}
	}
	t.Logf("weights %v bias %v, least squares %v", w, b, theta)
	if math.Abs(b-theta[3]) > 0.003 {
		t.Errorf("bias %v, least squares %v, want within 0.003", b, theta[3])
	}
	// The validation metrics are those of the final model, recomputed in
	// float64 from its parameters.
	vx, vy := rows(t, valSet)
	var se, ae float64
	for i, x := range vx {
		p := float64(float32(b))
		for j := range x {
			p += w[j] * x[j]
		}
		se += (p - vy[i]) * (p - vy[i])
		ae += math.Abs(p - vy[i])
	}
	mse, mae := se/float64(len(vx)), ae/float64(len(vx))
	if math.Abs(last["val_mse"]-mse) > 1e-6*mse+1e-9 || math.Abs(last["val_mae"]-mae) > 1e-6*mae+1e-9 {
		t.Fatalf("val_mse %v val_mae %v, float64 recomputation %v %v", last["val_mse"], last["val_mae"], mse, mae)
	}
	ev, err := tr.Evaluate(context.Background(), valSet)
	if err != nil || ev["mse"] != last["val_mse"] || ev["loss"] != last["val_loss"] {
		t.Fatalf("Evaluate %v (%v), last epoch %v", ev, err, last)
	}
}

// TestTrainerCSVClassifier trains a small MLP on a CSV file of three
// Gaussian blobs (100 points each, σ 0.6, named classes) and checks its
// validation accuracy against a nearest-centroid classifier computed in
// float64 from the training split.
func TestTrainerCSVClassifier(t *testing.T) {
	ds, err := data.ReadCSVFile("testdata/blobs.csv", data.CSVOptions{
		Header: true, Target: data.ClassTarget, ClassNames: []string{"red", "green", "blue"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 300 {
		t.Fatalf("%d rows", ds.Len())
	}
	dev := ember.Flex()
	dev.Seed(5)
	adev := dev.Autodiff()
	model := nn.NewSequential(nn.NewLinear(2, 16, adev), nn.Relu{}, nn.NewLinear(16, 3, adev))
	var out bytes.Buffer
	tr := &Trainer{
		Model:           model,
		Optimizer:       optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.02}),
		Metrics:         []Metric{Accuracy()},
		Epochs:          25,
		BatchSize:       16,
		Seed:            7,
		ValidationSplit: 0.2,
		Out:             &out,
	}
	hist, err := tr.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	last := hist.Epochs[len(hist.Epochs)-1].Values
	// Nearest centroid on the same split.
	trainSet, valSet := data.RandomSplit(ds, 0.2, 7^splitSeed)
	var cent [3][3]float64 // x, y, count
	for i := range trainSet.Len() {
		x, y, _ := data.Example(trainSet, i)
		f, c := x.Float64s(), y.Int64s()[0]
		cent[c][0] += f[0]
		cent[c][1] += f[1]
		cent[c][2]++
	}
	correct := 0
	for i := range valSet.Len() {
		x, y, _ := data.Example(valSet, i)
		f := x.Float64s()
		best, bestD := 0, math.Inf(1)
		for c := range 3 {
			dx, dy := f[0]-cent[c][0]/cent[c][2], f[1]-cent[c][1]/cent[c][2]
			if d := dx*dx + dy*dy; d < bestD {
				best, bestD = c, d
			}
		}
		if int64(best) == y.Int64s()[0] {
			correct++
		}
	}
	ref := float64(correct) / float64(valSet.Len())
	t.Logf("last epoch %v, nearest centroid %v", last, ref)
	if ref < 0.9 {
		t.Fatalf("nearest centroid scores %v: the blobs are not separable enough for the test", ref)
	}
	if acc := last["val_accuracy"]; !(acc >= 0.95) || acc < ref-0.04 {
		t.Fatalf("validation accuracy %v, want >= 0.95 and near nearest centroid's %v", acc, ref)
	}
	if !(last["val_loss"] < 0.3) {
		t.Fatalf("validation loss %v", last["val_loss"])
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 25 || !strings.HasPrefix(lines[24], "epoch 25/25  loss ") || !strings.Contains(lines[24], "  val_accuracy ") {
		t.Fatalf("report:\n%s", out.String())
	}
}

// scripted is a metric whose value in epoch k is script[k], whatever the
// batches.
type scripted struct {
	script []float64
	calls  int
}

func (*scripted) Name() string                      { return "score" }
func (*scripted) Reset()                            {}
func (*scripted) Update(pred, target *ember.Tensor) {}
func (s *scripted) Value() float64 {
	v := s.script[min(s.calls, len(s.script)-1)]
	s.calls++
	return v
}

// tinyRegression returns a Trainer of a linear model on a small
// regression set, with SGD at learning rate lr.
func tinyRegression(lr float64) (*Trainer, data.Dataset) {
	ds, _, _ := linearData(64, []float64{1, -1}, 0.5, 0.1, 3)
	dev := ember.Flex()
	dev.Seed(4)
	lin := nn.NewLinear(2, 1, dev.Autodiff())
	opt := optim.NewSGD(lin.NamedParameters(), optim.SGDConfig{LR: 1})
	opt.SetLR(lr)
	return &Trainer{
		Model:     lin,
		Optimizer: opt,
		BatchSize: 16,
		Epochs:    20,
		Seed:      1,
	}, ds
}

// params returns the model's parameter values, flattened.
func params(m nn.Module) []float32 {
	var out []float32
	for _, p := range m.NamedParameters() {
		out = append(out, p.Param.Value.Float32s()...)
	}
	return out
}

// TestEarlyStoppingScripted checks the stopping rule on a monitored value
// given in advance: with MinDelta 0.005 and Patience 2 the values 1.0,
// 0.8, 0.79 improve, 0.85 and 0.7899 (not 0.005 below 0.79) do not, so
// training stops after epoch 5 with epoch 3 the best; RestoreBest then
// puts back exactly the parameters after epoch 3.
func TestEarlyStoppingScripted(t *testing.T) {
	for _, restore := range []bool{false, true} {
		tr, ds := tinyRegression(0.05)
		tr.Metrics = []Metric{&scripted{script: []float64{1.0, 0.8, 0.79, 0.85, 0.7899, 0.1, 0.1}}}
		tr.EarlyStopping = &EarlyStopping{Monitor: "score", Patience: 2, MinDelta: 0.005, RestoreBest: restore}
		var after [][]float32
		tr.OnEpoch = func(EpochReport) error {
			after = append(after, params(tr.Model))
			return nil
		}
		hist, err := tr.Fit(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		var improved []bool
		for _, e := range hist.Epochs {
			improved = append(improved, e.Improved)
		}
		st := tr.State
		if len(hist.Epochs) != 5 || !st.Stopped || st.BestEpoch != 3 || st.Best != 0.79 || st.Wait != 2 || !hist.Epochs[4].Stop ||
			!slices.Equal(improved, []bool{true, true, true, false, false}) {
			t.Fatalf("restore %v: %d epochs, state %+v, improved %v; want a stop after epoch 5, best epoch 3", restore, len(hist.Epochs), st, improved)
		}
		if slices.Equal(after[2], after[4]) {
			t.Fatal("the parameters did not change after epoch 3; the restore check is void")
		}
		want := after[4]
		if restore {
			want = after[2]
		}
		if got := params(tr.Model); !slices.Equal(got, want) || hist.Restored != restore {
			t.Fatalf("restore %v: parameters %v (restored %v), want %v", restore, got, hist.Restored, want)
		}
		// A stopped Trainer does not train on.
		again, err := tr.Fit(context.Background(), ds)
		if err != nil || len(again.Epochs) != 0 {
			t.Fatalf("Fit after stopping: %d epochs, %v", len(again.Epochs), err)
		}
	}
}

// TestEarlyStoppingFlatLoss trains with learning rate 0, so that every
// epoch's loss is the same: with Patience 3 training stops after epoch 4,
// epoch 1 the best. Monitoring accuracy (ModeAuto: higher is better)
// behaves alike.
func TestEarlyStoppingFlatLoss(t *testing.T) {
	tr, ds := tinyRegression(0)
	tr.NoShuffle = true
	tr.EarlyStopping = &EarlyStopping{Patience: 3}
	hist, err := tr.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 4 || tr.State.BestEpoch != 1 || hist.Epochs[0].Values["loss"] != hist.Epochs[3].Values["loss"] {
		t.Fatalf("%d epochs, state %+v", len(hist.Epochs), tr.State)
	}

	dev := ember.Flex()
	dev.Seed(1)
	m := nn.NewLinear(2, 3, dev.Autodiff())
	cls, _ := data.FromSlices([]float32{1, 0, 0, 1, 1, 1, 0, 0}, []int{4, 2}, []int64{0, 1, 2, 0}, []int{4})
	sgd := optim.NewSGD(m.NamedParameters(), optim.SGDConfig{LR: 1})
	sgd.SetLR(0)
	tc := &Trainer{Model: m, Optimizer: sgd, Metrics: []Metric{Accuracy()},
		Epochs: 10, BatchSize: 2, Validation: cls, EarlyStopping: &EarlyStopping{Monitor: "val_accuracy", Patience: 2}}
	hist, err = tc.Fit(context.Background(), cls)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 3 || tc.State.BestEpoch != 1 {
		t.Fatalf("accuracy: %d epochs, state %+v, want a stop after epoch 3", len(hist.Epochs), tc.State)
	}
}

// TestTrainerMatchesRun checks that the Trainer, given Run's model,
// optimizer, batch size and seed, takes the very same steps as Run's
// MNIST loop: bit-identical losses.
func TestTrainerMatchesRun(t *testing.T) {
	cfg := syntheticConfig(96)
	cfg.Epochs = 2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dev := cfg.Device.Inner()
	dev.Seed(cfg.Seed)
	adev := dev.Autodiff()
	model := NewMLP(adev)
	tr := &Trainer{Model: model, Loss: nn.CrossEntropy, Optimizer: optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 1e-3}),
		BatchSize: cfg.Batch, Seed: cfg.Seed, Epochs: 2}
	hist, err := tr.Fit(context.Background(), cfg.Train)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hist.StepLosses, res.StepLosses) {
		t.Fatalf("Trainer losses %v\nRun losses     %v", hist.StepLosses, res.StepLosses)
	}
	if got, want := hist.Epochs[1].Values["loss"], res.Epochs[1].TrainLoss; got != want {
		t.Fatalf("epoch 2 loss %v, Run's %v", got, want)
	}
}

// TestTrainerResume checks that two Fit calls of 2 and then 2 more epochs
// take the same steps as one Fit of 4, continuing from State.
func TestTrainerResume(t *testing.T) {
	one, ds := tinyRegression(0.05)
	one.Epochs = 4
	h1, err := one.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := tinyRegression(0.05)
	two.Epochs = 2
	ha, err := two.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	// State is plain data: it survives a JSON round trip.
	js, err := json.Marshal(two.State)
	if err != nil {
		t.Fatal(err)
	}
	two.State = State{}
	if err := json.Unmarshal(js, &two.State); err != nil || two.State.Epoch != 2 || two.State.Step != 8 {
		t.Fatalf("state from %s: %+v, %v", js, two.State, err)
	}
	two.Epochs = 4
	hb, err := two.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(append(ha.StepLosses, hb.StepLosses...), h1.StepLosses) || two.State != one.State || hb.Epochs[0].Epoch != 3 {
		t.Fatalf("resumed losses %v + %v, state %+v;\none run %v, state %+v", ha.StepLosses, hb.StepLosses, two.State, h1.StepLosses, one.State)
	}
}

func TestTrainerCancelAndStop(t *testing.T) {
	tr, ds := tinyRegression(0.05)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr.OnStep = func(step int, _ float64) {
		if step == 6 {
			cancel()
		}
	}
	hist, err := tr.Fit(ctx, ds)
	if !errors.Is(err, context.Canceled) || hist == nil || len(hist.StepLosses) != 6 || tr.State.Epoch != 1 {
		t.Fatalf("cancelled fit: err %v, history %+v, state %+v; want 6 steps, 1 epoch", err, hist, tr.State)
	}

	tr, ds = tinyRegression(0.05)
	tr.OnEpoch = func(r EpochReport) error {
		if r.Epoch == 2 {
			return ErrStop
		}
		return nil
	}
	hist, err = tr.Fit(context.Background(), ds)
	if err != nil || len(hist.Epochs) != 2 || !tr.State.Stopped || !hist.Epochs[1].Stop {
		t.Fatalf("ErrStop: err %v, %d epochs, state %+v", err, len(hist.Epochs), tr.State)
	}
	tr, ds = tinyRegression(0.05)
	boom := errors.New("boom")
	tr.OnEpoch = func(EpochReport) error { return boom }
	if _, err := tr.Fit(context.Background(), ds); !errors.Is(err, boom) {
		t.Fatalf("OnEpoch error: %v", err)
	}
}

func TestTrainerDefaults(t *testing.T) {
	// Default optimizer (Adam), loss (MSE for float targets), device.
	ds, _, _ := linearData(64, []float64{2}, 0, 0, 9)
	dev := ember.Flex()
	dev.Seed(2)
	lin := nn.NewLinear(1, 1, dev.Autodiff())
	tr := &Trainer{Model: lin, Epochs: 3}
	hist, err := tr.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.Optimizer.(*optim.Adam); !ok || tr.State.Step != 3 || len(hist.Epochs) != 3 {
		t.Fatalf("optimizer %T, state %+v", tr.Optimizer, tr.State)
	}
	// The default loss is MSE: the reported loss equals nn.MSE of the
	// trained model over the dataset.
	ev, err := tr.Evaluate(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]byte, 64*4), make([]byte, 64*4)
	idx := make([]int, 64)
	for i := range idx {
		idx[i] = i
	}
	if err := ds.Gather(idx, x, y); err != nil {
		t.Fatal(err)
	}
	xt := ember.FromData(&ember.TensorData{Shape: []int{64, 1}, DType: ember.F32, Bytes: x}, dev)
	yt := ember.FromData(&ember.TensorData{Shape: []int{64, 1}, DType: ember.F32, Bytes: y}, dev)
	var want float64
	ember.NoGrad(func() { want = nn.MSE(lin.Forward(xt.ToDevice(dev.Autodiff())), yt.ToDevice(dev.Autodiff())).Item() })
	if math.Abs(ev["loss"]-want) > 1e-6*want {
		t.Fatalf("Evaluate loss %v, nn.MSE %v", ev["loss"], want)
	}
}

// TestTrainerErrors checks that misconfigurations and failing models are
// errors, never panics.
func TestTrainerErrors(t *testing.T) {
	ds, _, _ := linearData(8, []float64{1, 1}, 0, 0, 1)
	dev := ember.Flex()
	lin := func() nn.Module { return nn.NewLinear(2, 1, dev.Autodiff()) }
	other, _ := data.FromSlices([]float32{1, 2, 3}, []int{1, 3}, []float32{1}, []int{1, 1})
	cls, _ := data.FromSlices([]float32{1, 2}, []int{1, 2}, []int64{3}, []int{1})
	cases := map[string]struct {
		tr   *Trainer
		ds   data.Dataset
		want string
	}{
		"nil model":      {&Trainer{}, ds, "Model is nil"},
		"no autodiff":    {&Trainer{Model: nn.NewLinear(2, 1, dev)}, ds, "does not record gradients"},
		"epochs":         {&Trainer{Model: lin(), Epochs: -1}, ds, "Epochs -1"},
		"batch":          {&Trainer{Model: lin(), BatchSize: -1}, ds, "batch sizes"},
		"split":          {&Trainer{Model: lin(), ValidationSplit: 1.5}, ds, "ValidationSplit 1.5"},
		"split tiny":     {&Trainer{Model: lin(), ValidationSplit: 0.01}, ds, "leaves"},
		"both":           {&Trainer{Model: lin(), ValidationSplit: 0.5, Validation: ds}, ds, "both"},
		"val schema":     {&Trainer{Model: lin(), Validation: other}, ds, "validation set has"},
		"monitor":        {&Trainer{Model: lin(), EarlyStopping: &EarlyStopping{Monitor: "val_loss"}}, ds, `Monitor "val_loss"`},
		"patience":       {&Trainer{Model: lin(), EarlyStopping: &EarlyStopping{Patience: -1}}, ds, "Patience"},
		"min delta":      {&Trainer{Model: lin(), EarlyStopping: &EarlyStopping{MinDelta: math.NaN()}}, ds, "MinDelta"},
		"drop last":      {&Trainer{Model: lin(), BatchSize: 16, DropLast: true}, ds, "no batch"},
		"wrong input":    {&Trainer{Model: lin()}, other, "epoch 1"},
		"metric shape":   {&Trainer{Model: lin(), Metrics: []Metric{Accuracy()}}, ds, "train.Accuracy"},
		"loss not mean":  {&Trainer{Model: lin(), Loss: func(p, y *ember.Tensor) *ember.Tensor { return p.Sub(y) }}, ds, "scalar"},
		"class targets":  {&Trainer{Model: lin()}, cls, "out of range"},
		"no params":      {&Trainer{Model: FuncModule(func(x *ember.Tensor) *ember.Tensor { return x }, nil)}, ds, "no parameters"},
		"prefetch":       {&Trainer{Model: lin(), Prefetch: -5}, ds, "Prefetch"},
		"nil dataset":    {&Trainer{Model: lin()}, nil, "nil dataset"},
		"mode":           {&Trainer{Model: lin(), EarlyStopping: &EarlyStopping{Mode: 9}}, ds, "Mode"},
		"metric shape 2": {&Trainer{Model: lin(), Metrics: []Metric{MSE()}, Loss: flatMSE}, data.Dataset(mustDS(t)), "shapes differ"},
		"loss shape":     {&Trainer{Model: lin()}, data.Dataset(mustDS(t)), "target [2] does not broadcast to pred's shape [2 1]"},
		"bad schema":     {&Trainer{Model: lin()}, badSchema{ds}, "schema"},
	}
	for name, c := range cases {
		_, err := c.tr.Fit(context.Background(), c.ds)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

// flatMSE is nn.MSE of predictions [B, 1] reshaped to targets [B].
func flatMSE(p, y *ember.Tensor) *ember.Tensor { return nn.MSE(p.Reshape(p.Dim(0)), y) }

// badSchema claims an invalid feature dtype.
type badSchema struct{ data.Dataset }

func (badSchema) Schema() data.Schema { return data.Schema{Targets: data.Field{DType: ember.F32}} }

// mustDS returns a dataset of 2 features and scalar float targets [B],
// which a model with output [B, 1] does not match for MSE.
func mustDS(t *testing.T) *data.TensorDataset {
	ds, err := data.FromSlices([]float32{1, 2, 3, 4}, []int{2, 2}, []float32{1, 2}, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestFuncModule trains a model given as a function: y = a·x + b.
func TestFuncModule(t *testing.T) {
	dev := ember.Flex().Autodiff()
	a := &nn.Param{Value: ember.FromFloats([]float32{0}, []int{1, 1}, dev).RequireGrad()}
	b := &nn.Param{Value: ember.FromFloats([]float32{0}, []int{1}, dev).RequireGrad()}
	m := FuncModule(func(x *ember.Tensor) *ember.Tensor { return x.Matmul(a.Value).Add(b.Value) },
		[]nn.NamedParam{{Name: "a", Param: a}, {Name: "b", Param: b}})
	ds, _, _ := linearData(128, []float64{-3}, 2, 0, 5)
	tr := &Trainer{Model: m, Optimizer: optim.NewSGD(m.NamedParameters(), optim.SGDConfig{LR: 0.1}), Epochs: 30, BatchSize: 16}
	if _, err := tr.Fit(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	if av, bv := a.Value.Float64s()[0], b.Value.Float64s()[0]; math.Abs(av+3) > 1e-3 || math.Abs(bv-2) > 1e-3 {
		t.Fatalf("a = %v, b = %v, want -3 and 2", av, bv)
	}
}
