package train

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readPNG decodes the PNG file at path.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestWritePlot(t *testing.T) {
	res := &Result{
		StepLosses: []float64{2.3, 1.9, 1.2, 0.8, 0.7, 0.5},
		Epochs: []EpochStats{
			{Epoch: 1, Step: 3, TrainLoss: 1.8, TestAccuracy: 0.7, Steps: 3},
			{Epoch: 2, Step: 6, TrainLoss: 0.67, TestAccuracy: 0.85, Steps: 3},
		},
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "curves.png")
	if err := WritePlot(p, res); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, p)
	// 8 inches at 96 dpi.
	if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 768 {
		t.Fatalf("image is %v, want 768×768", b)
	}
	// Something was drawn: not every pixel has the background colour.
	bg := img.At(0, 0)
	drawn := 0
	for y := 0; y < 768; y += 4 {
		for x := 0; x < 768; x += 4 {
			if img.At(x, y) != bg {
				drawn++
			}
		}
	}
	if drawn < 500 {
		t.Fatalf("only %d sampled pixels differ from the background", drawn)
	}

	svg := filepath.Join(dir, "curves.svg")
	if err := WritePlot(svg, res); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(svg); !bytes.Contains(b, []byte("<svg")) {
		t.Fatal("the .svg file holds no <svg element")
	}
	if err := WritePlot(filepath.Join(dir, "c.gif"), res); err == nil {
		t.Error(".gif accepted")
	}
	if err := WritePlot(filepath.Join(dir, "e.png"), &Result{}); err == nil {
		t.Error("empty result accepted")
	}
}

// TestPlotAxes checks the axes: losses and a fresh run's steps from 0, a
// resumed run's steps from its first, a single epoch in the middle of an
// axis labelled 1 alone, accuracy zoomed on its values.
func TestPlotAxes(t *testing.T) {
	one := &Result{StepLosses: []float64{2.3, 1.1, 0.9, 0.6}, Epochs: []EpochStats{{Epoch: 1, Step: 4, TrainLoss: 1.2, TestAccuracy: 0.957, Steps: 4}}}
	lp, err := lossPlot(one)
	if err != nil {
		t.Fatal(err)
	}
	if lp.Y.Min != 0 || lp.Y.Max < 2.3 || lp.X.Min != 0 || !(lp.X.Max > 4) {
		t.Errorf("loss axes x [%v, %v] y [%v, %v], want x from 0 past step 4 and y from 0 to at least 2.3", lp.X.Min, lp.X.Max, lp.Y.Min, lp.Y.Max)
	}
	ap, err := accuracyPlot(one)
	if err != nil {
		t.Fatal(err)
	}
	if ap.X.Min != 0.5 || ap.X.Max != 1.5 {
		t.Errorf("one epoch on an axis [%v, %v], want [0.5, 1.5]", ap.X.Min, ap.X.Max)
	}
	var labels []string
	for _, tk := range ap.X.Tick.Marker.Ticks(ap.X.Min, ap.X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !slices.Equal(labels, []string{"1"}) {
		t.Errorf("one epoch's axis labels %q, want [1]", labels)
	}
	if !(ap.Y.Min > 0.9 && ap.Y.Min < 0.957 && ap.Y.Max > 0.957 && ap.Y.Max <= 1 && ap.Y.Max-ap.Y.Min >= 0.02) {
		t.Errorf("accuracy axis [%v, %v] for 0.957, want a zoom of at least 0.02 around it within [0, 1]", ap.Y.Min, ap.Y.Max)
	}
	resumed := &Result{StartStep: 300, StepLosses: []float64{0.4, 0.3}, Epochs: []EpochStats{{Epoch: 8, Step: 302, TrainLoss: 0.35, TestAccuracy: 1, Steps: 22}}}
	lp, _ = lossPlot(resumed)
	ap, _ = accuracyPlot(resumed)
	if lp.X.Min != 300 || ap.X.Min != 7.5 || ap.Y.Max != 1 {
		t.Errorf("resumed run: steps from %v, epochs from %v, accuracy up to %v; want 300, 7.5, 1", lp.X.Min, ap.X.Min, ap.Y.Max)
	}
	for _, c := range []struct {
		min, max float64
		want     string
	}{{0, 2.645, "0.0 0.5 1.0 1.5 2.0 2.5"}, {0.9, 0.96, "0.90 0.91 0.92 0.93 0.94 0.95 0.96"}, {0.852, 0.88, "0.855 0.860 0.865 0.870 0.875 0.880"}, {0.93, 0.96, "0.930 0.935 0.940 0.945 0.950 0.955 0.960"}, {0, 0.41, "0.0 0.1 0.2 0.3 0.4"}} {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("value ticks of [%v, %v]: %s, want %s", c.min, c.max, got, c.want)
		}
	}
	for _, c := range []struct{ min, max float64 }{{0, 1}, {0, 7}, {0, 47}, {300, 600}, {0, 9381}, {0.5, 12.5}} {
		for _, tk := range (integerTicks{}).Ticks(c.min, c.max) {
			if tk.Value != float64(int(tk.Value)) {
				t.Errorf("ticks of [%v, %v]: %v is not a whole number", c.min, c.max, tk.Value)
			}
		}
		n := 0
		for _, tk := range (integerTicks{}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				n++
			}
		}
		if n < 1 || n > 7 {
			t.Errorf("ticks of [%v, %v]: %d labels", c.min, c.max, n)
		}
	}
}

// TestPlotMarkersNotClipped draws one epoch, whose mean-loss marker sits
// at the last step, and checks in the image that the marker is a whole
// circle: its red pixels span as many columns as rows.
func TestPlotMarkersNotClipped(t *testing.T) {
	losses := make([]float64, 47)
	for i := range losses {
		losses[i] = 2.3 / float64(i+1)
	}
	res := &Result{StepLosses: losses, Epochs: []EpochStats{{Epoch: 1, Step: 47, TrainLoss: 0.9, TestAccuracy: 0.86, Steps: 47}}}
	path := filepath.Join(t.TempDir(), "one.png")
	if err := WritePlot(path, res); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, path)
	b := img.Bounds()
	// Red pixels of the loss panel below its legend (the top 100 rows),
	// where the marker of the epoch's mean loss (0.9 of 2.3) is.
	marker := image.Rectangle{}
	for y := 100; y < b.Dy()/2; y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 150 && r>>8 > g>>8+60 && r>>8 > bl>>8+60 {
				marker = marker.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	if marker.Empty() {
		t.Fatal("no red marker found")
	}
	if marker.Max.X >= b.Dx()-1 || marker.Dx() < marker.Dy()-1 || marker.Dy() < marker.Dx()-1 {
		t.Fatalf("the epoch marker covers %v in a %v image: it is cut", marker, b)
	}
}
