package data

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrFormat is wrapped by every error that reports malformed input data:
// a bad IDX magic number, an unsupported element type, a zero or
// overflowing dimension, truncated or trailing bytes, a corrupt gzip
// stream, or MNIST files whose counts or shapes disagree. Test with
// errors.Is(err, data.ErrFormat).
var ErrFormat = errors.New("malformed data")

// IDXType is the element type code stored in the third byte of an IDX
// file's magic number, as defined by the IDX format description published
// with MNIST (Y. LeCun, C. Cortes, C. Burges, "THE MNIST DATABASE").
type IDXType byte

// The IDX element types. Multi-byte elements are stored big-endian.
const (
	IDXUint8   IDXType = 0x08 // unsigned byte, 1 byte
	IDXInt8    IDXType = 0x09 // signed byte, 1 byte
	IDXInt16   IDXType = 0x0B // signed 16-bit integer, 2 bytes
	IDXInt32   IDXType = 0x0C // signed 32-bit integer, 4 bytes
	IDXFloat32 IDXType = 0x0D // IEEE-754 binary32, 4 bytes
	IDXFloat64 IDXType = 0x0E // IEEE-754 binary64, 8 bytes
)

// Size returns the size in bytes of one element of type t, or 0 if t is
// not one of the IDX element types.
func (t IDXType) Size() int {
	switch t {
	case IDXUint8, IDXInt8:
		return 1
	case IDXInt16:
		return 2
	case IDXInt32, IDXFloat32:
		return 4
	case IDXFloat64:
		return 8
	}
	return 0
}

// String returns the type's name, e.g. "uint8", or "IDXType(0x..)" for an
// unknown code.
func (t IDXType) String() string {
	switch t {
	case IDXUint8:
		return "uint8"
	case IDXInt8:
		return "int8"
	case IDXInt16:
		return "int16"
	case IDXInt32:
		return "int32"
	case IDXFloat32:
		return "float32"
	case IDXFloat64:
		return "float64"
	}
	return fmt.Sprintf("IDXType(%#02x)", byte(t))
}

// MaxIDXBytes bounds the payload size ReadIDX accepts (4 GiB), so that a
// corrupt header cannot request an unbounded allocation. The payload is
// read incrementally, so memory is only committed as bytes actually
// arrive.
const MaxIDXBytes = 4 << 30

// maxIDXDims bounds the rank of an IDX array. The format stores the rank
// in one byte; real files use 1 to 4 dimensions.
const maxIDXDims = 16

// IDX is an n-dimensional array read from an IDX file.
type IDX struct {
	// Type is the element type.
	Type IDXType
	// Dims is the shape, outermost first (e.g. [10000 28 28] for the
	// MNIST test images). Every dimension is at least 1.
	Dims []int
	// Data holds the elements row-major, exactly
	// product(Dims)*Type.Size() bytes, in the file's big-endian byte
	// order. For IDXUint8 (MNIST) each byte is one element.
	Data []byte
}

// Len returns the number of elements, the product of Dims.
func (x *IDX) Len() int {
	n := 1
	for _, d := range x.Dims {
		n *= d
	}
	return n
}

// ReadIDXFile reads the IDX file at path, decompressing it first if it
// starts with the gzip magic bytes (0x1f 0x8b), whatever its name. Errors
// name the file; format errors wrap ErrFormat, a missing file wraps
// fs.ErrNotExist.
func ReadIDXFile(path string) (*IDX, error) { return ReadIDXFileWith(path, IDXLimits{}) }

// ReadIDXFileWith is ReadIDXFile within limits l (see ReadIDXWith).
func ReadIDXFileWith(path string, l IDXLimits) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return ReadIDXWith(f, path, l)
}

// ReadIDX reads one IDX array from r, which may be gzip-compressed
// (detected by its first two bytes) or plain. name identifies the source
// in error messages (usually the file path).
//
// The header is validated: the first two magic bytes must be zero, the
// type code one of the IDXType constants, the rank between 1 and 16, every
// dimension at least 1, and the payload at most MaxIDXBytes. The payload
// must then be exactly product(dims)*elementSize bytes: a short payload is
// reported as truncated and bytes after it as trailing data. All such
// errors, and gzip corruption, wrap ErrFormat.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	return ReadIDXWith(r, name, IDXLimits{})
}

// IDXLimits bound what ReadIDXWith reads, so that a caller who knows what
// it will load spends no more memory than that on a file that lies (a
// small gzip stream can inflate to MaxIDXBytes).
type IDXLimits struct {
	// MaxBytes bounds the payload (0: MaxIDXBytes).
	MaxBytes int64
	// Check, when set, is called with the header's element type and
	// dimensions before any payload byte is read; an error it returns
	// is returned wrapped in a format error.
	Check func(t IDXType, dims []int) error
}

// ReadIDXWith is ReadIDX within limits l: the payload is refused before it
// is read when it exceeds l.MaxBytes or l.Check rejects the header. While
// it reads, the payload buffer grows to exactly the declared size (at most
// 1.5 times it held at once), committing memory only as bytes arrive.
func ReadIDXWith(r io.Reader, name string, l IDXLimits) (*IDX, error) {
	if l.MaxBytes <= 0 || l.MaxBytes > MaxIDXBytes {
		l.MaxBytes = MaxIDXBytes
	}
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, formatErr(name, "gzip header: %v", err)
		}
		defer zr.Close()
		src = zr
	}
	return readIDX(src, name, l)
}

// readIDX parses the uncompressed IDX stream.
func readIDX(r io.Reader, name string, l IDXLimits) (*IDX, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, readErr(name, "magic number", err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, formatErr(name, "bad magic number %#08x: first two bytes must be zero", binary.BigEndian.Uint32(magic[:]))
	}
	t := IDXType(magic[2])
	if t.Size() == 0 {
		return nil, formatErr(name, "unknown element type code %#02x", magic[2])
	}
	rank := int(magic[3])
	if rank < 1 || rank > maxIDXDims {
		return nil, formatErr(name, "rank %d outside 1..%d", rank, maxIDXDims)
	}
	hdr := make([]byte, 4*rank)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, readErr(name, "dimensions", err)
	}
	dims := make([]int, rank)
	size := int64(t.Size())
	for i := range dims {
		d := binary.BigEndian.Uint32(hdr[4*i:])
		if d == 0 {
			return nil, formatErr(name, "dimension %d is zero", i)
		}
		if int64(d) > l.MaxBytes/size {
			return nil, formatErr(name, "dimension %d (%d) makes the data exceed the %d-byte limit", i, d, l.MaxBytes)
		}
		dims[i] = int(d)
		size *= int64(d)
	}
	if l.Check != nil {
		if err := l.Check(t, dims); err != nil {
			return nil, formatErr(name, "%v %v: %v", t, dims, err)
		}
	}
	data, n, err := readGrowing(r, size)
	if err != nil {
		return nil, readErr(name, "data", err)
	}
	if n < size {
		return nil, formatErr(name, "truncated: dims %v of %v need %d data bytes, got %d", dims, t, size, n)
	}
	// Reading to EOF also verifies a gzip stream's checksum and length.
	var extra [1]byte
	switch k, err := io.ReadFull(r, extra[:]); {
	case k > 0:
		return nil, formatErr(name, "trailing data after %d data bytes", size)
	case err != io.EOF:
		return nil, readErr(name, "end of data", err)
	}
	return &IDX{Type: t, Dims: dims, Data: data}, nil
}

// readGrowing reads up to size bytes of r into a buffer that starts at
// 1 MiB and doubles, capped at size, so that a header that lies costs
// only the bytes present and the final buffer has no slack. It returns
// the buffer and the bytes read (fewer than size at EOF).
func readGrowing(r io.Reader, size int64) ([]byte, int64, error) {
	buf := make([]byte, min(size, 1<<20))
	var n int64
	for n < size {
		if n == int64(len(buf)) {
			grown := make([]byte, min(size, 2*n))
			copy(grown, buf)
			buf = grown
		}
		k, err := r.Read(buf[n:])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, n, err
		}
	}
	return buf[:n], n, nil
}

// formatErr returns an error wrapping ErrFormat that names the source.
func formatErr(name, format string, args ...any) error {
	return fmt.Errorf("data: %s: %w: %s", name, ErrFormat, fmt.Sprintf(format, args...))
}

// readErr classifies an error met while reading part of the stream:
// a premature end or gzip corruption is a format error, anything else
// (an I/O failure) is passed through, wrapped with the source name.
func readErr(name, part string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return formatErr(name, "truncated while reading %s", part)
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || isFlateError(err) {
		return formatErr(name, "corrupt gzip stream while reading %s: %v", part, err)
	}
	return fmt.Errorf("data: %s: reading %s: %w", name, part, err)
}

// isFlateError reports whether err is a DEFLATE decoding error.
func isFlateError(err error) bool {
	var ce flate.CorruptInputError
	var ie flate.InternalError
	return errors.As(err, &ce) || errors.As(err, &ie)
}
