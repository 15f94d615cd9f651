package ir

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSubRanges checks every kind's Spec.Subs and FirstSub against the
// Valid method of the sub-op enum its Infer reads.
func TestSubRanges(t *testing.T) {
	enums := map[Kind]func(uint8) bool{
		KindUnary:  func(s uint8) bool { return UnaryOp(s).Valid() },
		KindBinary: func(s uint8) bool { return BinaryOp(s).Valid() },
		KindReduce: func(s uint8) bool { return ReduceOp(s).Valid() },
		KindRandom: func(s uint8) bool { return DistributionKind(s).Valid() },
	}
	for _, k := range Kinds() {
		valid := enums[k]
		if valid == nil {
			valid = func(s uint8) bool { return s == 0 }
		}
		for s := range 256 {
			if got, want := validSub(k, uint8(s)), valid(uint8(s)); got != want {
				t.Errorf("%v: validSub(%d) = %v, want %v", k, s, got, want)
			}
		}
	}
}

// TestInferConv checks Conv2d and ConvTranspose2d inference: output
// shapes, and errors for malformed kernels, groups and sizes whose
// arithmetic would overflow.
func TestInferConv(t *testing.T) {
	const big = math.MaxInt / 2
	ref := func(shape ...int) Tensor { return NewRef(1, shape, F32) }
	cases := []struct {
		name      string
		transpose bool
		x, w      Tensor
		o         ConvOptions
		want      []int  // nil when an error is expected
		err       string // part of the expected error
	}{
		{"conv", false, ref(2, 3, 8, 8), ref(4, 3, 3, 3), ConvOptions{}, []int{2, 4, 6, 6}, ""},
		{"conv padded strided", false, ref(1, 2, 7, 7), ref(2, 2, 3, 3), ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}, []int{1, 2, 4, 4}, ""},
		{"conv groups", false, ref(1, 4, 5, 5), ref(6, 2, 1, 1), ConvOptions{Groups: 2}, []int{1, 6, 5, 5}, ""},
		{"transpose", true, ref(1, 2, 3, 3), ref(2, 5, 3, 3), ConvOptions{Stride: [2]int{2, 2}}, []int{1, 5, 7, 7}, ""},
		{"transpose groups", true, ref(1, 4, 2, 2), ref(4, 3, 1, 1), ConvOptions{Groups: 2}, []int{1, 6, 2, 2}, ""},

		{"zero kernel height", false, ref(1, 1, 4, 4), ref(1, 1, 0, 3), ConvOptions{}, nil, "kernel size 0"},
		{"zero kernel width", true, ref(1, 1, 4, 4), ref(1, 1, 3, 0), ConvOptions{}, nil, "kernel size 0"},
		{"negative groups", false, ref(1, 1, 4, 4), ref(1, 1, 1, 1), ConvOptions{Groups: -1}, nil, "groups"},
		{"too many groups", false, ref(1, 1, 4, 4), ref(0, 1, 1, 1), ConvOptions{Groups: maxGroups + 1}, nil, "groups"},
		{"channels times groups overflow", false, ref(1, 0, 4, 4), ref(0, big, 1, 1), ConvOptions{Groups: 4}, nil, "overflows"},
		{"transpose channels overflow", true, ref(0, 4, 4, 4), ref(4, big, 1, 1), ConvOptions{Groups: 4}, nil, "overflows"},
		{"padded input overflow", false, ref(0, 1, math.MaxInt, 1), ref(1, 1, 1, 1), ConvOptions{Padding: [2]int{1, 0}}, nil, "overflow"},
		{"dilated kernel overflow", false, ref(0, 1, 4, 4), ref(0, 1, big, 1), ConvOptions{Dilation: [2]int{4, 1}}, nil, "overflow"},
		{"transpose stride overflow", true, ref(0, 1, big, 1), ref(1, 1, 1, 1), ConvOptions{Stride: [2]int{4, 1}}, nil, "overflow"},
		{"transpose span overflow", true, ref(0, 1, 1, 1), ref(1, 1, math.MaxInt, 1), ConvOptions{Stride: [2]int{2, 1}, OutputPadding: [2]int{1, 0}}, nil, "overflow"},
		{"kernel larger than input", false, ref(1, 1, 2, 2), ref(1, 1, 3, 3), ConvOptions{}, nil, "larger than the padded input"},
	}
	for _, c := range cases {
		k := KindConv2d
		if c.transpose {
			k = KindConvTranspose2d
		}
		op := Op{Kind: k, In: [3]Tensor{c.x, c.w}, Attrs: &Attrs{Conv: c.o.WithDefaults()}}
		err := op.Infer()
		switch {
		case c.want != nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && !slices.Equal(op.Shape, c.want):
			t.Errorf("%s: shape %v, want %v", c.name, op.Shape, c.want)
		case c.want == nil && err == nil:
			t.Errorf("%s: inferred %v, want an error containing %q", c.name, op.Shape, c.err)
		case c.want == nil && !strings.Contains(err.Error(), c.err):
			t.Errorf("%s: error %q, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestBroadcastShapes checks NumPy broadcasting on hand-worked pairs: equal
// shapes (the first returned as is), stretched size-1 axes, added leading
// axes, rank 0, size 0, and mismatches.
func TestBroadcastShapes(t *testing.T) {
	a := []int{2, 3}
	if out, ok := BroadcastShapes(a, []int{2, 3}); !ok || &out[0] != &a[0] {
		t.Errorf("equal shapes: %v %v, want a itself", out, ok)
	}
	for _, c := range []struct {
		a, b, want []int
		ok         bool
	}{
		{[]int{2, 1, 4}, []int{3, 1}, []int{2, 3, 4}, true},
		{[]int{5}, []int{}, []int{5}, true},
		{[]int{}, []int{}, []int{}, true},
		{[]int{1, 0}, []int{3, 1}, []int{3, 0}, true},
		{[]int{4, 1, 1}, []int{2, 1, 1, 6}, []int{2, 4, 1, 6}, true},
		{[]int{4, 1, 1}, []int{2, 1, 6}, nil, false},
		{[]int{2, 3}, []int{3, 2}, nil, false},
		{[]int{0}, []int{2}, nil, false},
	} {
		out, ok := BroadcastShapes(c.a, c.b)
		if ok != c.ok || (ok && !slices.Equal(out, c.want)) {
			t.Errorf("BroadcastShapes(%v, %v) = %v, %v; want %v, %v", c.a, c.b, out, ok, c.want, c.ok)
		}
	}
}
