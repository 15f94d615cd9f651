package train

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/atomicfile"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// The checkpoint file format. A checkpoint is one safetensors file
// (readable by nn.LoadFile with LoadOptions.NonStrict, or by Python's
// safetensors, as a state dict of the model plus extra tensors):
//
//   - the model's parameters and buffers under their nn.StateDict names;
//   - each optimizer state tensor under "optimizer/<parameter>/<name>",
//     name being PyTorch's ("exp_avg", "exp_avg_sq", "momentum_buffer");
//   - with early stopping's RestoreBest, the best epoch's parameters and
//     buffers under "best/<name>".
//
// Its "__metadata__" holds strings:
//
//	format          "ember.checkpoint"
//	format_version  "1" (CheckpointVersion)
//	state           the training progress, State as JSON
//	optimizer       {"name":"adam","hyper":{"lr":0.001,...},"steps":{"0.weight":300,...}}
//	rng             the device generator's state (Device.RNGState), base64; absent when the device could not report it
//	grad_scaler     the loss scaler's progress, {"scale":32768,"growth_tracker":117}; absent without one
//	config          the run's configuration as JSON (what must agree on resume)
//
// and any caller metadata under other keys.
const (
	// CheckpointFormat is the "format" metadata value of a checkpoint.
	CheckpointFormat = "ember.checkpoint"
	// CheckpointVersion is the format version written, and the newest
	// read.
	CheckpointVersion = 1
)

// optimizerPrefix and bestPrefix start the names of the optimizer's and
// the best epoch's tensors.
const (
	optimizerPrefix = "optimizer/"
	bestPrefix      = "best/"
)

// reservedKeys are the metadata keys of the format.
var reservedKeys = []string{"format", "format_version", "state", "optimizer", "rng", "grad_scaler", "config"}

// ErrInvalidCheckpoint is wrapped by the errors of ReadCheckpoint and
// LoadCheckpoint about a file that is not a checkpoint this package can
// read: not safetensors (the error also wraps nn.ErrInvalidSafetensors),
// another format or a newer version, malformed metadata, or tensors that
// the metadata does not account for.
var ErrInvalidCheckpoint = errors.New("invalid checkpoint")

// ErrCheckpointMismatch is wrapped by the errors of resuming from a
// checkpoint that belongs to another model (it also wraps nn.ErrMismatch),
// another optimizer or configuration (optim.ErrStateMismatch), a run with
// a loss scaler when this one has none or the reverse, or another run's
// settings (batch size, seed, schedule, precision, ...).
var ErrCheckpointMismatch = errors.New("checkpoint does not match the run")

// Checkpoint is everything a training run needs to continue bit for bit:
// the model's parameters and buffers, the optimizer's state, the loss
// scaler's state (F16 mixed precision), the progress (epoch, step, the
// position inside the epoch), the device's random generator and the
// settings the run must keep. It is plain data;
// Trainer.SaveCheckpoint and Config.Checkpoint make one, and
// Trainer.LoadCheckpoint and Config.Resume continue from one.
type Checkpoint struct {
	// Model holds the model's parameters and buffers by nn.StateDict
	// name.
	Model map[string]*ember.TensorData
	// Optimizer is the optimizer's state.
	Optimizer OptimizerCheckpoint
	// Best holds the best epoch's parameters and buffers for
	// EarlyStopping.RestoreBest, by name; nil when there are none.
	Best map[string]*ember.TensorData
	// State is the progress of training.
	State State
	// RNG is the device's random generator state (Device.RNGState), nil
	// when the device could not report it.
	RNG []byte
	// GradScaler is the loss scaler's progress
	// (optim.GradScaler.StateDict), nil for a run without one.
	GradScaler *optim.GradScalerState
	// Config is the run's configuration as a JSON object: what a resumed
	// run must agree with (its batch size, seed, schedule, ...). Its keys
	// belong to the writer (Run and Trainer write different ones).
	Config json.RawMessage
	// Metadata holds the caller's own strings; the format's keys
	// (format, format_version, state, optimizer, rng, grad_scaler,
	// config) are reserved.
	Metadata map[string]string
}

// OptimizerCheckpoint is an optimizer's state in a checkpoint: the
// contents of optim.StateDict with tensor values as data.
type OptimizerCheckpoint struct {
	// Name is the algorithm, "adam", "adamw" or "sgd"
	// (optim.StateDict.Optimizer).
	Name string `json:"name"`
	// Hyper is the configuration (optim.StateDict.Hyper).
	Hyper map[string]float64 `json:"hyper"`
	// Steps holds the step count of every parameter that has state, by
	// name (0 for SGD).
	Steps map[string]int `json:"steps"`
	// Tensors holds each such parameter's state tensors by name, then by
	// PyTorch's name ("exp_avg", ...).
	Tensors map[string]map[string]*ember.TensorData `json:"-"`
}

// WriteCheckpoint writes c to w in the checkpoint format (see the
// constants' comment). Errors: a model tensor named like the optimizer's
// or best epoch's tensors, a parameter name containing "/" at its end, a
// reserved metadata key in c.Metadata, a non-finite number in c.State,
// the optimizer's hyperparameters or c.GradScaler, Config that is not a
// JSON object, and w's errors.
func WriteCheckpoint(w io.Writer, c *Checkpoint) error {
	if c == nil {
		return errors.New("train: WriteCheckpoint: nil checkpoint")
	}
	tensors := make(map[string]*ember.TensorData, len(c.Model)+len(c.Best))
	for name, d := range c.Model {
		if strings.HasPrefix(name, optimizerPrefix) || strings.HasPrefix(name, bestPrefix) {
			return fmt.Errorf("train: WriteCheckpoint: model tensor %q uses a name reserved for the optimizer's and best epoch's tensors", name)
		}
		tensors[name] = d
	}
	for name, d := range c.Best {
		tensors[bestPrefix+name] = d
	}
	for _, p := range slices.Sorted(maps.Keys(c.Optimizer.Tensors)) {
		if _, ok := c.Optimizer.Steps[p]; !ok {
			return fmt.Errorf("train: WriteCheckpoint: optimizer tensors of parameter %q without a step count", p)
		}
		for k, d := range c.Optimizer.Tensors[p] {
			if k == "" || strings.Contains(k, "/") {
				return fmt.Errorf("train: WriteCheckpoint: optimizer tensor name %q of parameter %q", k, p)
			}
			tensors[optimizerPrefix+p+"/"+k] = d
		}
	}
	meta := make(map[string]string, len(c.Metadata)+len(reservedKeys))
	for k, v := range c.Metadata {
		if slices.Contains(reservedKeys, k) {
			return fmt.Errorf("train: WriteCheckpoint: metadata key %q is reserved by the checkpoint format", k)
		}
		meta[k] = v
	}
	state, err := json.Marshal(c.State)
	if err != nil {
		return fmt.Errorf("train: WriteCheckpoint: state: %w", err)
	}
	steps := c.Optimizer.Steps
	if steps == nil {
		steps = map[string]int{}
	}
	opt, err := json.Marshal(OptimizerCheckpoint{Name: c.Optimizer.Name, Hyper: c.Optimizer.Hyper, Steps: steps})
	if err != nil {
		return fmt.Errorf("train: WriteCheckpoint: optimizer: %w", err)
	}
	config := c.Config
	if len(config) == 0 {
		config = json.RawMessage("{}")
	}
	if !isJSONObject(config) {
		return errors.New("train: WriteCheckpoint: Config is not a JSON object")
	}
	meta["format"] = CheckpointFormat
	meta["format_version"] = strconv.Itoa(CheckpointVersion)
	meta["state"] = string(state)
	meta["optimizer"] = string(opt)
	meta["config"] = string(config)
	if c.RNG != nil {
		meta["rng"] = base64.StdEncoding.EncodeToString(c.RNG)
	}
	if c.GradScaler != nil {
		gs, err := json.Marshal(c.GradScaler)
		if err != nil {
			return fmt.Errorf("train: WriteCheckpoint: grad_scaler: %w", err)
		}
		meta["grad_scaler"] = string(gs)
	}
	if err := nn.WriteSafetensors(w, tensors, meta); err != nil {
		return fmt.Errorf("train: WriteCheckpoint: %w", err)
	}
	return nil
}

// isJSONObject reports whether raw is one JSON object.
func isJSONObject(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}

// ReadCheckpoint reads one checkpoint from r (the whole stream). It
// validates the format strictly: a safetensors stream (the reader's limits
// apply) whose metadata has format "ember.checkpoint", a version at most
// CheckpointVersion, a state and an optimizer entry that decode into
// State and OptimizerCheckpoint without unknown fields, negative counts or
// duplicate keys, base64 rng, a grad_scaler entry (when present) with a
// finite scale > 0 and a growth tracker >= 0, a JSON object as config,
// and optimizer tensors only for parameters with a step count. Errors wrap
// ErrInvalidCheckpoint, or are r's read errors.
func ReadCheckpoint(r io.Reader) (*Checkpoint, error) {
	tensors, meta, err := nn.ReadSafetensors(r)
	if err != nil {
		if errors.Is(err, nn.ErrInvalidSafetensors) {
			return nil, fmt.Errorf("train: %w: %w", ErrInvalidCheckpoint, err)
		}
		return nil, fmt.Errorf("train: reading a checkpoint: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("train: %w: %s", ErrInvalidCheckpoint, fmt.Sprintf(format, args...))
	}
	if meta["format"] != CheckpointFormat {
		if meta == nil || meta["format"] == "" {
			return nil, bad("no checkpoint metadata (a parameter file written by nn.Save? load it with --load or nn.Load)")
		}
		return nil, bad("format %q, want %q", meta["format"], CheckpointFormat)
	}
	v, err := strconv.Atoi(meta["format_version"])
	if err != nil || v < 1 || strconv.Itoa(v) != meta["format_version"] {
		return nil, bad("format_version %q is not a positive integer", meta["format_version"])
	}
	if v > CheckpointVersion {
		return nil, bad("format version %d is newer than this build reads (%d); use a newer ember", v, CheckpointVersion)
	}
	c := &Checkpoint{Model: map[string]*ember.TensorData{}}
	if err := strictJSON(meta["state"], &c.State); err != nil {
		return nil, bad("state: %v", err)
	}
	if err := c.State.check(); err != nil {
		return nil, bad("state: %v", err)
	}
	if err := strictJSON(meta["optimizer"], &c.Optimizer); err != nil {
		return nil, bad("optimizer: %v", err)
	}
	if c.Optimizer.Name == "" {
		return nil, bad("optimizer: no name")
	}
	if c.Optimizer.Steps == nil {
		c.Optimizer.Steps = map[string]int{}
	}
	for p, n := range c.Optimizer.Steps {
		if n < 0 {
			return nil, bad("optimizer: parameter %q has step count %d", p, n)
		}
	}
	if raw, ok := meta["rng"]; ok {
		if c.RNG, err = base64.StdEncoding.Strict().DecodeString(raw); err != nil {
			return nil, bad("rng: %v", err)
		}
		if c.RNG == nil {
			c.RNG = []byte{}
		}
	}
	if raw, ok := meta["grad_scaler"]; ok {
		c.GradScaler = &optim.GradScalerState{}
		if err := strictJSON(raw, c.GradScaler); err != nil {
			return nil, bad("grad_scaler: %v", err)
		}
		if gs := c.GradScaler; !(gs.Scale > 0) || !finite(gs.Scale) || gs.GrowthTracker < 0 {
			return nil, bad("grad_scaler: scale %v and growth tracker %d, want a finite scale > 0 and a tracker >= 0", gs.Scale, gs.GrowthTracker)
		}
	}
	cfg, ok := meta["config"]
	if !ok || !isJSONObject([]byte(cfg)) {
		return nil, bad("config is not a JSON object")
	}
	c.Config = json.RawMessage(cfg)
	for k, v := range meta {
		if !slices.Contains(reservedKeys, k) {
			if c.Metadata == nil {
				c.Metadata = map[string]string{}
			}
			c.Metadata[k] = v
		}
	}
	c.Optimizer.Tensors = map[string]map[string]*ember.TensorData{}
	for name, d := range tensors {
		switch {
		case strings.HasPrefix(name, optimizerPrefix):
			rest := name[len(optimizerPrefix):]
			i := strings.LastIndexByte(rest, '/')
			if i < 0 || i == len(rest)-1 {
				return nil, bad("optimizer tensor %q is not named optimizer/<parameter>/<name>", name)
			}
			p, k := rest[:i], rest[i+1:]
			if _, ok := c.Optimizer.Steps[p]; !ok {
				return nil, bad("optimizer tensor %q of a parameter without a step count", name)
			}
			if c.Optimizer.Tensors[p] == nil {
				c.Optimizer.Tensors[p] = map[string]*ember.TensorData{}
			}
			c.Optimizer.Tensors[p][k] = d
		case strings.HasPrefix(name, bestPrefix):
			if c.Best == nil {
				c.Best = map[string]*ember.TensorData{}
			}
			c.Best[name[len(bestPrefix):]] = d
		default:
			c.Model[name] = d
		}
	}
	return c, nil
}

// strictJSON decodes raw, one JSON value, into v, refusing unknown fields,
// duplicate object keys and trailing data.
func strictJSON(raw string, v any) error {
	if raw == "" {
		return errors.New("missing")
	}
	if err := noDuplicateKeys(json.NewDecoder(strings.NewReader(raw))); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// noDuplicateKeys walks one JSON value and fails on an object with a
// repeated key (encoding/json would keep the last one silently).
func noDuplicateKeys(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				return fmt.Errorf("duplicate key %q", key)
			}
			seen[key] = true
			if err := noDuplicateKeys(dec); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := noDuplicateKeys(dec); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// SaveCheckpoint writes c to the file at path, through a temporary file
// in the same directory renamed into place, so that a crash while saving
// leaves the previous checkpoint intact. Errors are WriteCheckpoint's and
// the file system's, naming the path.
func SaveCheckpoint(path string, c *Checkpoint) error {
	err := atomicfile.Write(path, func(w io.Writer) error { return WriteCheckpoint(w, c) })
	var ce *atomicfile.CreateError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return fmt.Errorf("train: saving checkpoint: %w", ce.Err)
	}
	return &checkpointPathError{verb: "saving checkpoint", path: path, err: err}
}

// LoadCheckpoint reads the checkpoint file at path (ReadCheckpoint).
// Errors wrap ErrInvalidCheckpoint or the file system's (fs.ErrNotExist,
// ...) and name the path.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("train: loading checkpoint: %w", err)
	}
	defer f.Close()
	c, err := ReadCheckpoint(bufio.NewReader(f))
	if err != nil {
		return nil, &checkpointPathError{verb: "checkpoint", path: path, err: err}
	}
	return c, nil
}

// checkpointPathError names the checkpoint file in err's message, which
// reads "train: VERB PATH: ..." without a repeated "train: ".
type checkpointPathError struct {
	verb, path string
	err        error
}

// Error returns the message with the path.
func (e *checkpointPathError) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), "train: ")
	msg = strings.TrimPrefix(msg, "WriteCheckpoint: ")
	return "train: " + e.verb + " " + e.path + ": " + msg
}

// Unwrap returns the error without the path.
func (e *checkpointPathError) Unwrap() error { return e.err }

// loadParameters reads the parameters and buffers in the file at path into
// model, strictly: a parameter file written by nn.Save, or a checkpoint
// (its model's tensors; the optimizer's state and the progress are left
// out), so that Config.Load can evaluate or fine-tune the model of a
// checkpoint. A file that is neither, or does not fit model, gives
// nn.Load's error.
func loadParameters(path string, model nn.Module) error {
	err := nn.Load(path, model)
	if err == nil || !errors.Is(err, nn.ErrMismatch) {
		return err
	}
	c, cerr := LoadCheckpoint(path)
	if cerr != nil {
		return err
	}
	var buf bytes.Buffer
	if werr := nn.SaveSafetensors(&buf, c.Model); werr != nil {
		return fmt.Errorf("train: load %s: %w", path, werr)
	}
	if _, lerr := nn.LoadFrom(&buf, model, nn.LoadOptions{}); lerr != nil {
		return fmt.Errorf("train: load %s (the checkpoint's model): %w", path, lerr)
	}
	return nil
}
