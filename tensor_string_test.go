package ember

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// refPrint is PyTorch's summarized repr of a tensor of shape, written
// independently of the library's formatter: at(idx) formats the element
// at a multi-index; with edge e > 0 each axis longer than 2e shows its
// first and last e entries around "...", with e == 0 every entry.
func refPrint(shape []int, dt DType, at func(idx []int) string, e int) string {
	var b strings.Builder
	b.WriteString("tensor(")
	idx := make([]int, len(shape))
	var rec func(axis int)
	rec = func(axis int) {
		if axis == len(shape) {
			b.WriteString(at(idx))
			return
		}
		n := shape[axis]
		var ks []int // entries shown; -1 is "..."
		for k := 0; k < n; k++ {
			if e > 0 && n > 2*e && k == e {
				ks = append(ks, -1)
				k = n - e
			}
			ks = append(ks, k)
		}
		below := len(shape) - axis - 1
		b.WriteByte('[')
		for j, k := range ks {
			if j > 0 {
				b.WriteByte(',')
				if below == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteString(strings.Repeat("\n", below))
					b.WriteString(strings.Repeat(" ", len("tensor(")+axis+1))
				}
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
	fmt.Fprintf(&b, ", dtype=%v, shape=%v)", dt, shape)
	return b.String()
}

func f64s(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

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
			at    func(idx []int) string
		}{
			{"2^40 broadcast of one value", one.Expand(1 << 40), []int{1 << 40}, func([]int) string { return "2.5" }},
			{"broadcast middle axis", x.Expand(5, 1<<36, 9), []int{5, 1 << 36, 9},
				func(i []int) string { return f64s(base.at(i[0], 0, i[2])) }},
			{"permuted broadcast", mk(dev, col, F64).Expand(7, 1<<35).Permute(1, 0), []int{1 << 35, 7},
				func(i []int) string { return f64s(col.at(i[1], 0)) }},
			{"stepped slice of a broadcast", x.Expand(5, 1<<36, 9).Slice(All(), Range{Start: 1, End: 1 << 36, Step: 5}), []int{5, (1<<36 - 1 + 4) / 5, 9},
				func(i []int) string { return f64s(base.at(i[0], 0, i[2])) }},
			{"materialized", mk(dev, data, F64), data.shape, func(i []int) string { return f64s(data.at(i...)) }},
			{"int", Arange(-1000, 1000, dev).Reshape(40, 50), []int{40, 50},
				func(i []int) string { return strconv.Itoa(50*i[0] + i[1] - 1000) }},
		}
		for _, c := range cases {
			want := "Tensor(" + refPrint(c.shape, c.x.DType(), c.at, 3) + " on " + dev.String() + ")"
			if got := c.x.String(); got != want {
				t.Errorf("%s: String() =\n%s\nwant\n%s", c.name, got, want)
			}
		}
		// A tracked tensor prints its value and stays differentiable.
		ad := dev.Autodiff()
		w := mk(ad, randRef([]int{1, 1200}, F64, nonZero(rng, 0.1, 1)), F64).RequireGrad()
		y := w.Expand(3, 1200).MulScalar(3)
		wv := w.Float64s()
		want := "Tensor(" + refPrint([]int{3, 1200}, F64, func(i []int) string { return f64s(3 * wv[i[1]]) }, 3) + " on " + ad.String() + ")"
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
		want := "Tensor(" + refPrint([]int{1 << 16, 1024}, F64, func(i []int) string { return f64s(row.at(0, i[1])) }, 3) + " on " + dev.String() + ")"
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
				want := fmt.Sprintf("Tensor(tensor([], dtype=f32, shape=%v) on %v)", shape, d)
				if got := Zeros(shape, d).String(); got != want {
					t.Errorf("%v: String() = %q, want %q", shape, got, want)
				}
				big := FullDType([]int{1, 1}, 1, F32, d).Expand(1<<20, 1<<20)
				if got := big.Narrow(0, 5, 0).String(); !strings.HasPrefix(got, "Tensor(tensor([], dtype=f32, shape=[0 1048576])") {
					t.Errorf("empty narrow of a broadcast: %q", got)
				}
			}
		}
		huge := []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
		want := fmt.Sprintf("Tensor(tensor(..., dtype=f32, shape=%v) on %v)", huge, dev)
		if got := FullDType([]int{1}, 1, F32, dev).Expand(huge...).String(); got != want {
			t.Errorf("rank %d: String() = %q, want %q", len(huge), got, want)
		}
		rng := newRNG(9)
		small := randRef([]int{6, 1, 6, 6, 6}, F64, nonZero(rng, 0.5, 9))
		y := mk(dev, small, F64).Expand(6, 6, 6, 6, 6) // 7776 elements: two edge entries
		want = "Tensor(" + refPrint(y.Shape(), F64, func(i []int) string { return f64s(small.at(i[0], 0, i[2], i[3], i[4])) }, 2) + " on " + dev.String() + ")"
		if got := y.String(); got != want {
			t.Errorf("[6 6 6 6 6]: String() =\n%s\nwant\n%s", got, want)
		}
	})
}
