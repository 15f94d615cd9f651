package ir

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ApproxEqual reports whether d and o have equal shapes and dtypes and
// elementwise |d - o| <= atol + rtol*|o|, the test of PyTorch's
// torch.allclose(d, o, rtol, atol, equal_nan=True): NaN equals NaN, an
// infinity equals only the same infinity. Int and Bool elements are compared
// exactly when equal and otherwise by their exact difference. It returns nil
// when they match, otherwise an error naming the shape or dtype mismatch,
// or the first differing element's multi-index, both values and the
// tolerance.
func (d *TensorData) ApproxEqual(o *TensorData, rtol, atol float64) error {
	if !slices.Equal(d.Shape, o.Shape) {
		return fmt.Errorf("ember: shapes differ: %v vs %v", d.Shape, o.Shape)
	}
	if d.DType != o.DType {
		return fmt.Errorf("ember: dtypes differ: %v vs %v", d.DType, o.DType)
	}
	for i := range d.NumElements() {
		a, b := loadNum(d.DType, d.Bytes, i), loadNum(o.DType, o.Bytes, i)
		var diff, mag float64
		switch a.kind {
		case kindFloat:
			if a.f == b.f || (a.f != a.f && b.f != b.f) {
				continue
			}
			diff, mag = math.Abs(a.f-b.f), math.Abs(b.f)
			if math.IsInf(a.f, 0) || math.IsInf(b.f, 0) {
				diff, mag = math.Inf(1), 0 // an infinity matches only itself
			}
		case kindInt:
			if a.i == b.i {
				continue
			}
			hi, lo := a.i, b.i
			if hi < lo {
				hi, lo = lo, hi
			}
			diff, mag = float64(uint64(hi)-uint64(lo)), math.Abs(float64(b.i))
		default:
			if a.u == b.u {
				continue
			}
			diff, mag = float64(max(a.u, b.u)-min(a.u, b.u)), float64(b.u)
		}
		if !(diff <= atol+rtol*mag) { // NaN against a number fails here
			return fmt.Errorf("ember: %v tensors of shape %v differ at index %v: %s vs %s (|diff| %g > atol %g + rtol %g * %g)",
				d.DType, d.Shape, unravel(i, d.Shape), formatElem(d.DType, d.Bytes, i), formatElem(o.DType, o.Bytes, i),
				diff, atol, rtol, mag)
		}
	}
	return nil
}

// String prints d like PyTorch's tensor repr followed by its dtype and
// shape, e.g. "tensor([[1, 2],\n        [3, 4]], dtype=i32, shape=[2 2])".
// Floats print in the shortest form that reads back to the same value in
// their dtype; Bool prints true/false. An empty tensor prints as
// "tensor([], ...)" whatever its other sizes. Past SummaryThreshold
// elements the print is summarized as SummaryEdge describes (PyTorch's
// summarization: each long axis shows its first and last entries around
// "..."), so it reads only the elements it shows.
func (d *TensorData) String() string {
	if d == nil {
		return "<nil>"
	}
	return FormatSummary(d, d.Shape, SummaryEdge(d.Shape))
}

// SummaryThreshold is the number of elements above which a print is
// summarized (PyTorch's threshold).
const SummaryThreshold = 1000

// MaxSummaryElements is the most elements a summarized print shows.
const MaxSummaryElements = 4096

// summaryEdges are the numbers of leading and trailing entries per axis a
// summarized print tries in turn (PyTorch's edgeitems is the first).
var summaryEdges = [...]int{3, 2, 1}

// SummaryEdge returns how a print of a tensor of shape shows its elements,
// computed from the shape alone: 0 when it shows every one (an empty
// tensor, or at most SummaryThreshold elements); otherwise e > 0 when each
// axis longer than 2e shows only its first and last e entries around
// "..." (e is 3 unless that would show more than MaxSummaryElements, then
// 2, then 1); -1 when even e = 1 would show more than MaxSummaryElements,
// and the print shows no element at all.
func SummaryEdge(shape []int) int {
	if n := NumElements(shape); n == 0 || n <= SummaryThreshold {
		return 0
	}
	for _, e := range summaryEdges {
		shown := 1
		for _, s := range shape {
			shown *= min(s, 2*e) // at most (2e)^rank so far: no overflow before the limit
			if shown > MaxSummaryElements {
				break
			}
		}
		if shown <= MaxSummaryElements {
			return e
		}
	}
	return -1
}

// SummaryShape returns the shape of the elements a print with edge e > 0
// (see SummaryEdge) shows of a tensor of shape: each axis longer than 2e
// becomes 2e (its first and last e entries), the others stay. For e <= 0
// it returns a copy of shape.
func SummaryShape(shape []int, e int) []int {
	out := append([]int{}, shape...)
	for i, s := range out {
		if e > 0 && s > 2*e {
			out[i] = 2 * e
		}
	}
	return out
}

// FormatSummary prints a tensor of shape full and d's dtype as String does,
// with edge e = SummaryEdge(full) (or 0 to show every element): d holds
// either all of the tensor (d.Shape equals full) or, for e > 0, only the
// elements shown (d.Shape is SummaryShape(full, e): along each axis longer
// than 2e, the first e entries followed by the last e). d's elements are
// not read when the tensor is empty or e is -1. When d.Shape is neither,
// it prints d as String does.
func FormatSummary(d *TensorData, full []int, e int) string {
	var sb strings.Builder
	sb.WriteString("tensor(")
	switch {
	case NumElements(full) == 0:
		sb.WriteString("[]")
	case e < 0:
		sb.WriteString("...")
	default:
		if !slices.Equal(d.Shape, full) && (e == 0 || !slices.Equal(d.Shape, SummaryShape(full, e))) {
			return d.String()
		}
		elided := full
		if e == 0 {
			elided = nil
		}
		WriteNested(&sb, d.Shape, func(off int) string { return formatElem(d.DType, d.Bytes, off) }, elided, e, len("tensor("), 0)
	}
	fmt.Fprintf(&sb, ", dtype=%v, shape=%v)", d.DType, full)
	return sb.String()
}

// WriteNested writes the nested brackets of a tensor print of shape, the
// element at flat offset off of a row-major tensor of that shape being
// elem(off); indent is the column of the outermost opening bracket (the
// length of what precedes it on its line). When full is not nil (the
// print is summarized, shape being SummaryShape(full, e)), each axis
// longer than 2e in full shows its first and last e entries around "...".
// With lineWidth > 0 the innermost rows wrap before passing that column,
// continuing under their first element (PyTorch's linewidth); with 0 they
// stay on one line.
func WriteNested(sb *strings.Builder, shape []int, elem func(off int) string, full []int, e, indent, lineWidth int) {
	writeAxis(sb, shape, elem, 0, 0, indent, full, e, lineWidth)
}

// writeAxis writes the sub-tensor starting at flat offset off whose first
// axis is shape[axis]; indent is the column of its opening bracket.
func writeAxis(sb *strings.Builder, shape []int, elem func(int) string, axis, off, indent int, full []int, e, lineWidth int) {
	if axis == len(shape) { // a rank-0 tensor: its element, unbracketed
		sb.WriteString(elem(off))
		return
	}
	n := shape[axis]
	stride := NumElements(shape[axis+1:])
	elide := full != nil && full[axis] > 2*e
	sb.WriteByte('[')
	if axis == len(shape)-1 {
		col, first := indent+1, true
		put := func(item string) {
			switch {
			case first:
				first = false
			case lineWidth > 0 && col+2+len(item) > lineWidth:
				sb.WriteString(",\n")
				sb.WriteString(strings.Repeat(" ", indent+1))
				col = indent + 1
			default:
				sb.WriteString(", ")
				col += 2
			}
			sb.WriteString(item)
			col += len(item)
		}
		for k := 0; k < n; k++ {
			if elide && k == e {
				put("...")
				k = n - e // the last e entries: of all n, or of the 2e shown
			}
			put(elem(off + k*stride))
		}
		sb.WriteByte(']')
		return
	}
	sep := "," + strings.Repeat("\n", len(shape)-axis-1) + strings.Repeat(" ", indent+1)
	for k := 0; k < n; k++ {
		if elide && k == e {
			sb.WriteString("...")
			sb.WriteString(sep)
			k = n - e // the last e entries: of all n, or of the 2e shown
		}
		writeAxis(sb, shape, elem, axis+1, off+k*stride, indent+1, full, e, lineWidth)
		if k < n-1 {
			sb.WriteString(sep)
		}
	}
	sb.WriteByte(']')
}

// formatElem formats element i of data of dtype dt: ints in decimal, Bool as
// true/false, floats in the shortest decimal that converts back to the same
// value in dt, and NaN and infinities as PyTorch: nan, inf, -inf.
func formatElem(dt DType, b []byte, i int) string {
	v := loadNum(dt, b, i)
	switch {
	case dt == Bool:
		return strconv.FormatBool(v.u != 0)
	case v.kind == kindInt:
		return strconv.FormatInt(v.i, 10)
	case v.kind == kindUint:
		return strconv.FormatUint(v.u, 10)
	case dt == F64 && !math.IsNaN(v.f) && !math.IsInf(v.f, 0):
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case dt == F16 || dt == BF16:
		if v.f != v.f || math.IsInf(v.f, 0) || v.f == 0 {
			break
		}
		var want uint16
		conv := F16FromFloat64
		if dt == BF16 {
			conv = BF16FromFloat64
		}
		want = conv(v.f)
		for prec := 1; prec < 9; prec++ {
			s := strconv.FormatFloat(v.f, 'g', prec, 64)
			if p, err := strconv.ParseFloat(s, 64); err == nil && conv(p) == want {
				return s
			}
		}
	}
	switch {
	case v.f != v.f:
		return "nan"
	case math.IsInf(v.f, 1):
		return "inf"
	case math.IsInf(v.f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v.f, 'g', -1, 32)
}
