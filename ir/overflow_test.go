package ir

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestRangeLenExtremes checks Range.Len against hand-worked counts,
// including bounds and steps whose naive arithmetic overflows.
func TestRangeLenExtremes(t *testing.T) {
	for _, c := range []struct {
		r    Range
		want int
	}{
		{Range{0, 10, 3}, 4},          // 0 3 6 9
		{Range{-5, 5, 3}, 4},          // -5 -2 1 4
		{Range{2, 3, 1}, 1},           // 2
		{Range{3, 3, 1}, 0},           // empty
		{Range{4, 3, 1}, 0},           // reversed
		{Range{0, 5, 0}, 0},           // no step
		{Range{0, 5, -1}, 0},          // negative step
		{Range{0, 3, math.MaxInt}, 1}, // End - Start + Step - 1 overflows
		{Range{1, math.MaxInt, math.MaxInt}, 1},
		{Range{0, math.MaxInt, math.MaxInt}, 1},
		{Range{0, math.MaxInt, 1}, math.MaxInt},
		{Range{math.MinInt, 0, 1 << 62}, 2},           // MinInt, MinInt + 2^62
		{Range{math.MinInt, math.MaxInt, 1 << 62}, 4}, // distance 2^64 - 1
		{Range{math.MinInt, math.MaxInt, math.MaxInt}, 3},
		{Range{math.MinInt, math.MaxInt, 1}, math.MaxInt}, // 2^64 - 1 elements: reported as MaxInt
		{Range{math.MinInt, math.MaxInt, 2}, math.MaxInt}, // 2^63 elements
		{Range{math.MinInt, math.MaxInt, 3}, 6148914691236517205},
	} {
		if got := c.r.Len(); got != c.want {
			t.Errorf("%+v.Len() = %d, want %d", c.r, got, c.want)
		}
	}
}

// TestCheckShapeCountsEmptyShapes checks that every partial product of a
// valid shape's sizes fits an int, empty shapes included, and NumBytes.
func TestCheckShapeCountsEmptyShapes(t *testing.T) {
	for _, c := range []struct {
		shape []int
		err   string
	}{
		{[]int{}, ""},
		{[]int{0, 1 << 31, 1 << 31}, ""}, // 2^62 elements per unit of axis 0
		{[]int{1 << 31, 0, 1 << 31}, ""},
		{[]int{math.MaxInt, 0}, ""},
		{[]int{0, 1 << 62, 1 << 62}, "more elements"},
		{[]int{1 << 62, 1 << 62, 0}, "more elements"},
		{[]int{1 << 32, 0, 1 << 32}, "more elements"},
		{[]int{3, -1}, "negative"},
	} {
		err := CheckShape(c.shape)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("CheckShape(%v) = %v, want %q", c.shape, err, c.err)
		}
	}
	if n, err := NumBytes([]int{1 << 59, 2}, F64); err == nil {
		t.Errorf("NumBytes([2^59 2], f64) = %d, want an error (2^63 bytes)", n)
	}
	if n, err := NumBytes([]int{1 << 58, 2}, F64); err != nil || n != 1<<62 {
		t.Errorf("NumBytes([2^58 2], f64) = %d, %v, want 2^62", n, err)
	}
	if n, err := NumBytes([]int{0, 1 << 40}, F64); err != nil || n != 0 {
		t.Errorf("NumBytes([0 2^40], f64) = %d, %v, want 0", n, err)
	}
	if _, err := NewTensorData([]int{1 << 61, 1}, F64, nil); err == nil {
		t.Error("NewTensorData: 2^61 f64 elements (2^64 bytes, 0 when wrapped) accepted with no bytes")
	}
	if _, err := NewTensorData([]int{1 << 32, 1 << 32, 0}, F32, nil); err == nil {
		t.Error("NewTensorData: [2^32 2^32 0] accepted")
	}
	for _, shape := range [][]int{{1 << 32, 1 << 32, 1}, {0, 1 << 62, 4}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "more elements") {
					t.Errorf("FromSlice(nil, %v): recovered %v, want a panic about the element count", shape, r)
				}
			}()
			FromSlice([]float32{}, shape)
		}()
	}
}

// TestScalarFits checks which float64 values each dtype holds after
// truncation toward zero.
func TestScalarFits(t *testing.T) {
	for _, c := range []struct {
		v  float64
		dt DType
		ok bool
	}{
		{math.NaN(), F32, true},
		{math.Inf(-1), F16, true},
		{1e300, F32, true}, // rounds to +Inf, a value of F32
		{math.NaN(), Bool, true},
		{math.NaN(), I64, false},
		{math.Inf(1), I32, false},
		{math.Inf(-1), U8, false},
		{-0x1p63, I64, true},
		{0x1p63, I64, false},
		{0x1p63 - 1024, I64, true}, // the largest float64 below 2^63
		{-0.99, U64, true},         // truncates to 0
		{-1, U64, false},
		{0x1p64, U64, false},
		{0x1p64 - 2048, U64, true},
		{255.9, U8, true},
		{256, U8, false},
		{-128.9, I8, true},
		{-129, I8, false},
		{math.MaxInt32 + 0.5, I32, true},
		{math.MaxInt32 + 1, I32, false},
		{math.MaxUint32, U32, true},
		{-32768.5, I16, true},
		{65536, U16, false},
	} {
		if err := ScalarFits(c.v, c.dt); (err == nil) != c.ok {
			t.Errorf("ScalarFits(%v, %v) = %v, want ok=%v", c.v, c.dt, err, c.ok)
		}
	}
}

// TestInferSizeOverflow checks inference of sizes whose arithmetic
// overflows: padded pooling inputs, the weight gradient's spatial sizes,
// index selection, Full and Pad values a dtype cannot hold, and random
// distributions with infinite or overflowing parameters.
func TestInferSizeOverflow(t *testing.T) {
	ref := func(dt DType, shape ...int) Tensor { return NewRef(1, shape, dt) }
	pool := &Attrs{Pool: PoolOptions{Kernel: [2]int{3, 1}, Stride: [2]int{1, 1}, Padding: [2]int{1, 0}, Dilation: [2]int{1, 1}}}
	conv := &Attrs{Conv: ConvOptions{}.WithDefaults()}
	dilated := &Attrs{Conv: ConvOptions{Dilation: [2]int{4, 1}}.WithDefaults()}
	cases := []struct {
		name string
		op   Op
		want []int // nil when an error is expected
		err  string
	}{
		{"pool padded input overflows", Op{Kind: KindMaxPool2d, Attrs: pool, In: [3]Tensor{ref(F32, 1, 1, math.MaxInt-1, 1)}}, nil, "overflows"},
		{"pool padded input fits", Op{Kind: KindMaxPool2d, Attrs: pool, In: [3]Tensor{ref(F32, 1, 1, math.MaxInt-2, 1)}}, []int{1, 1, math.MaxInt - 2, 1}, ""},
		{"pool taps", Op{Kind: KindMaxPool2d, Attrs: &Attrs{Pool: PoolOptions{Kernel: [2]int{2048, 1024}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}}, In: [3]Tensor{ref(F32, 1, 1, 4096, 4096)}}, nil, "taps"},
		{"pool taps at the bound", Op{Kind: KindMaxPool2d, Attrs: &Attrs{Pool: PoolOptions{Kernel: [2]int{1024, 1024}, Stride: [2]int{1024, 1024}, Dilation: [2]int{1, 1}}}, In: [3]Tensor{ref(F32, 1, 1, 4096, 4096)}}, []int{1, 1, 4, 4}, ""},
		{"weight grad", Op{Kind: KindConv2dWeightGrad, Shape: []int{2, 3, 3, 3}, Attrs: conv, In: [3]Tensor{ref(F32, 1, 3, 5, 5), ref(F32, 1, 2, 3, 3)}}, []int{2, 3, 3, 3}, ""},
		{"weight grad spatial mismatch", Op{Kind: KindConv2dWeightGrad, Shape: []int{2, 3, 3, 3}, Attrs: conv, In: [3]Tensor{ref(F32, 1, 3, 5, 5), ref(F32, 1, 2, 4, 3)}}, nil, "not the output shape"},
		{"weight grad kernel too large", Op{Kind: KindConv2dWeightGrad, Shape: []int{1, 1, math.MaxInt, 1}, Attrs: conv, In: [3]Tensor{ref(F32, 1, 1, 5, 5), ref(F32, 1, 1, 1, 5)}}, nil, "not the output shape"},
		{"weight grad dilated kernel overflow", Op{Kind: KindConv2dWeightGrad, Shape: []int{1, 1, math.MaxInt / 2, 1}, Attrs: dilated, In: [3]Tensor{ref(F32, 1, 1, 5, 5), ref(F32, 1, 1, 1, 5)}}, nil, "overflow"},
		{"index select overflow", Op{Kind: KindIndexSelect, In: [3]Tensor{ref(F32, 1<<40, 1<<20), ref(I64, 1<<62)}}, nil, "more elements"},
		{"full NaN i64", Op{Kind: KindFull, DType: I64, Scalars: [2]float64{math.NaN()}}, nil, "not representable"},
		{"full 256 u8", Op{Kind: KindFull, DType: U8, Scalars: [2]float64{256}}, nil, "not representable"},
		{"full NaN f32", Op{Kind: KindFull, DType: F32, Scalars: [2]float64{math.NaN()}}, []int{}, ""},
		{"pad Inf i32", Op{Kind: KindPad, Ints: []int{1, 1}, Scalars: [2]float64{math.Inf(1)}, In: [3]Tensor{ref(I32, 2)}}, nil, "not representable"},
		{"uniform infinite", Op{Kind: KindRandom, Sub: uint8(DistUniform), DType: F32, Scalars: [2]float64{math.Inf(-1), math.Inf(1)}}, nil, "finite"},
		{"uniform width overflows", Op{Kind: KindRandom, Sub: uint8(DistUniform), DType: F64, Scalars: [2]float64{-math.MaxFloat64, math.MaxFloat64}}, nil, "overflows"},
		{"normal infinite std", Op{Kind: KindRandom, Sub: uint8(DistNormal), DType: F32, Scalars: [2]float64{0, math.Inf(1)}}, nil, "finite"},
		{"uniform beyond u8", Op{Kind: KindRandom, Sub: uint8(DistUniform), DType: U8, Scalars: [2]float64{0, 257}}, nil, "outside u8"},
		{"uniform negative u8", Op{Kind: KindRandom, Sub: uint8(DistUniform), DType: U8, Scalars: [2]float64{-1, 3}}, nil, "outside u8"},
		{"uniform all of u8", Op{Kind: KindRandom, Sub: uint8(DistUniform), DType: U8, Scalars: [2]float64{0, 256}}, []int{}, ""},
	}
	for _, c := range cases {
		op := c.op
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
