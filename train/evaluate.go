package train

import (
	"context"
	"fmt"

	"github.com/emberml/ember"
	"github.com/emberml/ember/data"
	"github.com/emberml/ember/nn"
)

// Evaluate returns the classification accuracy of model on ds: the
// fraction (0..1) of examples whose logits' argmax (ties pick the lowest
// class, as ember's Argmax) equals the label. Examples must have 784 F32
// feature values and one I64 label (as data.MNISTDataset); they are fed
// in order as batches [batch, 1, 28, 28] created on
// dev, the device of the model's parameters (or that device with
// autocast, to evaluate in mixed precision), and the model must return
// logits [batch, C]. The model is put in evaluation mode
// (nn.SetTraining(model, false)) and left there, and the forward passes run
// under ember.NoGrad, so nothing is recorded for backward (NoGrad covers
// the calling goroutine only: another goroutine may train meanwhile). It
// returns an error for batch < 1, an empty ds or one of another schema,
// and the *ember.Error or device error a forward pass raised. Trainer's
// Evaluate method measures any model with any metrics.
func Evaluate(model nn.Module, ds data.Dataset, dev ember.Device, batch int) (acc float64, err error) {
	if batch < 1 {
		return 0, fmt.Errorf("train: Evaluate: batch size %d, want >= 1", batch)
	}
	if ds.Len() == 0 {
		return 0, fmt.Errorf("train: Evaluate: empty dataset")
	}
	if err := checkImages("evaluation", ds); err != nil {
		return 0, err
	}
	nn.SetTraining(model, false)
	loader := data.NewLoader(ds, batch, data.LoaderOptions{})
	defer loader.Close()
	correct, total := 0, 0
	err = ember.Try(func() {
		ember.NoGrad(func() {
			it := loader.Iter(context.Background(), 0)
			defer it.Close()
			for it.Next() {
				b := it.Batch()
				correct += countCorrect(model, b, dev)
				total += b.Size
			}
		})
	})
	if err != nil {
		return 0, err
	}
	return float64(correct) / float64(total), nil
}

// countCorrect returns how many examples of b the model classifies
// correctly.
func countCorrect(model nn.Module, b data.Batch, dev ember.Device) int {
	if len(b.Images) != b.Size*imagePixels {
		panic(&ember.Error{Op: "train.Evaluate", Msg: fmt.Sprintf("examples have %d values, want %d (28×28 images)", len(b.Images)/b.Size, imagePixels)})
	}
	x := ember.FromFloats(b.Images, []int{b.Size, imageChannels, imageSize, imageSize}, dev)
	pred := model.Forward(x).Argmax(1, false).Int64s()
	n := 0
	for i, p := range pred {
		if p == b.Labels[i] {
			n++
		}
	}
	return n
}
