package ir

import (
	"math"
	"strings"
	"testing"
)

func TestApproxEqual(t *testing.T) {
	f64 := func(v ...float64) *TensorData { return FromSlice(v, []int{len(v)}) }
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name       string
		a, b       *TensorData
		rtol, atol float64
		want       string // "" means equal
	}{
		{"identical", f64(1, -2, 3), f64(1, -2, 3), 0, 0, ""},
		{"within atol", f64(1, 2), f64(1.0625, 2), 0, 0.0625, ""},
		{"beyond atol", f64(1, 2), f64(1, 2.125), 0, 0.0625, "differ at index [1]: 2 vs 2.125 (|diff| 0.125 > atol 0.0625 + rtol 0 * 2.125)"},
		// the relative tolerance scales |b|, as torch.allclose's other
		{"rtol of b passes", f64(1), f64(1.25), 0.2, 0, ""},
		{"rtol of b fails", f64(1.25), f64(1), 0.2, 0, "1.25 vs 1"},
		{"rtol plus atol", f64(1.375), f64(1), 0.25, 0.125, ""},
		{"rtol plus atol fails", f64(1.5), f64(1), 0.25, 0.125, "index [0]"},
		{"NaN equals NaN", f64(nan, 1), f64(nan, 1), 0, 0, ""},
		{"NaN vs number", f64(1, nan), f64(1, 1), 1, 1e300, "index [1]: nan vs 1"},
		{"number vs NaN", f64(1), f64(nan), 1, 1e300, "1 vs nan"},
		{"inf equals inf", f64(inf, -inf), f64(inf, -inf), 0, 0, ""},
		{"inf vs -inf", f64(inf), f64(-inf), 1, 1e300, "inf vs -inf"},
		{"inf vs large", f64(inf), f64(1e300), 1, 1e300, "inf vs 1e+300"},
		{"shape", FromSlice([]float64{1, 2}, []int{1, 2}), f64(1, 2), 0, 0, "shapes differ: [1 2] vs [2]"},
		{"dtype", f64(1), FromSlice([]float32{1}, []int{1}), 0, 0, "dtypes differ: f64 vs f32"},
		{"multi-index", FromSlice([]float32{1, 2, 3, 4, 5, 6}, []int{2, 3}), FromSlice([]float32{1, 2, 3, 4, 5.5, 6}, []int{2, 3}), 0, 0.25,
			"f32 tensors of shape [2 3] differ at index [1 1]: 5 vs 5.5"},
		{"ints exact", FromSlice([]int64{math.MaxInt64, 5}, []int{2}), FromSlice([]int64{math.MaxInt64, 5}, []int{2}), 0, 0, ""},
		// the difference of the extremes is 2^64-1, not an overflowed -1
		{"ints extreme", FromSlice([]int64{math.MaxInt64}, []int{1}), FromSlice([]int64{math.MinInt64}, []int{1}), 0, 1, "9223372036854775807 vs -9223372036854775808 (|diff| 1.8446744073709552e+19"},
		{"ints within atol", FromSlice([]int32{10, -3}, []int{2}), FromSlice([]int32{11, -3}, []int{2}), 0, 1, ""},
		{"uints", FromSlice([]uint8{3}, []int{1}), FromSlice([]uint8{200}, []int{1}), 0, 1, "3 vs 200 (|diff| 197"},
		{"bools", FromSlice([]bool{true, false}, []int{2}), FromSlice([]bool{true, true}, []int{2}), 0, 0, "index [1]: false vs true"},
		{"f16", FromSlice([]Float16{NewFloat16(1)}, []int{1}), FromSlice([]Float16{NewFloat16(1.001)}, []int{1}), 0, 0, "1 vs 1.001"},
		{"empty", FromSlice([]float32{}, []int{0, 2}), FromSlice([]float32{}, []int{0, 2}), 0, 0, ""},
	}
	for _, c := range cases {
		err := c.a.ApproxEqual(c.b, c.rtol, c.atol)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestString(t *testing.T) {
	cases := []struct {
		d    *TensorData
		want string
	}{
		{FromSlice([]int32{1, 2, 3, 4}, []int{2, 2}), "tensor([[1, 2],\n        [3, 4]], dtype=i32, shape=[2 2])"},
		{FromSlice([]float32{1.5, 2, 3, 4, 5, 6, 7, -8}, []int{2, 2, 2}),
			"tensor([[[1.5, 2],\n         [3, 4]],\n\n        [[5, 6],\n         [7, -8]]], dtype=f32, shape=[2 2 2])"},
		{FromSlice([]float64{0.1}, nil), "tensor(0.1, dtype=f64, shape=[])"},
		// float32(0.1) prints as 0.1, not 0.10000000149011612; binary16
		// 0.1 (0.0999755859375) prints as the shortest decimal reading back to it.
		{FromSlice([]float32{0.1, float32(math.NaN()), float32(math.Inf(-1))}, []int{3}), "tensor([0.1, nan, -inf], dtype=f32, shape=[3])"},
		{FromSlice([]Float16{NewFloat16(0.1), NewFloat16(1e5), NewFloat16(-3)}, []int{3}), "tensor([0.1, inf, -3], dtype=f16, shape=[3])"},
		{FromSlice([]BFloat16{NewBFloat16(3.14159)}, []int{1}), "tensor([3.14], dtype=bf16, shape=[1])"},
		{FromSlice([]bool{true, false}, []int{2}), "tensor([true, false], dtype=bool, shape=[2])"},
		{FromSlice([]uint64{math.MaxUint64}, []int{1}), "tensor([18446744073709551615], dtype=u64, shape=[1])"},
		{FromSlice([]int8{}, []int{0, 3}), "tensor([], dtype=i8, shape=[0 3])"},
	}
	for _, c := range cases {
		if got := c.d.String(); got != c.want {
			t.Errorf("String() =\n%s\nwant\n%s", got, c.want)
		}
	}
	if got := (*TensorData)(nil).String(); got != "<nil>" {
		t.Errorf("nil String() = %q", got)
	}
}

func TestStringSummarizes(t *testing.T) {
	// 1000 elements print in full; 1001 and more print 3 edge items per axis.
	full := make([]int32, 1000)
	for i := range full {
		full[i] = int32(i)
	}
	s := FromSlice(full, []int{1000}).String()
	if strings.Contains(s, "...") || !strings.Contains(s, ", 500, ") || strings.Count(s, ",") != 999+2 {
		t.Errorf("1000 elements summarized: %.80s...", s)
	}
	vals := make([]int32, 2*10*100)
	for i := range vals {
		vals[i] = int32(i)
	}
	got := FromSlice(vals, []int{2, 10, 100}).String()
	row := func(r int) string { // row r of the flattened [20, 100] view
		b := r * 100
		return "[" + itoa(b) + ", " + itoa(b+1) + ", " + itoa(b+2) + ", ..., " + itoa(b+97) + ", " + itoa(b+98) + ", " + itoa(b+99) + "]"
	}
	block := func(k int) string {
		rows := []string{row(10 * k), row(10*k + 1), row(10*k + 2), "...", row(10*k + 7), row(10*k + 8), row(10*k + 9)}
		return "[" + strings.Join(rows, ",\n         ") + "]"
	}
	want := "tensor([" + block(0) + ",\n\n        " + block(1) + "], dtype=i32, shape=[2 10 100])"
	if got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}
