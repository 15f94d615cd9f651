package main

import (
	"encoding/json"
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
// and checks the JSON report (an f16 run reports its loss scale).
func TestTrainDTypeRun(t *testing.T) {
	if _, err := data.FindMNIST(""); err != nil {
		t.Skipf("MNIST files not found, skipping a real training run: %v", err)
	}
	for _, dt := range []string{"bf16", "f16"} {
		out, _, err := execute(t, "train", "--json", "--device", "cpu", "--limit", "256", "--batch", "32", "--dtype", dt)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		var ep map[string]float64
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &ep); err != nil {
			t.Fatalf("%s: --json output %q: %v", dt, out, err)
		}
		if ep["test_accuracy"] < 0.5 || ep["train_loss"] <= 0 {
			t.Errorf("%s: implausible epoch after 256 examples: %s", dt, out)
		}
		if _, ok := ep["loss_scale"]; ok != (dt == "f16") {
			t.Errorf("%s: loss_scale in the report: %v (%s)", dt, ok, out)
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
