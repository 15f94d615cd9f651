package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/emberml/ember"
)

// Metric measures a model's predictions over a dataset, one batch at a
// time (Keras' and torchmetrics' stateful metrics): Reset, then Update
// with every batch, then Value. A Trainer resets and fills each metric
// once per epoch on the training batches and once on the validation set.
// A Metric is used from one goroutine at a time.
type Metric interface {
	// Name is the metric's key in reports, e.g. "accuracy"; the
	// validation value is reported as "val_" + Name.
	Name() string
	// Reset forgets every batch seen.
	Reset()
	// Update adds a batch: pred is the model's output and target the
	// batch's targets, both on the model's device, untracked. It panics
	// with an *ember.Error when their shapes do not fit the metric.
	Update(pred, target *ember.Tensor)
	// Value returns the metric over the batches since Reset (NaN before
	// any).
	Value() float64
}

// HigherIsBetter is an optional interface of a Metric whose larger
// values are better (accuracy); EarlyStopping's ModeAuto asks it. A
// metric without it is taken to be an error, lower being better.
type HigherIsBetter interface {
	HigherIsBetter() bool
}

// Accuracy returns the metric "accuracy": the fraction (0..1) of examples
// whose predicted class, the argmax over the last axis of pred [B, C]
// (ties pick the lowest class), equals the integer target [B].
func Accuracy() Metric { return &accuracy{} }

type accuracy struct{ correct, total int }

func (*accuracy) Name() string         { return "accuracy" }
func (*accuracy) HigherIsBetter() bool { return true }
func (m *accuracy) Reset()             { *m = accuracy{} }

func (m *accuracy) Update(pred, target *ember.Tensor) {
	if pred.Rank() != 2 || target.Rank() != 1 || pred.Dim(0) != target.Dim(0) || !target.DType().IsInt() {
		panic(&ember.Error{Op: "train.Accuracy", Operands: []string{describe("pred", pred), describe("target", target)},
			Msg: "want scores pred [B, C] and integer class targets [B]"})
	}
	got := pred.Argmax(1, false).Int64s()
	want := target.Int64s()
	for i, p := range got {
		if p == want[i] {
			m.correct++
		}
	}
	m.total += len(got)
}

func (m *accuracy) Value() float64 {
	if m.total == 0 {
		return math.NaN()
	}
	return float64(m.correct) / float64(m.total)
}

// MSE returns the metric "mse": the mean of (pred − target)² over every
// element of every batch, accumulated in float64. pred and target must
// have the same shape.
func MSE() Metric { return &meanError{name: "mse", f: func(d float64) float64 { return d * d }} }

// MAE returns the metric "mae": the mean of |pred − target| over every
// element of every batch, accumulated in float64. pred and target must
// have the same shape.
func MAE() Metric { return &meanError{name: "mae", f: math.Abs} }

// meanError is the mean of f(pred − target) over all elements.
type meanError struct {
	name string
	f    func(float64) float64
	sum  float64
	n    int
}

func (m *meanError) Name() string { return m.name }
func (m *meanError) Reset()       { m.sum, m.n = 0, 0 }

func (m *meanError) Update(pred, target *ember.Tensor) {
	if !slices.Equal(pred.Shape(), target.Shape()) {
		panic(&ember.Error{Op: "train." + m.name, Operands: []string{describe("pred", pred), describe("target", target)},
			Msg: "pred and target shapes differ (a model with one output gives [B, 1]; targets must match)"})
	}
	p, t := pred.Float64s(), target.Float64s()
	for i := range p {
		m.sum += m.f(p[i] - t[i])
	}
	m.n += len(p)
}

func (m *meanError) Value() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	return m.sum / float64(m.n)
}

// describe formats an operand as "NAME [2 3] f32 on cpu".
func describe(name string, t *ember.Tensor) string {
	if t == nil {
		return name + " <nil>"
	}
	return fmt.Sprintf("%s %v %v on %v", name, t.Shape(), t.DType(), t.Device())
}
