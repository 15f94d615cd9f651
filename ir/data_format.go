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
// their dtype; Bool prints true/false. Past 1000 elements, each axis longer
// than 6 shows its first and last 3 entries around "..." (PyTorch's
// summarization).
func (d *TensorData) String() string {
	if d == nil {
		return "<nil>"
	}
	var sb strings.Builder
	sb.WriteString("tensor(")
	summarize := d.NumElements() > 1000
	d.writeAxis(&sb, 0, 0, len("tensor("), summarize)
	fmt.Fprintf(&sb, ", dtype=%v, shape=%v)", d.DType, d.Shape)
	return sb.String()
}

const summaryEdge = 3

// writeAxis writes the sub-tensor starting at flat offset off whose first
// axis is d.Shape[axis]; indent is the column of its opening bracket.
func (d *TensorData) writeAxis(sb *strings.Builder, axis, off, indent int, summarize bool) {
	if axis == len(d.Shape) {
		sb.WriteString(formatElem(d.DType, d.Bytes, off))
		return
	}
	n := d.Shape[axis]
	stride := NumElements(d.Shape[axis+1:])
	sep := ", "
	if inner := len(d.Shape) - axis - 1; inner > 0 {
		sep = "," + strings.Repeat("\n", inner) + strings.Repeat(" ", indent+1)
	}
	sb.WriteByte('[')
	for k := 0; k < n; k++ {
		if summarize && n > 2*summaryEdge && k == summaryEdge {
			sb.WriteString("...")
			sb.WriteString(sep)
			k = n - summaryEdge
		}
		d.writeAxis(sb, axis+1, off+k*stride, indent+1, summarize)
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
