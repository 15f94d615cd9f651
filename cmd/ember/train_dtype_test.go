package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emberml/ember/data"
)

// TestTrainDTypeFlags checks --dtype and the loss-scaling flags: values,
// defaults, case, and the errors that name the flag.
func TestTrainDTypeFlags(t *testing.T) {
	t.Setenv("EMBER_DEVICE", "")
	for _, c := range []struct {
		args     []string
		dtype    string
		scale    float64
		interval int
	}{
		{nil, "f32", 0, 0},
		{[]string{"--dtype", "BF16"}, "bf16", 0, 0},
		{[]string{"--dtype", "f64"}, "f64", 0, 0},
		{[]string{"--dtype", "f16"}, "f16", 65536, 2000},
		{[]string{"--dtype", "f16", "--loss-scale", "1024", "--loss-scale-growth-interval", "100"}, "f16", 1024, 100},
	} {
		got := stubTrain(t)
		if _, _, err := execute(t, append([]string{"train"}, c.args...)...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		cfg := (*got)[0]
		if cfg.DType != c.dtype || cfg.LossScale != c.scale || cfg.LossScaleGrowthInterval != c.interval {
			t.Errorf("%v: dtype %q, loss scale %v, interval %d; want %q, %v, %d", c.args, cfg.DType, cfg.LossScale, cfg.LossScaleGrowthInterval, c.dtype, c.scale, c.interval)
		}
	}
	got := stubTrain(t)
	for name, c := range map[string]struct {
		args []string
		flag string
	}{
		"unknown dtype":      {[]string{"--dtype", "f8"}, "--dtype"},
		"int dtype":          {[]string{"--dtype", "i32"}, "--dtype"},
		"scale without f16":  {[]string{"--dtype", "bf16", "--loss-scale", "8"}, "--loss-scale"},
		"interval on f32":    {[]string{"--loss-scale-growth-interval", "8"}, "--loss-scale-growth-interval"},
		"zero scale":         {[]string{"--dtype", "f16", "--loss-scale", "0"}, "--loss-scale"},
		"huge scale":         {[]string{"--dtype", "f16", "--loss-scale", "1e39"}, "--loss-scale"},
		"zero interval":      {[]string{"--dtype", "f16", "--loss-scale-growth-interval", "0"}, "--loss-scale-growth-interval"},
		"f16 with --compile": {[]string{"--dtype", "f16", "--compile"}, "--compile"},
	} {
		_, _, err := execute(t, append([]string{"train"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s: %v, want an error naming %s", name, err, c.flag)
		}
	}
	if len(*got) != 0 {
		t.Fatalf("runTrain called for invalid flags: %+v", *got)
	}
}

// TestTrainDTypeRun runs a short real training in each mixed precision
// and checks the JSON records: the configuration names the precision and
// the autocast device, and an f16 run's epoch reports its loss scale.
func TestTrainDTypeRun(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping a real training run: %v", err)
	}
	for _, dt := range []string{"bf16", "f16"} {
		out, _, err := execute(t, "train", "--json", "--device", "cpu", "--limit", "256", "--batch", "32", "--dtype", dt)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d records, want the configuration and one epoch:\n%s", dt, len(lines), out)
		}
		var conf map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &conf); err != nil || conf["record"] != "config" || conf["dtype"] != dt ||
			conf["device"] != "cpu+autodiff+autocast:"+dt || (conf["init_scale"] == 65536.0) != (dt == "f16") {
			t.Errorf("%s: configuration record %s (%v)", dt, lines[0], err)
		}
		var ep map[string]any
		if err := json.Unmarshal([]byte(lines[1]), &ep); err != nil || ep["record"] != "epoch" {
			t.Fatalf("%s: epoch record %q: %v", dt, lines[1], err)
		}
		if acc, _ := ep["test_accuracy"].(float64); acc < 0.5 {
			t.Errorf("%s: implausible epoch after 256 examples: %s", dt, lines[1])
		}
		if loss, _ := ep["train_loss"].(float64); !(loss > 0) {
			t.Errorf("%s: implausible epoch after 256 examples: %s", dt, lines[1])
		}
		if _, ok := ep["loss_scale"]; ok != (dt == "f16") {
			t.Errorf("%s: loss_scale in the report: %v (%s)", dt, ok, lines[1])
		}
	}
}

// TestTrainResumeDTypeCLI checks --dtype with --resume: an f16 run
// interrupted after its first epoch (its checkpoint) and resumed with only
// --resume and --epochs 2 given continues in f16, with its loss scale, and
// saves the parameters of the uninterrupted two-epoch f16 run byte for
// byte; resuming it with another --dtype or --loss-scale is refused,
// naming the setting.
func TestTrainResumeDTypeCLI(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping real training runs: %v", err)
	}
	t.Setenv("EMBER_DEVICE", "")
	dir := t.TempDir()
	common := []string{"train", "--device", "cpu", "--limit", "128", "--batch", "16", "--dtype", "f16",
		"--loss-scale-growth-interval", "3", "--seed", "5"}
	full := filepath.Join(dir, "full.safetensors")
	if _, _, err := execute(t, append(common, "--epochs", "2", "--save", full)...); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "run.ckpt")
	if _, _, err := execute(t, append(common, "--epochs", "1", "--checkpoint", ckpt)...); err != nil {
		t.Fatal(err)
	}
	resumed := filepath.Join(dir, "resumed.safetensors")
	out, _, err := execute(t, "train", "--device", "cpu", "--resume", ckpt, "--epochs", "2", "--save", resumed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "mixed precision (f16 compute") || !strings.Contains(out, "loss scale ") {
		t.Errorf("the resumed run is not f16:\n%s", out)
	}
	a, errA := os.ReadFile(full)
	b, errB := os.ReadFile(resumed)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("the resumed f16 run saved other parameters than the uninterrupted one (%v, %v)", errA, errB)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dtype", "bf16"}, "dtype = f16, this run has bf16"},
		{[]string{"--dtype", "f32"}, "dtype = f16, this run has f32"},
		{[]string{"--loss-scale", "1024"}, "init_scale = 65536, this run has 1024"},
	} {
		_, _, err := execute(t, append([]string{"train", "--device", "cpu", "--resume", ckpt, "--epochs", "3"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--resume with %v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
}

// TestTrainAutocastDevice checks that a device named with +autocast:DTYPE
// selects that precision unless --dtype says otherwise, which train.Run
// then reports as a conflict.
func TestTrainAutocastDevice(t *testing.T) {
	t.Setenv("EMBER_DEVICE", "")
	got := stubTrain(t)
	if _, _, err := execute(t, "train", "--device", "cpu+autodiff+autocast:bf16"); err != nil {
		t.Fatal(err)
	}
	if d := (*got)[0].DType; d != "bf16" {
		t.Errorf("--device cpu+autodiff+autocast:bf16 gives --dtype %q, want bf16", d)
	}
	if _, _, err := execute(t, "train", "--device", "cpu+autocast:f16", "--dtype", "f32"); err != nil {
		t.Fatal(err)
	}
	if d := (*got)[1].DType; d != "f32" {
		t.Errorf("an explicit --dtype f32 became %q", d)
	}
}

// TestTrainResumeIntoF16 checks --dtype f16 given against a checkpoint of
// another precision, which records no loss scaling: the loss-scaling
// flags keep their defaults, and the run is refused for its precision,
// not for a zero --loss-scale taken from the checkpoint.
func TestTrainResumeIntoF16(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping a real training run: %v", err)
	}
	t.Setenv("EMBER_DEVICE", "")
	ckpt := filepath.Join(t.TempDir(), "run.ckpt")
	if _, _, err := execute(t, "train", "--device", "cpu", "--limit", "64", "--batch", "16", "--dtype", "bf16", "--checkpoint", ckpt); err != nil {
		t.Fatal(err)
	}
	_, _, err := execute(t, "train", "--device", "cpu", "--resume", ckpt, "--epochs", "2", "--dtype", "f16")
	if want := "dtype = bf16, this run has f16"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("--resume of a bf16 checkpoint with --dtype f16: %v, want an error naming %q", err, want)
	}
	got := stubTrain(t)
	if _, _, err := execute(t, "train", "--resume", ckpt, "--epochs", "2", "--dtype", "f16"); err != nil {
		t.Fatal(err)
	}
	if c := (*got)[0]; c.DType != "f16" || c.LossScale != 65536 || c.LossScaleGrowthInterval != 2000 {
		t.Errorf("--resume of a bf16 checkpoint with --dtype f16: dtype %q, loss scale %v, interval %d; want f16 with the defaults 65536 and 2000",
			c.DType, c.LossScale, c.LossScaleGrowthInterval)
	}
}
