package train

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// blobs is a 3-class set of n points in 6 dimensions around three
// centres, with I64 labels.
func blobs(n int, seed uint64) *data.TensorDataset {
	r := rand.New(rand.NewPCG(seed, 5))
	x := make([]float32, n*6)
	y := make([]int64, n)
	for i := range n {
		y[i] = int64(i % 3)
		for j := range 6 {
			centre := float64((int(y[i])+j)%3) - 1
			x[i*6+j] = float32(centre + 0.8*r.NormFloat64())
		}
	}
	ds, err := data.FromSlices(x, []int{n, 6}, y, []int{n})
	if err != nil {
		panic(err)
	}
	return ds
}

// dropoutTrainer is a Trainer of a network with BatchNorm (buffers) and
// Dropout (random draws in every step) on flex, with a validation split,
// early stopping that restores the best epoch, a warm-up then cosine
// schedule, clipping and the given optimizer, for 600 steps of 8 examples
// (12 per epoch, 50 epochs).
func dropoutTrainer(optimizer string) *Trainer {
	dev := ember.Flex().Autodiff()
	dev.Seed(21)
	model := nn.NewSequential(nn.NewLinear(6, 16, dev), nn.NewBatchNorm(16, dev), nn.Relu{}, nn.NewDropout(0.3), nn.NewLinear(16, 3, dev))
	var opt optim.Optimizer = optim.NewAdam(model.NamedParameters(), optim.AdamConfig{LR: 0.01})
	if optimizer == "sgd" {
		opt = optim.NewSGD(model.NamedParameters(), optim.SGDConfig{LR: 0.05, Momentum: 0.9})
	}
	return &Trainer{
		Model: model, Optimizer: opt, Metrics: []Metric{Accuracy()}, BatchSize: 8, Epochs: 50, Seed: 9,
		ValidationSplit: 0.2, EarlyStopping: &EarlyStopping{Monitor: "val_loss", Patience: 100, RestoreBest: true},
		Schedule: optim.WarmupLR(optim.CosineLR(opt.LR(), 1e-4, 550), 50), ClipNorm: 2,
	}
}

// TestTrainerCheckpointResume interrupts a Trainer after 300 of its 600
// steps (the last step of epoch 25, before its validation), resumes a new Trainer from the
// checkpoint Fit wrote, and requires the uninterrupted run's losses,
// epoch values, best epoch and final parameters bit for bit: the dropout
// masks after the resume come from the restored random state, the
// restored best epoch's values from the checkpoint.
func TestTrainerCheckpointResume(t *testing.T) {
	ds := blobs(120, 1)
	for _, optimizer := range []string{"adam", "sgd"} {
		full := dropoutTrainer(optimizer)
		hFull, err := full.Fit(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		if len(hFull.StepLosses) != 600 || !hFull.Restored {
			t.Fatalf("%s: %d steps, restored %v; want 600 and the best epoch restored", optimizer, len(hFull.StepLosses), hFull.Restored)
		}
		path := filepath.Join(t.TempDir(), "trainer.ckpt")
		ctx, cancel := context.WithCancel(context.Background())
		first := dropoutTrainer(optimizer)
		first.CheckpointPath = path
		first.OnStep = func(step int, _ float64) {
			if step == 300 {
				cancel()
			}
		}
		if _, err := first.Fit(ctx, ds); !errors.Is(err, context.Canceled) || first.State.Step != 300 {
			t.Fatalf("%s: interrupted fit: %v, state %+v", optimizer, err, first.State)
		}
		cancel()

		ck, err := LoadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if ck.State.Step != 300 || ck.State.Epoch != 24 || ck.State.EpochStep != 12 || ck.RNG == nil || ck.Best == nil {
			// 300 = 25 epochs of 12: epoch 25 has taken its steps, not
			// its validation.
			t.Fatalf("%s: checkpoint state %+v, rng %d bytes, best %v", optimizer, ck.State, len(ck.RNG), ck.Best != nil)
		}
		second := dropoutTrainer(optimizer)
		second.Model.(*nn.Sequential).Modules[0].(*nn.Linear).Weight.Value.Device().Seed(777) // the restored state must win
		if err := second.Resume(ck); err != nil {
			t.Fatal(err)
		}
		hRes, err := second.Fit(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(hRes.StepLosses, hFull.StepLosses[300:]) {
			t.Fatalf("%s: resumed losses differ from the uninterrupted run's", optimizer)
		}
		if second.State != full.State || !slices.Equal(params(second.Model), params(full.Model)) {
			t.Fatalf("%s: resumed state %+v and parameters differ from the uninterrupted run's %+v", optimizer, second.State, full.State)
		}
		last, lastFull := hRes.Epochs[len(hRes.Epochs)-1], hFull.Epochs[len(hFull.Epochs)-1]
		for k, v := range lastFull.Values {
			if last.Values[k] != v {
				t.Fatalf("%s: last epoch %s = %v resumed, %v uninterrupted", optimizer, k, last.Values[k], v)
			}
		}
	}
}

// TestTrainerResumeMidEpoch checkpoints from OnStep in the middle of an
// epoch (step 305 = epoch 26, batch 5), resumes, and compares with the
// uninterrupted run; a resume without the random state (reseeded
// device) differs, so the check is not vacuous.
func TestTrainerResumeMidEpoch(t *testing.T) {
	ds := blobs(120, 2)
	full := dropoutTrainer("adam")
	hFull, err := full.Fit(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := dropoutTrainer("adam")
	first.OnStep = func(step int, _ float64) {
		if step == 305 {
			c, err := first.Checkpoint()
			if err == nil {
				err = WriteCheckpoint(&buf, c)
			}
			if err != nil {
				t.Error(err)
			}
			cancel()
		}
	}
	if _, err := first.Fit(ctx, ds); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	resume := func(rng bool) (*Trainer, *History) {
		ck, err := ReadCheckpoint(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if ck.State.Epoch != 25 || ck.State.EpochStep != 5 || ck.State.EpochExamples != 40 {
			t.Fatalf("checkpoint state %+v, want epoch 26 at batch 5", ck.State)
		}
		if !rng {
			ck.RNG = nil
		}
		tr := dropoutTrainer("adam")
		if err := tr.Resume(ck); err != nil {
			t.Fatal(err)
		}
		h, err := tr.Fit(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		return tr, h
	}
	tr, h := resume(true)
	if !slices.Equal(h.StepLosses, hFull.StepLosses[305:]) || !slices.Equal(params(tr.Model), params(full.Model)) {
		t.Fatal("the run resumed mid-epoch differs from the uninterrupted run")
	}
	// The resumed epoch reports the mean loss of all its 12 batches.
	if got, want := h.Epochs[0].Values["loss"], hFull.Epochs[25].Values["loss"]; got != want || h.Epochs[0].Epoch != 26 {
		t.Fatalf("resumed epoch %d loss %v, uninterrupted %v", h.Epochs[0].Epoch, got, want)
	}
	_, hNoRNG := resume(false)
	if slices.Equal(hNoRNG.StepLosses, hFull.StepLosses[305:]) {
		t.Fatal("a resume without the random state gave the same dropout masks: the check is vacuous")
	}
}

// TestTrainerResumeMismatch checks that a checkpoint of another model,
// optimizer or batch size is refused with ErrCheckpointMismatch, naming
// the difference, and changes nothing.
func TestTrainerResumeMismatch(t *testing.T) {
	ds := blobs(60, 3)
	src := dropoutTrainer("adam")
	src.Epochs = 1
	if _, err := src.Fit(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	ck, err := src.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	wider := dropoutTrainer("adam")
	dev := ember.Flex().Autodiff()
	wider.Model = nn.NewSequential(nn.NewLinear(6, 32, dev), nn.Relu{}, nn.NewLinear(32, 3, dev))
	wider.Optimizer = optim.NewAdam(wider.Model.NamedParameters(), optim.AdamConfig{LR: 0.01})
	before := params(wider.Model)
	if err := wider.Resume(ck); !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), `"0.weight"`) {
		t.Errorf("another model: %v", err)
	}
	if !slices.Equal(params(wider.Model), before) || wider.State.Step != 0 {
		t.Error("a refused checkpoint changed the Trainer")
	}
	sgd := dropoutTrainer("sgd")
	if err := sgd.Resume(ck); !errors.Is(err, ErrCheckpointMismatch) || !errors.Is(err, optim.ErrStateMismatch) || !strings.Contains(err.Error(), `optimizer "adam"`) {
		t.Errorf("another optimizer: %v", err)
	}
	batch := dropoutTrainer("adam")
	if err := batch.Resume(ck); err != nil {
		t.Fatal(err)
	}
	batch.BatchSize = 16
	if _, err := batch.Fit(context.Background(), ds); !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), "batch_size = 8, this Trainer has 16") {
		t.Errorf("another batch size: %v", err)
	}
	// A Run's checkpoint is not a Trainer's.
	runCk := &Checkpoint{Config: RunSettings{Model: "mlp"}.marshal(), Optimizer: ck.Optimizer, Model: ck.Model}
	if err := dropoutTrainer("adam").Resume(runCk); !errors.Is(err, ErrInvalidCheckpoint) {
		t.Errorf("a Run's checkpoint: %v", err)
	}
}

// TestDivergenceReported checks that a run whose loss explodes stops with
// a DivergedError naming the step, for Run and Trainer, and that a NaN
// loss is caught on the step it appears.
func TestDivergenceReported(t *testing.T) {
	cfg := syntheticConfig(256)
	cfg.Optimizer, cfg.LR, cfg.Epochs = "sgd", 40, 3
	res, err := Run(context.Background(), cfg)
	var de *DivergedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDiverged) {
		t.Fatalf("lr 40: error %v, want a DivergedError", err)
	}
	t.Log(err)
	if de.Step != len(res.StepLosses) || de.Loss != res.StepLosses[de.Step-1] || !strings.Contains(err.Error(), "at step ") {
		t.Fatalf("DivergedError %+v after %d steps (last loss %v)", de, len(res.StepLosses), res.StepLosses[len(res.StepLosses)-1])
	}
	if finite(de.Loss) && !(de.Loss > 100*res.StepLosses[0]) {
		t.Fatalf("diverged at loss %v, first loss %v", de.Loss, res.StepLosses[0])
	}
	// Turned off, only a non-finite loss stops the run.
	cfg.DivergenceFactor = -1
	res, err = Run(context.Background(), cfg)
	if errors.As(err, &de) && finite(de.Loss) {
		t.Fatalf("with the check off: %v", err)
	}
	for i, l := range res.StepLosses[:len(res.StepLosses)-1] {
		if !finite(l) {
			t.Fatalf("step %d had loss %v and the run went on", i+1, l)
		}
	}

	tr, ds := tinyRegression(0.05)
	tr.Loss = func(pred, target *ember.Tensor) *ember.Tensor {
		l := nn.MSE(pred, target)
		if tr.State.Step == 6 { // step 7 produces NaN
			l = l.MulScalar(math.NaN())
		}
		return l
	}
	if _, err := tr.Fit(context.Background(), ds); !errors.As(err, &de) || de.Step != 7 || de.Epoch != 2 || !math.IsNaN(de.Loss) {
		t.Fatalf("NaN at step 7: %v (%+v)", err, de)
	}
}
