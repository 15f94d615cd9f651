package layout

import (
	"slices"
	"testing"
)

func TestRowMajorStrides(t *testing.T) {
	if got := RowMajorStrides([]int{2, 3, 4}); !slices.Equal(got, []int{12, 4, 1}) {
		t.Fatalf("got %v", got)
	}
	if got := RowMajorStrides(nil); len(got) != 0 {
		t.Fatalf("rank 0: got %v", got)
	}
}

func TestMatrixLayout(t *testing.T) {
	cases := []struct {
		rows, cols, sr, sc int
		trans              bool
		ld                 int
		ok                 bool
	}{
		{3, 4, 4, 1, false, 4, true},  // contiguous
		{3, 4, 6, 1, false, 6, true},  // padded rows
		{3, 4, 1, 3, true, 3, true},   // transposed view
		{3, 4, 8, 2, false, 0, false}, // stepped columns
		{1, 4, 99, 1, false, 4, true}, // one row: row stride irrelevant
		{4, 1, 1, 99, false, 1, true}, // one column: column stride irrelevant
	}
	for _, c := range cases {
		tr, ld, ok := MatrixLayout(c.rows, c.cols, c.sr, c.sc)
		if tr != c.trans || ld != c.ld || ok != c.ok {
			t.Errorf("MatrixLayout(%d,%d,%d,%d) = %v,%d,%v; want %v,%d,%v", c.rows, c.cols, c.sr, c.sc, tr, ld, ok, c.trans, c.ld, c.ok)
		}
	}
}

func TestIsRowMajor(t *testing.T) {
	cases := []struct {
		shape, strides []int
		want           bool
	}{
		{nil, nil, true},
		{[]int{2, 3}, []int{3, 1}, true},
		{[]int{2, 3}, []int{1, 2}, false},
		{[]int{2, 1, 3}, []int{3, 99, 1}, true}, // size-1 axis: any stride
		{[]int{3, 2}, []int{4, 1}, false},       // padded rows
		{[]int{0, 3}, []int{3, 1}, true},
	}
	for _, c := range cases {
		if got := IsRowMajor(c.shape, c.strides); got != c.want {
			t.Errorf("IsRowMajor(%v, %v) = %v, want %v", c.shape, c.strides, got, c.want)
		}
	}
}
