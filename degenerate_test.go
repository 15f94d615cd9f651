package ember

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
)

// nilArgResult calls f and classifies its outcome for a nil or zero tensor
// operand: "" when f panicked with (or returned, as its last result) an
// *Error whose message names the bad operand, else what happened.
func nilArgResult(f func() []reflect.Value) string {
	var out []reflect.Value
	var r any
	func() {
		defer func() { r = recover() }()
		out = f()
	}()
	err, _ := r.(error)
	if r == nil && len(out) > 0 {
		if last := out[len(out)-1]; last.Type() == reflect.TypeFor[error]() && !last.IsNil() {
			err = last.Interface().(error)
		}
	}
	var e *Error
	switch {
	case r == nil && err == nil:
		return "no error"
	case !errors.As(err, &e):
		return fmt.Sprintf("panicked with %T %v", r, r)
	case e.Op == "":
		return fmt.Sprintf("*Error without an op: %v", err)
	case !strings.Contains(err.Error(), "nil") && !strings.Contains(err.Error(), "zero Tensor"):
		return fmt.Sprintf("*Error not naming the nil operand: %v", err)
	}
	return ""
}

// argsFor returns arguments for the parameters of method type mt after the
// receiver (variadic ones left empty): good for each *Tensor parameter,
// zero values otherwise (a Device is dev).
func argsFor(mt reflect.Type, good *Tensor, dev Device) []reflect.Value {
	n := mt.NumIn()
	if mt.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for j := 1; j < n; j++ {
		switch p := mt.In(j); p {
		case reflect.TypeFor[*Tensor]():
			args[j] = reflect.ValueOf(good)
		case reflect.TypeFor[Device]():
			args[j] = reflect.ValueOf(dev)
		default:
			args[j] = reflect.Zero(p)
		}
	}
	return args
}

// optionalTensorArgs are the *Tensor parameters (method, index after the
// receiver) documented to accept nil.
var optionalTensorArgs = map[string]int{"Conv2d": 2, "ConvTranspose2d": 2, "Conv1d": 2, "Conv3d": 2,
	"ConvTranspose1d": 2, "ConvTranspose3d": 2, "Conv2dPadded": 2}

// nilSafeMethods answer for a nil receiver without misuse (IsTracked:
// false; String and Format print "<nil>", as fmt does for nil pointers).
var nilSafeMethods = map[string]bool{"IsTracked": true, "String": true, "Format": true}

// TestNilTensorIsAnErrorEverywhere calls every exported method of *Tensor
// with a nil (and a zero) receiver, and with each of its *Tensor
// parameters nil (and zero), and every exported function that takes
// tensors with each of them nil: each must panic with (or return) an
// *Error naming the op and the missing operand, never a Go runtime panic.
func TestNilTensorIsAnErrorEverywhere(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		good := Ones([]int{2, 2}, dev.Autodiff()).RequireGrad()
		typ := reflect.TypeFor[*Tensor]()
		for _, bad := range []*Tensor{nil, new(Tensor)} {
			kind := "nil"
			if bad != nil {
				kind = "zero"
			}
			for i := range typ.NumMethod() {
				m := typ.Method(i)
				args := argsFor(m.Type, good, dev)
				if !nilSafeMethods[m.Name] {
					args[0] = reflect.ValueOf(bad)
					if msg := nilArgResult(func() []reflect.Value { return m.Func.Call(args) }); msg != "" {
						t.Errorf("(%s *Tensor).%s: %s", kind, m.Name, msg)
					}
				}
				for j := 1; j < len(args); j++ {
					if m.Type.In(j) != typ || optionalTensorArgs[m.Name] == j {
						continue
					}
					args := argsFor(m.Type, good, dev)
					args[0], args[j] = reflect.ValueOf(good), reflect.ValueOf(bad)
					if msg := nilArgResult(func() []reflect.Value { return m.Func.Call(args) }); msg != "" {
						t.Errorf("x.%s with %s argument %d: %s", m.Name, kind, j, msg)
					}
				}
			}
			x := good
			funcs := map[string]func(a, b *Tensor){
				"Where":     func(a, b *Tensor) { Where(a, b, b) },
				"Where b":   func(a, b *Tensor) { Where(a.GtScalar(0), b, a) },
				"Cat":       func(a, b *Tensor) { Cat([]*Tensor{a, b}, 0) },
				"Stack":     func(a, b *Tensor) { Stack([]*Tensor{a, b}, 0) },
				"OneHot":    func(a, _ *Tensor) { OneHot(a, 3) },
				"ZerosLike": func(a, _ *Tensor) { ZerosLike(a) },
				"OnesLike":  func(a, _ *Tensor) { OnesLike(a) },
				"FullLike":  func(a, _ *Tensor) { FullLike(a, 1) },
				"AdamStep":  func(a, b *Tensor) { AdamStep(a, b, b, b, OptimUpdate{Step: 1}) },
				"SGDStep":   func(a, b *Tensor) { SGDStep(a, b, nil, OptimUpdate{}) },
			}
			for name, f := range funcs {
				for _, args := range [][2]*Tensor{{bad, x}, {x, bad}} {
					if args[0] != bad && (name == "OneHot" || strings.HasSuffix(name, "Like") || name == "Where b") {
						continue
					}
					if msg := nilArgResult(func() []reflect.Value { f(args[0], args[1]); return nil }); msg != "" {
						t.Errorf("%s with a %s tensor: %s", name, kind, msg)
					}
				}
			}
		}
		// Queries that answer "nothing" for nil rather than failing.
		var g *Gradients
		if g.Of(good) != nil || good.Sum().Backward().Of(nil) != nil || (*Tensor)(nil).IsTracked() {
			t.Error("Gradients.Of and IsTracked must answer nil / false for nil")
		}
		if _, err := (*Tensor)(nil).ToData(); err == nil {
			t.Error("ToData of nil: no error")
		}
		wantMisuse(t, "FromPrimitive(nil)", "from_primitive", func() { FromPrimitive(nil, dev) }, "needs a backend tensor")
		wantMisuse(t, "Stack nil", "stack", func() { Stack([]*Tensor{good, nil}, 0) }, "operand x1 is a nil *Tensor")
		wantMisuse(t, "OneHot nil", "one_hot", func() { OneHot(nil, 3) }, "operand labels is a nil *Tensor")
	})
}

// configuredDevice returns a fresh flex- or cpu-backed device whose int
// dtype is dt.
func configuredDevice(t *testing.T, base string, dt IntDType) Device {
	t.Helper()
	name := fmt.Sprintf("degenerate%d", testDriverCount.Add(1))
	backend.Register(name, baseDriver(base))
	dev := DeviceFromID(backend.DeviceID{Type: name})
	if err := dev.Configure(DeviceConfig{}.WithIntDType(dt)); err != nil {
		t.Fatalf("Configure(%v): %v", dt, err)
	}
	return dev
}

// baseDriver opens a flex ("flex") or cpu backend under a fresh name.
type baseDriver string

func (d baseDriver) Open(id backend.DeviceID) (backend.Backend, error) {
	if d == "cpu" {
		return cpu.New(id), nil
	}
	return flex.New(id), nil
}
func (baseDriver) Devices() []backend.DeviceID { return nil }
func (baseDriver) Priority() int               { return 0 }

// TestUnrepresentableValuesAreErrors checks conversions of host integers
// and float scalars to a tensor's dtype: a value the dtype cannot hold is
// an *Error naming the op; values at the edges of its range are exact;
// comparisons of integer tensors with any scalar are exact.
func TestUnrepresentableValuesAreErrors(t *testing.T) {
	for _, base := range []string{"flex", "cpu"} {
		t.Run(base, func(t *testing.T) {
			i64 := configuredDevice(t, base, IntI64)
			wantMisuse(t, "FromInts MaxUint64 on i64", "from_ints", func() { FromInts([]uint64{math.MaxUint64}, []int{1}, i64) }, "18446744073709551615", "not representable in i64")
			wantMisuse(t, "FromInts 2^63 on i64", "from_ints", func() { FromInts([]uint{1 << 63}, []int{1}, i64) }, "not representable")
			edge := FromInts([]int64{math.MinInt64, math.MaxInt64}, []int{2}, i64).Int64s()
			if edge[0] != math.MinInt64 || edge[1] != math.MaxInt64 {
				t.Errorf("FromInts at i64's edges: %v", edge)
			}
			if got := FromInts([]uint64{math.MaxInt64}, []int{1}, i64).Int64s(); got[0] != math.MaxInt64 {
				t.Errorf("FromInts uint64 MaxInt64: %v", got)
			}

			i32 := configuredDevice(t, base, IntI32)
			wantMisuse(t, "FromInts 2^31 on i32", "from_ints", func() { FromInts([]int64{1 << 31}, []int{1}, i32) }, "not representable in i32")
			wantMisuse(t, "FromInts -2^31-1 on i32", "from_ints", func() { FromInts([]int{math.MinInt32 - 1}, []int{1}, i32) }, "not representable in i32")
			if got := FromInts([]int{math.MinInt32, math.MaxInt32}, []int{2}, i32); got.DType() != I32 || got.Int64s()[0] != math.MinInt32 || got.Int64s()[1] != math.MaxInt32 {
				t.Errorf("FromInts at i32's edges: %v %v", got.DType(), got.Int64s())
			}

			if i64.SupportsDType(U64) {
				u64 := configuredDevice(t, base, IntU64)
				wantMisuse(t, "FromInts -1 on u64", "from_ints", func() { FromInts([]int{-1}, []int{1}, u64) }, "not representable in u64")
				d := FromInts([]uint64{math.MaxUint64, 0}, []int{2}, u64).Data()
				if d.DType != U64 || d.Bytes[0] != 0xff || d.Bytes[7] != 0xff || d.Bytes[8] != 0 {
					t.Errorf("FromInts MaxUint64 on u64: %v", d)
				}
			}

			// Float scalars converted to an integer tensor's dtype.
			xi := FromInts([]int{7, -7}, []int{2}, i64)
			wantMisuse(t, "DivScalar(NaN) of i64", "div", func() { xi.DivScalar(math.NaN()) }, "NaN", "not representable in i64")
			wantMisuse(t, "DivScalar(+Inf) of i64", "div", func() { xi.DivScalar(math.Inf(1)) }, "not representable")
			wantMisuse(t, "DivScalar(1e300) of i64", "div", func() { xi.DivScalar(1e300) }, "not representable")
			wantMisuse(t, "DivScalar(0.5) of i64", "div", func() { xi.DivScalar(0.5) }, "integer division by zero")
			wantMisuse(t, "AddScalar(NaN) of i64", "add", func() { xi.AddScalar(math.NaN()) }, "not representable")
			wantMisuse(t, "MulScalar(2^63) of i64", "mul", func() { xi.MulScalar(0x1p63) }, "not representable")
			wantMisuse(t, "MaskFill(-Inf) of i64", "mask_fill", func() { xi.MaskFill(xi.GtScalar(0), math.Inf(-1)) }, "not representable")
			wantMisuse(t, "FullDType(NaN, i64)", "full", func() { FullDType([]int{2}, math.NaN(), I64, i64) }, "not representable")
			wantMisuse(t, "FullDType(256, u8)", "full", func() { FullDType([]int{2}, 256, U8, i64) }, "not representable in u8")
			checkEq(t, "DivScalar(-2.9) of i64 truncates the divisor", xi.DivScalar(-2.9), ref{[]int{2}, []float64{-3, 3}}, I64)
			checkEq(t, "FullDType(255.9, u8)", FullDType([]int{1}, 255.9, U8, i64), ref{[]int{1}, []float64{255}}, U8)
			if got := FullDType([]int{1}, -0x1p63, I64, i64).Int64s(); got[0] != math.MinInt64 {
				t.Errorf("FullDType(-2^63, i64) = %v", got)
			}

			// Comparisons of integers with float scalars are exact.
			c := FromInts([]int{-3, 2, 3}, []int{3}, i64)
			b := func(v ...bool) ref {
				r := ref{shape: []int{len(v)}}
				for _, x := range v {
					r.v = append(r.v, map[bool]float64{false: 0, true: 1}[x])
				}
				return r
			}
			for _, cc := range []struct {
				name string
				got  *Tensor
				want ref
			}{
				{"x < 2.5", c.LtScalar(2.5), b(true, true, false)},
				{"x <= 2.5", c.LeScalar(2.5), b(true, true, false)},
				{"x > 2.5", c.GtScalar(2.5), b(false, false, true)},
				{"x >= 2.5", c.GeScalar(2.5), b(false, false, true)},
				{"x == 2.5", c.EqScalar(2.5), b(false, false, false)},
				{"x >= -2.5", c.GeScalar(-2.5), b(false, true, true)},
				{"x < -2.5", c.LtScalar(-2.5), b(true, false, false)},
				{"x == 2", c.EqScalar(2), b(false, true, false)},
				{"x < +Inf", c.LtScalar(math.Inf(1)), b(true, true, true)},
				{"x > -Inf", c.GtScalar(math.Inf(-1)), b(true, true, true)},
				{"x >= 1e300", c.GeScalar(1e300), b(false, false, false)},
				{"x <= -1e300", c.LeScalar(-1e300), b(false, false, false)},
				{"x < NaN", c.LtScalar(math.NaN()), b(false, false, false)},
				{"x == NaN", c.EqScalar(math.NaN()), b(false, false, false)},
				{"x == 2^63", c.EqScalar(0x1p63), b(false, false, false)},
			} {
				checkEq(t, cc.name, cc.got, cc.want, Bool)
			}

			// Clamping integers: bounds rounded inward, infinite bounds
			// do not clamp, a result beyond the dtype is an *Error.
			checkEq(t, "Clamp(-2.5, 2.5) of i64", c.Clamp(-2.5, 2.5), ref{[]int{3}, []float64{-2, 2, 2}}, I64)
			checkEq(t, "Clamp(-Inf, +Inf) of i64", c.Clamp(math.Inf(-1), math.Inf(1)), ref{[]int{3}, []float64{-3, 2, 3}}, I64)
			checkEq(t, "ClampMin(-1e300) of i64", c.ClampMin(-1e300), ref{[]int{3}, []float64{-3, 2, 3}}, I64)
			checkEq(t, "ClampMax(2.9) of i64", c.ClampMax(2.9), ref{[]int{3}, []float64{-3, 2, 2}}, I64)
			wantMisuse(t, "ClampMin(1e300) of i64", "clamp_min", func() { c.ClampMin(1e300) }, "beyond the range of i64")
			wantMisuse(t, "ClampMax(-Inf) of i64", "clamp_max", func() { c.ClampMax(math.Inf(-1)) }, "beyond the range")
			wantMisuse(t, "ClampMax(NaN)", "clamp_max", func() { c.ClampMax(math.NaN()) }, "NaN")
		})
	}
}

// TestDegenerateArgumentsAreErrors checks scalar arguments that define no
// result (NaN or infinite distribution parameters, slopes, bounds,
// tolerances) and empty kernels: each is an *Error naming the op, while
// the valid edge cases compute the hand-worked values.
func TestDegenerateArgumentsAreErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		for name, d := range map[string]Distribution{
			"uniform(-Inf, Inf)":      Uniform(math.Inf(-1), math.Inf(1)),
			"uniform(0, Inf)":         Uniform(0, math.Inf(1)),
			"uniform(-Max, Max)":      Uniform(-math.MaxFloat64, math.MaxFloat64),
			"normal(Inf, 1)":          Normal(math.Inf(1), 1),
			"normal(0, Inf)":          Normal(0, math.Inf(1)),
			"bernoulli(Inf)":          Bernoulli(math.Inf(1)),
			"uniform(NaN, 1)":         Uniform(math.NaN(), 1),
			"normal(0, -Max)":         Normal(0, -math.MaxFloat64),
			"uniform(1e300, 1.1e300)": Uniform(1e300, 1.1e300),
		} {
			if name == "uniform(1e300, 1.1e300)" {
				// Finite bounds and width: a valid distribution.
				if noPanic(t, name, func() { Random([]int{4}, d, dev) }) {
					for _, v := range RandomDType([]int{4}, d, F64, dev).Float64s() {
						if !(v >= 1e300 && v < 1.1e300) {
							t.Errorf("%s: sample %v outside [1e300, 1.1e300)", name, v)
						}
					}
				}
				continue
			}
			wantMisuse(t, name, "random", func() { Random([]int{4}, d, dev) })
		}
		wantMisuse(t, "uniform(0, 257) as u8", "random", func() { RandomDType([]int{4}, Uniform(0, 257), U8, dev) }, "outside u8")
		if dev.SupportsDType(U8) {
			for _, v := range RandomDType([]int{64}, Uniform(250, 256), U8, dev).Int64s() {
				if v < 250 || v > 255 {
					t.Errorf("uniform(250, 256) as u8: sample %d", v)
				}
			}
		}

		x := FromFloats([]float64{-2, 0, 3}, []int{3}, dev)
		wantMisuse(t, "LeakyRelu(NaN)", "leaky_relu", func() { x.LeakyRelu(math.NaN()) }, "finite")
		wantMisuse(t, "LeakyRelu(Inf)", "leaky_relu", func() { x.LeakyRelu(math.Inf(1)) }, "finite")
		checkEq(t, "LeakyRelu(-1)", x.LeakyRelu(-1), ref{[]int{3}, []float64{2, 0, 3}}, DType(dev.Settings().FloatDType))
		wantMisuse(t, "ClampMin(NaN)", "clamp_min", func() { x.ClampMin(math.NaN()) }, "NaN")
		checkEq(t, "ClampMin(-Inf) of floats", x.ClampMin(math.Inf(-1)), ref{[]int{3}, []float64{-2, 0, 3}}, DType(dev.Settings().FloatDType))
		wantMisuse(t, "Linspace(0, Inf)", "linspace", func() { Linspace(0, math.Inf(1), 3, dev) }, "finite")
		wantMisuse(t, "Linspace(NaN, 1)", "linspace", func() { Linspace(math.NaN(), 1, 3, dev) }, "finite")
		wantMisuse(t, "Linspace(-Max, Max)", "linspace", func() { Linspace(-math.MaxFloat64, math.MaxFloat64, 3, dev) }, "finite")
		wantMisuse(t, "AllClose(NaN tolerance)", "allclose", func() { x.AllClose(x, math.NaN(), 0) }, "tolerances")

		// Convolutions: an empty kernel is an *Error; zero input channels
		// are a valid empty sum.
		img := Ones([]int{1, 1, 5, 5}, dev)
		wantMisuse(t, "conv2d empty kernel", "conv2d", func() { img.Conv2d(Ones([]int{1, 1, 0, 0}, dev), nil, ConvOptions{}) }, "kernel size 0")
		wantMisuse(t, "conv2d empty kernel width", "conv2d", func() { img.Conv2d(Ones([]int{1, 1, 3, 0}, dev), nil, ConvOptions{}) }, "kernel size 0")
		wantMisuse(t, "conv_transpose2d empty kernel", "conv_transpose2d", func() { img.ConvTranspose2d(Ones([]int{1, 1, 0, 2}, dev), nil, ConvOptions{}) }, "kernel size 0")
		wantMisuse(t, "max_pool2d empty kernel", "max_pool2d", func() { img.MaxPool2d(PoolOptions{Kernel: [2]int{0, 2}}) }, "kernel")
		empty := Ones([]int{1, 0, 5, 5}, dev).Conv2d(Ones([]int{2, 0, 3, 3}, dev), nil, ConvOptions{})
		checkEq(t, "conv2d of zero channels", empty, ref{[]int{1, 2, 3, 3}, make([]float64, 18)}, DType(dev.Settings().FloatDType))
	})
}
