package ir

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// An empty tensor prints from its shape alone, whatever its other sizes:
// a [2^40, 0] tensor once looped 2^40 times writing "[]".
func TestStringEmptyHugeShape(t *testing.T) {
	for _, shape := range [][]int{{0}, {3, 0}, {1 << 40, 0}, {0, 1 << 40}, {1 << 30, 0, 1 << 30}, {1 << 62, 1 << 62, 0}} {
		d := &TensorData{Shape: shape, DType: F32}
		want := "tensor([], dtype=f32, shape=" + shapeString(shape) + ")"
		if got := d.String(); got != want {
			t.Errorf("%v: String() = %q, want %q", shape, got, want)
		}
	}
}

func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = itoa(s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// SummaryEdge decides from the shape alone: every element up to 1000,
// three edge entries per long axis while that shows at most 4096 elements,
// then two, then one, then none.
func TestSummaryEdge(t *testing.T) {
	rep := func(n, k int) []int {
		s := make([]int, k)
		for i := range s {
			s[i] = n
		}
		return s
	}
	cases := []struct {
		shape []int
		want  int
	}{
		{nil, 0},
		{[]int{1000}, 0},
		{[]int{10, 100}, 0},
		{[]int{0, 1 << 40}, 0},
		{[]int{1001}, 3},
		{[]int{1 << 40}, 3},
		{[]int{7, 7, 7, 7}, 3},        // shows 6^4 = 1296
		{rep(6, 4), 3},                // 1296 elements, every one shown
		{rep(6, 5), 2},                // 6^5 = 7776 > 4096; 4^5 = 1024
		{rep(7, 6), 2},                // 6^6 > 4096; 4^6 = 4096
		{rep(7, 7), 1},                // 4^7 > 4096; 2^7 = 128
		{rep(3, 12), 1},               // 2^12 = 4096
		{rep(3, 13), -1},              // 2^13 > 4096
		{append(rep(1, 60), 2000), 3}, // long rank of ones
	}
	for _, c := range cases {
		if got := SummaryEdge(c.shape); got != c.want {
			t.Errorf("SummaryEdge(%v) = %d, want %d", c.shape, got, c.want)
		}
	}
	if got, want := SummaryShape([]int{7, 6, 1 << 40, 1}, 3), []int{6, 6, 6, 1}; !slices.Equal(got, want) {
		t.Errorf("SummaryShape = %v, want %v", got, want)
	}
}

// FormatSummary of only the shown elements (gathered by hand on the host
// from random data) prints exactly what String prints from all of them,
// for every edge SummaryEdge picks; a shape that fits neither falls back
// to the data's own print.
func TestFormatSummaryOfShownElements(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][]int{{1001}, {9, 200}, {2, 30, 40}, {8, 3, 9, 7}, {6, 6, 6, 6, 6}, {7, 7, 7, 7, 7, 7, 7}, {3, 1, 2000}} {
		n := NumElements(shape)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = rng.NormFloat64() * 100
		}
		full := FromSlice(vals, shape)
		e := SummaryEdge(shape)
		if e <= 0 {
			t.Fatalf("%v: SummaryEdge %d, want a summarized print", shape, e)
		}
		sub := SummaryShape(shape, e)
		shown := make([]float64, NumElements(sub))
		idx := make([]int, len(shape))
		for i := range shown {
			rem, flat := i, 0
			for a := len(sub) - 1; a >= 0; a-- {
				idx[a] = rem % sub[a]
				rem /= sub[a]
			}
			for a, k := range idx {
				if shape[a] > 2*e && k >= e {
					k += shape[a] - 2*e // one of the last e entries
				}
				flat = flat*shape[a] + k
			}
			shown[i] = vals[flat]
		}
		got := FormatSummary(FromSlice(shown, sub), shape, e)
		if want := full.String(); got != want {
			t.Errorf("%v: FormatSummary of the shown elements =\n%s\nwant\n%s", shape, got, want)
		}
		if strings.Count(got, "...") == 0 && !slices.Equal(sub, shape) {
			t.Errorf("%v: no \"...\" in a summarized print", shape)
		}
	}
	d := FromSlice([]int32{1, 2, 3}, []int{3})
	if got, want := FormatSummary(d, []int{5}, 0), d.String(); got != want {
		t.Errorf("mismatched shape: %q, want %q", got, want)
	}
	if got, want := FormatSummary(&TensorData{DType: U8}, []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, -1), "tensor(..., dtype=u8, shape=[3 3 3 3 3 3 3 3 3 3 3 3 3])"; got != want {
		t.Errorf("no element shown: %q, want %q", got, want)
	}
}

// A one-axis print shows the first and last three entries, hand-worked.
func TestStringSummaryHandWorked(t *testing.T) {
	vals := make([]int64, 1001)
	for i := range vals {
		vals[i] = int64(i) - 500
	}
	want := "tensor([-500, -499, -498, ..., 498, 499, 500], dtype=i64, shape=[1001])"
	if got := FromSlice(vals, []int{1001}).String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	shown := FromSlice([]int64{-500, -499, -498, 498, 499, 500}, []int{6})
	if got := FormatSummary(shown, []int{1001}, 3); got != want {
		t.Errorf("FormatSummary = %q, want %q", got, want)
	}
}
