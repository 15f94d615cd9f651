package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
	"github.com/emberml/ember/optim"
)

// f32Data returns float32 values as tensor data of the given shape.
func f32Data(shape []int, vals ...float32) *ember.TensorData {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return &ember.TensorData{Shape: shape, DType: ember.F32, Bytes: b}
}

// sampleCheckpoint is a checkpoint with every part filled in.
func sampleCheckpoint() *Checkpoint {
	return &Checkpoint{
		Model: map[string]*ember.TensorData{
			"0.weight": f32Data([]int{2, 2}, 1, -2, 3.5, 0),
			"0.bias":   f32Data([]int{2}, 0.25, -0.5),
		},
		Optimizer: OptimizerCheckpoint{
			Name:  "adam",
			Hyper: map[string]float64{"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0},
			Steps: map[string]int{"0.weight": 300, "0.bias": 300},
			Tensors: map[string]map[string]*ember.TensorData{
				"0.weight": {"exp_avg": f32Data([]int{2, 2}, 0.1, 0.2, 0.3, 0.4), "exp_avg_sq": f32Data([]int{2, 2}, 1, 2, 3, 4)},
				"0.bias":   {"exp_avg": f32Data([]int{2}, 5, 6), "exp_avg_sq": f32Data([]int{2}, 7, 8)},
			},
		},
		Best: map[string]*ember.TensorData{"0.weight": f32Data([]int{2, 2}, 9, 9, 9, 9), "0.bias": f32Data([]int{2}, 8, 8)},
		State: State{Epoch: 7, Step: 300, BestEpoch: 6, Best: 0.125, Wait: 1, EpochStep: 20, EpochLossSum: 31.5, EpochExamples: 160, FirstLoss: 2.3,
			ConsecutiveSkipped: 2, EpochSkipped: 3},
		RNG:        []byte("pcg:0123456789abcdef"),
		GradScaler: &optim.GradScalerState{Scale: 32768, GrowthTracker: 117},
		Config:     json.RawMessage(`{"batch":8,"seed":3}`),
		Metadata:   map[string]string{"note": "after 300 steps"},
	}
}

func encode(t testing.TB, c *Checkpoint) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCheckpoint(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// equalCheckpoints reports whether a and b hold the same data.
func equalCheckpoints(a, b *Checkpoint) bool {
	sameData := func(x, y map[string]*ember.TensorData) bool {
		return maps.EqualFunc(x, y, func(p, q *ember.TensorData) bool {
			return p.DType == q.DType && reflect.DeepEqual(p.Shape, q.Shape) && bytes.Equal(p.Bytes, q.Bytes)
		})
	}
	if !sameData(a.Model, b.Model) || !sameData(a.Best, b.Best) || len(a.Optimizer.Tensors) != len(b.Optimizer.Tensors) {
		return false
	}
	for p, ts := range a.Optimizer.Tensors {
		if !sameData(ts, b.Optimizer.Tensors[p]) {
			return false
		}
	}
	var ca, cb any
	json.Unmarshal(a.Config, &ca)
	json.Unmarshal(b.Config, &cb)
	return a.Optimizer.Name == b.Optimizer.Name && maps.Equal(a.Optimizer.Hyper, b.Optimizer.Hyper) &&
		maps.Equal(a.Optimizer.Steps, b.Optimizer.Steps) && a.State == b.State && bytes.Equal(a.RNG, b.RNG) &&
		(a.RNG == nil) == (b.RNG == nil) && reflect.DeepEqual(ca, cb) && maps.Equal(a.Metadata, b.Metadata) &&
		reflect.DeepEqual(a.GradScaler, b.GradScaler)
}

func TestCheckpointRoundTrip(t *testing.T) {
	c := sampleCheckpoint()
	raw := encode(t, c)
	got, err := ReadCheckpoint(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !equalCheckpoints(c, got) {
		t.Fatalf("read back %+v\nwant %+v", got, c)
	}
	// The file is a safetensors state dict of the model plus extra
	// tensors: a non-strict nn load reads the model part.
	res, err := nn.LoadFrom(bytes.NewReader(raw), nn.NewSequential(nn.NewLinear(2, 2, ember.Flex())), nn.LoadOptions{NonStrict: true})
	if err != nil || len(res.MissingKeys) != 0 || len(res.UnexpectedKeys) != 6 || res.Metadata["format"] != CheckpointFormat {
		t.Fatalf("non-strict nn load of a checkpoint: %+v, %v", res, err)
	}
	// Without RNG, loss scaler, best values and metadata.
	c.RNG, c.GradScaler, c.Best, c.Metadata, c.Config = nil, nil, nil, nil, nil
	got, err = ReadCheckpoint(bytes.NewReader(encode(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	c.Config = json.RawMessage(`{}`)
	if !equalCheckpoints(c, got) {
		t.Fatalf("minimal checkpoint read back %+v", got)
	}
}

// rewrite returns the sample checkpoint's file with metadata edited.
func rewrite(t testing.TB, edit func(meta map[string]string, tensors map[string]*ember.TensorData)) []byte {
	t.Helper()
	tensors, meta, err := nn.ReadSafetensors(bytes.NewReader(encode(t, sampleCheckpoint())))
	if err != nil {
		t.Fatal(err)
	}
	edit(meta, tensors)
	var buf bytes.Buffer
	if err := nn.WriteSafetensors(&buf, tensors, meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadCheckpointErrors(t *testing.T) {
	type edit = func(map[string]string, map[string]*ember.TensorData)
	cases := []struct {
		name string
		edit edit
		want string
	}{
		{"no metadata", func(m map[string]string, _ map[string]*ember.TensorData) { clear(m) }, "no checkpoint metadata"},
		{"format", func(m map[string]string, _ map[string]*ember.TensorData) { m["format"] = "pt" }, `format "pt"`},
		{"newer", func(m map[string]string, _ map[string]*ember.TensorData) { m["format_version"] = "2" }, "newer"},
		{"version text", func(m map[string]string, _ map[string]*ember.TensorData) { m["format_version"] = "01" }, "format_version"},
		{"no state", func(m map[string]string, _ map[string]*ember.TensorData) { delete(m, "state") }, "state: missing"},
		{"state field", func(m map[string]string, _ map[string]*ember.TensorData) { m["state"] = `{"epoch":1,"stepz":2}` }, "stepz"},
		{"state count", func(m map[string]string, _ map[string]*ember.TensorData) { m["state"] = `{"epoch":-1}` }, "negative"},
		{"state order", func(m map[string]string, _ map[string]*ember.TensorData) { m["state"] = `{"step":3,"epoch_step":5}` }, "exceeds"},
		{"state trailing", func(m map[string]string, _ map[string]*ember.TensorData) { m["state"] = `{"epoch":1} {}` }, "trailing"},
		{"duplicate key", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["optimizer"] = `{"name":"adam","name":"sgd","hyper":{},"steps":{}}`
		}, "duplicate key"},
		{"no optimizer name", func(m map[string]string, _ map[string]*ember.TensorData) { m["optimizer"] = `{"hyper":{}}` }, "no name"},
		{"negative step", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["optimizer"] = `{"name":"adam","hyper":{},"steps":{"0.weight":-3}}`
		}, "step count -3"},
		{"orphan tensor", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["optimizer"] = `{"name":"adam","hyper":{},"steps":{"0.weight":1}}`
		}, "without a step count"},
		{"tensor name", func(_ map[string]string, ts map[string]*ember.TensorData) {
			ts["optimizer/flat"] = f32Data([]int{1}, 1)
		}, "optimizer/<parameter>/<name>"},
		{"rng", func(m map[string]string, _ map[string]*ember.TensorData) { m["rng"] = "not base64!" }, "rng"},
		{"config", func(m map[string]string, _ map[string]*ember.TensorData) { m["config"] = `[1,2]` }, "config"},
		{"skipped steps", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["state"] = `{"step":3,"epoch_step":2,"epoch_skipped":3}`
		}, "more skipped steps"},
		{"grad_scaler text", func(m map[string]string, _ map[string]*ember.TensorData) { m["grad_scaler"] = "1024" }, "grad_scaler"},
		{"grad_scaler field", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["grad_scaler"] = `{"scale":1024,"growth":1}`
		}, "growth"},
		{"grad_scaler scale", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["grad_scaler"] = `{"scale":0,"growth_tracker":1}`
		}, "finite scale > 0"},
		{"grad_scaler tracker", func(m map[string]string, _ map[string]*ember.TensorData) {
			m["grad_scaler"] = `{"scale":2,"growth_tracker":-1}`
		}, "tracker >= 0"},
	}
	for _, c := range cases {
		_, err := ReadCheckpoint(bytes.NewReader(rewrite(t, c.edit)))
		if !errors.Is(err, ErrInvalidCheckpoint) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrInvalidCheckpoint naming %q", c.name, err, c.want)
		}
	}
	_, err := ReadCheckpoint(strings.NewReader("not a checkpoint at all"))
	if !errors.Is(err, ErrInvalidCheckpoint) || !errors.Is(err, nn.ErrInvalidSafetensors) {
		t.Errorf("junk: %v", err)
	}
}

func TestWriteCheckpointErrors(t *testing.T) {
	for name, edit := range map[string]func(c *Checkpoint){
		"reserved metadata": func(c *Checkpoint) { c.Metadata["state"] = "x" },
		"model name":        func(c *Checkpoint) { c.Model["optimizer/x"] = f32Data([]int{1}, 1) },
		"best name":         func(c *Checkpoint) { c.Model["best/x"] = f32Data([]int{1}, 1) },
		"orphan tensors":    func(c *Checkpoint) { delete(c.Optimizer.Steps, "0.bias") },
		"tensor name":       func(c *Checkpoint) { c.Optimizer.Tensors["0.bias"]["a/b"] = f32Data([]int{1}, 1) },
		"config":            func(c *Checkpoint) { c.Config = json.RawMessage(`"text"`) },
		"non-finite state":  func(c *Checkpoint) { c.State.EpochLossSum = math.Inf(1) },
		"non-finite scale":  func(c *Checkpoint) { c.GradScaler.Scale = math.NaN() },
		"reserved scaler":   func(c *Checkpoint) { c.Metadata["grad_scaler"] = "{}" },
	} {
		c := sampleCheckpoint()
		edit(c)
		if err := WriteCheckpoint(&bytes.Buffer{}, c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := WriteCheckpoint(&bytes.Buffer{}, nil); err == nil {
		t.Error("nil checkpoint accepted")
	}
}

// FuzzReadCheckpoint checks that the decoder never panics, that every
// error wraps ErrInvalidCheckpoint, and that a checkpoint it accepts is
// written back and read again unchanged.
func FuzzReadCheckpoint(f *testing.F) {
	f.Add(encode(f, sampleCheckpoint()))
	minimal := sampleCheckpoint()
	minimal.RNG, minimal.Best, minimal.Metadata, minimal.GradScaler = nil, nil, nil, nil
	minimal.Optimizer = OptimizerCheckpoint{Name: "sgd", Hyper: map[string]float64{"lr": 0.01}}
	f.Add(encode(f, minimal))
	f.Add(rewrite(f, func(m map[string]string, _ map[string]*ember.TensorData) { m["format_version"] = "2" }))
	f.Add(rewrite(f, func(m map[string]string, _ map[string]*ember.TensorData) { m["rng"] = "" }))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ReadCheckpoint(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrInvalidCheckpoint) {
				t.Fatalf("error %v does not wrap ErrInvalidCheckpoint", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteCheckpoint(&buf, c); err != nil {
			t.Fatalf("rewriting an accepted checkpoint: %v", err)
		}
		again, err := ReadCheckpoint(&buf)
		if err != nil {
			t.Fatalf("reading the rewritten checkpoint: %v", err)
		}
		if !equalCheckpoints(c, again) {
			t.Fatalf("round trip changed the checkpoint:\n%+v\n%+v", c, again)
		}
	})
}
