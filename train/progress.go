package train

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is one epoch's progress bar; the zero value draws nothing.
type progress struct {
	bar   *progressbar.ProgressBar
	label string
	loss  string // the format of the loss after the label
	n     int
}

// Widths of the parts of the bar's line besides the bar itself, at most:
// " 100% " and the bar's two ends, the iteration rate ", 1234 steps/s"
// and the times " [1h2m3s:1h2m3s]"; the line keeps one column free, so a
// terminal never wraps it.
const (
	barFixed   = 8
	barRate    = 15
	barTimes   = 14
	barMinimum = 10
)

// bar returns the progress bar of epoch e (counted from 0) of epochs,
// which has steps steps, first of them already taken (a resumed epoch).
// The line fits the terminal's width: below 80 columns the label is
// shortened ("1/3 loss 0.215"), and the step rate and the time estimate
// are left out where they would leave the bar fewer than 10 columns, so
// that the bar stays on one line in a 60-column terminal:
//
//	1/1 loss 0.183  51% |██████    | (484/938) [3s:3s]
func (r *reporter) bar(e, epochs, steps, first int) *progress {
	if !r.progress {
		return &progress{}
	}
	width := terminalWidth(r.barOut)
	label, loss := fmt.Sprintf("epoch %d/%d", e+1, epochs), "%s  loss %.4f "
	if width < 80 {
		label, loss = fmt.Sprintf("%d/%d", e+1, epochs), "%s loss %.3f "
	}
	desc := len(fmt.Sprintf(loss, label, 10.0))
	count := len(fmt.Sprintf(" (%d/%d)", steps, steps))
	room := width - 1 - desc - barFixed - count
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(r.barOut),
		progressbar.OptionSetDescription(label + " "),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
	}
	if room-barRate-barTimes >= barMinimum {
		room -= barRate + barTimes
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("steps"), progressbar.OptionSetPredictTime(true))
	} else if room-barTimes >= barMinimum {
		room -= barTimes
		opts = append(opts, progressbar.OptionSetPredictTime(true))
	} else {
		opts = append(opts, progressbar.OptionSetPredictTime(false))
	}
	opts = append(opts, progressbar.OptionSetWidth(max(room, 1)))
	b := progressbar.NewOptions(steps, opts...)
	if first > 0 {
		_ = b.Set(first)
	}
	return &progress{bar: b, label: label, loss: loss, n: first}
}

// terminalWidth returns the width of the terminal w writes to, or 80.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 80
}

// step advances the bar by one step and shows the latest loss.
func (p *progress) step(loss float64) {
	if p.bar == nil {
		return
	}
	p.n++
	if p.n%10 == 1 {
		p.bar.Describe(fmt.Sprintf(p.loss, p.label, loss))
	}
	_ = p.bar.Add(1)
}

// finish clears the bar.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
