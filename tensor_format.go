package ember

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// printLineWidth is the line width of a print (PyTorch's linewidth).
const printLineWidth = 80

// printPrecision is the number of decimals floats print with (PyTorch's
// precision).
const printPrecision = 4

// String prints the tensor as PyTorch's repr does, with its device:
//
//	tensor([[1., 2.],
//	        [3., 4.]], device=cpu)
//	tensor([0.1000, 2.5000], device=cuda:0, requires_grad=true)
//	tensor([1, 2, 3], dtype=i32, device=cpu)
//
// Floats print in one format for the whole tensor, chosen as PyTorch's
// formatter chooses it: "1." when every finite value is an integer,
// scientific notation ("1.0000e-05") when the finite non-zero magnitudes
// span more than a factor of 1000 or reach past 1e8 or below 1e-4, else
// four decimals; every element is padded to one width, and rows wrap at
// 80 columns. The dtype is shown unless it is F32, I64 or Bool; a tracked
// tensor shows requires_grad=true. A tensor of more than
// ir.SummaryThreshold elements prints summarized, each long axis showing
// its first and last entries around "..." (see ir.SummaryEdge), with its
// shape; only the elements shown are read from the device, so a broadcast
// view or an empty tensor of any size prints without materializing it.
// A tensor whose data cannot be read (a recorded tensor of a capture
// device) prints its shape, dtype and device and the reason; a nil or
// zero *Tensor prints "<nil>".
func (x *Tensor) String() string { return x.format(-1, 0) }

// Format implements fmt.Formatter: %v and %s print String; a precision
// (%.2v) sets the number of decimals of floats; %f, %e and %g print every
// float in that notation with the given precision (default 4), e.g.
// fmt.Sprintf("%.2f", x). Other verbs print fmt's %!verb(...) error form.
// A nil State writes nothing.
func (x *Tensor) Format(f fmt.State, verb rune) {
	if f == nil {
		return
	}
	prec, ok := f.Precision()
	if !ok {
		prec = -1
	}
	switch verb {
	case 'v', 's':
		fmt.Fprint(f, x.format(prec, 0))
	case 'f', 'e', 'g':
		fmt.Fprint(f, x.format(prec, verb))
	default:
		fmt.Fprintf(f, "%%!%c(*ember.Tensor=%s)", verb, x.format(-1, 0))
	}
}

// format is String with prec decimals (-1: the default) and, when mode is
// 'f', 'e' or 'g', that notation for every float.
func (x *Tensor) format(prec int, mode rune) string {
	if x == nil || x.t == nil {
		return "<nil>"
	}
	shape := x.shape()
	e := ir.SummaryEdge(shape)
	var suffix []string
	if dt := x.DType(); dt != F32 && dt != I64 && dt != Bool {
		suffix = append(suffix, "dtype="+dt.String())
	}
	n := backend.NumElements(shape)
	if n == 0 || e != 0 {
		suffix = append(suffix, fmt.Sprintf("shape=%v", shape))
	}
	suffix = append(suffix, "device="+x.dev.String())
	if x.IsTracked() {
		suffix = append(suffix, "requires_grad=true")
	}
	tail := ", " + strings.Join(suffix, ", ") + ")"
	switch {
	case n == 0:
		return "tensor([]" + tail
	case e < 0:
		return "tensor(..." + tail
	}
	d, err := x.summaryData(e)
	if err != nil {
		return fmt.Sprintf("tensor(<%v>%s", err, tail)
	}
	elems := formatElems(d, prec, mode)
	var sb strings.Builder
	sb.WriteString("tensor(")
	elided := shape
	if e == 0 {
		elided = nil
	}
	ir.WriteNested(&sb, d.Shape, func(off int) string { return elems[off] }, elided, e, len("tensor("), printLineWidth)
	sb.WriteString(tail)
	return sb.String()
}

// formatElems formats every element of d, padded to the width of the
// longest finite one.
func formatElems(d *TensorData, prec int, mode rune) []string {
	n := d.NumElements()
	out := make([]string, n)
	switch {
	case d.DType == Bool:
		for i, v := range ir.As[bool](d) {
			out[i] = strconv.FormatBool(v)
		}
	case d.DType.IsFloat():
		vals := ir.As[float64](d)
		format := floatFormat(vals, prec, mode)
		for i, v := range vals {
			out[i] = format(v)
		}
	case d.DType == U64:
		for i, v := range ir.As[uint64](d) {
			out[i] = strconv.FormatUint(v, 10)
		}
	default:
		for i, v := range ir.As[int64](d.Convert(I64)) {
			out[i] = strconv.FormatInt(v, 10)
		}
	}
	// One width for all, that of the longest finite value (PyTorch pads
	// nan and inf to it but does not widen for them).
	w := 0
	for _, s := range out {
		if t := strings.TrimSpace(s); t != "nan" && t != "inf" && t != "-inf" {
			w = max(w, len(s))
		}
	}
	for i, s := range out {
		if len(s) < w {
			out[i] = strings.Repeat(" ", w-len(s)) + s
		}
	}
	return out
}

// floatFormat returns the formatter of the floats vals (PyTorch's
// _Formatter): nan, inf and -inf as such; with mode 'f', 'e' or 'g' that
// notation; else "1." style when every finite value is an integer (unless
// one reaches past 1e8), scientific when the finite non-zero magnitudes
// span more than a factor of 1000 or reach past 1e8 or below 1e-4, fixed
// otherwise; prec decimals (-1: printPrecision).
func floatFormat(vals []float64, prec int, mode rune) func(float64) string {
	if prec < 0 {
		prec = printPrecision
	}
	special := func(v float64) (string, bool) {
		switch {
		case math.IsNaN(v):
			return "nan", true
		case math.IsInf(v, 1):
			return "inf", true
		case math.IsInf(v, -1):
			return "-inf", true
		}
		return "", false
	}
	with := func(f byte) func(float64) string {
		return func(v float64) string {
			if s, ok := special(v); ok {
				return s
			}
			return strconv.FormatFloat(v, f, prec, 64)
		}
	}
	switch mode {
	case 'f', 'e', 'g':
		return with(byte(mode))
	}
	ints := true
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if v != math.Trunc(v) {
			ints = false
		}
		if a := math.Abs(v); a != 0 {
			lo, hi = min(lo, a), max(hi, a)
		}
	}
	if ints {
		if hi > 1e8 {
			return with('e')
		}
		return func(v float64) string {
			if s, ok := special(v); ok {
				return s
			}
			return strconv.FormatFloat(v, 'f', 0, 64) + "."
		}
	}
	if hi > 1e8 || lo < 1e-4 || hi/lo > 1000 {
		return with('e')
	}
	return with('f')
}
