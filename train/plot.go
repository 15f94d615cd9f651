package train

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
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
// (points at the epoch's last step); the lower panel the test accuracy
// after each epoch. The extension picks the format: .png (96 dpi), .svg or
// .pdf. It returns an error for another extension, when res has no steps,
// or when the file cannot be written.
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

// lossPlot is the upper panel: per-step loss and per-epoch mean loss.
func lossPlot(res *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Training loss"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "cross-entropy"
	steps := make(plotter.XYs, len(res.StepLosses))
	for i, l := range res.StepLosses {
		steps[i] = plotter.XY{X: float64(i + 1), Y: finiteOr(l, 0)}
	}
	line, err := plotter.NewLine(steps)
	if err != nil {
		return nil, fmt.Errorf("train: WritePlot: %w", err)
	}
	line.Color = color.RGBA{R: 70, G: 130, B: 180, A: 255}
	p.Add(line, plotter.NewGrid())
	p.Legend.Add("step loss", line)
	var epochs plotter.XYs
	end := 0
	for _, st := range res.Epochs {
		if st.Epoch == 0 {
			continue
		}
		end += st.Steps
		epochs = append(epochs, plotter.XY{X: float64(end), Y: finiteOr(st.TrainLoss, 0)})
	}
	if len(epochs) > 0 {
		pts, err := plotter.NewScatter(epochs)
		if err != nil {
			return nil, fmt.Errorf("train: WritePlot: %w", err)
		}
		pts.Color = color.RGBA{R: 200, G: 40, B: 40, A: 255}
		pts.Radius = vg.Points(4)
		p.Add(pts)
		p.Legend.Add("epoch mean", pts)
	}
	p.Legend.Top = true
	return p, nil
}

// accuracyPlot is the lower panel: test accuracy per epoch.
func accuracyPlot(res *Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Test accuracy"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "accuracy"
	var xy plotter.XYs
	for _, st := range res.Epochs {
		if st.Epoch > 0 {
			xy = append(xy, plotter.XY{X: float64(st.Epoch), Y: finiteOr(st.TestAccuracy, 0)})
		}
	}
	p.X.Min, p.X.Max = 0, float64(len(xy)+1)
	if len(xy) > 0 {
		line, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("train: WritePlot: %w", err)
		}
		pts.Radius = vg.Points(4)
		p.Add(line, pts)
	}
	p.Add(plotter.NewGrid())
	// Accuracy is a fraction: fix the axis to [0, 1] (Add autoscales, and
	// with a single point gonum pads the range to about 1.8).
	p.Y.Min, p.Y.Max = 0, 1
	return p, nil
}

// finiteOr returns v, or alt when v is NaN or infinite (plotter rejects
// such values).
func finiteOr(v, alt float64) float64 {
	if v != v || v > 1e308 || v < -1e308 {
		return alt
	}
	return v
}
