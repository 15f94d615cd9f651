package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/train"
)

// execute runs the ember command tree with args and returns stdout,
// stderr and the error.
func execute(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// stubTrain replaces runTrain for the test and returns where the
// configuration it receives is stored.
func stubTrain(t *testing.T) *[]TrainConfig {
	t.Helper()
	var got []TrainConfig
	old := runTrain
	runTrain = func(cfg TrainConfig) error { got = append(got, cfg); return nil }
	t.Cleanup(func() { runTrain = old })
	return &got
}

func TestTrainDefaults(t *testing.T) {
	t.Setenv("EMBER_DEVICE", "")
	got := stubTrain(t)
	if _, _, err := execute(t, "train"); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 1 {
		t.Fatalf("runTrain called %d times", len(*got))
	}
	c := (*got)[0]
	if c.Model != "mlp" || c.Epochs != 1 || c.BatchSize != 64 || c.LR != 1e-3 || c.Optimizer != "adam" ||
		c.Device != "" || c.Seed != 1 || c.Checkpointing || c.Compile || c.SavePath != "" || c.PlotPath != "" || c.JSON ||
		c.DataDir != "" || c.Limit != 0 || c.Out == nil || c.ErrOut == nil || c.Context == nil ||
		c.Schedule != "constant" || c.Warmup != 0 || c.ClipNorm != 0 || c.ClipValue != 0 || c.DivergenceFactor != 100 ||
		c.JSONSteps || c.CheckpointPath != "" || c.ResumePath != "" || c.DType != "f32" || c.LossScale != 0 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestTrainFlags(t *testing.T) {
	dir := t.TempDir()
	got := stubTrain(t)
	t.Setenv("EMBER_DEVICE", "flex")
	_, _, err := execute(t, "train", "--model", "CNN", "--epochs", "3", "--batch", "32", "--lr", "0.05",
		"--optimizer", "sgd", "--device", "cuda:1", "--seed", "42", "--checkpointing", "--compile",
		"--save", filepath.Join(dir, "m.safetensors"), "--plot", filepath.Join(dir, "c.png"),
		"--json", "--data", dir, "--limit", "500", "--schedule", "Step", "--warmup", "100",
		"--gamma", "0.5", "--step-size", "30", "--clip-norm", "1.5", "--clip-value", "0.25", "--divergence-factor", "-1",
		"--json-steps", "--checkpoint", filepath.Join(dir, "r.ckpt"), "--checkpoint-every", "50")
	if err != nil {
		t.Fatal(err)
	}
	c := (*got)[0]
	want := TrainConfig{Model: "cnn", Epochs: 3, BatchSize: 32, LR: 0.05, Optimizer: "sgd", Device: "cuda:1",
		Seed: 42, Checkpointing: true, Compile: true, SavePath: filepath.Join(dir, "m.safetensors"),
		PlotPath: filepath.Join(dir, "c.png"), JSON: true, DataDir: dir, Limit: 500,
		Schedule: "step", Warmup: 100, Gamma: 0.5, StepSize: 30, ClipNorm: 1.5, ClipValue: 0.25,
		DivergenceFactor: -1, JSONSteps: true, CheckpointPath: filepath.Join(dir, "r.ckpt"), CheckpointEvery: 50, DType: "f32"}
	c.Context, c.Out, c.ErrOut = nil, nil, nil
	if c != want {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	if _, _, err := execute(t, "train", "--schedule", "linear", "--lr-min", "1e-4", "--data", dir); err != nil {
		t.Fatal(err)
	}
	if c := (*got)[1]; c.Schedule != "linear" || c.MinLR != 1e-4 {
		t.Fatalf("--schedule linear --lr-min 1e-4: %+v", c)
	}
}

// TestTrainDefaultLRPerOptimizer checks that without --lr each optimizer
// runs at its own default rate (train.DefaultLR), and that --lr wins.
func TestTrainDefaultLRPerOptimizer(t *testing.T) {
	t.Setenv("EMBER_DEVICE", "")
	for _, c := range []struct {
		args []string
		lr   float64
	}{
		{[]string{"--optimizer", "sgd"}, train.DefaultLR("sgd")},
		{[]string{"--optimizer", "SGD"}, 0.01},
		{[]string{"--optimizer", "adamw"}, 1e-3},
		{[]string{"--optimizer", "adam"}, 1e-3},
		{[]string{"--optimizer", "sgd", "--lr", "0.2"}, 0.2},
	} {
		got := stubTrain(t)
		if _, _, err := execute(t, append([]string{"train"}, c.args...)...); err != nil {
			t.Fatal(c.args, err)
		}
		if lr := (*got)[0].LR; lr != c.lr {
			t.Errorf("%v: LR %v, want %v", c.args, lr, c.lr)
		}
	}
}

func TestTrainDeviceFromEnvironment(t *testing.T) {
	got := stubTrain(t)
	t.Setenv("EMBER_DEVICE", "vulkan:discrete:0")
	if _, _, err := execute(t, "train"); err != nil {
		t.Fatal(err)
	}
	if d := (*got)[0].Device; d != "vulkan:discrete:0" {
		t.Fatalf("Device = %q, want the EMBER_DEVICE value", d)
	}
}

func TestTrainValidation(t *testing.T) {
	got := stubTrain(t)
	dir := t.TempDir()
	cases := map[string][]string{
		"--model":             {"--model", "resnet"},
		"--optimizer":         {"--optimizer", "lbfgs"},
		"--epochs":            {"--epochs", "0"},
		"--batch":             {"--batch", "-3"},
		"--lr":                {"--lr", "0"},
		"--lr -":              {"--lr", "-0.1"},
		"--lr inf":            {"--lr", "+Inf"},
		"--lr NaN":            {"--lr", "NaN"},
		"--limit":             {"--limit", "-1"},
		"--plot ext":          {"--plot", filepath.Join(dir, "c.gif")},
		"--plot dir":          {"--plot", filepath.Join(dir, "nope", "c.png")},
		"--save dir":          {"--save", filepath.Join(dir, "nope", "m.bin")},
		"--data":              {"--data", filepath.Join(dir, "nope")},
		"--schedule":          {"--schedule", "onecycle"},
		"--warmup":            {"--warmup", "-1"},
		"--lr-min":            {"--lr-min", "-1"},
		"--gamma":             {"--gamma", "NaN"},
		"--step-size":         {"--step-size", "-4"},
		"--gamma unused":      {"--gamma", "0.5"},
		"--gamma cosine":      {"--schedule", "cosine", "--gamma", "0.5"},
		"--step-size unused":  {"--schedule", "exponential", "--step-size", "3"},
		"--lr-min unused":     {"--schedule", "step", "--lr-min", "1e-4"},
		"--clip-norm":         {"--clip-norm", "-1"},
		"--clip-value":        {"--clip-value", "+Inf"},
		"--divergence-factor": {"--divergence-factor", "0.5"},
		"--checkpoint-every":  {"--checkpoint-every", "10"},
		"--checkpoint dir":    {"--checkpoint", filepath.Join(dir, "nope", "r.ckpt")},
		"--resume":            {"--resume", filepath.Join(dir, "absent.ckpt")},
		"unknown":             {"--frobnicate"},
		"positional":          {"extra"},
	}
	for name, args := range cases {
		_, _, err := execute(t, append([]string{"train"}, args...)...)
		if err == nil {
			t.Errorf("%s: %v accepted", name, args)
			continue
		}
		if flag := strings.Fields(name)[0]; strings.HasPrefix(flag, "--") && !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %q does not name the flag", name, err)
		}
	}
	if len(*got) != 0 {
		t.Fatalf("runTrain called for invalid flags: %+v", *got)
	}
}

func TestTrainJSONRun(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping a real training run: %v", err)
	}
	out, _, err := execute(t, "train", "--json", "--device", "flex", "--limit", "256", "--batch", "32")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("--json --epochs 1 printed %d lines, want the configuration and one epoch:\n%s", len(lines), out)
	}
	var conf map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &conf); err != nil || conf["record"] != "config" || conf["batch"] != 32.0 || conf["limit"] != 256.0 || conf["device"] != "flex+autodiff" {
		t.Errorf("--json configuration record %s (%v)", lines[0], err)
	}
	var ep map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &ep); err != nil {
		t.Fatalf("--json output %q: %v", lines[1], err)
	}
	for _, k := range []string{"record", "epoch", "step", "train_loss", "test_accuracy", "seconds", "examples_per_second"} {
		if _, ok := ep[k]; !ok {
			t.Errorf("--json object lacks %q: %s", k, lines[1])
		}
	}
	if ep["record"] != "epoch" || ep["epoch"] != 1.0 || ep["step"] != 8.0 || ep["test_accuracy"].(float64) < 0.5 || ep["train_loss"].(float64) <= 0 {
		t.Errorf("implausible epoch after 256 examples: %s", lines[1])
	}
}

func TestDevices(t *testing.T) {
	out, _, err := execute(t, "devices")
	if err != nil {
		t.Fatalf("devices: %v", err)
	}
	for _, want := range []string{"cpu", "flex", "available (default)", "rocm:0", "unavailable: the rocm backend is not part of this build\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("devices output lacks %q:\n%s", want, out)
		}
	}
	// A row's reason leaves out what the row says already: no "ember: ",
	// no device name, no "init: " and no second "unavailable".
	for _, line := range strings.Split(out, "\n") {
		name, reason, ok := strings.Cut(line, "unavailable: ")
		if !ok {
			continue
		}
		dev := strings.Fields(name)[0]
		if strings.Contains(reason, "ember: ") || strings.Contains(reason, dev+": ") || strings.HasPrefix(reason, "init: ") || strings.Contains(reason, "unavailable") {
			t.Errorf("devices row %q repeats itself", line)
		}
	}
	out, _, err = execute(t, "devices", "--json")
	if err != nil {
		t.Fatalf("devices --json: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var row struct {
		Name      string `json:"name"`
		Available bool   `json:"available"`
		Fusion    *bool  `json:"fusion"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil || row.Name == "" || !row.Available {
		t.Fatalf("devices --json first line %q: %+v, %v", lines[0], row, err)
	}
	for _, line := range lines {
		row.Fusion = nil
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.Fusion == nil {
			t.Fatalf("devices --json line %q has no fusion field (%v)", line, err)
		}
		if row.Name == "cpu" {
			if want := ember.CPU().Fusion(); *row.Fusion != want {
				t.Errorf("cpu row says fusion %v, the device %v", *row.Fusion, want)
			}
			state := "fusion off"
			if want := ember.CPU().Fusion(); want {
				state = "fusion on"
			}
			text, _, _ := execute(t, "devices")
			if !strings.Contains(text, state) {
				t.Errorf("devices output lacks %q:\n%s", state, text)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, err := execute(t, "version")
	if err != nil || !strings.HasPrefix(out, "ember ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: %q, %v", out, err)
	}
	old := version
	version = "v9.8.7"
	defer func() { version = old }()
	if out, _, _ := execute(t, "version"); !strings.HasPrefix(out, "ember v9.8.7 (") {
		t.Fatalf("version with ldflags value: %q", out)
	}
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := execute(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"train", "devices", "bench", "serve", "version", "EMBER_DEVICE"} {
		if !strings.Contains(out, c) {
			t.Errorf("help lacks %q", c)
		}
	}
	if _, _, err := execute(t, "nosuchcommand"); err == nil {
		t.Fatal("unknown command accepted")
	}
}

// A device named by EMBER_DEVICE that cannot run is reported with the
// variable, by train and by bench (which honours the variable), and
// device errors carry one "ember: " and one device name.
func TestDeviceErrorsNameEmberDevice(t *testing.T) {
	t.Setenv("EMBER_DEVICE", "bogus:3")
	for _, args := range [][]string{{"train", "--limit", "10"}, {"bench", "add"}} {
		_, _, err := execute(t, args...)
		if err == nil || !strings.HasPrefix(err.Error(), "EMBER_DEVICE=bogus:3: ") || strings.Count(err.Error(), "ember: ") > 0 {
			t.Errorf("%v: %v; want an error starting with EMBER_DEVICE=bogus:3 and no inner \"ember: \"", args, err)
		}
	}
	// --device wins over the variable and is not attributed to it.
	_, _, err := execute(t, "bench", "--device", "bogus:4", "add")
	if err == nil || strings.Contains(err.Error(), "EMBER_DEVICE") {
		t.Errorf("--device bogus:4: %v", err)
	}
	// bench takes its device from the variable when --device is absent.
	var got []BenchConfig
	old := runBench
	runBench = func(cfg BenchConfig) error { got = append(got, cfg); return nil }
	defer func() { runBench = old }()
	t.Setenv("EMBER_DEVICE", "flex")
	if _, _, err := execute(t, "bench", "add"); err != nil || len(got) != 1 || got[0].Device != "flex" || !got[0].DeviceFromEnv {
		t.Errorf("bench with EMBER_DEVICE=flex: %v, %+v", err, got)
	}
	// Without either, the device is left to the bencher (cpu), and the
	// help states that default once, without a contradicting "cpu".
	t.Setenv("EMBER_DEVICE", "")
	if _, _, err := execute(t, "bench", "add"); err != nil || len(got) != 2 || got[1].Device != "" || got[1].DeviceFromEnv {
		t.Errorf("bench without --device or EMBER_DEVICE: %v, %+v", err, got)
	}
	help, _, _ := execute(t, "bench", "--help")
	if !strings.Contains(help, "(default $EMBER_DEVICE, else cpu)\n") {
		t.Errorf("bench --help on --device:\n%s", help)
	}
}

// TestTrainResumeCLI trains two epochs in one go and, separately, one
// epoch with --checkpoint and then --resume with only --epochs 2 given
// (the other settings come from the checkpoint); both save byte-identical
// parameter files. It also checks the --json-steps records.
func TestTrainResumeCLI(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping real training runs: %v", err)
	}
	dir := t.TempDir()
	common := []string{"train", "--device", "cpu", "--limit", "256", "--batch", "16", "--optimizer", "sgd", "--schedule", "step",
		"--step-size", "5", "--gamma", "0.7", "--clip-norm", "2", "--seed", "7"}
	full := filepath.Join(dir, "full.safetensors")
	if _, _, err := execute(t, append(common, "--epochs", "2", "--save", full)...); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "run.ckpt")
	out, _, err := execute(t, append(common, "--epochs", "1", "--checkpoint", ckpt, "--json-steps")...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+16+1 {
		t.Fatalf("--json-steps printed %d lines, want a configuration, 16 steps and an epoch", len(lines))
	}
	for i, line := range lines[1:17] {
		var st map[string]any
		if err := json.Unmarshal([]byte(line), &st); err != nil || st["record"] != "step" || st["step"] != float64(i+1) {
			t.Fatalf("step record %d: %s (%v)", i+1, line, err)
		}
		// The step schedule: lr 0.01·0.7^⌊k/5⌋ for step k from 0.
		if want := 0.01 * math.Pow(0.7, float64(i/5)); math.Abs(st["lr"].(float64)-want) > 1e-15 {
			t.Fatalf("step %d: lr %v, want %v", i+1, st["lr"], want)
		}
		if gn, ok := st["grad_norm"].(float64); !ok || !(gn > 0) {
			t.Fatalf("step %d: grad_norm %v", i+1, st["grad_norm"])
		}
	}
	resumed := filepath.Join(dir, "resumed.safetensors")
	out, _, err = execute(t, "train", "--device", "cpu", "--resume", ckpt, "--epochs", "2", "--save", resumed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "resuming from "+ckpt+" after 16 steps (epoch 2, batch 0 of 16)") || !strings.Contains(out, "wrote checkpoint to "+ckpt) {
		t.Errorf("resumed run's report:\n%s", out)
	}
	a, errA := os.ReadFile(full)
	b, errB := os.ReadFile(resumed)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("the resumed run saved other parameters than the uninterrupted one (%v, %v)", errA, errB)
	}
	// Another batch size is refused, naming it.
	_, _, err = execute(t, "train", "--device", "cpu", "--resume", ckpt, "--epochs", "3", "--batch", "32")
	if err == nil || !strings.Contains(err.Error(), "batch = 16, this run has 32") {
		t.Fatalf("--resume with another --batch: %v", err)
	}
	// A parameter file is not a checkpoint.
	_, _, err = execute(t, "train", "--device", "cpu", "--resume", full)
	if err == nil || !strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "no checkpoint metadata") {
		t.Fatalf("--resume of a parameter file: %v", err)
	}
}

// TestTrainScheduleFlagsOnResume checks that the schedule parameters a
// resumed run takes from its checkpoint are not blamed when the run asks
// for another schedule (the checkpoint mismatch is reported instead), and
// that an explicit 0 (the schedule's default) is accepted with any
// schedule.
func TestTrainScheduleFlagsOnResume(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping real training runs: %v", err)
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "s.ckpt")
	if _, _, err := execute(t, "train", "--device", "cpu", "--limit", "64", "--batch", "32", "--schedule", "step",
		"--gamma", "0.5", "--step-size", "3", "--checkpoint", ckpt); err != nil {
		t.Fatal(err)
	}
	for _, sched := range []string{"cosine", "exponential"} {
		_, _, err := execute(t, "train", "--resume", ckpt, "--schedule", sched, "--epochs", "2")
		if err == nil || !strings.Contains(err.Error(), "schedule") || strings.Contains(err.Error(), "--gamma") || strings.Contains(err.Error(), "--step-size") {
			t.Errorf("--resume with --schedule %s: %v, want the checkpoint's schedule mismatch", sched, err)
		}
	}
	if _, _, err := execute(t, "train", "--device", "cpu", "--limit", "64", "--batch", "32", "--schedule", "cosine",
		"--gamma", "0", "--step-size", "0"); err != nil {
		t.Errorf("--gamma 0 --step-size 0 with cosine: %v", err)
	}
}
