package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/emberml/ember"
)

// MNIST geometry and the statistics of its training set.
const (
	// MNISTHeight and MNISTWidth are the image size in pixels.
	MNISTHeight = 28
	MNISTWidth  = 28
	// MNISTImageSize is the number of float32 values per image (28*28).
	MNISTImageSize = MNISTHeight * MNISTWidth
	// MNISTClasses is the number of labels (digits 0..9).
	MNISTClasses = 10
	// MNISTMean and MNISTStd are the mean and standard deviation of the
	// training pixels scaled to [0,1], the values torchvision's MNIST
	// examples normalize with.
	MNISTMean = 0.1307
	MNISTStd  = 0.3081
)

// MNISTOption configures MNIST.
type MNISTOption func(*mnistConfig)

type mnistConfig struct {
	normalize bool
}

// Normalized makes MNIST images standardized: each pixel p/255 becomes
// (p/255 - MNISTMean) / MNISTStd, so the training set has roughly zero
// mean and unit variance (as torchvision's transforms.Normalize((0.1307,),
// (0.3081,))).
func Normalized() MNISTOption {
	return func(c *mnistConfig) { c.normalize = true }
}

// MNISTDataset is the MNIST handwritten-digit dataset (Y. LeCun et al.):
// 60000 training or 10000 test grayscale 28×28 images with labels 0..9.
// As a Dataset its features are F32 images [1 28 28] (channels, height,
// width) and its targets I64 class indices (shape []). The raw bytes are
// kept in memory (47 MB for the training split) and converted to float32
// as examples are gathered. It is safe for concurrent use.
type MNISTDataset struct {
	pixels    []byte // n*784 bytes, row-major
	labels    []byte // n bytes, each 0..9
	normalize bool
	lut       [256]float32 // byte -> float32 pixel value
}

// MNIST loads one split ("train" or "test") of MNIST from dir, or, when
// dir is empty, from the directory FindMNIST locates. Images are float32
// in [0,1] (byte/255), MNISTImageSize = 784 values, row-major, 28 rows of
// 28; with Normalized() they are standardized instead. Labels are 0..9.
//
// Errors: an unknown split; the files not found (wraps fs.ErrNotExist);
// files that are not valid IDX, have the wrong shape or element type, or
// disagree in count, or a label outside 0..9 (wraps ErrFormat). Every
// error names the file or directory concerned.
func MNIST(dir, split string, opts ...MNISTOption) (*MNISTDataset, error) {
	names, ok := mnistFiles[split]
	if !ok {
		return nil, fmt.Errorf("data: unknown MNIST split %q (want \"train\" or \"test\")", split)
	}
	var cfg mnistConfig
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := FindMNIST(dir)
	if err != nil {
		return nil, err
	}
	imgPath, err := mnistFile(dir, names[0])
	if err != nil {
		return nil, err
	}
	lblPath, err := mnistFile(dir, names[1])
	if err != nil {
		return nil, err
	}
	// Read only what an MNIST dataset holds: uint8 images [n 28 28], then
	// exactly n uint8 labels, each header checked before its payload.
	imgs, err := ReadIDXFileWith(imgPath, IDXLimits{Check: func(t IDXType, dims []int) error {
		if t != IDXUint8 || len(dims) != 3 || dims[1] != MNISTHeight || dims[2] != MNISTWidth {
			return fmt.Errorf("MNIST images must be uint8 [n 28 28]")
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	n := imgs.Dims[0]
	lbls, err := ReadIDXFileWith(lblPath, IDXLimits{MaxBytes: max(int64(n), 1), Check: func(t IDXType, dims []int) error {
		if t != IDXUint8 || len(dims) != 1 {
			return fmt.Errorf("MNIST labels must be uint8 [n]")
		}
		if dims[0] != n {
			return fmt.Errorf("%d labels for %d images in %s", dims[0], n, imgPath)
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	return newMNIST(imgs, lbls, imgPath, lblPath, cfg)
}

// newMNIST validates decoded IDX arrays and builds the dataset.
func newMNIST(imgs, lbls *IDX, imgPath, lblPath string, cfg mnistConfig) (*MNISTDataset, error) {
	if imgs.Type != IDXUint8 || len(imgs.Dims) != 3 || imgs.Dims[1] != MNISTHeight || imgs.Dims[2] != MNISTWidth {
		return nil, formatErr(imgPath, "MNIST images must be uint8 [n 28 28], got %v %v", imgs.Type, imgs.Dims)
	}
	if lbls.Type != IDXUint8 || len(lbls.Dims) != 1 {
		return nil, formatErr(lblPath, "MNIST labels must be uint8 [n], got %v %v", lbls.Type, lbls.Dims)
	}
	if imgs.Dims[0] != lbls.Dims[0] {
		return nil, formatErr(lblPath, "%d labels for %d images in %s", lbls.Dims[0], imgs.Dims[0], imgPath)
	}
	for i, l := range lbls.Data {
		if l >= MNISTClasses {
			return nil, formatErr(lblPath, "label %d of example %d outside 0..9", l, i)
		}
	}
	ds := &MNISTDataset{pixels: imgs.Data, labels: lbls.Data, normalize: cfg.normalize}
	for b := range ds.lut {
		v := float32(b) / 255
		if cfg.normalize {
			v = (v - MNISTMean) / MNISTStd
		}
		ds.lut[b] = v
	}
	return ds, nil
}

// Len returns the number of examples: 60000 for "train", 10000 for
// "test".
func (d *MNISTDataset) Len() int { return len(d.labels) }

// Normalized reports whether images are standardized (see Normalized).
func (d *MNISTDataset) Normalized() bool { return d.normalize }

// ImageShape returns the shape of one image as a single-channel picture,
// [1 28 28] (channels, height, width), for convolutional models.
func (d *MNISTDataset) ImageShape() []int { return []int{1, MNISTHeight, MNISTWidth} }

// Label returns the label (0..9) of example i. It panics if i is out of
// range.
func (d *MNISTDataset) Label(i int) int { return int(d.labels[i]) }

// mnistSchema is the Schema of every MNISTDataset.
var mnistSchema = Schema{
	Features: Field{Shape: []int{1, MNISTHeight, MNISTWidth}, DType: ember.F32},
	Targets:  Field{Shape: []int{}, DType: ember.I64},
}

// Schema returns features f32[1 28 28] and targets i64[] (a class index).
func (d *MNISTDataset) Schema() Schema {
	s := mnistSchema
	s.Features.Shape = slices.Clone(s.Features.Shape)
	return s
}

// Gather writes the images of the examples indices (784 F32 values each,
// row-major) into features and their labels (I64) into targets; see
// Dataset. It never returns an error; it panics on an index out of range
// or buffers of the wrong length.
func (d *MNISTDataset) Gather(indices []int, features, targets []byte) error {
	checkGather("MNISTDataset", mnistSchema, d.Len(), indices, features, targets)
	f32, native := float32View(features)
	for k, i := range indices {
		src := d.pixels[i*MNISTImageSize : (i+1)*MNISTImageSize]
		if native {
			dst := f32[k*MNISTImageSize : (k+1)*MNISTImageSize]
			for j, b := range src {
				dst[j] = d.lut[b]
			}
		} else {
			dst := features[k*4*MNISTImageSize : (k+1)*4*MNISTImageSize]
			for j, b := range src {
				binary.LittleEndian.PutUint32(dst[4*j:], math.Float32bits(d.lut[b]))
			}
		}
		binary.LittleEndian.PutUint64(targets[8*k:], uint64(d.labels[i]))
	}
	return nil
}

// Example returns a new 784-value image of example i and its label. It
// panics if i is out of range.
func (d *MNISTDataset) Example(i int) ([]float32, int) {
	img := make([]float32, MNISTImageSize)
	return img, d.ExampleInto(img, i)
}

// ExampleInto writes example i's 784 pixel values into dst (len(dst) must
// be MNISTImageSize) and returns its label. It panics if i is out of range
// or dst has the wrong length.
func (d *MNISTDataset) ExampleInto(dst []float32, i int) int {
	if len(dst) != MNISTImageSize {
		panic(fmt.Sprintf("data: MNISTDataset.ExampleInto: len(dst) = %d, want %d", len(dst), MNISTImageSize))
	}
	lbl := d.labels[i] // panics first when i is out of range
	src := d.pixels[i*MNISTImageSize : (i+1)*MNISTImageSize]
	for j, b := range src {
		dst[j] = d.lut[b]
	}
	return int(lbl)
}
