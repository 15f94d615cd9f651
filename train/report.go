package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/emberml/ember"
	"github.com/schollz/progressbar/v3"
)

// reporter writes a run's report to Config.Out (human lines or JSON lines)
// and draws the optional progress bar.
type reporter struct {
	out      io.Writer
	json     bool
	progress bool
	barOut   io.Writer
}

func newReporter(cfg Config) *reporter {
	r := &reporter{out: cfg.Out, json: cfg.JSON, progress: cfg.Progress, barOut: cfg.ProgressOut}
	if r.barOut == nil {
		r.barOut = os.Stderr
	}
	return r
}

// start prints the run's header line (human mode only).
func (r *reporter) start(cfg Config, dev ember.Device, params, trainN, testN int) {
	if r.json {
		return
	}
	epochs := "epochs"
	if cfg.Epochs == 1 {
		epochs = "epoch"
	}
	what := fmt.Sprintf("training %s (%d parameters) on %v: %d %s, batch %d, %s lr %g, %d train / %d test examples",
		cfg.Model, params, dev, cfg.Epochs, epochs, cfg.Batch, cfg.Optimizer, cfg.LR, trainN, testN)
	if cfg.EvalOnly {
		what = fmt.Sprintf("evaluating %s (%d parameters) on %v: %d test examples", cfg.Model, params, dev, testN)
	}
	switch cfg.DType {
	case ember.F64:
		what += ", in f64"
	case ember.BF16, ember.F16:
		what += fmt.Sprintf(", mixed precision (%v compute, f32 master weights)", cfg.DType)
	}
	fmt.Fprintln(r.out, what)
}

// epoch prints one epoch's statistics: a JSON object per line with JSON,
// else a human line such as
//
//	epoch 1/1  loss 0.2853  test accuracy 0.9571  12.3 s  4878 examples/s
func (r *reporter) epoch(st EpochStats, epochs int) {
	if r.json {
		line, _ := json.Marshal(st) // cannot fail: MarshalJSON writes non-finite values as null
		fmt.Fprintf(r.out, "%s\n", line)
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

// progress is one epoch's progress bar; the zero value draws nothing.
type progress struct {
	bar   *progressbar.ProgressBar
	label string
	n     int
}

// bar returns the progress bar of epoch e (counted from 0) of epochs,
// which has steps steps.
func (r *reporter) bar(e, epochs, steps int) *progress {
	if !r.progress {
		return &progress{}
	}
	label := fmt.Sprintf("epoch %d/%d", e+1, epochs)
	b := progressbar.NewOptions(steps,
		progressbar.OptionSetWriter(r.barOut),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionFullWidth(),
	)
	return &progress{bar: b, label: label}
}

// step advances the bar by one step and shows the latest loss.
func (p *progress) step(loss float64) {
	if p.bar == nil {
		return
	}
	p.n++
	if p.n%10 == 1 {
		p.bar.Describe(fmt.Sprintf("%s  loss %.4f", p.label, loss))
	}
	_ = p.bar.Add(1)
}

// finish clears the bar.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// MarshalJSON writes the statistics as one JSON object with the keys
// epoch, train_loss, test_accuracy, seconds and examples_per_second (and
// skipped_steps and loss_scale for an F16 run); a NaN or infinite value
// (a diverged loss) is written as null, which JSON cannot otherwise
// express.
func (st EpochStats) MarshalJSON() ([]byte, error) {
	num := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	return json.Marshal(struct {
		Epoch             int     `json:"epoch"`
		TrainLoss         any     `json:"train_loss"`
		TestAccuracy      any     `json:"test_accuracy"`
		Seconds           any     `json:"seconds"`
		ExamplesPerSecond any     `json:"examples_per_second"`
		SkippedSteps      int     `json:"skipped_steps,omitempty"`
		LossScale         float64 `json:"loss_scale,omitempty"`
	}{st.Epoch, num(st.TrainLoss), num(st.TestAccuracy), num(st.Seconds), num(st.ExamplesPerSecond),
		st.SkippedSteps, st.LossScale})
}
