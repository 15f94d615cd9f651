package train

import (
	"sort"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Image geometry of the models' input: one 28×28 grayscale channel.
const (
	imageChannels = 1
	imageSize     = 28
	imagePixels   = imageChannels * imageSize * imageSize
	numClasses    = 10
)

// NewMLP returns the multilayer perceptron 784 → 128 → ReLU → 10 with
// parameters on dev. Its input is a batch of images [N, 1, 28, 28] (or
// already flat, [N, 784]) of float values; its output the logits [N, 10].
// It has 784·128 + 128 + 128·10 + 10 = 101,770 parameters.
func NewMLP(dev ember.Device) nn.Module {
	return nn.NewSequential(
		nn.Flatten{},
		nn.NewLinear(imagePixels, 128, dev),
		nn.Relu{},
		nn.NewLinear(128, numClasses, dev),
	)
}

// NewCNN returns the convolutional network
//
//	conv 5×5, 1 → 32 → ReLU → max-pool 2
//	conv 5×5, 32 → 64 → ReLU → max-pool 2
//	flatten → linear 1024 → 10
//
// with parameters on dev. The convolutions have stride 1 and no padding,
// so the spatial size goes 28 → 24 → 12 → 8 → 4 and the classifier sees
// 64·4·4 = 1024 features. Its input is a batch [N, 1, 28, 28]; its output
// the logits [N, 10]. It has 832 + 51,264 + 10,250 = 62,346 parameters.
func NewCNN(dev ember.Device) nn.Module {
	return nn.NewSequential(
		nn.NewConv2d(imageChannels, 32, 5, ember.ConvOptions{}, dev),
		nn.Relu{},
		nn.NewMaxPool2d(2, 2),
		nn.NewConv2d(32, 64, 5, ember.ConvOptions{}, dev),
		nn.Relu{},
		nn.NewMaxPool2d(2, 2),
		nn.Flatten{},
		nn.NewLinear(64*4*4, numClasses, dev),
	)
}

// models maps Config.Model names to constructors.
var models = map[string]func(ember.Device) nn.Module{
	"mlp": NewMLP,
	"cnn": NewCNN,
}

// NewModel returns the model named name ("mlp" or "cnn") on dev, or false
// for an unknown name.
func NewModel(name string, dev ember.Device) (nn.Module, bool) {
	f, ok := models[name]
	if !ok {
		return nil, false
	}
	return f(dev), true
}

// modelNames lists the known model names, sorted, for error messages.
func modelNames() string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
