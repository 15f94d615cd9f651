package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
)

// resumeConfig is a 600-step run on the synthetic data: n training
// examples in batches of 8 for 600·8/n epochs, on the cpu device.
func resumeConfig(n int) Config {
	all := newSynthetic(n + 40)
	return Config{Device: ember.CPU(), Batch: 8, Seed: 3, Epochs: 600 * 8 / n,
		Train: data.Subset(all, 0, n), Test: data.Subset(all, n, n+40)}
}

// paramBits returns the bits of every parameter and buffer of m.
func paramBits(t *testing.T, m nn.Module) map[string][]byte {
	t.Helper()
	all, err := nn.StateDict(m)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range all {
		out[p.Name] = p.Param.Value.Data().Bytes
	}
	return out
}

// sameRun fails unless resumed, a run resumed after step 300, took the
// last 300 steps of full, the uninterrupted run, bit for bit: the same
// losses, the same parameters, the same epoch reports (the resumed epoch
// included, with an F16 run's loss scale and skipped steps) and the same
// accuracy.
func sameRun(t *testing.T, name string, full, resumed *Result) {
	t.Helper()
	if len(full.StepLosses) != 600 || resumed.StartStep != 300 || len(resumed.StepLosses) != 300 {
		t.Fatalf("%s: %d steps, resumed at %d with %d more; want 600 and 300 + 300", name, len(full.StepLosses), resumed.StartStep, len(resumed.StepLosses))
	}
	for i, l := range resumed.StepLosses {
		if math.Float64bits(l) != math.Float64bits(full.StepLosses[300+i]) {
			t.Fatalf("%s: step %d: loss %v resumed, %v uninterrupted", name, 301+i, l, full.StepLosses[300+i])
		}
	}
	a, b := paramBits(t, full.Model), paramBits(t, resumed.Model)
	for p, bits := range a {
		if !slices.Equal(bits, b[p]) {
			t.Fatalf("%s: parameter %s differs after resuming", name, p)
		}
	}
	tail := full.Epochs[len(full.Epochs)-len(resumed.Epochs):]
	for i, st := range resumed.Epochs {
		if st.Epoch != tail[i].Epoch || st.Step != tail[i].Step || st.TrainLoss != tail[i].TrainLoss || st.TestAccuracy != tail[i].TestAccuracy ||
			st.SkippedSteps != tail[i].SkippedSteps || st.LossScale != tail[i].LossScale {
			t.Fatalf("%s: epoch report %+v resumed, %+v uninterrupted", name, st, tail[i])
		}
	}
}

// interruptAt300 runs cfg with Checkpoint set to a file in a temporary
// directory, cancels it after step 300 (which writes the checkpoint), and
// returns the checkpoint's path and the interrupted run's Result.
func interruptAt300(t *testing.T, cfg Config) (string, *Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Checkpoint = path
	cfg.OnStep = func(step int, _ float64) {
		if step == 300 {
			cancel()
		}
	}
	half, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || len(half.StepLosses) != 300 {
		t.Fatalf("interrupted run: %v after %d steps, want context.Canceled after 300", err, len(half.StepLosses))
	}
	return path, half
}

// TestResumeBitIdentical interrupts 600-step runs after step 300 (in the
// middle of an epoch of 40 steps) with their context, which writes the
// checkpoint, resumes them from it, and requires the resumed run to end
// with the uninterrupted run's parameters bit for bit: Adam and SGD with
// momentum, each with a constant rate and with a schedule (cosine after
// a warm-up, and a per-epoch step decay), with gradient clipping in one
// case.
func TestResumeBitIdentical(t *testing.T) {
	cases := []struct {
		name, optimizer, schedule string
		warmup                    int
		clipNorm                  float64
	}{
		{"adam", "adam", "", 0, 0},
		{"adam cosine warm-up clip", "adam", "cosine", 100, 1},
		{"sgd momentum", "sgd", "", 0, 0},
		{"sgd momentum step schedule", "sgd", "step", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := resumeConfig(320) // 40 steps per epoch, 15 epochs
			cfg.Optimizer, cfg.Schedule, cfg.Warmup, cfg.ClipNorm = c.optimizer, c.schedule, c.warmup, c.clipNorm
			full, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			path, half := interruptAt300(t, cfg)
			ck, err := LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			if st := ck.State; st.Step != 300 || st.Epoch != 7 || st.EpochStep != 20 || st.EpochExamples != 160 {
				t.Fatalf("checkpoint state %+v, want step 300 = epoch 8, batch 20", st)
			}
			second := cfg
			second.Resume = path
			resumed, err := Run(context.Background(), second)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, c.name, full, resumed)
			// The check can fail: a run that restarts the optimizer's state
			// (parameters alone) drifts away.
			if c.name == "adam" {
				fresh := cfg
				fresh.Load = filepath.Join(t.TempDir(), "params.safetensors")
				if err := nn.Save(fresh.Load, half.Model); err != nil {
					t.Fatal(err)
				}
				fresh.Epochs = 8
				other, err := Run(context.Background(), fresh)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Equal(other.StepLosses[:300], resumed.StepLosses) {
					t.Fatal("a restart without the optimizer state matched the resumed run")
				}
			}
		})
	}
}

// TestResumeCompiledEvery resumes a compiled run from the checkpoint
// written at step 300 by CheckpointEvery (the uninterrupted run goes on),
// with a linear schedule and clipping by value, and requires the
// uninterrupted run's final parameters.
func TestResumeCompiledEvery(t *testing.T) {
	if raceEnabled {
		t.Skip("compiled steps replay op by op on cpu, about two minutes under the race detector; run without -race")
	}
	cfg := resumeConfig(320)
	cfg.Compile, cfg.Schedule, cfg.MinLR, cfg.ClipValue = true, "linear", 1e-5, 0.05
	dir := t.TempDir()
	cfg.Checkpoint, cfg.CheckpointEvery = filepath.Join(dir, "every.ckpt"), 300
	at300 := filepath.Join(dir, "at300.ckpt")
	cfg.OnStep = func(step int, _ float64) {
		// The file holds step 300's checkpoint until epoch 8 ends (step 320).
		if step > 300 && step < 320 {
			if _, err := os.Stat(at300); err == nil {
				return
			}
			b, err := os.ReadFile(cfg.Checkpoint)
			if err == nil {
				err = os.WriteFile(at300, b, 0o644)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
	full, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(at300)
	if err != nil {
		t.Fatal(err)
	}
	if ck.State.Step != 300 {
		t.Fatalf("CheckpointEvery 300 wrote step %d", ck.State.Step)
	}
	cfg.OnStep, cfg.Resume = nil, at300
	resumed, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "compiled", full, resumed)
}

// TestResumeErrors checks the refusals: other settings, a finished run, a
// parameter file instead of a checkpoint, Resume with Load.
func TestResumeErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := resumeConfig(320)
	cfg.Epochs, cfg.Limit = 1, 64
	cfg.Checkpoint = filepath.Join(dir, "done.ckpt")
	cfg.Save = filepath.Join(dir, "params.safetensors")
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	resume := func(edit func(*Config)) error {
		c := cfg
		c.Checkpoint, c.Save, c.Resume, c.Epochs = "", "", cfg.Checkpoint, 2
		edit(&c)
		_, err := Run(context.Background(), c)
		return err
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		is   error
		want string
	}{
		{"batch", func(c *Config) { c.Batch = 16 }, ErrCheckpointMismatch, "batch = 8, this run has 16"},
		{"optimizer", func(c *Config) { c.Optimizer = "sgd" }, ErrCheckpointMismatch, "optimizer = adam, this run has sgd"},
		{"model", func(c *Config) { c.Model = "cnn" }, ErrCheckpointMismatch, "model = mlp"},
		{"seed", func(c *Config) { c.Seed = 4 }, ErrCheckpointMismatch, "seed = 3"},
		{"clipping", func(c *Config) { c.ClipNorm = 1 }, ErrCheckpointMismatch, "clip_norm = 0"},
		{"data", func(c *Config) { c.Limit = 32 }, ErrCheckpointMismatch, "train_examples = 64"},
		{"finished", func(c *Config) { c.Epochs = 1 }, nil, "completed 1 of 1 epochs"},
		{"parameter file", func(c *Config) { c.Resume = cfg.Save }, ErrInvalidCheckpoint, "no checkpoint metadata"},
		{"absent", func(c *Config) { c.Resume = filepath.Join(dir, "absent") }, os.ErrNotExist, "absent"},
		{"with load", func(c *Config) { c.Load = cfg.Save }, nil, "Resume and Load"},
	} {
		err := resume(c.edit)
		if err == nil || c.is != nil && !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	// Another epoch count continues the finished run.
	if err := resume(func(*Config) {}); err != nil {
		t.Fatal(err)
	}
}

// TestCompareNamesTheDataFirst checks that a resumed run on another
// training set is refused for its train_examples, not for the decay_steps
// of its schedule, which follow from them (with a hint about epochs that
// would mislead).
func TestCompareNamesTheDataFirst(t *testing.T) {
	saved := RunSettings{Model: "mlp", Optimizer: "adam", LR: 1e-3, Batch: 64, Seed: 5, Epochs: 15, Schedule: "cosine",
		Warmup: 100, DecaySteps: 500, TrainExamples: 2560, DType: "f32"}
	run := saved
	run.Epochs, run.TrainExamples, run.DecaySteps = 20, 1000, 220
	err := run.compare(saved)
	if want := "train_examples = 2560, this run has 1000"; !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), want) {
		t.Errorf("another training set: %v, want ErrCheckpointMismatch naming %q", err, want)
	}
	run.TrainExamples = saved.TrainExamples
	err = run.compare(saved)
	if want := "decay_steps = 500, this run has 220 (the cosine schedule spans the run's epochs: resume with the checkpoint's 15)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("other epochs under cosine: %v, want %q", err, want)
	}
	if err := saved.compare(saved); err != nil {
		t.Errorf("the same settings: %v", err)
	}
}
