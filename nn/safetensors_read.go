package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/emberml/ember"
)

// LoadSafetensors reads a safetensors stream from r (ReadSafetensors
// without the metadata).
func LoadSafetensors(r io.Reader) (map[string]*ember.TensorData, error) {
	t, _, err := ReadSafetensors(r)
	return t, err
}

// stInfo is one header entry as read.
type stInfo struct {
	name  string
	dt    ember.DType
	shape []int
	begin uint64
	end   uint64
}

// ReadSafetensors reads a whole safetensors stream from r and returns its
// tensors by name and its "__metadata__" map (nil when absent). Validation
// is strict: the header must be at most MaxSafetensorsHeader bytes of UTF-8
// JSON starting with '{' (trailing JSON whitespace allowed), with no duplicate or
// unknown keys; each tensor needs exactly "dtype" (BOOL, U8, I8, I16, U16,
// F16, BF16, I32, U32, F32, F64, I64 or U64), "shape" (non-negative
// integers) and "data_offsets" ([begin, end] with end − begin equal to the
// shape's size times the dtype's); sorted by offset, the tensors must cover
// the data block exactly, without gaps or overlaps, and the stream must end
// where the data block does. BOOL bytes must be 0 or 1. Errors wrap
// ErrInvalidSafetensors, or are r's read error.
func ReadSafetensors(r io.Reader) (map[string]*ember.TensorData, map[string]string, error) {
	return ReadSafetensorsWith(r, SafetensorsLimits{})
}

// MaxSafetensorsTensors is the most tensors ReadSafetensors accepts in one
// stream (65536; real checkpoints hold a few thousand per file), so that a
// header of millions of tiny entries is refused after reading that many
// instead of taking seconds and gigabytes to parse.
const MaxSafetensorsTensors = 1 << 16

// SafetensorsLimits bound what ReadSafetensorsWith reads, so that a caller
// who knows what it will load (Load: the module's tensors) spends no more
// work or memory than that on a hostile file. Zero fields take the
// defaults.
type SafetensorsLimits struct {
	// MaxTensors bounds the number of tensors (default
	// MaxSafetensorsTensors); parsing stops at the first entry past it.
	MaxTensors int
	// MaxDataBytes bounds the data block (default: what the offsets
	// declare, read incrementally); a header declaring more is refused
	// before any data is read.
	MaxDataBytes uint64
}

// ErrSafetensorsLimit is wrapped (with ErrInvalidSafetensors) by the error
// of a stream that exceeds a SafetensorsLimits bound.
var ErrSafetensorsLimit = errors.New("safetensors limit exceeded")

// ReadSafetensorsWith is ReadSafetensors within limits l: a stream with
// more tensors than l.MaxTensors, or a data block larger than
// l.MaxDataBytes, gives an error wrapping ErrSafetensorsLimit and
// ErrInvalidSafetensors after reading at most the header.
func ReadSafetensorsWith(r io.Reader, l SafetensorsLimits) (map[string]*ember.TensorData, map[string]string, error) {
	if l.MaxTensors <= 0 {
		l.MaxTensors = MaxSafetensorsTensors
	}
	var n8 [8]byte
	if _, err := io.ReadFull(r, n8[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, invalid("stream shorter than the 8-byte header length")
		}
		return nil, nil, err
	}
	n := binary.LittleEndian.Uint64(n8[:])
	if n > MaxSafetensorsHeader {
		return nil, nil, invalid("header length %d exceeds %d", n, MaxSafetensorsHeader)
	}
	header, err := readExactly(r, n)
	if err != nil {
		return nil, nil, err
	}
	if !utf8.Valid(header) {
		return nil, nil, invalid("header is not valid UTF-8")
	}
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, invalid("header does not start with '{'")
	}
	infos, metadata, err := parseHeader(header, l.MaxTensors)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(infos, func(a, b stInfo) int {
		if a.begin != b.begin {
			return cmpU64(a.begin, b.begin)
		}
		return cmpU64(a.end, b.end)
	})
	var total uint64
	for _, in := range infos {
		if in.begin != total {
			return nil, nil, invalid("tensor %q: data_offsets [%d, %d] leave a gap or overlap (expected begin %d)", in.name, in.begin, in.end, total)
		}
		total = in.end
	}
	if total > math.MaxInt {
		return nil, nil, invalid("data block of %d bytes is too large", total)
	}
	if l.MaxDataBytes > 0 && total > l.MaxDataBytes {
		return nil, nil, limitErr("data block of %d bytes exceeds the %d-byte limit", total, l.MaxDataBytes)
	}
	data, err := readExactly(r, total)
	if err != nil {
		return nil, nil, err
	}
	var one [1]byte
	switch _, err := io.ReadFull(r, one[:]); {
	case err == nil:
		return nil, nil, invalid("trailing bytes after the data block")
	case err != io.EOF:
		return nil, nil, err
	}
	out := make(map[string]*ember.TensorData, len(infos))
	for _, in := range infos {
		b := data[in.begin:in.end:in.end]
		if in.dt == ember.Bool {
			for _, v := range b {
				if v > 1 {
					return nil, nil, invalid("tensor %q: BOOL byte %d is not 0 or 1", in.name, v)
				}
			}
		}
		out[in.name] = &ember.TensorData{Shape: in.shape, DType: in.dt, Bytes: b}
	}
	return out, metadata, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readExactly reads n bytes, growing the buffer as data arrives so that a
// lying length cannot make it allocate more than the stream holds.
func readExactly(r io.Reader, n uint64) ([]byte, error) {
	var buf bytes.Buffer
	k, err := buf.ReadFrom(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, err
	}
	if uint64(k) != n {
		return nil, invalid("stream ends after %d of %d expected bytes", k, n)
	}
	return buf.Bytes(), nil
}

// limitErr is the error of a stream past a SafetensorsLimits bound.
func limitErr(format string, args ...any) error {
	return fmt.Errorf("nn: safetensors: %w: %w: %s", ErrInvalidSafetensors, ErrSafetensorsLimit, fmt.Sprintf(format, args...))
}

// parseHeader decodes the JSON header strictly, refusing more than
// maxTensors tensor entries.
func parseHeader(header []byte, maxTensors int) ([]stInfo, map[string]string, error) {
	keys, vals, err := decodeObject(header, maxTensors+1) // + "__metadata__"
	if errors.Is(err, ErrSafetensorsLimit) {
		return nil, nil, limitErr("more than %d tensors", maxTensors)
	}
	if err != nil {
		return nil, nil, invalid("header: %v", err)
	}
	var infos []stInfo
	var metadata map[string]string
	for _, key := range keys {
		raw := vals[key]
		if key == "__metadata__" {
			if metadata, err = parseMetadata(raw); err != nil {
				return nil, nil, invalid("__metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		if len(infos) == maxTensors {
			return nil, nil, limitErr("more than %d tensors", maxTensors)
		}
		in, err := parseInfo(key, raw)
		if err != nil {
			return nil, nil, err
		}
		infos = append(infos, in)
	}
	return infos, metadata, nil
}

// decodeObject decodes one JSON object (followed only by JSON whitespace)
// into its keys, in order, and raw values, rejecting duplicate keys. Keys
// are matched exactly (case-sensitive), unlike encoding/json's struct
// decoding. It stops with ErrSafetensorsLimit at key maxKeys+1.
func decodeObject(raw []byte, maxKeys int) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("object key is not a string")
		}
		if len(keys) == maxKeys {
			return nil, nil, ErrSafetensorsLimit
		}
		if _, dup := vals[key]; dup {
			return nil, nil, fmt.Errorf("duplicate key %q", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, key)
		vals[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, err
	}
	if rest := bytes.TrimRight(raw[dec.InputOffset():], " \t\r\n"); len(rest) != 0 {
		return nil, nil, errors.New("unexpected bytes after the object")
	}
	return keys, vals, nil
}

// parseMetadata decodes "__metadata__": null or an object of strings.
func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	keys, vals, err := decodeObject(raw, MaxSafetensorsTensors)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		var s string
		if len(vals[k]) == 0 || vals[k][0] != '"' {
			return nil, fmt.Errorf("value of %q is not a string", k)
		}
		if err := json.Unmarshal(vals[k], &s); err != nil {
			return nil, err
		}
		m[k] = s
	}
	return m, nil
}

// parseNaturals decodes a JSON array of non-negative integers (no null,
// fractions, exponents or signs).
func parseNaturals(raw json.RawMessage) ([]uint64, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("not an array")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	v := make([]uint64, len(elems))
	for i, e := range elems {
		n, err := strconv.ParseUint(string(bytes.TrimSpace(e)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("element %d is not a non-negative integer", i)
		}
		v[i] = n
	}
	return v, nil
}

func parseInfo(name string, raw json.RawMessage) (stInfo, error) {
	keys, vals, err := decodeObject(raw, 8) // three known keys; more is an error below
	if err != nil {
		return stInfo{}, invalid("tensor %q: %v", name, err)
	}
	if len(keys) != 3 || vals["dtype"] == nil || vals["shape"] == nil || vals["data_offsets"] == nil {
		return stInfo{}, invalid("tensor %q needs exactly the keys dtype, shape and data_offsets", name)
	}
	var dts string
	if vals["dtype"][0] != '"' || json.Unmarshal(vals["dtype"], &dts) != nil {
		return stInfo{}, invalid("tensor %q: dtype is not a string", name)
	}
	dt, ok := stParseDType(dts)
	if !ok {
		return stInfo{}, invalid("tensor %q: unsupported dtype %q", name, dts)
	}
	ushape, err := parseNaturals(vals["shape"])
	if err != nil {
		return stInfo{}, invalid("tensor %q: shape: %v", name, err)
	}
	offs, err := parseNaturals(vals["data_offsets"])
	if err != nil || len(offs) != 2 {
		return stInfo{}, invalid("tensor %q: data_offsets must be [begin, end]", name)
	}
	shape := make([]int, len(ushape))
	for i, s := range ushape {
		if s > math.MaxInt {
			return stInfo{}, invalid("tensor %q: shape %v is too large", name, ushape)
		}
		shape[i] = int(s)
	}
	size, ok := numBytes(shape, dt.Size())
	if !ok {
		return stInfo{}, invalid("tensor %q: shape %v is too large", name, ushape)
	}
	b, e := offs[0], offs[1]
	if e < b || e-b != size {
		return stInfo{}, invalid("tensor %q: data_offsets [%d, %d] do not hold %d bytes of shape %v %s", name, b, e, size, shape, dts)
	}
	return stInfo{name: name, dt: dt, shape: shape, begin: b, end: e}, nil
}
