package train

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestWritePlot(t *testing.T) {
	res := &Result{
		StepLosses: []float64{2.3, 1.9, 1.2, 0.8, 0.7, 0.5},
		Epochs: []EpochStats{
			{Epoch: 1, TrainLoss: 1.8, TestAccuracy: 0.7, Steps: 3},
			{Epoch: 2, TrainLoss: 0.67, TestAccuracy: 0.85, Steps: 3},
		},
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "curves.png")
	if err := WritePlot(p, res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
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
