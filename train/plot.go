package train

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	// Image formats for draw.NewFormattedCanvas: png, pdf, svg.
	_ "gonum.org/v1/plot/vg/vgimg"
	_ "gonum.org/v1/plot/vg/vgpdf"
	_ "gonum.org/v1/plot/vg/vgsvg"
)

// WritePlot draws res's curves into the image file path (created or
// truncated), 8×8 inches, with gonum.org/v1/plot: the upper panel shows the
// loss of every step (a line) and the mean training loss of each epoch
// (points at the epoch's last step) on axes that start at 0 (the step
// axis at the run's first step when it resumed a checkpoint); the lower
// panel the test accuracy after each epoch, with its value written above
// each point for up to 12 epochs, on an axis zoomed to the measured
// values (accuracy differences of a percent matter) and an epoch axis of
// whole numbers. Both panels leave room for their markers at the edges.
// The extension picks the format: .png (96 dpi), .svg or .pdf. It returns
// an error for another extension, when res has no steps, or when the file
// cannot be written.
func WritePlot(path string, res *Result) error {
	if res == nil || len(res.StepLosses) == 0 {
		return fmt.Errorf("train: WritePlot: no training steps to plot")
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if format != "png" && format != "svg" && format != "pdf" {
		return fmt.Errorf("train: WritePlot: %s: unsupported image format %q (want .png, .svg or .pdf)", path, format)
	}
	loss, err := lossPlot(res)
	if err != nil {
		return err
	}
	acc, err := accuracyPlot(res)
	if err != nil {
		return err
	}
	const w, h = 8 * vg.Inch, 8 * vg.Inch
	img, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("train: WritePlot: %w", err)
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8),
		PadLeft: vg.Points(8), PadRight: vg.Points(16), PadY: vg.Points(16)}
	plots := [][]*plot.Plot{{loss}, {acc}}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("train: WritePlot: %w", err)
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("train: WritePlot: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("train: WritePlot: %w", err)
	}
	return nil
}

// markerRadius is the radius of the plots' points.
var markerRadius = vg.Points(4)

// lossPlot is the upper panel: per-step loss and per-epoch mean loss.
func lossPlot(res *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Training loss"
	if res.StartStep > 0 {
		p.Title.Text = fmt.Sprintf("Training loss (resumed after step %d)", res.StartStep)
	}
	p.X.Label.Text = "step"
	p.Y.Label.Text = "cross-entropy"
	first := res.StartStep + 1
	last := res.StartStep + len(res.StepLosses)
	steps := make(plotter.XYs, len(res.StepLosses))
	top := 0.0
	for i, l := range res.StepLosses {
		y := finiteOr(l, 0)
		steps[i] = plotter.XY{X: float64(first + i), Y: y}
		top = math.Max(top, y)
	}
	line, err := plotter.NewLine(steps)
	if err != nil {
		return nil, fmt.Errorf("train: WritePlot: %w", err)
	}
	line.Color = color.RGBA{R: 70, G: 130, B: 180, A: 255}
	p.Add(plotter.NewGrid(), line)
	p.Legend.Add("step loss", line)
	var epochs plotter.XYs
	end := res.StartStep
	for _, st := range res.Epochs {
		if st.Epoch == 0 {
			continue
		}
		end += st.Steps
		x := st.Step
		if x == 0 { // statistics made by hand, without the step count
			x = end
		}
		y := finiteOr(st.TrainLoss, 0)
		epochs = append(epochs, plotter.XY{X: float64(x), Y: y})
		top = math.Max(top, y)
	}
	if len(epochs) > 0 {
		pts, err := plotter.NewScatter(epochs)
		if err != nil {
			return nil, fmt.Errorf("train: WritePlot: %w", err)
		}
		pts.Color = color.RGBA{R: 200, G: 40, B: 40, A: 255}
		pts.Radius = markerRadius
		p.Add(pts)
		p.Legend.Add("epoch mean", pts)
	}
	p.Legend.Top = true
	// Losses are >= 0: the axis starts at 0, so that the curve's fall is
	// seen to scale, and leaves room above for the legend. A fresh run's
	// step axis starts at 0 too.
	p.Y.Min, p.Y.Max = 0, top*1.15
	if top == 0 {
		p.Y.Max = 1
	}
	// A margin after the last step keeps its epoch marker off the axis's
	// end.
	p.X.Min = float64(first - 1)
	if res.StartStep == 0 {
		p.X.Min = 0
	}
	p.X.Max = float64(last) + math.Max(1, 0.02*(float64(last)-p.X.Min))
	p.X.Tick.Marker = integerTicks{}
	p.Y.Tick.Marker = niceTicks{}
	return p, nil
}

// accuracyPlot is the lower panel: test accuracy per epoch.
func accuracyPlot(res *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Test accuracy"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "accuracy"
	var xy plotter.XYs
	lo, hi := 1.0, 0.0
	for _, st := range res.Epochs {
		if st.Epoch > 0 {
			a := finiteOr(st.TestAccuracy, 0)
			xy = append(xy, plotter.XY{X: float64(st.Epoch), Y: a})
			lo, hi = math.Min(lo, a), math.Max(hi, a)
		}
	}
	p.Add(plotter.NewGrid())
	if len(xy) == 0 {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return p, nil
	}
	line, pts, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, fmt.Errorf("train: WritePlot: %w", err)
	}
	pts.Radius = markerRadius
	p.Add(line, pts)
	if len(xy) <= 12 {
		labels := plotter.XYLabels{XYs: xy, Labels: make([]string, len(xy))}
		for i, v := range xy {
			labels.Labels[i] = strconv.FormatFloat(v.Y, 'f', 4, 64)
		}
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, fmt.Errorf("train: WritePlot: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign = draw.XCenter
		}
		l.Offset = vg.Point{Y: markerRadius + vg.Points(3)}
		p.Add(l)
	}
	// Epochs are whole numbers: half an epoch of margin on each side, so
	// that a single epoch sits in the middle of its own axis.
	p.X.Min, p.X.Max = xy[0].X-0.5, xy[len(xy)-1].X+0.5
	p.X.Tick.Marker = integerTicks{}
	// Zoom on the measured values (at least 2 points of accuracy around
	// them), within [0, 1], with room above for the labels.
	pad := math.Max(0.15*(hi-lo), 0.01)
	p.Y.Min, p.Y.Max = math.Max(0, lo-pad), math.Min(1, hi+2*pad)
	if p.Y.Max-p.Y.Min < 0.02 {
		p.Y.Min = math.Max(0, p.Y.Max-0.02)
	}
	p.Y.Tick.Marker = niceTicks{}
	return p, nil
}

// integerTicks labels whole numbers only (steps and epochs), about five
// of them at 1, 2 or 5 times a power of ten apart, with unlabelled ticks
// between them.
type integerTicks struct{}

// Ticks returns the ticks of [min, max].
func (integerTicks) Ticks(min, max float64) []plot.Tick {
	step := majorStep(max - min)
	minor := math.Max(1, step/5)
	var ticks []plot.Tick
	for v := math.Ceil(min/minor) * minor; v <= max; v += minor {
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', 0, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// majorStep returns the smallest of 1, 2, 5, 10, 20, 50, ... that cuts
// span into at most 6 parts.
func majorStep(span float64) float64 {
	for e := 0.0; e < 300; e++ {
		for _, m := range []float64{1, 2, 5} {
			if s := m * math.Pow(10, e); span/s <= 6 {
				return s
			}
		}
	}
	return math.Max(1, span)
}

// niceTicks labels four to seven values 1, 2, 2.5 or 5 times a power of
// ten apart, all with the same number of decimals, with an unlabelled
// tick between each two.
type niceTicks struct{}

// Ticks returns the ticks of [min, max].
func (niceTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if !(span > 0) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 4, 64)}}
	}
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step, decimals := 10*mag, -math.Floor(math.Log10(mag))-1
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step, decimals = m*mag, -math.Floor(math.Log10(mag))
			if m == 2.5 {
				decimals++
			}
			break
		}
	}
	var ticks []plot.Tick
	first := math.Ceil(min/step-1e-9) * step
	for k := 0; ; k++ {
		v := first + float64(k)*step
		if v > max+step*1e-9 {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', int(math.Max(0, decimals)), 64)})
		if mid := v + step/2; mid < max {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

// finiteOr returns v, or alt when v is NaN or infinite (plotter rejects
// such values).
func finiteOr(v, alt float64) float64 {
	if v != v || v > 1e308 || v < -1e308 {
		return alt
	}
	return v
}
