package ember

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// wantMisuse runs f, which must panic with an *Error for op whose message
// holds every fragment. Any other outcome fails the test, a Go runtime
// panic included (reported rather than crashing the test binary).
func wantMisuse(t *testing.T, what, op string, f func(), fragments ...string) {
	t.Helper()
	var err error
	crashed := func() (crashed bool) {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panicked with %T %v, want an *Error", what, r, r)
				crashed = true
			}
		}()
		err = Try(f)
		return false
	}()
	if crashed {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want an *Error for %s", what, err, op)
		return
	}
	if e.Op != op {
		t.Errorf("%s: Error.Op = %q, want %q (%v)", what, e.Op, op, err)
	}
	for _, fr := range fragments {
		if !strings.Contains(err.Error(), fr) {
			t.Errorf("%s: message %q lacks %q", what, err.Error(), fr)
		}
	}
}

// noPanic runs f and reports a panic of any kind as a failure; it returns
// whether f returned normally.
func noPanic(t *testing.T, what string, f func()) (ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panicked with %v", what, r)
			ok = false
		}
	}()
	f()
	return true
}

// TestSizeArithmeticOverflowIsAnError gives every size computation extreme
// arguments: slice and narrow bounds and steps, padded and dilated
// pooling and convolution extents, empty shapes whose other sizes
// multiply past an int, host data whose byte count wraps, and the
// variance's divisor. Each either gets an *Error naming the op or, where
// the arguments are valid, the hand-worked result.
func TestSizeArithmeticOverflowIsAnError(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		x := FromFloats([]float32{0, 1, 2, 3, 4, 5}, []int{2, 3}, dev)
		v := FromFloats([]float32{10, 11, 12}, []int{3}, dev)

		wantMisuse(t, "Narrow(0, 1, MaxInt)", "narrow", func() { x.Narrow(0, 1, math.MaxInt) }, "outside axis 0 of size 2")
		wantMisuse(t, "Narrow(0, MaxInt, 1)", "narrow", func() { x.Narrow(0, math.MaxInt, 1) }, "outside axis 0")
		wantMisuse(t, "Narrow(0, -1, MaxInt)", "narrow", func() { x.Narrow(0, -1, math.MaxInt) }, "outside axis 0")
		wantMisuse(t, "Narrow(1, MinInt, 1)", "narrow", func() { x.Narrow(1, math.MinInt, 1) }, "outside axis 1")
		if noPanic(t, "Narrow(0, 2, 0)", func() { x.Narrow(0, 2, 0) }) {
			if s := x.Narrow(0, 2, 0).Shape(); !slices.Equal(s, []int{0, 3}) {
				t.Errorf("Narrow(0, 2, 0): shape %v, want [0 3]", s)
			}
		}
		checkEq(t, "Narrow(0, -1, 1)", x.Narrow(0, -1, 1), ref{[]int{1, 3}, []float64{3, 4, 5}}, F32)

		// Steps and bounds past any axis: Python's clamping, then as many
		// elements as the step reaches.
		checkEq(t, "Slice step MaxInt", v.Slice(Range{Start: 0, End: 3, Step: math.MaxInt}), ref{[]int{1}, []float64{10}}, F32)
		checkEq(t, "Slice [1:MaxInt:MaxInt]", v.Slice(Range{Start: 1, End: math.MaxInt, Step: math.MaxInt}), ref{[]int{1}, []float64{11}}, F32)
		checkEq(t, "Slice [MinInt:MaxInt:2]", v.Slice(Range{Start: math.MinInt, End: math.MaxInt, Step: 2}), ref{[]int{2}, []float64{10, 12}}, F32)
		checkEq(t, "Slice [-1:MaxInt:MaxInt-1]", v.Slice(Range{Start: -1, End: math.MaxInt, Step: math.MaxInt - 1}), ref{[]int{1}, []float64{12}}, F32)
		checkEq(t, "Slice [MinInt:MinInt]", x.Slice(Range{Start: math.MinInt, End: math.MinInt}), ref{[]int{0, 3}, nil}, F32)
		checkEq(t, "Slice of a stepped row", x.Slice(All(), Range{Start: 2, End: math.MaxInt, Step: 1 << 62}), ref{[]int{2, 1}, []float64{2, 5}}, F32)

		// Padded and dilated windows whose extents overflow an int.
		tall := Ones([]int{1, 1, 1, 1}, dev).Expand(1, 1, math.MaxInt-1, 1)
		img := Ones([]int{1, 1, 5, 5}, dev)
		w := Ones([]int{1, 1, 3, 3}, dev)
		wantMisuse(t, "max pool, padded height overflows", "max_pool2d", func() {
			tall.MaxPool2d(PoolOptions{Kernel: [2]int{3, 1}, Padding: [2]int{1, 0}})
		}, "overflows")
		wantMisuse(t, "avg pool, padded height overflows", "avg_pool2d", func() {
			tall.AvgPool2d(PoolOptions{Kernel: [2]int{3, 1}, Padding: [2]int{1, 0}, Stride: [2]int{1 << 30, 1}}, false)
		}, "overflows")
		wantMisuse(t, "max pool dilation 1<<62", "max_pool2d", func() {
			img.MaxPool2d(PoolOptions{Kernel: [2]int{2, 2}, Dilation: [2]int{1 << 62, 1}})
		}, "out of range")
		wantMisuse(t, "avg pool kernel 1<<62", "avg_pool2d", func() {
			img.AvgPool2d(PoolOptions{Kernel: [2]int{1 << 62, 1}}, true)
		}, "out of range")
		wantMisuse(t, "conv dilation 1<<62", "conv2d", func() {
			img.Conv2d(w, nil, ConvOptions{Dilation: [2]int{1 << 62, 1}})
		}, "out of range")
		wantMisuse(t, "conv padded height overflows", "conv2d", func() {
			tall.Conv2d(w, nil, ConvOptions{Padding: [2]int{1, 1}, Stride: [2]int{1 << 30, 1}})
		}, "overflow")
		wantMisuse(t, "conv transpose stride 1<<62", "conv_transpose2d", func() {
			img.ConvTranspose2d(w, nil, ConvOptions{Stride: [2]int{1 << 62, 1}})
		}, "out of range")
		wantMisuse(t, "pad MaxInt", "pad", func() { x.Pad([]int{math.MaxInt, 1}, 0) }, "overflows")
		wide := Ones([]int{1, 1, 1, 1}, dev).Expand(1, 1, 1<<20, 1<<20)
		wantMisuse(t, "avg pool of 2^40 taps", "avg_pool2d", func() {
			wide.AvgPool2d(PoolOptions{Kernel: [2]int{1 << 20, 1 << 20}}, true)
		}, "taps")
		wantMisuse(t, "max pool of 2^40 taps", "max_pool2d", func() {
			wide.MaxPool2d(PoolOptions{Kernel: [2]int{1 << 20, 1 << 20}})
		}, "taps")
		wantMisuse(t, "conv transpose Cout·groups overflows", "conv_transpose2d", func() {
			img.ConvTranspose2d(Ones([]int{1, 1, 1, 1}, dev).Expand(1, 1<<40, 1, 1), Ones([]int{1}, dev), ConvOptions{Groups: 1 << 30})
		}, "groups")

		// Empty shapes are held to the same bound as others: every stride
		// and flattened size of a valid shape fits an int.
		wantMisuse(t, "Zeros([0 2^62 2^62])", "full", func() { Zeros([]int{0, 1 << 62, 1 << 62}, dev) }, "more elements than an int can count")
		wantMisuse(t, "Zeros([0 2^40 2^40])", "full", func() { Zeros([]int{0, 1 << 40, 1 << 40}, dev).Flatten(1, 2) }, "more elements than an int can count")
		e := Zeros([]int{0, 3}, dev)
		wantMisuse(t, "Reshape(2^32, 2^32, 0)", "reshape", func() { e.Reshape(1<<32, 1<<32, 0) }, "more elements than an int can count")
		wantMisuse(t, "Expand(0, 2^62, 2^62)", "expand", func() { Zeros([]int{0, 1, 1}, dev).Expand(0, 1<<62, 1<<62) }, "more elements than an int can count")
		if noPanic(t, "Zeros([0 2^31 2^31])", func() { Zeros([]int{0, 1 << 31, 1 << 31}, dev) }) {
			z := Zeros([]int{0, 1 << 31, 1 << 31}, dev)
			if s := z.Flatten(1, 2).Shape(); !slices.Equal(s, []int{0, 1 << 62}) {
				t.Errorf("Flatten of [0 2^31 2^31]: %v, want [0 2^62]", s)
			}
		}

		// Host data whose byte count wraps to what it holds.
		wantMisuse(t, "FromData [2^61 1] f64", "from_data", func() {
			FromData(&TensorData{Shape: []int{1 << 61, 1}, DType: F64}, dev)
		}, "more bytes than an int can count")
		wantMisuse(t, "FromData [2^32 2^32 0]", "from_data", func() {
			FromData(&TensorData{Shape: []int{1 << 32, 1 << 32, 0}, DType: F32}, dev)
		}, "more elements")
		wantMisuse(t, "FromFloats [2^32 2^32 1]", "from_floats", func() {
			FromFloats([]float32{}, []int{1 << 32, 1 << 32, 1}, dev)
		}, "more elements")

		// The variance's divisor N - correction, for any correction.
		if noPanic(t, "Var(correction MinInt)", func() { v.Var(0, math.MinInt, false) }) {
			// Σ(x - mean)² = 2 over 3 - MinInt = 2^63 + 3 terms.
			got, want := v.Var(0, math.MinInt, false).Item(), 2/(0x1p63+3)
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("Var(correction MinInt) = %v, want %v", got, want)
			}
		}
		checkEq(t, "Var(correction MaxInt)", v.Var(0, math.MaxInt, false), ref{[]int{}, []float64{math.Inf(1)}}, F32)
	})
}
