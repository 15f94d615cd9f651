package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/emberml/ember"
)

// reporter writes a run's report to Config.Out (human lines or JSON
// records) and draws the optional progress bar.
type reporter struct {
	out       io.Writer
	json      bool
	jsonSteps bool
	progress  bool
	barOut    io.Writer
}

func newReporter(cfg Config) *reporter {
	r := &reporter{out: cfg.Out, json: cfg.JSON || cfg.JSONSteps, jsonSteps: cfg.JSONSteps, progress: cfg.Progress, barOut: cfg.ProgressOut}
	if r.barOut == nil {
		r.barOut = os.Stderr
	}
	return r
}

// runHeader is what the report's first line or record describes.
type runHeader struct {
	settings      RunSettings
	device        ember.Device
	params        int
	trainN, testN int
	perEpoch      int
	state         State
}

// ConfigRecord is the first JSON record of a Run with Config.JSON: the
// whole configuration, resolved (defaults filled in), with what the run
// found (device, parameter count, dataset sizes) and where it starts:
//
//	{"record":"config","model":"mlp","optimizer":"adam","lr":0.001,"batch":64,"seed":1,"epochs":1,"schedule":"cosine",...}
//
// The settings that shape the steps are RunSettings' (inlined).
type ConfigRecord struct {
	// Record is "config".
	Record string `json:"record"`
	RunSettings
	// Device is the autodiff device trained on, e.g. "cpu+autodiff"
	// ("cpu+autodiff+autocast:bf16" in mixed precision).
	Device string `json:"device"`
	// Params is the model's number of trainable parameters.
	Params int `json:"params"`
	// TestExamples is the size of the test set (after TestLimit).
	TestExamples int `json:"test_examples"`
	// StepsPerEpoch is the number of optimizer steps per epoch.
	StepsPerEpoch    int     `json:"steps_per_epoch"`
	Checkpointing    bool    `json:"checkpointing"`     // Config.Checkpointing
	Compile          bool    `json:"compile"`           // Config.Compile
	EvalOnly         bool    `json:"eval_only"`         // Config.EvalOnly
	DivergenceFactor float64 `json:"divergence_factor"` // Config.DivergenceFactor, resolved
	Limit            int     `json:"limit"`             // Config.Limit
	TestLimit        int     `json:"test_limit"`        // Config.TestLimit
	CheckpointEvery  int     `json:"checkpoint_every"`  // Config.CheckpointEvery
	// Config's files, left out when unset.
	Load       string `json:"load,omitempty"`       // Config.Load
	Save       string `json:"save,omitempty"`       // Config.Save
	Plot       string `json:"plot,omitempty"`       // Config.Plot
	Checkpoint string `json:"checkpoint,omitempty"` // Config.Checkpoint
	Resume     string `json:"resume,omitempty"`     // Config.Resume
	// Where the run starts: non-zero when it resumes a checkpoint.
	StartEpoch int `json:"start_epoch"` // epochs completed before this run
	StartStep  int `json:"start_step"`  // steps taken before this run
}

// start prints the run's header: the ConfigRecord with JSON, else a line
// such as
//
//	training mlp (101770 parameters) on cpu+autodiff: 1 epoch, batch 64, adam lr 0.001, 60000 train / 10000 test examples
func (r *reporter) start(cfg Config, h runHeader) {
	if r.json {
		rec := ConfigRecord{
			Record: "config", RunSettings: h.settings, Device: h.device.String(), Params: h.params, TestExamples: h.testN,
			StepsPerEpoch: h.perEpoch, Checkpointing: cfg.Checkpointing, Compile: cfg.Compile, EvalOnly: cfg.EvalOnly,
			DivergenceFactor: cfg.DivergenceFactor, Limit: cfg.Limit, TestLimit: cfg.TestLimit, CheckpointEvery: cfg.CheckpointEvery,
			Load: cfg.Load, Save: cfg.Save, Plot: cfg.Plot, Checkpoint: cfg.Checkpoint, Resume: cfg.Resume,
			StartEpoch: h.state.Epoch, StartStep: h.state.Step,
		}
		r.record(rec)
		return
	}
	var precision string
	switch cfg.DType {
	case ember.F64:
		precision = ", in f64"
	case ember.BF16, ember.F16:
		precision = fmt.Sprintf(", mixed precision (%v compute, f32 master weights)", cfg.DType)
	}
	if cfg.EvalOnly {
		fmt.Fprintf(r.out, "evaluating %s (%d parameters) on %v: %d test examples%s\n", cfg.Model, h.params, h.device, h.testN, precision)
		return
	}
	epochs := "epochs"
	if cfg.Epochs == 1 {
		epochs = "epoch"
	}
	fmt.Fprintf(r.out, "training %s (%d parameters) on %v: %d %s, batch %d, %s lr %g, %d train / %d test examples%s\n",
		cfg.Model, h.params, h.device, cfg.Epochs, epochs, cfg.Batch, cfg.Optimizer, cfg.LR, h.trainN, h.testN, precision)
	var extra []string
	s := h.settings
	switch s.Schedule {
	case "cosine", "linear":
		extra = append(extra, fmt.Sprintf("%s schedule to lr %g over %d steps", s.Schedule, s.MinLR, s.DecaySteps))
	case "step":
		extra = append(extra, fmt.Sprintf("step schedule ×%g every %d steps", s.Gamma, s.StepSize))
	case "exponential":
		extra = append(extra, fmt.Sprintf("exponential schedule ×%.6g per step", s.Gamma))
	}
	if s.Warmup > 0 {
		extra = append(extra, fmt.Sprintf("%d warm-up steps", s.Warmup))
	}
	if s.ClipValue > 0 {
		extra = append(extra, fmt.Sprintf("gradients clipped to ±%g", s.ClipValue))
	}
	if s.ClipNorm > 0 {
		extra = append(extra, fmt.Sprintf("gradient norm clipped to %g", s.ClipNorm))
	}
	if s.InitScale > 0 {
		extra = append(extra, fmt.Sprintf("dynamic loss scaling from %g (×%g after %d finite steps, ×%g on overflow)", s.InitScale, s.GrowthFactor, s.GrowthInterval, s.BackoffFactor))
	}
	if len(extra) > 0 {
		fmt.Fprintln(r.out, strings.Join(extra, ", "))
	}
	if h.state.Step > 0 {
		fmt.Fprintf(r.out, "resuming from %s after %d steps (epoch %d, batch %d of %d)\n", cfg.Resume, h.state.Step, h.state.Epoch+1, h.state.EpochStep, h.perEpoch)
	}
}

// note prints a remark: a line "note: ..." or a {"record":"note"} record.
func (r *reporter) note(msg string) {
	if r.json {
		r.record(struct {
			Record  string `json:"record"`
			Message string `json:"message"`
		}{"note", msg})
		return
	}
	fmt.Fprintln(r.out, "note:", msg)
}

// record writes v as one JSON line.
func (r *reporter) record(v any) {
	line, err := json.Marshal(v)
	if err != nil {
		line, _ = json.Marshal(map[string]string{"record": "error", "message": err.Error()})
	}
	fmt.Fprintf(r.out, "%s\n", line)
}

// StepRecord is the JSON record of one optimizer step, printed by Run
// with Config.JSONSteps:
//
//	{"record":"step","step":12,"epoch":1,"batch":12,"loss":0.5123,"lr":0.001}
//
// with "grad_norm" added under Config.ClipNorm (on eager steps), and
// "loss_scale" (and "skipped": true for a step whose gradients
// overflowed) in an F16 run.
type StepRecord struct {
	// Step counts from 1 over the whole run; Epoch from 1; Batch from 1
	// within the epoch.
	Step, Epoch, Batch int
	// Loss is the step's mean loss, LR the learning rate it used.
	Loss, LR float64
	// GradNorm is the gradients' total L2 norm before clipping (unscaled
	// in an F16 run), nil when not measured.
	GradNorm *float64
	// LossScale is the loss scaler's scale after the step, 0 without a
	// loss scaler (F16 runs have one).
	LossScale float64
	// Skipped reports that the loss scaler skipped the step because its
	// gradients held Inf or NaN.
	Skipped bool
}

// MarshalJSON writes the record's keys record, step, epoch, batch, loss,
// lr, grad_norm (when measured), loss_scale (when not 0) and skipped
// (when true); NaN and infinite numbers are null.
func (s StepRecord) MarshalJSON() ([]byte, error) {
	var gn any
	if s.GradNorm != nil {
		gn = num(*s.GradNorm)
	}
	return json.Marshal(struct {
		Record    string  `json:"record"`
		Step      int     `json:"step"`
		Epoch     int     `json:"epoch"`
		Batch     int     `json:"batch"`
		Loss      any     `json:"loss"`
		LR        any     `json:"lr"`
		GradNorm  any     `json:"grad_norm,omitempty"`
		LossScale float64 `json:"loss_scale,omitempty"`
		Skipped   bool    `json:"skipped,omitempty"`
	}{"step", s.Step, s.Epoch, s.Batch, num(s.Loss), num(s.LR), gn, s.LossScale, s.Skipped})
}

// step prints a step record (JSONSteps only).
func (r *reporter) step(rec StepRecord) {
	if r.jsonSteps {
		r.record(rec)
	}
}

// epoch prints one epoch's statistics: a JSON record with JSON, else a
// human line such as
//
//	epoch 1/1  loss 0.2853  test accuracy 0.9571  12.3 s  4878 examples/s
func (r *reporter) epoch(st EpochStats, epochs int) {
	if r.json {
		r.record(st)
		return
	}
	if st.Epoch == 0 {
		fmt.Fprintf(r.out, "test accuracy %.4f  %.1f s  %.0f examples/s\n", st.TestAccuracy, st.Seconds, st.ExamplesPerSecond)
		return
	}
	fmt.Fprintf(r.out, "epoch %d/%d  loss %.4f  test accuracy %.4f  %.1f s  %.0f examples/s%s\n",
		st.Epoch, epochs, st.TrainLoss, st.TestAccuracy, st.Seconds, st.ExamplesPerSecond, lossScaleNote(st))
}

// lossScaleNote is the end of an F16 run's epoch line, such as
// "  loss scale 32768, 4 steps skipped" ("" for other precisions).
func lossScaleNote(st EpochStats) string {
	if st.LossScale == 0 {
		return ""
	}
	steps := "steps"
	if st.SkippedSteps == 1 {
		steps = "step"
	}
	return fmt.Sprintf("  loss scale %g, %d %s skipped", st.LossScale, st.SkippedSteps, steps)
}

// num returns v, or nil (JSON null) when v is NaN or infinite, which JSON
// cannot otherwise express.
func num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// MarshalJSON writes the statistics as one JSON object with the keys
// record ("epoch"), epoch, step, train_loss, test_accuracy, seconds and
// examples_per_second, and for an F16 run loss_scale and skipped_steps
// (the latter when not 0); a NaN or infinite value (a diverged loss) is
// written as null, which JSON cannot otherwise express.
func (st EpochStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Record            string  `json:"record"`
		Epoch             int     `json:"epoch"`
		Step              int     `json:"step"`
		TrainLoss         any     `json:"train_loss"`
		TestAccuracy      any     `json:"test_accuracy"`
		Seconds           any     `json:"seconds"`
		ExamplesPerSecond any     `json:"examples_per_second"`
		SkippedSteps      int     `json:"skipped_steps,omitempty"`
		LossScale         float64 `json:"loss_scale,omitempty"`
	}{"epoch", st.Epoch, st.Step, num(st.TrainLoss), num(st.TestAccuracy), num(st.Seconds), num(st.ExamplesPerSecond),
		st.SkippedSteps, st.LossScale})
}
