package train

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Mode says in which direction a monitored value improves.
type Mode int

const (
	// ModeAuto is ModeMax for a metric implementing HigherIsBetter
	// (accuracy, and "val_accuracy") and ModeMin for everything else,
	// losses included.
	ModeAuto Mode = iota
	// ModeMin: lower is better.
	ModeMin
	// ModeMax: higher is better.
	ModeMax
)

// String returns "auto", "min" or "max".
func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeMin:
		return "min"
	case ModeMax:
		return "max"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// EarlyStopping stops training when a monitored value has stopped
// improving (Keras' EarlyStopping callback). After every epoch the
// monitored value v is compared with the best so far: it improves when it
// is finite and v < best − MinDelta (ModeMin) or v > best + MinDelta
// (ModeMax); the first finite value always improves. Training stops
// after Patience epochs in a row without improvement.
type EarlyStopping struct {
	// Monitor names the value watched, a key of EpochReport.Values:
	// "loss", "val_loss", a metric's name or "val_" + a metric's name.
	// "" means "val_loss" when there is a validation set, else "loss".
	Monitor string
	// Patience is the number of epochs in a row without improvement
	// after which training stops; 0 means 1 (stop at the first epoch
	// that does not improve). Negative values are an error.
	Patience int
	// MinDelta is the least change that counts as an improvement, >= 0.
	MinDelta float64
	// Mode says whether the value should fall or rise; ModeAuto (the
	// zero value) decides from the monitored name.
	Mode Mode
	// RestoreBest, when set, puts the parameters and buffers of the
	// best epoch back into the model when Fit returns after its epochs
	// or after stopping (not when it fails or its context is done), as
	// Keras' restore_best_weights; otherwise the model keeps the last
	// epoch's. The optimizer's state is not restored.
	RestoreBest bool
}

// stopper is an EarlyStopping resolved for one Fit call.
type stopper struct {
	monitor  string
	patience int
	minDelta float64
	max      bool
	restore  bool
}

// resolve validates es against the values a Fit call reports.
func (es *EarlyStopping) resolve(hasVal bool, metrics []Metric) (*stopper, error) {
	if es == nil {
		return nil, nil
	}
	s := &stopper{monitor: es.Monitor, patience: es.Patience, minDelta: es.MinDelta, restore: es.RestoreBest}
	if s.monitor == "" {
		s.monitor = "loss"
		if hasVal {
			s.monitor = "val_loss"
		}
	}
	if es.Patience < 0 {
		return nil, fmt.Errorf("train: EarlyStopping.Patience %d, want >= 0", es.Patience)
	}
	if s.patience == 0 {
		s.patience = 1
	}
	if !(es.MinDelta >= 0) || math.IsInf(es.MinDelta, 0) {
		return nil, fmt.Errorf("train: EarlyStopping.MinDelta %v, want a finite number >= 0", es.MinDelta)
	}
	names := []string{"loss"}
	for _, m := range metrics {
		names = append(names, m.Name())
	}
	if hasVal {
		for _, n := range slices.Clone(names) {
			names = append(names, "val_"+n)
		}
	}
	found := false
	for _, n := range names {
		found = found || n == s.monitor
	}
	if !found {
		return nil, fmt.Errorf("train: EarlyStopping.Monitor %q is not reported (reported: %s)", s.monitor, strings.Join(names, ", "))
	}
	switch es.Mode {
	case ModeMin:
	case ModeMax:
		s.max = true
	case ModeAuto:
		base := strings.TrimPrefix(s.monitor, "val_")
		for _, m := range metrics {
			if h, ok := m.(HigherIsBetter); ok && m.Name() == base && base != "loss" {
				s.max = h.HigherIsBetter()
			}
		}
	default:
		return nil, fmt.Errorf("train: EarlyStopping.Mode %v is unknown", es.Mode)
	}
	return s, nil
}

// update applies the epoch's monitored value v to st and reports whether
// it improved and whether training should stop.
func (s *stopper) update(st *State, epoch int, v float64) (improved, stop bool) {
	finite := !math.IsNaN(v) && !math.IsInf(v, 0)
	switch {
	case !finite:
	case st.BestEpoch == 0:
		improved = true
	case s.max:
		improved = v > st.Best+s.minDelta
	default:
		improved = v < st.Best-s.minDelta
	}
	if improved {
		st.Best, st.BestEpoch, st.Wait = v, epoch, 0
		return true, false
	}
	st.Wait++
	return false, st.Wait >= s.patience
}
