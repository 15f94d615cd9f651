package data

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// Default tensor names of a safetensors dataset shard.
const (
	DefaultFeaturesTensor = "features"
	DefaultTargetsTensor  = "targets"
)

// SafetensorsOptions configures ReadSafetensorsShards.
type SafetensorsOptions struct {
	// Features and Targets name the tensors holding each shard's
	// features and targets; "" means DefaultFeaturesTensor and
	// DefaultTargetsTensor.
	Features, Targets string
	// Limits bound what each file may hold (see nn.ReadSafetensorsWith).
	Limits nn.SafetensorsLimits
}

// ReadSafetensorsShards reads a dataset stored as one or more safetensors
// files (read with nn.ReadSafetensorsWith), each holding a features
// tensor [n_k, ...] and a targets tensor [n_k, ...] with the same leading
// size; the files' examples follow one another in the order of paths,
// without being copied together. Every shard must have the same dtypes
// and per-example shapes. Other tensors in the files are ignored (but
// held in memory with the file's data). Errors: no paths; a file that
// cannot be read (wraps fs.ErrNotExist when missing); an invalid file
// (wraps nn.ErrInvalidSafetensors and ErrFormat); a missing tensor (the
// error lists the tensors present), misaligned tensors or shards that
// disagree (wrap ErrFormat). Every error names the file.
func ReadSafetensorsShards(paths []string, o SafetensorsOptions) (*TensorDataset, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("data: ReadSafetensorsShards: no files")
	}
	fname, tname := o.Features, o.Targets
	if fname == "" {
		fname = DefaultFeaturesTensor
	}
	if tname == "" {
		tname = DefaultTargetsTensor
	}
	var features, targets []*ember.TensorData
	for _, p := range paths {
		ts, err := readSafetensorsFile(p, o.Limits)
		if err != nil {
			return nil, err
		}
		f, t := ts[fname], ts[tname]
		if f == nil || t == nil {
			missing := fname
			if f != nil {
				missing = tname
			}
			names := make([]string, 0, len(ts))
			for n := range ts {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, formatErr(p, "no tensor %q (tensors: %s)", missing, strings.Join(names, ", "))
		}
		if len(f.Shape) == 0 || len(t.Shape) == 0 || f.Shape[0] != t.Shape[0] {
			return nil, formatErr(p, "tensors %q %v and %q %v need the same leading size (one row per example)", fname, f.Shape, tname, t.Shape)
		}
		features = append(features, f)
		targets = append(targets, t)
	}
	return newTensorDataset(paths, features, targets)
}

// readSafetensorsFile reads one safetensors file.
func readSafetensorsFile(path string, l nn.SafetensorsLimits) (map[string]*ember.TensorData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	ts, _, err := nn.ReadSafetensorsWith(f, l)
	if errors.Is(err, nn.ErrInvalidSafetensors) {
		return nil, fmt.Errorf("data: %s: %w: %w", path, ErrFormat, err)
	}
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return ts, nil
}
