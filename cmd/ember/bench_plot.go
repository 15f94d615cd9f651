package main

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// peerColors colours each kind of peer; others take peerOther.
var (
	peerColors = map[string]color.RGBA{
		"openblas": {R: 31, G: 119, B: 180, A: 255},
		"gonum":    {R: 44, G: 160, B: 44, A: 255},
		"go-copy":  {R: 127, G: 127, B: 127, A: 255},
		"cpu":      {R: 148, G: 103, B: 189, A: 255},
		"torch":    {R: 23, G: 190, B: 207, A: 255},
	}
	peerOpByOp = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	peerOther  = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

// comparison is one bar of the benchmark plot: a row's speed relative to
// one peer's.
type comparison struct {
	label string
	peer  string
	ratio float64
}

// comparisons lists every (row, peer) ratio of rows, in order.
func comparisons(rows []benchResult) []comparison {
	var out []comparison
	for _, r := range rows {
		for _, peer := range slices.Sorted(mapKeys(r.Ratios)) {
			ratio := r.Ratios[peer]
			if !(ratio > 0) || math.IsInf(ratio, 0) {
				continue
			}
			out = append(out, comparison{
				label: fmt.Sprintf("%s %s %s: %s vs %s", r.Bench, r.Shape, r.DType, r.Backend, peer),
				peer:  peer, ratio: ratio,
			})
		}
	}
	return out
}

// writeBenchPlot draws the results' ratios to their peers into the image
// file path (.png, .svg or .pdf), with gonum.org/v1/plot: one horizontal
// bar per row and peer, from parity (1×) to the row's speed relative to
// the peer on a logarithmic axis (bars to the right: faster than the
// peer), labelled with the row, the peer and the ratio, coloured by peer. Rows without a peer
// are left out; device names the measured device in the title. It returns
// an error when no row has a peer, for another extension, or when the
// file cannot be written.
func writeBenchPlot(path, device string, rows []benchResult) error {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if !slices.Contains([]string{"png", "svg", "pdf"}, format) {
		return fmt.Errorf("--plot %s: unsupported image format %q (want .png, .svg or .pdf)", path, format)
	}
	cs := comparisons(rows)
	if len(cs) == 0 {
		return errors.New("--plot: none of the benchmarks run has a peer to compare with (matmul, add, sum, fusion, backends and kernels have)")
	}
	p := plot.New()
	p.Title.Text = "ember bench on " + device + ": speed relative to each peer (median times, same run)"
	p.X.Label.Text = "speed ratio (log scale; right of 1× = faster than the peer)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	lo, hi := 1.0, 1.0
	// The first comparison at the top: y counts down.
	n := len(cs)
	names := make([]string, n)
	for i, c := range cs {
		y := float64(n - 1 - i)
		names[n-1-i] = c.label
		lo, hi = math.Min(lo, c.ratio), math.Max(hi, c.ratio)
		bar, err := plotter.NewLine(plotter.XYs{{X: 1, Y: y}, {X: c.ratio, Y: y}})
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		bar.Color = peerColor(c.peer)
		bar.Width = vg.Points(9)
		p.Add(bar)
	}
	// The ratio beside each bar's end: right of a bar that goes right,
	// left of one that goes left.
	for _, right := range []bool{true, false} {
		var labels plotter.XYLabels
		for i, c := range cs {
			if c.ratio >= 1 == right {
				labels.XYs = append(labels.XYs, plotter.XY{X: c.ratio, Y: float64(n - 1 - i)})
				labels.Labels = append(labels.Labels, fmt.Sprintf("%.2f×", c.ratio))
			}
		}
		if len(labels.XYs) == 0 {
			continue
		}
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XLeft, draw.YCenter
			l.Offset = vg.Point{X: vg.Points(6)}
			if !right {
				l.TextStyle[i].XAlign = draw.XRight
				l.Offset = vg.Point{X: -vg.Points(6)}
			}
		}
		p.Add(l)
	}
	parity, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.6}, {X: 1, Y: float64(n) - 0.4}})
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	parity.Color = color.Black
	parity.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(parity, plotter.NewGrid())
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	// Room for the labels: a factor of 2.2 beyond the extreme ratios.
	p.X.Min, p.X.Max = lo/2.2, hi*2.2
	// Each bar's label names its peer; the colours group the peers.

	w := 11 * vg.Inch
	h := vg.Length(1.6)*vg.Inch + vg.Length(n)*vg.Points(22)
	img, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	p.Draw(draw.Crop(draw.New(img), vg.Points(8), -vg.Points(16), vg.Points(8), -vg.Points(8)))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return f.Close()
}

// peerColor returns the colour of a peer's bars.
func peerColor(peer string) color.RGBA {
	if c, ok := peerColors[peer]; ok {
		return c
	}
	if strings.HasSuffix(peer, "-op-by-op") || strings.HasSuffix(peer, "-composed") {
		return peerOpByOp
	}
	return peerOther
}

// ratioTicks labels powers of two (…, 1/8×, 1/4×, 0.5×, 1×, 2×, 4×, …),
// or of ten beyond a span of 2¹⁰.
type ratioTicks struct{}

// Ticks returns the ticks of [min, max] (min > 0).
func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	base := 2.0
	if max/min > 1<<10 {
		base = 10
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log(min) / math.Log(base)); ; e++ {
		v := math.Pow(base, e)
		if v > max {
			break
		}
		if v >= min {
			label := fmt.Sprintf("%g×", v)
			if base == 2 && v < 0.5 {
				label = fmt.Sprintf("1/%g×", 1/v) // 1/16× rather than 0.0625×
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
	}
	return ticks
}
