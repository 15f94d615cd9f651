package nn

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/emberml/ember"
)

// ErrMismatch is wrapped by Load's errors when a checkpoint does not fit
// the module (a missing or extra tensor, a wrong shape or dtype).
var ErrMismatch = errors.New("checkpoint does not match the module")

// StateDict returns m's parameters followed by its buffers, by name, the
// set of tensors Save stores (PyTorch's state_dict). It returns an error
// when two entries share a name.
func StateDict(m Module) ([]NamedParam, error) {
	all := append(m.NamedParameters(), NamedBuffers(m)...)
	seen := make(map[string]bool, len(all))
	for _, p := range all {
		if seen[p.Name] {
			return nil, fmt.Errorf("nn: duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
	}
	return all, nil
}

// Save writes m's parameters and buffers (StateDict) to the file at path
// in the safetensors format, named as NamedParameters and NamedBuffers
// name them, so PyTorch's safetensors.torch.load_file reads it as a state
// dict. The file is written to a temporary name in the same directory and
// renamed into place, so a failed Save leaves any previous file intact.
// Errors: duplicate names, a device failing to read a tensor, and file
// system errors.
func Save(path string, m Module) error {
	all, err := StateDict(m)
	if err != nil {
		return err
	}
	tensors := make(map[string]*ember.TensorData, len(all))
	for _, p := range all {
		d, err := p.Param.Value.ToData()
		if err != nil {
			return fmt.Errorf("nn: save %s: tensor %q: %w", path, p.Name, err)
		}
		tensors[p.Name] = d
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("nn: save: %w", err)
	}
	tmp := f.Name()
	// CreateTemp makes the file 0600; a checkpoint is an ordinary data
	// file, readable like one written by os.Create.
	err = f.Chmod(0o644)
	w := bufio.NewWriter(f)
	if err == nil {
		err = SaveSafetensors(w, tensors)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("nn: save %s: %w", path, err)
	}
	return nil
}

// Load reads a safetensors file written by Save (or by PyTorch for the
// same architecture) into m's parameters and buffers. Every tensor of
// StateDict(m) must be present with the same shape and dtype (F32 and
// Flex32 count as equal), and the file must hold no other tensor;
// otherwise Load returns an error wrapping ErrMismatch that names the
// first mismatch (in StateDict order, then extra names in sorted order)
// and modifies nothing. A malformed file gives an error wrapping
// ErrInvalidSafetensors. Loaded parameters are fresh tracked leaves on
// each parameter's device when it is an autodiff device; buffers are
// untracked.
func Load(path string, m Module) error {
	all, err := StateDict(m)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("nn: load: %w", err)
	}
	defer f.Close()
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("nn: load %s: %w: %s", path, ErrMismatch, fmt.Sprintf(format, args...))
	}
	// Read about what the module holds, no more: twice its tensors and
	// its bytes (a file of a few extra or wider tensors still reads, so
	// that the mismatch is named), plus a little.
	var bytes uint64
	for _, p := range all {
		bytes += uint64(p.Param.Value.NumElements()) * uint64(max(p.Param.Value.DType().Size(), 1))
	}
	lim := SafetensorsLimits{MaxTensors: 2*len(all) + 64, MaxDataBytes: 2*bytes + 1<<20}
	tensors, _, err := ReadSafetensorsWith(bufio.NewReader(f), lim)
	if errors.Is(err, ErrSafetensorsLimit) {
		return fmt.Errorf("nn: load %s: %w: the file holds far more than the module's %d tensors of %d bytes: %w", path, ErrMismatch, len(all), bytes, err)
	}
	if err != nil {
		return fmt.Errorf("nn: load %s: %w", path, err)
	}
	want := make(map[string]bool, len(all))
	for _, p := range all {
		want[p.Name] = true
		d, ok := tensors[p.Name]
		if !ok {
			return mismatch("missing tensor %q", p.Name)
		}
		cur := p.Param.Value
		if !slices.Equal(d.Shape, cur.Shape()) {
			return mismatch("tensor %q has shape %v in the file, the module needs %v", p.Name, d.Shape, cur.Shape())
		}
		if normDType(d.DType) != normDType(cur.DType()) {
			return mismatch("tensor %q has dtype %v in the file, the module needs %v", p.Name, d.DType, cur.DType())
		}
	}
	var extra []string
	for name := range tensors {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return mismatch("unexpected tensor %q", extra[0])
	}
	isParam := make(map[*Param]bool)
	for _, p := range m.NamedParameters() {
		isParam[p.Param] = true
	}
	values := make([]*ember.Tensor, len(all))
	for i, p := range all {
		cur := p.Param.Value
		dev := cur.Device()
		d := tensors[p.Name]
		err := ember.Try(func() {
			t := ember.FromData(d, dev.Inner()).Cast(cur.DType()).ToDevice(dev)
			if dev.IsAutodiff() && isParam[p.Param] {
				t = t.RequireGrad()
			}
			values[i] = t
		})
		if err != nil {
			return fmt.Errorf("nn: load %s: tensor %q: %w", path, p.Name, err)
		}
	}
	for i, p := range all {
		p.Param.Value = values[i]
	}
	return nil
}

// normDType treats Flex32 as F32 (both are stored as F32).
func normDType(dt ember.DType) ember.DType {
	if dt == ember.Flex32 {
		return ember.F32
	}
	return dt
}
