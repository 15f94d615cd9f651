package ember

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// autocastDevices are the devices the autocast tests run on: the policy is
// the root package's, the 16-bit kernels are each backend's.
func autocastDevices() []Device { return []Device{CPU(), Flex()} }

// unitRoundoff is the largest relative rounding error of dt (half an ulp
// at the bottom of a binade): 2^-8 for BF16, 2^-11 for F16, 2^-24 for F32.
func unitRoundoff(dt DType) float64 {
	switch dt {
	case BF16:
		return 0x1p-8
	case F16:
		return 0x1p-11
	case F32:
		return 0x1p-24
	}
	return 0x1p-53
}

// TestAutocastOpDTypes checks the dtype each op class returns on an
// autocast device (matmul and convolutions in the low precision, sums,
// softmax and norms in F32, everything else as its operands say, F64 and
// integers untouched) and that the same ops on the device without
// autocast keep their usual dtypes.
func TestAutocastOpDTypes(t *testing.T) {
	rng := newRNG(1)
	for _, dev := range autocastDevices() {
		for _, lp := range []DType{BF16, F16} {
			amp := dev.Autocast(lp)
			for _, c := range []struct {
				name  string
				f     func(o operands) *Tensor
				amp   DType // on the autocast device
				plain DType // the same operands on dev
			}{
				{"matmul f32", func(o operands) *Tensor { return o.f32(3, 4).Matmul(o.f32(4, 5)) }, lp, F32},
				{"matmul low·f32", func(o operands) *Tensor { return o.low(3, 4).Matmul(o.f32(4, 5)) }, lp, F32},
				{"matmul vector", func(o operands) *Tensor { return o.f32(4).Matmul(o.f32(4, 2)) }, lp, F32},
				{"matmul f64", func(o operands) *Tensor { return o.f64(3, 4).Matmul(o.f64(4, 5)) }, F64, F64},
				{"matmul f64·f32", func(o operands) *Tensor { return o.f64(3, 4).Matmul(o.f32(4, 5)) }, F64, F64},
				{"matmul i64", func(o operands) *Tensor { return o.i64(3, 4).Matmul(o.i64(4, 5)) }, I64, I64},
				{"einsum", func(o operands) *Tensor { return Einsum("ij,jk->ik", o.f32(3, 4), o.f32(4, 5)) }, lp, F32},
				{"conv2d+bias", func(o operands) *Tensor { return o.f32(2, 3, 6, 6).Conv2d(o.f32(4, 3, 3, 3), o.f32(4), ConvOptions{}) }, lp, F32},
				{"conv1d", func(o operands) *Tensor { return o.f32(2, 3, 8).Conv1d(o.f32(4, 3, 3), nil, Conv1dOptions{}) }, lp, F32},
				{"conv_transpose2d", func(o operands) *Tensor {
					return o.f32(1, 3, 4, 4).ConvTranspose2d(o.f32(3, 2, 3, 3), nil, ConvOptions{})
				}, lp, F32},
				{"sum low", func(o operands) *Tensor { return o.low(3, 4).Sum() }, F32, lp},
				{"sum f32", func(o operands) *Tensor { return o.f32(3, 4).SumAxis(1, false) }, F32, F32},
				{"sum f64", func(o operands) *Tensor { return o.f64(3, 4).Sum() }, F64, F64},
				{"sum i64", func(o operands) *Tensor { return o.i64(3, 4).Sum() }, I64, I64},
				{"mean low", func(o operands) *Tensor { return o.low(3, 4).MeanAxis(0, true) }, F32, lp},
				{"var low", func(o operands) *Tensor { return o.low(3, 4).Var(1, 1, false) }, F32, lp},
				{"prod low", func(o operands) *Tensor { return o.low(3, 4).Prod() }, F32, lp},
				{"cumsum low", func(o operands) *Tensor { return o.low(3, 4).CumSum(1) }, F32, lp},
				{"softmax low", func(o operands) *Tensor { return o.low(3, 4).Softmax(1) }, F32, lp},
				{"log_softmax low", func(o operands) *Tensor { return o.low(3, 4).LogSoftmax(-1) }, F32, lp},
				{"logsumexp low", func(o operands) *Tensor { return o.low(3, 4).LogSumExp(1, false) }, F32, lp},
				{"layer_norm low", func(o operands) *Tensor {
					return o.low(3, 4).LayerNorm([]int{4}, NormParams{Weight: o.low(4), Bias: o.low(4)}, 1e-5)
				}, F32, lp},
				{"rms_norm low", func(o operands) *Tensor { return o.low(3, 4).RMSNorm([]int{4}, NormParams{}, 1e-6) }, F32, lp},
				{"max low", func(o operands) *Tensor { return o.low(3, 4).MaxAxis(1, false) }, lp, lp},
				{"argmax low", func(o operands) *Tensor { return o.low(3, 4).Argmax(1, false) }, I64, I64},
				{"relu low", func(o operands) *Tensor { return o.low(3, 4).Relu() }, lp, lp},
				{"exp low", func(o operands) *Tensor { return o.low(3, 4).Exp() }, lp, lp},
				{"add low+f32", func(o operands) *Tensor { return o.low(3, 4).Add(o.f32(4)) }, F32, F32},
				{"mul low·low", func(o operands) *Tensor { return o.low(3, 4).Mul(o.low(3, 4)) }, lp, lp},
			} {
				name := fmt.Sprintf("%v/%v/%s", dev, lp, c.name)
				y := c.f(operands{amp, lp, rng})
				if got := y.DType(); got != c.amp {
					t.Errorf("%s: autocast result %v, want %v", name, got, c.amp)
				}
				if y.Device() != amp {
					t.Errorf("%s: result on %v, want %v", name, y.Device(), amp)
				}
				if got := c.f(operands{dev, lp, rng}).DType(); got != c.plain {
					t.Errorf("%s: without autocast %v, want %v", name, got, c.plain)
				}
			}
		}
	}
}

// operands makes random non-zero operands of one dtype on one device.
type operands struct {
	dev Device
	lp  DType // the low precision
	rng *rand.Rand
}

func (o operands) of(dt DType, shape []int) *Tensor {
	gen := nonZero(o.rng, 0.1, 1)
	if dt == I64 {
		gen = ints(o.rng, -3, 3)
	}
	return mk(o.dev, randRef(shape, dt, gen), dt)
}
func (o operands) f32(shape ...int) *Tensor { return o.of(F32, shape) }
func (o operands) f64(shape ...int) *Tensor { return o.of(F64, shape) }
func (o operands) i64(shape ...int) *Tensor { return o.of(I64, shape) }
func (o operands) low(shape ...int) *Tensor { return o.of(o.lp, shape) }

// TestAutocastMatmulValues checks an autocast product against the
// reference computed another way: the operands rounded to the autocast
// dtype, multiplied in float64 and rounded once more. The kernels
// accumulate in float32, which may move the result across a rounding
// boundary: the tolerance is one ulp of the result plus the float32
// accumulation bound k·2^-24·Σ|a||b|.
func TestAutocastMatmulValues(t *testing.T) {
	rng := newRNG(2)
	const m, k, n = 5, 37, 6
	a := randRef([]int{m, k}, F32, nonZero(rng, 0.05, 2))
	b := randRef([]int{k, n}, F32, nonZero(rng, 0.05, 2))
	for _, dev := range autocastDevices() {
		for _, lp := range []DType{BF16, F16} {
			got := mk(dev.Autocast(lp), a, F32).Matmul(mk(dev, b, F32))
			if got.DType() != lp {
				t.Fatalf("%v/%v: dtype %v", dev, lp, got.DType())
			}
			vals := got.Float64s()
			for i := range m {
				for j := range n {
					var s, abs float64
					for p := range k {
						x, y := quantize(a.at(i, p), lp), quantize(b.at(p, j), lp)
						s += x * y
						abs += math.Abs(x * y)
					}
					want := quantize(s, lp)
					tol := 2*unitRoundoff(lp)*math.Abs(want) + float64(k)*0x1p-24*abs
					if d := math.Abs(vals[i*n+j] - want); d > tol {
						t.Errorf("%v/%v: [%d,%d] = %v, want %v (±%.3g)", dev, lp, i, j, vals[i*n+j], want, tol)
					}
				}
			}
		}
	}
}

// TestAutocastDevice checks the device value: its name and ParseDevice,
// Equal, AutocastDType, WithoutAutocast, Inner, the combination of
// operands from devices that differ in autodiff and autocast, ToDevice
// between such devices, and the misuse panics.
func TestAutocastDevice(t *testing.T) {
	cpu := CPU()
	amp := cpu.Autodiff().GradientCheckpointing().Autocast(BF16)
	if got, want := amp.String(), "cpu+autodiff+checkpointing+autocast:bf16"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for _, d := range []Device{cpu.Autocast(F16), cpu.Autodiff().Autocast(BF16), amp, Flex().Autocast(F16)} {
		p, err := ParseDevice(d.String())
		if err != nil || p != d {
			t.Errorf("ParseDevice(%q) = %v, %v; want the device back", d.String(), p, err)
		}
	}
	for _, name := range []string{"remote+ws://host:3000/0+autodiff+autocast:bf16", "capture:7+autocast:f16", "cuda:1+autodiff+checkpointing+autocast:f16"} {
		if d, err := ParseDevice(name); err != nil || d.String() != name {
			t.Errorf("ParseDevice(%q) = %v, %v", name, d, err)
		}
	}
	for _, bad := range []string{"cpu+autocast", "cpu+autocast:f32", "cpu+autocast:bf16+autodiff", "cpu+autocast:bf16+autocast:f16", "cpu+autocast:"} {
		if _, err := ParseDevice(bad); err == nil || !strings.Contains(err.Error(), "autocast") {
			t.Errorf("ParseDevice(%q): %v, want an error about autocast", bad, err)
		}
	}
	if !amp.Equal(cpu) || !amp.IsAutodiff() {
		t.Errorf("%v: Equal(cpu) %v, IsAutodiff %v", amp, amp.Equal(cpu), amp.IsAutodiff())
	}
	if dt, ok := amp.AutocastDType(); dt != BF16 || !ok {
		t.Errorf("AutocastDType = %v, %v", dt, ok)
	}
	if dt, ok := cpu.AutocastDType(); dt != 0 || ok {
		t.Errorf("cpu AutocastDType = %v, %v", dt, ok)
	}
	if d := amp.WithoutAutocast(); d != cpu.Autodiff().GradientCheckpointing() {
		t.Errorf("WithoutAutocast = %v", d)
	}
	if d := amp.Inner(); d != cpu {
		t.Errorf("Inner = %v, want cpu", d)
	}
	for _, dt := range []DType{F32, F64, I64, 0} {
		err := Try(func() { cpu.Autocast(dt) })
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "bf16 or f16") {
			t.Errorf("Autocast(%v): %v, want an *Error naming the dtypes", dt, err)
		}
	}
	if err := Try(func() { (Device{}).Autocast(BF16) }); err == nil {
		t.Error("Autocast of the zero Device did not panic")
	}

	// Operands from an untracked autocast tensor and a tracked F32 leaf:
	// the result is tracked and autocast, and its gradient reaches w.
	adev := cpu.Autodiff()
	w := FromFloats([]float32{1, 2, 3, 4}, []int{2, 2}, adev).RequireGrad()
	x := FromFloats([]float32{0.5, -1, 2, 0.25}, []int{2, 2}, cpu.Autocast(BF16))
	y := x.Matmul(w)
	if want := "cpu+autodiff+autocast:bf16"; y.Device().String() != want || !y.IsTracked() || y.DType() != BF16 {
		t.Errorf("x·w on %v tracked %v dtype %v, want %s, tracked, bf16", y.Device(), y.IsTracked(), y.DType(), want)
	}
	if g := y.Sum().Backward().Of(w); g == nil || g.DType() != F32 || g.Device() != cpu {
		t.Errorf("gradient of w: %v", g)
	}
	// ToDevice between devices that differ only in autocast keeps the
	// value and its tracking and copies nothing.
	wa := w.ToDevice(adev.Autocast(F16))
	if !wa.IsTracked() || wa.Primitive() != w.Primitive() || wa.Device() != adev.Autocast(F16) {
		t.Errorf("ToDevice to the autocast device: tracked %v, same primitive %v, device %v", wa.IsTracked(), wa.Primitive() == w.Primitive(), wa.Device())
	}
	if back := wa.ToDevice(adev); back.Device() != adev || !back.IsTracked() {
		t.Errorf("ToDevice back: %v tracked %v", back.Device(), back.IsTracked())
	}
	if p := wa.Inner(); p.Device() != cpu || p.IsTracked() {
		t.Errorf("Inner of an autocast tensor: %v tracked %v", p.Device(), p.IsTracked())
	}
}

// TestAutocastConcurrent runs autocast and plain products of the same
// operands from many goroutines at once: every result must equal the one
// computed alone (an autocast device is an immutable value; the test runs
// under -race in CI).
func TestAutocastConcurrent(t *testing.T) {
	rng := newRNG(6)
	a := randRef([]int{8, 16}, F32, nonZero(rng, 0.1, 1))
	b := randRef([]int{16, 8}, F32, nonZero(rng, 0.1, 1))
	cpu := CPU()
	devs := []Device{cpu, cpu.Autocast(BF16), cpu.Autocast(F16), cpu.Autodiff().Autocast(BF16)}
	want := make([][]float64, len(devs))
	for i, d := range devs {
		want[i] = mk(d, a, F32).Matmul(mk(cpu, b, F32)).Softmax(1).Float64s()
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 8 {
				i := (g + r) % len(devs)
				got := mk(devs[i], a, F32).Matmul(mk(cpu, b, F32)).Softmax(1).Float64s()
				if !bitsEqual(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d on %v: %v, want %v", g, devs[i], got[:3], want[i][:3])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAutocastCaptured checks that a graph captured on an autocast device
// records the casts and the low-precision product, and replays on cpu
// with the eager result.
func TestAutocastCaptured(t *testing.T) {
	rng := newRNG(7)
	a := randRef([]int{3, 5}, F32, nonZero(rng, 0.1, 1))
	b := randRef([]int{5, 2}, F32, nonZero(rng, 0.1, 1))
	want := mk(CPU().Autocast(BF16), a, F32).Matmul(mk(CPU(), b, F32)).LogSoftmax(1).Float64s()
	cdev := Capture()
	g, err := cdev.CaptureScope(func(s *CaptureScope) CompletedCaptureScope {
		x := mk(cdev.Autocast(BF16), a, F32)
		y := mk(cdev, b, F32)
		out := x.Matmul(y).LogSoftmax(1)
		if out.DType() != F32 {
			t.Errorf("captured log_softmax: %v, want f32", out.DType())
		}
		return s.Complete([]TensorID{x.ID(), y.ID()}, []TensorID{out.ID()})
	})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, r := range g.Operations {
		ops = append(ops, fmt.Sprintf("%s:%v", r.Kind, r.DType))
	}
	joined := strings.Join(ops, " ")
	for _, want := range []string{"cast:bf16", "matmul:bf16", "cast:f32", "log_softmax:f32"} {
		if !strings.Contains(joined, want) {
			t.Errorf("captured ops %q lack %s", joined, want)
		}
	}
	outs, err := g.Run(CPU(), mk(CPU(), a, F32), mk(CPU(), b, F32))
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Float64s(); !bitsEqual(got, want) {
		t.Errorf("replayed %v, eager %v", got, want)
	}
}
