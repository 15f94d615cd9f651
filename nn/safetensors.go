package nn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/emberml/ember"
)

// The safetensors format (huggingface/safetensors): an 8-byte little-endian
// header length n, n bytes of a UTF-8 JSON object
//
//	{"__metadata__":{"k":"v"},"name":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}
//
// padded with spaces to a multiple of 8 bytes, then the tensors' bytes,
// row-major and little-endian. data_offsets are relative to the start of
// the data block. The reference writer orders tensors by descending dtype
// (in its enum order U64, I64, F64, F32, U32, I32, BF16, F16, U16, I16, I8,
// U8, BOOL), then by name, lays the data out in that order and writes the
// header entries in the same order after "__metadata__"; WriteSafetensors
// does exactly the same, so its files are byte-identical to Python's
// safetensors.torch.save_file for the same tensors.

// ErrInvalidSafetensors is wrapped by every error about a malformed
// safetensors stream (bad header, offsets, sizes or dtypes).
var ErrInvalidSafetensors = errors.New("invalid safetensors data")

// MaxSafetensorsHeader is the largest header accepted by the reader, in
// bytes (100 MB, the reference implementation's limit).
const MaxSafetensorsHeader = 100_000_000

// stDTypes lists the supported dtypes in the reference enum order; writers
// sort by descending position.
var stDTypes = []struct {
	name string
	dt   ember.DType
}{
	{"BOOL", ember.Bool}, {"U8", ember.U8}, {"I8", ember.I8}, {"I16", ember.I16},
	{"U16", ember.U16}, {"F16", ember.F16}, {"BF16", ember.BF16}, {"I32", ember.I32},
	{"U32", ember.U32}, {"F32", ember.F32}, {"F64", ember.F64}, {"I64", ember.I64},
	{"U64", ember.U64},
}

// stRank returns dt's position in the reference enum order and its name.
// Flex32 is stored as F32.
func stRank(dt ember.DType) (int, string, bool) {
	if dt == ember.Flex32 {
		dt = ember.F32
	}
	for i, d := range stDTypes {
		if d.dt == dt {
			return i, d.name, true
		}
	}
	return 0, "", false
}

func stParseDType(s string) (ember.DType, bool) {
	for _, d := range stDTypes {
		if d.name == s {
			return d.dt, true
		}
	}
	return 0, false
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("nn: safetensors: %w: %s", ErrInvalidSafetensors, fmt.Sprintf(format, args...))
}

// SaveSafetensors writes tensors to w in the safetensors format without a
// "__metadata__" entry (WriteSafetensors with nil metadata).
func SaveSafetensors(w io.Writer, tensors map[string]*ember.TensorData) error {
	return WriteSafetensors(w, tensors, nil)
}

// WriteSafetensors writes tensors and optional string metadata to w in the
// safetensors format, laid out like the reference writer (see the package
// comment on the format). Flex32 tensors are written as F32. It returns an
// error wrapping ErrInvalidSafetensors for a non-UTF-8 name, the
// reserved name "__metadata__", a nil tensor, an invalid dtype or bytes
// that do not match shape and dtype, and w's error when writing fails.
func WriteSafetensors(w io.Writer, tensors map[string]*ember.TensorData, metadata map[string]string) error {
	type entry struct {
		name string
		rank int
		dt   string
		d    *ember.TensorData
	}
	entries := make([]entry, 0, len(tensors))
	for name, d := range tensors {
		if name == "__metadata__" || !utf8.ValidString(name) {
			return invalid("bad tensor name %q", name)
		}
		if d == nil {
			return invalid("tensor %q is nil", name)
		}
		rank, dt, ok := stRank(d.DType)
		if !ok {
			return invalid("tensor %q has unsupported dtype %v", name, d.DType)
		}
		n, ok := numBytes(d.Shape, d.DType.Size())
		if !ok || n != uint64(len(d.Bytes)) {
			return invalid("tensor %q: %d bytes do not match shape %v of %v", name, len(d.Bytes), d.Shape, d.DType)
		}
		entries = append(entries, entry{name, rank, dt, d})
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return invalid("metadata %q is not valid UTF-8", k)
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.rank != b.rank {
			return b.rank - a.rank
		}
		return strings.Compare(a.name, b.name)
	})

	var h bytes.Buffer
	h.WriteByte('{')
	if metadata != nil {
		h.WriteString(`"__metadata__":{`)
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeJSONString(&h, k)
			h.WriteByte(':')
			writeJSONString(&h, metadata[k])
		}
		h.WriteByte('}')
		if len(entries) > 0 {
			h.WriteByte(',')
		}
	}
	var off uint64
	for i, e := range entries {
		if i > 0 {
			h.WriteByte(',')
		}
		writeJSONString(&h, e.name)
		h.WriteString(`:{"dtype":"`)
		h.WriteString(e.dt)
		h.WriteString(`","shape":[`)
		for j, s := range e.d.Shape {
			if j > 0 {
				h.WriteByte(',')
			}
			h.WriteString(strconv.Itoa(s))
		}
		end := off + uint64(len(e.d.Bytes))
		fmt.Fprintf(&h, `],"data_offsets":[%d,%d]}`, off, end)
		off = end
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}

	bw := bufio.NewWriter(w)
	bw.Write(binary.LittleEndian.AppendUint64(nil, uint64(h.Len())))
	bw.Write(h.Bytes())
	for _, e := range entries {
		bw.Write(e.d.Bytes)
	}
	return bw.Flush()
}

// writeJSONString writes s as a JSON string the way serde_json (the
// reference writer's encoder) does: only '"', '\\' and control characters
// are escaped; other characters are written as UTF-8.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// numBytes returns product(shape)·size, or false for a negative size or
// overflow of int.
func numBytes(shape []int, size int) (uint64, bool) {
	n := uint64(size)
	for _, s := range shape {
		if s < 0 {
			return 0, false
		}
		if s != 0 && n > math.MaxInt/uint64(s) {
			return 0, false
		}
		n *= uint64(s)
	}
	return n, true
}
