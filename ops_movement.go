package ember

import (
	"math"
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Reshape returns x with a new shape of the same element count; one size
// may be -1 and is inferred. A view when the layout allows.
func (x *Tensor) Reshape(shape ...int) *Tensor {
	x.need("reshape", "x")
	shape = append([]int{}, shape...)
	n, infer := 1, -1
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			fail("reshape", []string{describe("x", x)}, "bad target shape %v", shape)
		default:
			n *= s
		}
	}
	checkShape("reshape", slices.DeleteFunc(slices.Clone(shape), func(s int) bool { return s == -1 }))
	total := x.NumElements()
	if infer >= 0 {
		if n == 0 || total%n != 0 {
			fail("reshape", []string{describe("x", x)}, "cannot infer -1 in %v", shape)
		}
		shape[infer] = total / n
	} else if n != total {
		fail("reshape", []string{describe("x", x)}, "shape %v has %d elements, the tensor has %d", shape, n, total)
	}
	if slices.Equal(shape, x.shape()) {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindReshape, Shape: shape, In: [3]ir.Tensor{x.t}}, x)
}

// Permute reorders the axes: result axis i is x's axis axes[i] (negative
// allowed). A view.
func (x *Tensor) Permute(axes ...int) *Tensor {
	x.need("permute", "x")
	r := x.Rank()
	if len(axes) != r {
		fail("permute", []string{describe("x", x)}, "got %d axes %v for rank %d", len(axes), axes, r)
	}
	norm := make([]int, r)
	seen := make([]bool, r)
	for i, a := range axes {
		a = x.axis("permute", a)
		if seen[a] {
			fail("permute", []string{describe("x", x)}, "axis %d repeated in %v", axes[i], axes)
		}
		seen[a], norm[i] = true, a
	}
	return x.dev.run(&ir.Op{Kind: ir.KindPermute, Ints: norm, In: [3]ir.Tensor{x.t}}, x)
}

// SwapAxes exchanges two axes (a view).
func (x *Tensor) SwapAxes(a, b int) *Tensor {
	a, b = x.axis("swap_axes", a), x.axis("swap_axes", b)
	if a == b {
		return x
	}
	axes := make([]int, x.Rank())
	for i := range axes {
		axes[i] = i
	}
	axes[a], axes[b] = b, a
	return x.Permute(axes...)
}

// Transpose swaps the last two axes (a view). It panics with an *Error for rank < 2.
func (x *Tensor) Transpose() *Tensor {
	x.need("transpose", "x")
	if x.Rank() < 2 {
		fail("transpose", []string{describe("x", x)}, "needs rank >= 2")
	}
	return x.SwapAxes(-2, -1)
}

// Expand broadcasts x to shape: size-1 axes repeat and new leading axes are
// added; -1 keeps a size. A view (stride 0).
func (x *Tensor) Expand(shape ...int) *Tensor {
	x.need("expand", "x")
	xs := x.shape()
	if len(shape) < len(xs) {
		fail("expand", []string{describe("x", x)}, "target %v has lower rank", shape)
	}
	out := append([]int{}, shape...)
	off := len(shape) - len(xs)
	for i := range out {
		j := i - off
		if out[i] == -1 {
			if j < 0 {
				fail("expand", []string{describe("x", x)}, "-1 in a new leading axis of %v", shape)
			}
			out[i] = xs[j]
		}
		if j >= 0 && xs[j] != out[i] && xs[j] != 1 {
			fail("expand", []string{describe("x", x)}, "cannot expand axis %d of size %d to %d", j, xs[j], out[i])
		}
		if out[i] < 0 {
			fail("expand", []string{describe("x", x)}, "bad target shape %v", shape)
		}
	}
	checkShape("expand", out)
	if slices.Equal(out, xs) {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindExpand, Shape: out, In: [3]ir.Tensor{x.t}}, x)
}

// BroadcastTo is Expand.
func (x *Tensor) BroadcastTo(shape ...int) *Tensor { return x.Expand(shape...) }

// All selects a whole axis in Slice.
func All() Range { return Range{Start: 0, End: math.MaxInt, Step: 1} }

// Reverse selects a whole axis backwards in Slice (Python's [::-1]).
func Reverse() Range { return Range{Start: math.MaxInt, End: math.MinInt, Step: -1} }

// R is a Range from start to end (exclusive) with step 1; negative values
// count from the end, as in Python slicing.
func R(start, end int) Range { return Range{Start: start, End: end, Step: 1} }

// Slice selects ranges[i] along axis i (Python semantics: negative start and
// end count from the end, out-of-range bounds are clamped; a zero Step
// means 1; any int is a valid bound or step). Axes past len(ranges) are
// kept whole. A positive step makes a view. A negative step walks
// backwards from Start down to, not including, End, as Python's
// x[start:end:step] (bounds clamp to [-1, n-1]; Reverse() selects a whole
// axis backwards); such an axis is flipped first (one copy).
func (x *Tensor) Slice(ranges ...Range) *Tensor {
	x.need("slice", "x")
	if flips, pos := x.negativeSteps(ranges); flips != nil {
		return x.Flip(flips...).Slice(pos...)
	}
	full, identity := x.sliceRanges("slice", ranges)
	if identity {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindSlice, Attrs: &ir.Attrs{Ranges: full}, In: [3]ir.Tensor{x.t}}, x)
}

// negativeSteps rewrites ranges with negative steps (Python semantics:
// start and end count from the end and clamp to [-1, n-1], the elements
// start, start+step, ... > end) as positive ranges over x flipped along
// those axes; it returns nil when no step is negative.
func (x *Tensor) negativeSteps(ranges []Range) (flips []int, pos []Range) {
	xs := x.shape()
	for i, r := range ranges {
		if r.Step >= 0 || i >= len(xs) {
			continue
		}
		if pos == nil {
			pos = slices.Clone(ranges)
		}
		n := xs[i]
		c := func(v int) int {
			if v < 0 {
				v += n // no overflow: n >= 0
			}
			return min(max(v, -1), n-1)
		}
		start, end := c(r.Start), c(r.End)
		count := 0
		if start > end && r.Step != math.MinInt {
			count = (start-end-1)/(-r.Step) + 1
		} else if start > end {
			count = 1 // a step of MinInt reaches one element
		}
		// Element start − k·|step| is element n−1−start + k·|step| of the
		// flipped axis.
		fs := n - 1 - start
		step := -r.Step
		if r.Step == math.MinInt {
			step = math.MaxInt
		}
		pos[i] = Range{Start: fs, End: fs, Step: 1}
		if count > 0 {
			pos[i] = Range{Start: fs, End: fs + 1 + (count-1)*min(step, n), Step: step}
			if count == 1 {
				pos[i] = Range{Start: fs, End: fs + 1, Step: 1}
			}
		}
		flips = append(flips, i)
	}
	return flips, pos
}

// sliceRanges resolves Slice's ranges for x (Python semantics, see
// Slice) into one clamped range per axis, and reports whether they select
// all of x; it panics with an *Error naming op for too many ranges or a
// negative step.
func (x *Tensor) sliceRanges(op string, ranges []Range) (full []Range, identity bool) {
	xs := x.shape()
	if len(ranges) > len(xs) {
		fail(op, []string{describe("x", x)}, "%d ranges for rank %d", len(ranges), len(xs))
	}
	full = make([]Range, len(xs))
	identity = true
	for i, n := range xs {
		r := Range{Start: 0, End: n, Step: 1}
		if i < len(ranges) {
			r = ranges[i]
			if r.Step == 0 {
				r.Step = 1
			}
			if r.Step < 0 {
				fail(op, []string{describe("x", x)}, "negative step %d on axis %d (use Flip)", r.Step, i)
			}
			r.Start, r.End = clampIndex(r.Start, n), clampIndex(r.End, n)
			if r.End < r.Start {
				r.End = r.Start
			}
			if k := r.Len(); k <= 1 {
				// One element or none: the step selects nothing more,
				// and 1 keeps the view's stride (stride·step) in range.
				r.End, r.Step = r.Start+k, 1
			}
		}
		if r != (Range{Start: 0, End: n, Step: 1}) {
			identity = false
		}
		full[i] = r
	}
	return full, identity
}

// clampIndex is index i of an axis of size n (negative counts from the
// end) clamped to [0, n], without overflow for any i.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n // no overflow: n >= 0
	}
	return min(max(i, 0), n)
}

// Narrow selects length elements of axis starting at start (negative start
// counts from the end). It panics with an *Error when the range exceeds the axis.
func (x *Tensor) Narrow(axis, start, length int) *Tensor {
	a := x.axis("narrow", axis)
	n := x.shape()[a]
	if start < 0 {
		start += n
	}
	if start < 0 || length < 0 || start > n || length > n-start {
		fail("narrow", []string{describe("x", x)}, "%d elements from %d are outside axis %d of size %d", length, start, axis, n)
	}
	rs := make([]Range, a+1)
	for i := range a {
		rs[i] = All()
	}
	rs[a] = Range{Start: start, End: start + length, Step: 1}
	return x.Slice(rs...)
}

// Pad pads with value; pads lists (before, after) pairs starting from the
// LAST axis, as PyTorch's pad: [left, right, top, bottom, ...]. Negative
// padding is not allowed.
func (x *Tensor) Pad(pads []int, value float64) *Tensor {
	x.need("pad", "x")
	r := x.Rank()
	if len(pads)%2 != 0 || len(pads)/2 > r {
		fail("pad", []string{describe("x", x)}, "pads %v must be pairs for at most %d axes", pads, r)
	}
	p := make([]int, 2*r)
	any := false
	for i := 0; i < len(pads)/2; i++ {
		if pads[2*i] < 0 || pads[2*i+1] < 0 {
			fail("pad", []string{describe("x", x)}, "negative padding in %v", pads)
		}
		ax := r - 1 - i
		p[2*ax], p[2*ax+1] = pads[2*i], pads[2*i+1]
		any = any || pads[2*i] > 0 || pads[2*i+1] > 0
	}
	if !any {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindPad, Ints: p, Scalars: [2]float64{value}, In: [3]ir.Tensor{x.t}}, x)
}

// Flip reverses the listed axes.
func (x *Tensor) Flip(axes ...int) *Tensor {
	x.need("flip", "x")
	norm := make([]int, 0, len(axes))
	for _, a := range axes {
		a = x.axis("flip", a)
		if slices.Contains(norm, a) {
			fail("flip", []string{describe("x", x)}, "axis %d repeated", a)
		}
		norm = append(norm, a)
	}
	if len(norm) == 0 {
		return x
	}
	return x.dev.run(&ir.Op{Kind: ir.KindFlip, Ints: norm, In: [3]ir.Tensor{x.t}}, x)
}

// Cat concatenates tensors along axis; all other sizes must agree. Dtypes
// are promoted to a common one. It panics with an *Error for an empty list,
// rank or size mismatches, or different devices.
func Cat(xs []*Tensor, axis int) *Tensor {
	if len(xs) == 0 {
		fail("cat", nil, "no tensors")
	}
	names := make([]string, len(xs))
	ops := make([]string, len(xs))
	for i, x := range xs {
		names[i] = "x" + itoa(i)
		ops[i] = describe(names[i], x)
	}
	dev := commonDevice("cat", names, xs...)
	a := normAxis("cat", xs[0], axis, xs[0].Rank())
	dt := xs[0].DType()
	for _, x := range xs[1:] {
		if x.Rank() != xs[0].Rank() {
			fail("cat", ops, "ranks differ")
		}
		for i, s := range x.shape() {
			if i != a && s != xs[0].shape()[i] {
				fail("cat", ops, "sizes differ on axis %d", i)
			}
		}
		dt = backend.Promote(dt, x.DType())
	}
	if len(xs) == 1 {
		return xs[0]
	}
	ts := make([]backend.Tensor, len(xs))
	for i, x := range xs {
		ts[i] = x.castTo(dt).on(dev)
	}
	return dev.run(&ir.Op{Kind: ir.KindCat, Axis: a, Xs: ts}, xs...)
}

// Stack joins tensors of equal shape along a new axis (negative counts
// from the end of the result's axes). It panics with an *Error for an
// empty list, a nil tensor, different shapes or devices, or an axis out of
// range.
func Stack(xs []*Tensor, axis int) *Tensor {
	if len(xs) == 0 {
		fail("stack", nil, "no tensors")
	}
	names := make([]string, len(xs))
	for i := range xs {
		names[i] = "x" + itoa(i)
	}
	commonDevice("stack", names, xs...)
	a := normAxis("stack", xs[0], axis, xs[0].Rank()+1)
	us := make([]*Tensor, len(xs))
	for i, x := range xs {
		if !slices.Equal(x.shape(), xs[0].shape()) {
			fail("stack", []string{describe("x0", xs[0]), describe("x"+itoa(i), x)}, "shapes differ")
		}
		us[i] = x.Unsqueeze(a)
	}
	return Cat(us, a)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Unsqueeze inserts a size-1 axis at position axis (in the result; negative
// counts from the end of the result).
func (x *Tensor) Unsqueeze(axis int) *Tensor {
	x.need("unsqueeze", "x")
	r := x.Rank() + 1
	a := normAxis("unsqueeze", x, axis, r)
	s := slices.Insert(x.Shape(), a, 1)
	return x.Reshape(s...)
}

// Squeeze removes axis, which must have size 1.
func (x *Tensor) Squeeze(axis int) *Tensor {
	a := x.axis("squeeze", axis)
	if x.shape()[a] != 1 {
		fail("squeeze", []string{describe("x", x)}, "axis %d has size %d, not 1", axis, x.shape()[a])
	}
	return x.Reshape(slices.Delete(x.Shape(), a, a+1)...)
}

// SqueezeAll removes every size-1 axis.
func (x *Tensor) SqueezeAll() *Tensor {
	x.need("squeeze", "x")
	var s []int
	for _, n := range x.shape() {
		if n != 1 {
			s = append(s, n)
		}
	}
	return x.Reshape(s...)
}

// Flatten merges axes start..end (inclusive, negative allowed) into one.
func (x *Tensor) Flatten(start, end int) *Tensor {
	x.need("flatten", "x")
	if x.Rank() == 0 {
		return x.Reshape(1)
	}
	s, e := x.axis("flatten", start), x.axis("flatten", end)
	if s > e {
		fail("flatten", []string{describe("x", x)}, "start axis %d is after end axis %d", start, end)
	}
	xs := x.shape()
	out := append([]int{}, xs[:s]...)
	out = append(out, backend.NumElements(xs[s:e+1]))
	out = append(out, xs[e+1:]...)
	return x.Reshape(out...)
}

func checkIndex(op string, x, index *Tensor) {
	if !index.DType().IsInt() {
		fail(op, []string{describe("x", x), describe("index", index)}, "index must be an integer tensor")
	}
}

func (x *Tensor) checkBounds(op string, index *Tensor, size int) {
	if checksIndicesOnDevice(x.dev) {
		return // reported by the device's next Sync or read
	}
	for i, v := range index.Int64s() {
		if v < 0 || v >= int64(size) {
			fail(op, []string{describe("x", x), describe("index", index)}, "index %d at flat position %d is out of range for size %d", v, i, size)
		}
	}
}

// Gather picks x's values along axis at index (PyTorch's gather): for axis
// 1, out[i][j][k] = x[i][index[i][j][k]][k]. index is an integer tensor of
// x's rank whose other sizes are at most x's; out has index's shape. Indices
// out of range panic with an *Error, except on devices that check indices
// themselves (CUDA), where the next Device.Sync or read returns an error
// wrapping ErrExecution.
func (x *Tensor) Gather(axis int, index *Tensor) *Tensor {
	commonDevice("gather", []string{"x", "index"}, x, index)
	a := x.axis("gather", axis)
	checkIndex("gather", x, index)
	if index.Rank() != x.Rank() {
		fail("gather", []string{describe("x", x), describe("index", index)}, "index rank must equal x's rank")
	}
	for i, s := range index.shape() {
		if i != a && s > x.shape()[i] {
			fail("gather", []string{describe("x", x), describe("index", index)}, "index size %d exceeds x's size %d on axis %d", s, x.shape()[i], i)
		}
	}
	dev := commonDevice("gather", []string{"x", "index"}, x, index)
	index = index.castTo(I64)
	x.checkBounds("gather", index, x.shape()[a])
	return dev.run(&ir.Op{Kind: ir.KindGather, Axis: a, In: [3]ir.Tensor{x.on(dev), index.on(dev)}}, x, index)
}

// ScatterAdd returns a copy of x with src's values added at index along axis
// (PyTorch's scatter_add): for axis 1, out[i][index[i][j][k]][k] += src[i][j][k].
// index (integer) and src have equal shapes, at most x's on other axes.
// Out-of-range indices panic with an *Error, except on devices that check
// indices themselves (CUDA), where the next Device.Sync or read returns an
// error wrapping ErrExecution.
func (x *Tensor) ScatterAdd(axis int, index, src *Tensor) *Tensor {
	commonDevice("scatter_add", []string{"x", "index", "src"}, x, index, src)
	a := x.axis("scatter_add", axis)
	checkIndex("scatter_add", x, index)
	ops := []string{describe("x", x), describe("index", index), describe("src", src)}
	if !slices.Equal(index.shape(), src.shape()) || index.Rank() != x.Rank() {
		fail("scatter_add", ops, "index and src must have equal shapes of x's rank")
	}
	for i, s := range index.shape() {
		if i != a && s > x.shape()[i] {
			fail("scatter_add", ops, "index size %d exceeds x's size %d on axis %d", s, x.shape()[i], i)
		}
	}
	dev := commonDevice("scatter_add", []string{"x", "index", "src"}, x, index, src)
	index = index.castTo(I64)
	x.checkBounds("scatter_add", index, x.shape()[a])
	return dev.run(&ir.Op{Kind: ir.KindScatterAdd, Axis: a, In: [3]ir.Tensor{x.on(dev), index.on(dev), src.castTo(x.DType()).on(dev)}}, x, index, src)
}

// IndexSelect picks the entries of axis named by index (a rank-1 integer
// tensor), like PyTorch's index_select. Out-of-range indices panic with an
// *Error, except on devices that check indices themselves (CUDA), where the
// next Device.Sync or read returns an error wrapping ErrExecution.
func (x *Tensor) IndexSelect(axis int, index *Tensor) *Tensor {
	commonDevice("index_select", []string{"x", "index"}, x, index)
	a := x.axis("index_select", axis)
	checkIndex("index_select", x, index)
	if index.Rank() != 1 {
		fail("index_select", []string{describe("x", x), describe("index", index)}, "index must be rank 1")
	}
	dev := commonDevice("index_select", []string{"x", "index"}, x, index)
	index = index.castTo(I64)
	x.checkBounds("index_select", index, x.shape()[a])
	return dev.run(&ir.Op{Kind: ir.KindIndexSelect, Axis: a, In: [3]ir.Tensor{x.on(dev), index.on(dev)}}, x, index)
}
