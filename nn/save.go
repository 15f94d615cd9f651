package nn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/emberml/ember"
	"github.com/emberml/ember/internal/atomicfile"
)

// ErrMismatch is wrapped by the load functions' errors when a file or map
// does not fit the module (a missing or extra tensor in strict mode, a
// wrong shape or dtype in any mode).
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

// LoadOptions configures LoadFile, LoadFrom and LoadStateDict. The zero
// value is strict, as Load is.
type LoadOptions struct {
	// NonStrict loads the tensors that the module and the source have in
	// common and reports the others in LoadResult instead of failing
	// (PyTorch's load_state_dict(strict=False)): a module tensor the
	// source lacks keeps its value, a source tensor the module lacks is
	// ignored. A shared name of another shape is an error in either mode,
	// as in PyTorch; so is one of another dtype, which PyTorch's
	// load_state_dict would convert silently (convert the module with
	// ToDType, or the tensors with Tensor.Cast and LoadStateDict).
	NonStrict bool
}

// LoadResult is what a load found besides the tensors it loaded
// (PyTorch's missing_keys and unexpected_keys).
type LoadResult struct {
	// MissingKeys lists the module's tensors the source lacks, in
	// StateDict order (empty after a strict load).
	MissingKeys []string
	// UnexpectedKeys lists the source's tensors the module lacks, sorted
	// (empty after a strict load).
	UnexpectedKeys []string
	// Metadata is the file's "__metadata__" map (nil when it has none or
	// the source is a map).
	Metadata map[string]string
}

// Save writes m's parameters and buffers to the file at path: SaveFile
// without metadata.
func Save(path string, m Module) error { return SaveFile(path, m, nil) }

// SaveFile writes m's parameters and buffers (StateDict) to the file at
// path in the safetensors format, named as NamedParameters and
// NamedBuffers name them, with metadata (string pairs, nil for none) as
// the file's "__metadata__", so PyTorch's safetensors.torch.load_file
// reads it as a state dict. The file is written to a temporary name in
// the same directory and renamed into place, so a failed save leaves any
// previous file intact. Errors: duplicate names, a device failing to read
// a tensor, metadata that is not UTF-8, and file system errors.
func SaveFile(path string, m Module, metadata map[string]string) error {
	return writeFileAtomic(path, func(w io.Writer) error { return SaveTo(w, m, metadata) })
}

// SaveTo writes m's parameters and buffers (StateDict) and metadata (nil
// for none) to w as one safetensors stream, as SaveFile writes a file.
func SaveTo(w io.Writer, m Module, metadata map[string]string) error {
	all, err := StateDict(m)
	if err != nil {
		return err
	}
	tensors := make(map[string]*ember.Tensor, len(all))
	for _, p := range all {
		tensors[p.Name] = p.Param.Value
	}
	return SaveTensors(w, tensors, metadata)
}

// SaveTensors writes tensors by name (on any device; their values are read
// back to the host) and metadata (nil for none) to w as one safetensors
// stream, laid out as WriteSafetensors lays it out. Errors: a nil tensor,
// a name or metadata that WriteSafetensors refuses, a device failing to
// read a tensor, and w's errors.
func SaveTensors(w io.Writer, tensors map[string]*ember.Tensor, metadata map[string]string) error {
	data := make(map[string]*ember.TensorData, len(tensors))
	for _, name := range slices.Sorted(maps.Keys(tensors)) {
		t := tensors[name]
		if t == nil {
			return fmt.Errorf("nn: save: tensor %q is nil", name)
		}
		d, err := t.ToData()
		if err != nil {
			return fmt.Errorf("nn: save: tensor %q: %w", name, err)
		}
		data[name] = d
	}
	return WriteSafetensors(w, data, metadata)
}

// writeFileAtomic writes the file at path through write with
// atomicfile.Write, so that readers never see a partial file and a
// failure leaves any previous file intact. Errors name the path.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	err := atomicfile.Write(path, write)
	var ce *atomicfile.CreateError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		// Name the file asked for, not the temporary one.
		err = ce.Err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("nn: save %s: %w", path, err)
	}
	return &pathError{"nn: save " + path + ": ", []string{"nn: save: ", "nn: "}, err}
}

// Load reads a safetensors file written by Save (or by PyTorch for the
// same architecture) into m's parameters and buffers: LoadFile in strict
// mode. Every tensor of StateDict(m) must be present with the same shape
// and dtype (F32 and Flex32 count as equal), and the file must hold no
// other tensor; otherwise Load returns an error wrapping ErrMismatch that
// names the missing and unexpected tensors (or the first tensor of
// another shape or dtype) and modifies nothing. A malformed file gives an
// error wrapping ErrInvalidSafetensors. Loaded parameters are fresh
// tracked leaves on each parameter's device when it is an autodiff
// device; buffers are untracked.
func Load(path string, m Module) error {
	_, err := LoadFile(path, m, LoadOptions{})
	return err
}

// LoadFile reads the safetensors file at path into m's parameters and
// buffers as Load does, in the mode opts selects, and returns what it
// found (the missing and unexpected tensors of a non-strict load, the
// file's metadata). Errors are Load's.
func LoadFile(path string, m Module, opts LoadOptions) (*LoadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nn: load: %w", err)
	}
	defer f.Close()
	res, err := loadFrom(bufio.NewReader(f), m, opts)
	if err != nil {
		return nil, &pathError{"nn: load " + path + ": ", []string{"nn: load: ", "nn: "}, err}
	}
	return res, nil
}

// LoadFrom reads one safetensors stream from r into m's parameters and
// buffers as LoadFile reads a file.
func LoadFrom(r io.Reader, m Module, opts LoadOptions) (*LoadResult, error) {
	return loadFrom(r, m, opts)
}

// loadFrom is LoadFrom; its errors start with "nn: load: " and wrap the
// sentinels with %w.
func loadFrom(r io.Reader, m Module, opts LoadOptions) (*LoadResult, error) {
	all, err := StateDict(m)
	if err != nil {
		return nil, err
	}
	// In strict mode read about what the module holds, no more: twice its
	// tensors and its bytes (a file of a few extra or wider tensors still
	// reads, so that the mismatch is named), plus a little.
	var lim SafetensorsLimits
	var bytes uint64
	if !opts.NonStrict {
		for _, p := range all {
			bytes += uint64(p.Param.Value.NumElements()) * uint64(max(p.Param.Value.DType().Size(), 1))
		}
		lim = SafetensorsLimits{MaxTensors: 2*len(all) + 64, MaxDataBytes: 2*bytes + 1<<20}
	}
	tensors, metadata, err := ReadSafetensorsWith(r, lim)
	if errors.Is(err, ErrSafetensorsLimit) {
		return nil, fmt.Errorf("nn: load: %w: the source holds far more than the module's %d tensors of %d bytes: %w", ErrMismatch, len(all), bytes, err)
	}
	if err != nil {
		return nil, &pathError{"nn: load: ", []string{"nn: "}, err}
	}
	src := make(map[string]source, len(tensors))
	for name, d := range tensors {
		src[name] = source{shape: d.Shape, dtype: d.DType, make: func(dev ember.Device) *ember.Tensor { return ember.FromData(d, dev) }}
	}
	res, err := assign(all, m, src, opts)
	if err != nil {
		return nil, err
	}
	res.Metadata = metadata
	return res, nil
}

// LoadTensors reads one safetensors stream from r and returns its tensors
// by name, placed on dev with their stored dtypes, and its metadata (nil
// when absent). Errors: those of ReadSafetensors, and dev's when it
// cannot hold a tensor.
func LoadTensors(r io.Reader, dev ember.Device) (map[string]*ember.Tensor, map[string]string, error) {
	data, metadata, err := ReadSafetensors(r)
	if err != nil {
		return nil, nil, &pathError{"nn: load: ", []string{"nn: "}, err}
	}
	out := make(map[string]*ember.Tensor, len(data))
	for _, name := range slices.Sorted(maps.Keys(data)) {
		d := data[name]
		if err := ember.Try(func() { out[name] = ember.FromData(d, dev) }); err != nil {
			return nil, nil, fmt.Errorf("nn: load: tensor %q: %w", name, err)
		}
	}
	return out, metadata, nil
}

// LoadStateDict puts tensors (by StateDict name, on any device) into m's
// parameters and buffers, in the mode opts selects: PyTorch's
// Module.load_state_dict. Each tensor is cast to its entry's dtype (only
// F32 and Flex32 may differ) and moved to its device; parameters become
// fresh tracked leaves on an autodiff device. Errors are those of Load,
// and nothing is modified when one is returned.
func LoadStateDict(m Module, tensors map[string]*ember.Tensor, opts LoadOptions) (*LoadResult, error) {
	all, err := StateDict(m)
	if err != nil {
		return nil, err
	}
	src := make(map[string]source, len(tensors))
	for name, t := range tensors {
		if t == nil {
			return nil, fmt.Errorf("nn: load: tensor %q is nil", name)
		}
		src[name] = source{shape: t.Shape(), dtype: t.DType(), make: func(dev ember.Device) *ember.Tensor { return t.Detach().ToDevice(dev) }}
	}
	return assign(all, m, src, opts)
}

// source is one named tensor of a load: its shape, dtype and a maker of
// its value on an inner device.
type source struct {
	shape []int
	dtype ember.DType
	make  func(dev ember.Device) *ember.Tensor
}

// maxNamed is the most names a mismatch error lists of each kind.
const maxNamed = 8

// assign checks src against the module's entries all and, when it fits,
// sets every entry src has.
func assign(all []NamedParam, m Module, src map[string]source, opts LoadOptions) (*LoadResult, error) {
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("nn: load: %w: %s", ErrMismatch, fmt.Sprintf(format, args...))
	}
	res := &LoadResult{}
	want := make(map[string]bool, len(all))
	for _, p := range all {
		want[p.Name] = true
		s, ok := src[p.Name]
		if !ok {
			res.MissingKeys = append(res.MissingKeys, p.Name)
			continue
		}
		cur := p.Param.Value
		if !slices.Equal(s.shape, cur.Shape()) {
			return nil, mismatch("tensor %q has shape %v in the source, the module needs %v", p.Name, s.shape, cur.Shape())
		}
		if normDType(s.dtype) != normDType(cur.DType()) {
			return nil, mismatch("tensor %q has dtype %v in the source, the module needs %v", p.Name, s.dtype, cur.DType())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(src)) {
		if !want[name] {
			res.UnexpectedKeys = append(res.UnexpectedKeys, name)
		}
	}
	if !opts.NonStrict && (len(res.MissingKeys) > 0 || len(res.UnexpectedKeys) > 0) {
		var parts []string
		if len(res.MissingKeys) > 0 {
			parts = append(parts, "missing "+nameList("tensor", res.MissingKeys))
		}
		if len(res.UnexpectedKeys) > 0 {
			parts = append(parts, "unexpected "+nameList("tensor", res.UnexpectedKeys))
		}
		return nil, mismatch("%s (LoadOptions.NonStrict loads the tensors in common)", strings.Join(parts, "; "))
	}
	isParam := make(map[*Param]bool)
	for _, p := range m.NamedParameters() {
		isParam[p.Param] = true
	}
	values := make([]*ember.Tensor, len(all))
	for i, p := range all {
		s, ok := src[p.Name]
		if !ok {
			continue
		}
		cur := p.Param.Value
		dev := cur.Device()
		err := ember.Try(func() {
			t := s.make(dev.Inner()).Cast(cur.DType()).ToDevice(dev)
			if dev.IsAutodiff() && isParam[p.Param] {
				t = t.RequireGrad()
			}
			values[i] = t
		})
		if err != nil {
			return nil, fmt.Errorf("nn: load: tensor %q: %w", p.Name, err)
		}
	}
	for i, p := range all {
		if values[i] != nil {
			p.Param.Value = values[i]
		}
	}
	return res, nil
}

// nameList formats names as `tensor "a"` or `tensors "a", "b" and 3 more`.
func nameList(what string, names []string) string {
	q := make([]string, 0, min(len(names), maxNamed))
	for _, n := range names[:min(len(names), maxNamed)] {
		q = append(q, fmt.Sprintf("%q", n))
	}
	s := what + " " + strings.Join(q, ", ")
	if len(names) > 1 {
		s = what + "s " + strings.Join(q, ", ")
	}
	if len(names) > maxNamed {
		s += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	return s
}

// pathError is err with the file's path (or the operation) in its text:
// its leading prefix (the first of trim that it has) replaced by head, so
// that the message reads "nn: load model.safetensors: ..." or "nn: load:
// safetensors: ..." without a repeated "nn: ".
type pathError struct {
	head string
	trim []string
	err  error
}

// Error returns the message with the path.
func (e *pathError) Error() string {
	msg := e.err.Error()
	for _, t := range e.trim {
		if rest, ok := strings.CutPrefix(msg, t); ok {
			return e.head + rest
		}
	}
	return e.head + msg
}

// Unwrap returns the error without the path.
func (e *pathError) Unwrap() error { return e.err }

// normDType treats Flex32 as F32 (both are stored as F32).
func normDType(dt ember.DType) ember.DType {
	if dt == ember.Flex32 {
		return ember.F32
	}
	return dt
}
