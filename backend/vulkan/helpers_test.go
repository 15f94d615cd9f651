//go:build linux && (amd64 || arm64)

package vulkan

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// The kernel tests compare every op with backend/flex, the reference
// backend, on random non-zero inputs presented through several layouts
// (the helpers follow backend/cuda's tests). Both backends run the same
// ir.Op through Exec. Tolerances (relative, with a small absolute floor
// for values near 0): F32 1e-5, F16/BF16 1e-2, F64 1e-12; integers and
// Bool exactly.

var flexRef = flex.New(backend.DeviceID{Type: "flex"})

// tolerance returns the (rtol, atol) for comparing results of dtype dt.
func tolerance(dt backend.DType) (float64, float64) {
	switch dt {
	case backend.F32, backend.Flex32:
		return 1e-5, 1e-6
	case backend.F16, backend.BF16:
		return 1e-2, 1e-3
	case backend.F64:
		return 1e-12, 1e-14
	}
	return 0, 0
}

// nonZero returns random non-zero data of shape and dt: floats in
// ±[0.5, 4), signed integers in ±[1, 20], unsigned in [1, 40], Bool 0 or 1.
func nonZero(rng *rand.Rand, shape []int, dt backend.DType) *backend.TensorData {
	return fromF64(shape, dt, func() float64 {
		switch {
		case dt == backend.Bool:
			return float64(rng.IntN(2))
		case dt.IsInt() && dt.IsSigned():
			v := float64(rng.IntN(20) + 1)
			if rng.IntN(2) == 0 {
				v = -v
			}
			return v
		case dt.IsInt():
			return float64(rng.IntN(40) + 1)
		}
		v := 0.5 + 3.5*rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		return v
	})
}

// fromF64 fills data of shape with gen's values converted to dt (Cast semantics).
func fromF64(shape []int, dt backend.DType, gen func() float64) *backend.TensorData {
	n := backend.NumElements(shape)
	raw := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(gen()))
	}
	return (&backend.TensorData{Shape: append([]int{}, shape...), DType: backend.F64, Bytes: raw}).Convert(dt)
}

// viewLayout presents data of a logical shape through a view: base is the
// shape of the data uploaded, view turns it into the logical tensor.
type viewLayout struct {
	name string
	base func(shape []int) []int
	view func(be ir.Executor, x backend.Tensor, shape []int) backend.Tensor
}

var layouts = []viewLayout{
	{"contiguous", func(s []int) []int { return s }, func(be ir.Executor, x backend.Tensor, s []int) backend.Tensor { return x }},
	{"permuted", func(s []int) []int {
		r := make([]int, len(s))
		for i, v := range s {
			r[len(s)-1-i] = v
		}
		return r
	}, func(be ir.Executor, x backend.Tensor, s []int) backend.Tensor {
		axes := make([]int, len(s))
		for i := range axes {
			axes[i] = len(s) - 1 - i
		}
		return ir.Permute(be, x, axes)
	}},
	{"stepped", func(s []int) []int {
		r := append([]int{}, s...)
		if len(r) > 0 {
			r[len(r)-1] = 2*r[len(r)-1] + 1
		}
		return r
	}, func(be ir.Executor, x backend.Tensor, s []int) backend.Tensor {
		if len(s) == 0 {
			return x
		}
		rs := make([]backend.Range, len(s))
		for i, v := range s {
			rs[i] = backend.Range{Start: 0, End: v, Step: 1}
		}
		rs[len(s)-1] = backend.Range{Start: 1, End: 2*s[len(s)-1] + 1, Step: 2}
		return ir.Slice(be, x, rs)
	}},
	{"flipped", func(s []int) []int { return s }, func(be ir.Executor, x backend.Tensor, s []int) backend.Tensor {
		axes := make([]int, len(s))
		for i := range axes {
			axes[i] = i
		}
		return ir.Flip(be, x, axes)
	}},
}

// pair uploads data to the GPU backend and to flex and applies the layout
// on both, returning the logical tensors.
func pair(b *Backend, d *backend.TensorData, l viewLayout, shape []int) (backend.Tensor, backend.Tensor) {
	return l.view(b, b.FromData(d), shape), l.view(flexRef, flexRef.FromData(d), shape)
}

// randomPair makes random non-zero data of the logical shape in layout l
// on both backends.
func randomPair(b *Backend, rng *rand.Rand, shape []int, dt backend.DType, l viewLayout) (backend.Tensor, backend.Tensor) {
	return pair(b, nonZero(rng, l.base(shape), dt), l, shape)
}

// sameTol is same with the relative tolerance raised to at least rtol.
func sameTol(t *testing.T, b *Backend, got, want backend.Tensor, what string, rtol float64) {
	t.Helper()
	g, err := b.ToData(got)
	if err != nil {
		t.Fatalf("%s: reading the Vulkan result: %v", what, err)
	}
	w, err := flexRef.ToData(want)
	if err != nil {
		t.Fatalf("%s: reading flex's result: %v", what, err)
	}
	r, atol := tolerance(w.DType)
	if err := g.ApproxEqual(w, max(r, rtol), atol); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// same compares a Vulkan result with flex's within dt's tolerance, reporting
// what with the mismatch.
func same(t *testing.T, b *Backend, got, want backend.Tensor, what string) {
	t.Helper()
	g, err := b.ToData(got)
	if err != nil {
		t.Fatalf("%s: reading the Vulkan result: %v", what, err)
	}
	w, err := flexRef.ToData(want)
	if err != nil {
		t.Fatalf("%s: reading flex's result: %v", what, err)
	}
	rtol, atol := tolerance(w.DType)
	if err := g.ApproxEqual(w, rtol, atol); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// sameNorm compares a GPU float result with flex's by the norm-wise
// relative error ‖got − want‖ / ‖want‖ within dt's relative tolerance
// (results whose summation order differs, such as GEMMs and atomic sums,
// are ill-conditioned elementwise where terms cancel); other dtypes
// exactly.
func sameNorm(t *testing.T, b *Backend, got, want backend.Tensor, what string) {
	t.Helper()
	w, err := flexRef.ToData(want)
	if err != nil {
		t.Fatalf("%s: reading flex's result: %v", what, err)
	}
	if !w.DType.IsFloat() {
		same(t, b, got, want, what)
		return
	}
	g, err := b.ToData(got)
	if err != nil {
		t.Fatalf("%s: reading the Vulkan result: %v", what, err)
	}
	if !slices.Equal(g.Shape, w.Shape) || g.DType != w.DType {
		t.Fatalf("%s: got %v %v, want %v %v", what, g.DType, g.Shape, w.DType, w.Shape)
	}
	var diff, ref float64
	for i := range w.NumElements() {
		d := g.Value(i) - w.Value(i)
		diff += d * d
		ref += w.Value(i) * w.Value(i)
	}
	rtol, _ := tolerance(w.DType)
	if e := math.Sqrt(diff / max(ref, 1e-300)); !(e <= rtol) {
		t.Errorf("%s: relative error %g > %g", what, e, rtol)
	}
}

// try runs f, turning a panic into a test error naming what.
func try(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", what, r)
		}
	}()
	f()
}

func name(parts ...any) string { return fmt.Sprint(parts...) }

// run runs op on e through ir.Run after inferring it. Ops outside the
// domain ir's inference accepts, which the kernels define all the same
// and the tests cover as before (float-only unary ops on integers,
// arithmetic on Bool, reductions of empty axes, integer convolutions), get
// the output shape and dtype given and go to Exec directly.
func run(e ir.Executor, op ir.Op, shape []int, dt backend.DType) backend.Tensor {
	if err := op.Infer(); err != nil {
		op.Shape, op.DType = shape, dt
		return e.Exec(op)[0]
	}
	return ir.Run(e, op)[0]
}

// unaryOn applies u to x on e.
func unaryOn(e ir.Executor, u backend.UnaryOp, x backend.Tensor) backend.Tensor {
	return run(e, ir.Op{Kind: ir.KindUnary, Sub: uint8(u), In: [3]ir.Tensor{x}}, x.Shape(), x.DType())
}

// binaryOn applies o to x and y on e.
func binaryOn(e ir.Executor, o backend.BinaryOp, x, y backend.Tensor) backend.Tensor {
	shape, ok := ir.BroadcastShapes(x.Shape(), y.Shape())
	if !ok {
		panic(fmt.Sprintf("binaryOn: shapes %v and %v do not broadcast", x.Shape(), y.Shape()))
	}
	dt := x.DType()
	if o.IsComparison() {
		dt = backend.Bool
	}
	return run(e, ir.Op{Kind: ir.KindBinary, Sub: uint8(o), In: [3]ir.Tensor{x, y}}, shape, dt)
}

// reduceOn reduces x by r along axis on e.
func reduceOn(e ir.Executor, r backend.ReduceOp, x backend.Tensor, axis int, keepDim bool) backend.Tensor {
	shape := slices.Delete(slices.Clone(x.Shape()), axis, axis+1)
	if keepDim {
		shape = slices.Clone(x.Shape())
		shape[axis] = 1
	}
	dt := x.DType()
	if r == backend.ReduceArgMax || r == backend.ReduceArgMin {
		dt = backend.I64
	}
	return run(e, ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis, KeepDim: keepDim, In: [3]ir.Tensor{x}}, shape, dt)
}

// convOn convolves x with w on e (transpose: the transposed convolution);
// o has its defaults filled in.
func convOn(e ir.Executor, transpose bool, x, w backend.Tensor, o backend.ConvOptions) backend.Tensor {
	xs, ws := x.Shape(), w.Shape()
	sp := ir.ConvOutputSize([2]int{xs[2], xs[3]}, [2]int{ws[2], ws[3]}, o, transpose)
	kind, cout := ir.KindConv2d, ws[0]
	if transpose {
		kind, cout = ir.KindConvTranspose2d, ws[1]*o.Groups
	}
	return run(e, ir.Op{Kind: kind, Attrs: &ir.Attrs{Conv: o}, In: [3]ir.Tensor{x, w}}, []int{xs[0], cout, sp[0], sp[1]}, x.DType())
}

// randomOn samples shape and dt from dist on e.
func randomOn(e ir.Executor, shape []int, dt backend.DType, dist backend.Distribution) backend.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindRandom, Sub: uint8(dist.Kind), Shape: shape, DType: dt, Scalars: [2]float64{dist.A, dist.B}})
}

// arangeOn is [start, start+step, ...] with n elements of dt on e.
func arangeOn(e ir.Executor, start, step float64, n int, dt backend.DType) backend.Tensor {
	return ir.Apply(e, ir.Op{Kind: ir.KindArange, Shape: []int{n}, DType: dt, Scalars: [2]float64{start, step}})
}

// dtypesOf returns the dtypes of list the backend supports.
func dtypesOf(b *Backend, list ...backend.DType) []backend.DType {
	var out []backend.DType
	for _, dt := range list {
		if b.SupportsDType(dt) {
			out = append(out, dt)
		}
	}
	return out
}

var (
	floatDTypes = []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16}
	intDTypes   = []backend.DType{backend.I64, backend.I32, backend.I16, backend.I8, backend.U64, backend.U32, backend.U16, backend.U8}
)

// specialData holds, for float dtypes, the edge values of IEEE arithmetic
// (±0, ±Inf, NaN, tiny and huge magnitudes, halfway points) cycled over
// shape, converted to dt. Subnormal float64 inputs are left out: flex's
// logarithm (Go's math.Log on amd64) is wrong for them (see
// TestLogSubnormal).
func specialData(shape []int, dt backend.DType) *backend.TensorData {
	vals := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-30, -1e-30, 3e38, -3e38,
		0.5, -0.5, 1.5, -2.5, 2.5, 1e-8, -1e-8, 700, -700, 1e5, -1e5, 65504, 65520, 1 + 1.0/1024, 0.1, -3.75, 1e300, 1e-300}
	i := 0
	return fromF64(shape, dt, func() float64 {
		v := vals[i%len(vals)]
		i++
		return v
	})
}
