package ember

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// A 2×2 window of equal values sends the max-pool gradient to its first
// tap, as Tensor.MaxPool2d documents (PyTorch's max_pool2d), on flex (no
// kernel) and cpu (its kernel).
func TestMaxPoolTieGradientRoutesToFirstTap(t *testing.T) {
	for _, dev := range []Device{Flex().Autodiff(), CPU().Autodiff()} {
		x := FullDType([]int{1, 1, 2, 2}, 3, F64, dev).RequireGrad()
		y := x.MaxPool2d(PoolOptions{Kernel: [2]int{2, 2}})
		g := y.Sum().Backward().Of(x).Float64s()
		if !slices.Equal(g, []float64{1, 0, 0, 0}) {
			t.Errorf("%v: gradient %v, want [1 0 0 0]", dev, g)
		}
	}
}

func TestShapeOverflowIsAnError(t *testing.T) {
	cases := map[string]func(){
		"zeros":  func() { Zeros([]int{1 << 32, 1 << 32}, Flex()) },
		"expand": func() { Ones([]int{1, 1}, Flex()).Expand(1<<32, 1<<32) },
		"add":    func() { Ones([]int{1, 1}, Flex()).Expand(1<<31, 1).Add(Ones([]int{1, 1}, Flex()).Expand(1, 1<<33)) },
	}
	for name, f := range cases {
		err := Try(f)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "more elements than an int can count") {
			t.Errorf("%s: err = %v, want an *Error about the element count", name, err)
		}
	}
}

func TestHugeAllocationIsOutOfMemory(t *testing.T) {
	if hostMemory() == ^uint64(0) {
		t.Skip("host memory size unknown on this platform")
	}
	err := Try(func() { Zeros([]int{1 << 50}, Flex()) })
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "[1125899906842624]") {
		t.Fatalf("err = %v, want ErrOutOfMemory naming the shape", err)
	}
}

func TestNilOperandIsAnError(t *testing.T) {
	x := Ones([]int{2}, Flex())
	err := Try(func() { x.Add(nil) })
	if err == nil || !strings.Contains(err.Error(), "operand rhs is a nil *Tensor") {
		t.Fatalf("err = %v", err)
	}
}

func TestTryReraisesRuntimeErrors(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("Try swallowed a runtime error")
		}
	}()
	var s []int
	_ = Try(func() { _ = s[3] })
}

func TestRandomRejectsBadParameters(t *testing.T) {
	for name, d := range map[string]Distribution{"nan": Bernoulli(nanValue()), "reversed": Uniform(1, 0), "std": Normal(0, -1)} {
		if err := Try(func() { Random([]int{2}, d, Flex()) }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func nanValue() float64 { z := 0.0; return z / z }

// A decomposition's intermediates are checked against the device's memory
// like the op's own output: max pooling composed from 256×256 window views
// would stack ~4 TB of them on Flex, which must be an *Error wrapping
// ErrOutOfMemory, not a crash of the process.
func TestDecompositionIntermediateIsOutOfMemory(t *testing.T) {
	if hostMemory() == ^uint64(0) {
		t.Skip("host memory size unknown on this platform")
	}
	x := Zeros([]int{1, 1, 4096, 4096}, Flex())
	err := Try(func() { x.MaxPool2d(PoolOptions{Kernel: [2]int{256, 256}, Stride: [2]int{1, 1}}) })
	var e *Error
	if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error wrapping ErrOutOfMemory", err)
	}
}

// TestOptimStepRejectsNonFiniteHyperparameters checks that the fused
// optimizer updates refuse a NaN or infinite hyperparameter with an
// *Error naming it, instead of turning every parameter into NaN, and that
// finite ones still update (one SGD step, checked by hand).
func TestOptimStepRejectsNonFiniteHyperparameters(t *testing.T) {
	dev := CPU()
	p := FromFloats([]float32{1, -2, 3}, []int{3}, dev)
	g := FromFloats([]float32{0.5, 0.25, -1}, []int{3}, dev)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		adam := []OptimUpdate{
			{LR: bad, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1},
			{LR: 1e-3, Beta1: bad, Beta2: 0.999, Eps: 1e-8, Step: 1},
			{LR: 1e-3, Beta1: 0.9, Beta2: bad, Eps: 1e-8, Step: 1},
			{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: bad, Step: 1},
			{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: bad, Step: 1},
		}
		for i, u := range adam {
			err := Try(func() { AdamStep(p, g, ZerosLike(p), ZerosLike(p), u) })
			if err == nil || !strings.Contains(err.Error(), "must be finite") || !strings.Contains(err.Error(), "adam_step") {
				t.Errorf("AdamStep with hyperparameter %d = %v: got %v, want an error naming it", i, bad, err)
			}
		}
		for i, u := range []OptimUpdate{{LR: bad}, {LR: 0.1, Momentum: bad}, {LR: 0.1, WeightDecay: bad}} {
			err := Try(func() { SGDStep(p, g, nil, u) })
			if err == nil || !strings.Contains(err.Error(), "must be finite") {
				t.Errorf("SGDStep with hyperparameter %d = %v: got %v, want an error naming it", i, bad, err)
			}
		}
	}
	got, _ := SGDStep(p, g, nil, OptimUpdate{LR: 0.5})
	for i, want := range []float32{1 - 0.25, -2 - 0.125, 3 + 0.5} {
		if v := got.Float32s()[i]; v != want {
			t.Errorf("SGD step element %d: got %v, want %v", i, v, want)
		}
	}
}

// TestEmptyViewsAndEmptyContractions checks, on every device, that ops on
// empty views whose offset lies past their storage (a slice of an empty
// tensor) give empty results, and that a matrix product over an empty
// inner axis is zeros whatever the operands' layouts.
func TestEmptyViewsAndEmptyContractions(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		for _, dt := range []DType{F32, F64, I64} {
			err := Try(func() {
				if s := Zeros([]int{0, 2}, dev).Cast(dt).Slice(All(), R(1, 2)).Sum().Float64s(); s[0] != 0 {
					t.Errorf("%v: sum of an empty view %v", dt, s)
				}
				b := Zeros([]int{1, 0, 2, 2}, dev).Cast(dt).Narrow(3, 1, 1).Squeeze(3).AddScalar(1)
				if !slices.Equal(b.Shape(), []int{1, 0, 2}) {
					t.Errorf("%v: add on an empty view has shape %v", dt, b.Shape())
				}
				if dt.IsFloat() {
					m := FromFloats([]float32{}, []int{2, 2, 3, 0}, dev).Cast(dt).Matmul(FromFloats([]float32{}, []int{2, 0, 2, 2}, dev).Cast(dt).Permute(0, 2, 1, 3))
					if got := m.Float64s(); len(got) != 24 || slices.Max(got) != 0 || slices.Min(got) != 0 {
						t.Errorf("%v: batched matmul over k = 0: %v, want 24 zeros", dt, got)
					}
				}
			})
			if err != nil {
				t.Errorf("%v: %v", dt, err)
			}
		}
	})
}

// TestResamplingAndUnpoolingLimits checks that sizes whose dense
// resampling matrix or output could never be built are *Errors naming the
// op (not a fatal out-of-memory), and that unpooling writes an element
// several overlapping windows selected once, as PyTorch: [1, 5, 2] pooled
// by 1x2 windows with stride 1 unpools to [0, 5, 0].
func TestResamplingAndUnpoolingLimits(t *testing.T) {
	dev := CPU()
	img := Ones([]int{1, 1, 2, 2}, dev)
	expectPanic(t, "interpolate huge", func() { img.Interpolate([2]int{1 << 40, 1 << 40}, InterpNearest, false) }, "interpolate", "weight matrix")
	expectPanic(t, "interpolate tall", func() { img.Interpolate([2]int{1 << 31, 1}, InterpBilinear, false) }, "interpolate", "weight matrix")
	expectPanic(t, "adaptive avg huge", func() { img.AdaptiveAvgPool2d(1<<40, 1<<40) }, "adaptive_avg_pool2d", "weight matrix")
	x := FromFloats([]float32{1, 5, 2}, []int{1, 1, 1, 3}, dev)
	o := PoolOptions{Kernel: [2]int{1, 2}, Stride: [2]int{1, 1}}
	v, i := x.MaxPool2dWithIndices(o)
	if got := v.MaxUnpool2d(i, o, [2]int{1, 3}).Float32s(); got[0] != 0 || got[1] != 5 || got[2] != 0 {
		t.Errorf("unpooling overlapping windows: %v, want [0 5 0]", got)
	}
	expectPanic(t, "unpool huge", func() { v.MaxUnpool2d(i, o, [2]int{1 << 40, 1 << 40}) }, "max_unpool2d", "countable")
	expectPanic(t, "unpool index outside", func() { v.MaxUnpool2d(i, o, [2]int{1, 1}) }, "max_unpool2d", "outside the output plane")
}
