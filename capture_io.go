package ember

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/emberml/ember/ir"
)

// DefaultMaxGraphBytes is the most bytes ReadGraph reads: 1 GiB, room for
// the parameters of a model of some 250 million f32 values. ReadGraphWith
// takes another limit.
const DefaultMaxGraphBytes = 1 << 30

// GraphReadOptions bound what ReadGraphWith reads.
type GraphReadOptions struct {
	// MaxBytes is the most bytes read from the reader; 0 means
	// DefaultMaxGraphBytes.
	MaxBytes int64
}

// WriteTo writes the graph to w in package ir's versioned CBOR encoding
// (ir.MarshalGraph: the envelope [ir.FormatVersion, type, graph], values
// included) and returns the number of bytes written (io.WriterTo). It
// fails, writing nothing, for a graph whose inputs, values or records are
// structurally invalid (an error wrapping ir.ErrFormat), and returns w's
// error.
func (g *CapturedGraph) WriteTo(w io.Writer) (int64, error) {
	if g == nil {
		return 0, fmt.Errorf("ember: graph write: %w: nil *CapturedGraph", ir.ErrFormat)
	}
	b, err := ir.MarshalGraph(g.Graph())
	if err != nil {
		return 0, fmt.Errorf("ember: graph write: %w", err)
	}
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return int64(n), err
}

// ReadGraph reads a graph written by WriteTo, at most
// DefaultMaxGraphBytes, and validates it (ir.Graph.Validate), so the
// result is ready to Run. See ReadGraphWith for the errors.
func ReadGraph(r io.Reader) (*CapturedGraph, error) {
	return ReadGraphWith(r, GraphReadOptions{})
}

// ReadGraphWith is ReadGraph with a size limit. Errors: one wrapping
// ErrGraphTooLarge when r holds more than the limit, ir.ErrFormat for
// malformed input (or ir.ErrVersion for another format version; the
// decoder is hardened against untrusted input and allocates in proportion
// to it), ErrInvalidGraph for a graph whose ops do not fit together, and
// r's own read errors.
func ReadGraphWith(r io.Reader, opt GraphReadOptions) (*CapturedGraph, error) {
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxGraphBytes
	}
	read := limit
	if read < math.MaxInt64 {
		read++ // one byte more tells a file of exactly the limit from a longer one
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, read))
	if err != nil {
		return nil, fmt.Errorf("ember: graph read: %w", err)
	}
	if n > limit {
		return nil, fmt.Errorf("ember: graph read: %w (%d bytes)", ErrGraphTooLarge, limit)
	}
	g, err := ir.UnmarshalGraph(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("ember: graph read: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("ember: graph read: %w", err)
	}
	return graphFrom(g), nil
}
