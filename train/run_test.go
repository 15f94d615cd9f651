package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// syntheticConfig is a small run on the learnable synthetic data: nTrain
// training examples and 200 test examples with noise unseen in training.
func syntheticConfig(nTrain int) Config {
	all := newSynthetic(nTrain + 200)
	return Config{
		Device: ember.Flex(),
		Batch:  16,
		Seed:   3,
		Train:  data.Subset(all, 0, nTrain),
		Test:   data.Subset(all, nTrain, nTrain+200),
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func TestRunLossDecreasesSynthetic(t *testing.T) {
	cfg := syntheticConfig(256)
	cfg.Epochs = 2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := res.StepLosses
	if len(l) != 2*256/16 {
		t.Fatalf("%d step losses, want %d", len(l), 2*256/16)
	}
	// The ten classes are well separated, so the loss must fall far below
	// its initial value, which is near ln 10 ≈ 2.3 or above.
	first, last := mean(l[:4]), mean(l[len(l)-4:])
	if !(last < 0.25*first) {
		t.Fatalf("loss did not decrease: first steps %.4f, last steps %.4f", first, last)
	}
	if len(res.Epochs) != 2 || !(res.Epochs[1].TrainLoss < res.Epochs[0].TrainLoss) {
		t.Fatalf("epoch losses %+v, want a decrease", res.Epochs)
	}
	// The epoch's mean loss is the example-weighted mean of its step losses
	// (every batch has 16 examples here).
	if got, want := res.Epochs[0].TrainLoss, mean(l[:16]); math.Abs(got-want) > 1e-12 {
		t.Fatalf("epoch 1 loss %v, mean of its steps %v", got, want)
	}
	if res.TestAccuracy < 0.95 {
		t.Fatalf("test accuracy %.3f on separable data, want >= 0.95", res.TestAccuracy)
	}
}

func TestRunTinyMNIST(t *testing.T) {
	trainSet, testSet := mnist(t)
	cfg := Config{Device: ember.Flex(), Batch: 16, Seed: 1, Limit: 512, TestLimit: 500, Epochs: 1}
	cfg.Train, cfg.Test = trainSet, testSet
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := res.StepLosses
	if len(l) != 32 {
		t.Fatalf("%d steps, want 512/16 = 32", len(l))
	}
	first, last := mean(l[:4]), mean(l[len(l)-8:])
	if !(last < 0.6*first) {
		t.Fatalf("loss did not decrease on MNIST: first steps %.4f, last steps %.4f", first, last)
	}
	// 32 Adam steps on 512 digits reach about 0.8 (chance is 0.1).
	if res.TestAccuracy < 0.6 {
		t.Fatalf("test accuracy %.3f after 512 examples, want >= 0.6", res.TestAccuracy)
	}
}

func TestRunSameSeedSameLosses(t *testing.T) {
	run := func(seed uint64, checkpointing bool) []float64 {
		cfg := syntheticConfig(128)
		cfg.Seed, cfg.Checkpointing = seed, checkpointing
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res.StepLosses
	}
	a, b := run(11, false), run(11, false)
	if len(a) != 8 || len(a) != len(b) {
		t.Fatalf("step counts %d and %d, want 8", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, step %d: loss %v then %v", i+1, a[i], b[i])
		}
	}
	// Checkpointing recomputes activations but must give identical
	// gradients, hence identical losses.
	c := run(11, true)
	for i := range a {
		if a[i] != c[i] {
			t.Fatalf("checkpointing, step %d: loss %v, without %v", i+1, c[i], a[i])
		}
	}
	// Another seed changes the initialization and the batch order.
	d := run(12, false)
	if d[0] == a[0] {
		t.Fatalf("seeds 11 and 12 gave the same first loss %v", a[0])
	}
}

func TestSaveLoadSameAccuracy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mlp.safetensors")
	cfg := syntheticConfig(128)
	cfg.Save = path
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestAccuracy < 0.8 {
		t.Fatalf("trained accuracy %.3f, want >= 0.8 for the comparison to mean something", res.TestAccuracy)
	}

	// A fresh model (other initialization) scores near chance until loaded.
	dev := ember.Flex()
	dev.Seed(999)
	fresh := NewMLP(dev)
	before, err := Evaluate(fresh, cfg.Test, dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	if before > 0.5 {
		t.Fatalf("untrained model scores %.3f", before)
	}
	if err := nn.Load(path, fresh); err != nil {
		t.Fatal(err)
	}
	after, err := Evaluate(fresh, cfg.Test, dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	if after != res.TestAccuracy {
		t.Fatalf("loaded model scores %v, trained model %v", after, res.TestAccuracy)
	}
	// The logits agree exactly, not only their argmax.
	img, _ := example(t, cfg.Test, 0)
	x := ember.FromFloats(img, []int{1, 1, 28, 28}, dev)
	want := res.Model.Forward(x.ToDevice(res.Device)).Float32s()
	got := fresh.Forward(x).Float32s()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logit %d: loaded %v, trained %v", i, got[i], want[i])
		}
	}

	// The evaluation-only run (Epochs 0 with Load) reports the same.
	var out bytes.Buffer
	cfg.Save, cfg.Load, cfg.EvalOnly, cfg.Out, cfg.JSON = "", path, true, &out, true
	ev, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.TestAccuracy != res.TestAccuracy || len(ev.StepLosses) != 0 || len(ev.Epochs) != 1 || ev.Epochs[0].Epoch != 0 {
		t.Fatalf("evaluation run: %+v, want accuracy %v and no steps", ev, res.TestAccuracy)
	}
	var st map[string]any
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &st); err != nil || len(lines) != 2 || st["test_accuracy"] != res.TestAccuracy {
		t.Fatalf("evaluation report %q (%v)", out.String(), err)
	}
}

func TestJSONReport(t *testing.T) {
	var out bytes.Buffer
	cfg := syntheticConfig(64)
	cfg.Epochs, cfg.JSON, cfg.Out = 2, true, &out
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a configuration record and one line per epoch, got %q", out.String())
	}
	var conf map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &conf); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"record": "config", "model": "mlp", "optimizer": "adam", "lr": 0.001, "batch": 16.0, "seed": 3.0,
		"epochs": 2.0, "schedule": "constant", "train_examples": 64.0, "test_examples": 200.0, "steps_per_epoch": 4.0,
		"params": 101770.0, "device": "flex+autodiff", "divergence_factor": 100.0, "clip_norm": 0.0} {
		if conf[k] != want {
			t.Errorf("configuration record: %s = %v, want %v (%s)", k, conf[k], want, lines[0])
		}
	}
	keys := []string{"epoch", "step", "train_loss", "test_accuracy", "seconds", "examples_per_second"}
	for i, line := range lines[1:] {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		if len(obj) != len(keys)+1 || obj["record"] != "epoch" {
			t.Fatalf("line %d has keys %v, want record \"epoch\" and exactly %v", i+1, obj, keys)
		}
		for _, k := range keys {
			if _, ok := obj[k].(float64); !ok {
				t.Fatalf("line %d: key %q missing or not a number in %q", i+1, k, line)
			}
		}
		st := res.Epochs[i]
		if obj["epoch"] != float64(i+1) || obj["step"] != float64(4*(i+1)) || obj["train_loss"] != st.TrainLoss || obj["test_accuracy"] != st.TestAccuracy {
			t.Fatalf("line %d %q disagrees with %+v", i+1, line, st)
		}
		if eps := obj["examples_per_second"].(float64); math.Abs(eps*st.Seconds-64) > 1e-6 {
			t.Fatalf("line %d: examples_per_second × seconds = %v, want 64", i+1, eps*st.Seconds)
		}
	}
}

func TestNonFiniteJSON(t *testing.T) {
	b, err := json.Marshal(EpochStats{Epoch: 3, TrainLoss: math.NaN(), TestAccuracy: 0.5, Seconds: 2, ExamplesPerSecond: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"record":"epoch","epoch":3,"step":0,"train_loss":null,"test_accuracy":0.5,"seconds":2,"examples_per_second":null}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func TestHumanReport(t *testing.T) {
	var out bytes.Buffer
	cfg := syntheticConfig(32)
	cfg.Out = &out
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "training mlp (101770 parameters) on flex+autodiff") {
		t.Fatalf("report %q", out.String())
	}
	st := res.Epochs[0]
	for _, want := range []string{"epoch 1/1  loss ", "test accuracy "} {
		if !strings.Contains(lines[1], want) {
			t.Fatalf("epoch line %q lacks %q", lines[1], want)
		}
	}
	if got, want := strings.Fields(lines[1])[3], fmt.Sprintf("%.4f", st.TrainLoss); got != want {
		t.Fatalf("epoch line %q shows loss %s, want %s", lines[1], got, want)
	}
}

func TestRunCancelKeepsProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial.safetensors")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := syntheticConfig(256)
	cfg.Save = path
	cfg.OnStep = func(step int, _ float64) {
		if step == 3 {
			cancel()
		}
	}
	res, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if res == nil || len(res.StepLosses) != 3 {
		t.Fatalf("partial result %+v, want 3 steps", res)
	}
	m := NewMLP(ember.Flex())
	if err := nn.Load(path, m); err != nil {
		t.Fatalf("the interrupted run did not save its parameters: %v", err)
	}
}

func TestOtherOptimizersLearn(t *testing.T) {
	for _, name := range []string{"sgd", "adamw"} {
		cfg := syntheticConfig(128)
		cfg.Optimizer = name
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(name, err)
		}
		l := res.StepLosses
		if first, last := mean(l[:2]), mean(l[len(l)-2:]); !(last < 0.5*first) {
			t.Errorf("%s: loss %.4f → %.4f, want at least halved", name, first, last)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bad := map[string]Config{
		"model":         {Model: "resnet"},
		"optimizer":     {Optimizer: "lbfgs"},
		"epochs":        {Epochs: -1},
		"batch":         {Batch: -2},
		"learning rate": {LR: -0.1},
		"limit":         {Limit: -5},
	}
	for name, cfg := range bad {
		cfg.Device = ember.Flex()
		cfg.Train, cfg.Test = newSynthetic(4), newSynthetic(4)
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming %q", name, err, name)
		}
	}
	if _, err := Run(context.Background(), Config{DataDir: t.TempDir(), Device: ember.Flex()}); err == nil {
		t.Error("missing MNIST files: no error")
	}
}

// TestLearningRateValidation checks that a NaN, infinite or negative
// learning rate is an error naming it, before any training.
func TestLearningRateValidation(t *testing.T) {
	for _, lr := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.1} {
		for _, opt := range []string{"adam", "adamw", "sgd"} {
			cfg := Config{LR: lr, Optimizer: opt, Device: ember.Flex(), Train: newSynthetic(4), Test: newSynthetic(4)}
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("learning rate %g", lr)) {
				t.Errorf("%s with LR %v: error %v, want one naming the learning rate", opt, lr, err)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "mlp" || c.Optimizer != "adam" || c.LR != 1e-3 || c.Batch != 64 || c.Epochs != 1 || c.Device.IsZero() {
		t.Fatalf("defaults %+v", c)
	}
	if DefaultLR("sgd") != 1e-2 || DefaultLR("sgd") != optim.DefaultSGDLR || DefaultLR("adamw") != 1e-3 || DefaultLR("x") != 0 {
		t.Fatal("DefaultLR")
	}
}

// TestLoadCheckpointParameters checks that Load takes a checkpoint's
// model (the advice Config.Resume with EvalOnly gives): the evaluation
// run scores the checkpointed model's accuracy exactly, a checkpoint of
// another model is refused naming the mismatch, and a file that is
// neither a parameter file nor a checkpoint keeps nn.Load's error.
func TestLoadCheckpointParameters(t *testing.T) {
	dir := t.TempDir()
	cfg := syntheticConfig(128)
	cfg.Checkpoint = filepath.Join(dir, "run.ckpt")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestAccuracy < 0.8 {
		t.Fatalf("trained accuracy %.3f, want >= 0.8 for the comparison to mean something", res.TestAccuracy)
	}
	ev := cfg
	ev.Checkpoint, ev.Load, ev.EvalOnly = "", cfg.Checkpoint, true
	got, err := Run(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if got.TestAccuracy != res.TestAccuracy {
		t.Fatalf("the checkpoint's model scores %v, the trained one %v", got.TestAccuracy, res.TestAccuracy)
	}
	a, b := paramBits(t, res.Model), paramBits(t, got.Model)
	for name, bits := range a {
		if !slices.Equal(bits, b[name]) {
			t.Fatalf("parameter %s differs after loading the checkpoint", name)
		}
	}
	ev.Model = "cnn"
	if _, err := Run(context.Background(), ev); !errors.Is(err, nn.ErrMismatch) || !strings.Contains(err.Error(), "run.ckpt") {
		t.Errorf("a checkpoint of the MLP loaded into the CNN: %v, want nn.ErrMismatch naming the file", err)
	}
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("not a safetensors file"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev.Model, ev.Load = "mlp", junk
	if _, err := Run(context.Background(), ev); !errors.Is(err, nn.ErrInvalidSafetensors) {
		t.Errorf("a junk file: %v, want nn.ErrInvalidSafetensors", err)
	}
}
