package ember

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// refPrint is PyTorch's summarized repr of a tensor of shape on device
// dev, written independently of the library's formatter: val(idx) is the
// element at a multi-index; with edge e > 0 each axis longer than 2e
// shows its first and last e entries around "...", with e == 0 every
// entry. Ints print in decimal; floats as PyTorch's formatter picks for
// the values shown ("%.0f." when all are integers, "%.4e" when they span
// more than 1000x or pass 1e8 or 1e-4, else "%.4f"), all padded to one
// width, rows wrapped at 80 columns.
func refPrint(shape []int, dt DType, val func(idx []int) float64, e int, dev string, tracked bool) string {
	// The entries shown along each axis (-1 is "...").
	shown := make([][]int, len(shape))
	for a, n := range shape {
		for k := 0; k < n; k++ {
			if e > 0 && n > 2*e && k == e {
				shown[a] = append(shown[a], -1)
				k = n - e
			}
			shown[a] = append(shown[a], k)
		}
	}
	var vals []float64
	idx := make([]int, len(shape))
	var collect func(axis int)
	collect = func(axis int) {
		if axis == len(shape) {
			vals = append(vals, val(idx))
			return
		}
		for _, k := range shown[axis] {
			if k >= 0 {
				idx[axis] = k
				collect(axis + 1)
			}
		}
	}
	collect(0)
	format := func(v float64) string { return strconv.FormatInt(int64(v), 10) }
	if dt.IsFloat() {
		ints, lo, hi := true, math.Inf(1), 0.0
		for _, v := range vals {
			if v != math.Trunc(v) {
				ints = false
			}
			if a := math.Abs(v); a != 0 {
				lo, hi = min(lo, a), max(hi, a)
			}
		}
		switch {
		case ints && hi <= 1e8:
			format = func(v float64) string { return fmt.Sprintf("%.0f.", v) }
		case hi > 1e8 || lo < 1e-4 || hi/lo > 1000:
			format = func(v float64) string { return fmt.Sprintf("%.4e", v) }
		default:
			format = func(v float64) string { return fmt.Sprintf("%.4f", v) }
		}
	}
	w := 0
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			w = max(w, len(format(v)))
		}
	}
	pad := func(s string) string { return strings.Repeat(" ", max(0, w-len(s))) + s }
	var b strings.Builder
	b.WriteString("tensor(")
	var rec func(axis int)
	rec = func(axis int) {
		below := len(shape) - axis - 1
		b.WriteByte('[')
		col := len("tensor(") + axis + 1
		for j, k := range shown[axis] {
			item := "..."
			if k >= 0 && below == 0 {
				idx[axis] = k
				item = pad(format(val(idx)))
			}
			if j > 0 {
				switch {
				case below > 0:
					b.WriteByte(',')
					b.WriteString(strings.Repeat("\n", below))
					b.WriteString(strings.Repeat(" ", len("tensor(")+axis+1))
				case col+2+len(item) > 80:
					b.WriteString(",\n" + strings.Repeat(" ", len("tensor(")+axis+1))
					col = len("tensor(") + axis + 1
				default:
					b.WriteString(", ")
					col += 2
				}
			}
			if below == 0 {
				b.WriteString(item)
				col += len(item)
				continue
			}
			if k < 0 {
				b.WriteString("...")
				continue
			}
			idx[axis] = k
			rec(axis + 1)
		}
		b.WriteByte(']')
	}
	rec(0)
	if dt != F32 && dt != I64 && dt != Bool {
		fmt.Fprintf(&b, ", dtype=%v", dt)
	}
	if e > 0 {
		fmt.Fprintf(&b, ", shape=%v", shape)
	}
	fmt.Fprintf(&b, ", device=%s", dev)
	if tracked {
		b.WriteString(", requires_grad=true")
	}
	b.WriteByte(')')
	return b.String()
}

// Printing a tensor of more than 1000 elements shows the first and last
// three entries of each long axis, as PyTorch does, reading only those:
// broadcast views of 2^40 and more elements, a permuted and a stepped view
// of one, materialized random data, integer data and a tracked tensor all
// print what the independent reference printer gives from the values.
func TestStringSummarizesWithoutMaterializing(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(77)
		base := randRef([]int{5, 1, 9}, F64, nonZero(rng, 0.5, 50))
		x := mk(dev, base, F64)
		one := FullDType([]int{1}, 2.5, F64, dev)
		col := randRef([]int{7, 1}, F64, nonZero(rng, 0.5, 5))
		data := randRef([]int{9, 4, 300}, F64, nonZero(rng, 1, 1e3))
		cases := []struct {
			name  string
			x     *Tensor
			shape []int
			val   func(idx []int) float64
		}{
			{"2^40 broadcast of one value", one.Expand(1 << 40), []int{1 << 40}, func([]int) float64 { return 2.5 }},
			{"broadcast middle axis", x.Expand(5, 1<<36, 9), []int{5, 1 << 36, 9},
				func(i []int) float64 { return base.at(i[0], 0, i[2]) }},
			{"permuted broadcast", mk(dev, col, F64).Expand(7, 1<<35).Permute(1, 0), []int{1 << 35, 7},
				func(i []int) float64 { return col.at(i[1], 0) }},
			{"stepped slice of a broadcast", x.Expand(5, 1<<36, 9).Slice(All(), Range{Start: 1, End: 1 << 36, Step: 5}), []int{5, (1<<36 - 1 + 4) / 5, 9},
				func(i []int) float64 { return base.at(i[0], 0, i[2]) }},
			{"materialized", mk(dev, data, F64), data.shape, func(i []int) float64 { return data.at(i...) }},
			{"int", Arange(-1000, 1000, dev).Reshape(40, 50), []int{40, 50},
				func(i []int) float64 { return float64(50*i[0] + i[1] - 1000) }},
		}
		for _, c := range cases {
			want := refPrint(c.shape, c.x.DType(), c.val, 3, dev.String(), false)
			if got := c.x.String(); got != want {
				t.Errorf("%s: String() =\n%s\nwant\n%s", c.name, got, want)
			}
		}
		// A tracked tensor prints its value and stays differentiable.
		ad := dev.Autodiff()
		w := mk(ad, randRef([]int{1, 1200}, F64, nonZero(rng, 0.1, 1)), F64).RequireGrad()
		y := w.Expand(3, 1200).MulScalar(3)
		wv := w.Float64s()
		want := refPrint([]int{3, 1200}, F64, func(i []int) float64 { return 3 * wv[i[1]] }, 3, ad.String(), true)
		if got := y.String(); got != want {
			t.Errorf("tracked: String() =\n%s\nwant\n%s", got, want)
		}
		for i, g := range y.Sum().Backward().Of(w).Float64s() {
			if g != 9 {
				t.Fatalf("tracked: gradient %d after printing is %v, want 9", i, g)
			}
		}
	})
}

// Printing a broadcast view that would take 512 MB materialized allocates
// next to nothing: only the shown elements are read.
func TestStringReadsOnlyShownElements(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		row := randRef([]int{1, 1024}, F64, nonZero(newRNG(3), 0.1, 1))
		x := mk(dev, row, F64).Expand(1<<16, 1024) // 2^26 elements of 8 bytes
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := x.String()
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
			t.Errorf("String of a %v broadcast view allocated %d bytes", x.Shape(), d)
		}
		want := refPrint([]int{1 << 16, 1024}, F64, func(i []int) float64 { return row.at(0, i[1]) }, 3, dev.String(), false)
		if s != want {
			t.Errorf("String() =\n%s\nwant\n%s", s, want)
		}
	})
}

// An empty tensor prints from its shape, whatever its other sizes; so does
// a tensor whose summary alone would show more than 4096 elements, without
// its elements. Ranks whose summary fits use fewer edge entries.
func TestStringEmptyAndHighRank(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 1 << 40}, {1 << 40, 0}, {2, 0, 1 << 50}} {
			for _, d := range []Device{dev, dev.Autodiff()} {
				want := fmt.Sprintf("tensor([], shape=%v, device=%v)", shape, d)
				if got := Zeros(shape, d).String(); got != want {
					t.Errorf("%v: String() = %q, want %q", shape, got, want)
				}
				big := FullDType([]int{1, 1}, 1, F32, d).Expand(1<<20, 1<<20)
				if got := big.Narrow(0, 5, 0).String(); !strings.HasPrefix(got, "tensor([], shape=[0 1048576], device=") {
					t.Errorf("empty narrow of a broadcast: %q", got)
				}
			}
		}
		huge := []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
		want := fmt.Sprintf("tensor(..., shape=%v, device=%v)", huge, dev)
		if got := FullDType([]int{1}, 1, F32, dev).Expand(huge...).String(); got != want {
			t.Errorf("rank %d: String() = %q, want %q", len(huge), got, want)
		}
		rng := newRNG(9)
		small := randRef([]int{6, 1, 6, 6, 6}, F64, nonZero(rng, 0.5, 9))
		y := mk(dev, small, F64).Expand(6, 6, 6, 6, 6) // 7776 elements: two edge entries
		want = refPrint(y.Shape(), F64, func(i []int) float64 { return small.at(i[0], 0, i[2], i[3], i[4]) }, 2, dev.String(), false)
		if got := y.String(); got != want {
			t.Errorf("[6 6 6 6 6]: String() =\n%s\nwant\n%s", got, want)
		}
	})
}

// Small tensors print as PyTorch prints them (outputs of torch 2.x's repr,
// with Ember's device suffix): floats in one format per tensor, padded to
// one width, rows wrapped at 80 columns; fmt verbs set the notation and
// the precision.
func TestStringPyTorchStyle(t *testing.T) {
	cpu := CPU()
	f := func(v []float32, shape ...int) *Tensor { return FromFloats(v, shape, cpu) }
	cases := []struct {
		got, want string
	}{
		{f([]float32{1, 2, 3, 4}, 2, 2).String(), "tensor([[1., 2.],\n        [3., 4.]], device=cpu)"},
		{f([]float32{0.1, 2.5, -3}, 3).String(), "tensor([ 0.1000,  2.5000, -3.0000], device=cpu)"},
		{f([]float32{1e-5, 2.5, 3e4}, 3).String(), "tensor([1.0000e-05, 2.5000e+00, 3.0000e+04], device=cpu)"},
		{f([]float32{1, float32(math.NaN()), float32(math.Inf(1))}, 3).String(), "tensor([1., nan, inf], device=cpu)"},
		{f([]float32{1.5, float32(math.NaN())}, 2).String(), "tensor([1.5000,    nan], device=cpu)"},
		{Arange(0, 30, cpu).Cast(F32).String(), "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n" +
			"        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n        28., 29.], device=cpu)"},
		{FromInts([]int{1, -20, 300}, []int{3}, cpu).String(), "tensor([  1, -20, 300], device=cpu)"},
		{FromInts([]int{1, 2}, []int{2}, cpu).Cast(I32).String(), "tensor([1, 2], dtype=i32, device=cpu)"},
		{FromInts([]int{1, 0}, []int{2}, cpu).Cast(Bool).String(), "tensor([ true, false], device=cpu)"},
		{Zeros([]int{0, 3}, cpu).String(), "tensor([], shape=[0 3], device=cpu)"},
		{FromFloats([]float32{2.5}, []int{}, cpu).String(), "tensor(2.5000, device=cpu)"},
		{FromFloats([]float32{1, 2}, []int{2}, cpu.Autodiff()).RequireGrad().String(), "tensor([1., 2.], device=cpu+autodiff, requires_grad=true)"},
		{fmt.Sprintf("%.2f", f([]float32{0.123456, 2.5}, 2)), "tensor([0.12, 2.50], device=cpu)"},
		{fmt.Sprintf("%.6v", f([]float32{0.125, 2.5}, 2)), "tensor([0.125000, 2.500000], device=cpu)"},
		{fmt.Sprintf("%v", f([]float32{0.125, 2.5}, 2)), "tensor([0.1250, 2.5000], device=cpu)"},
		{fmt.Sprintf("%.1e", f([]float32{0.125, 2.5}, 2)), "tensor([1.2e-01, 2.5e+00], device=cpu)"},
		{fmt.Sprintf("%d", f([]float32{1}, 1)), "%!d(*ember.Tensor=tensor([1.], device=cpu))"},
		{fmt.Sprint((*Tensor)(nil)), "<nil>"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got\n%s\nwant\n%s", c.got, c.want)
		}
	}
	// A recorded tensor of a capture device has no data: the print says so.
	dev := Capture()
	x := FromFloats([]float32{1, 2}, []int{2}, cpu).ToDevice(dev)
	if _, err := dev.CaptureScope(func(s *CaptureScope) CompletedCaptureScope {
		got := x.MulScalar(2).String()
		if !strings.HasPrefix(got, "tensor(<") || !strings.HasSuffix(got, ", device="+dev.String()+")") {
			t.Errorf("a recorded tensor prints %q", got)
		}
		return s.Complete([]TensorID{x.ID()}, nil)
	}); err != nil {
		t.Fatal(err)
	}
}
