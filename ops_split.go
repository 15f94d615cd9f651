package ember

import "github.com/emberml/ember/ir"

// Tiling and splitting, composed from Reshape, Expand and Narrow, so that
// they run on every backend and are differentiable wherever those are.

// Repeat tiles x: along axis k the result holds reps[k] copies of x one
// after the other, as PyTorch's Tensor.repeat (NumPy's tile with as many
// reps as axes). reps may be longer than x's rank: x is then viewed with
// leading size-1 axes first, so the result has rank len(reps) and shape
// [reps[k]·shape[k]]. A zero rep gives an empty axis. The result is a new
// tensor (not a view); its gradient sums the copies. It panics with an
// *Error when len(reps) < rank, a rep is negative, or the result has more
// elements than an int can count.
func (x *Tensor) Repeat(reps ...int) *Tensor {
	x.need("repeat", "x")
	shape := x.shape()
	if len(reps) < len(shape) {
		fail("repeat", []string{describe("x", x)}, "needs at least as many repeats as axes, got %v", reps)
	}
	lead := len(reps) - len(shape)
	inter := make([]int, 0, 2*len(reps)) // [1, s0, 1, s1, ...] → [r0, s0, r1, s1, ...]
	unit := make([]int, 0, 2*len(reps))
	out := make([]int, len(reps))
	for k, r := range reps {
		if r < 0 {
			fail("repeat", []string{describe("x", x)}, "repeat %d of axis %d is negative", r, k)
		}
		s := 1
		if k >= lead {
			s = shape[k-lead]
		}
		unit = append(unit, 1, s)
		inter = append(inter, r, s)
	}
	if err := ir.CheckShape(inter); err != nil {
		fail("repeat", []string{describe("x", x)}, "repeats %v: %v", reps, err)
	}
	for k := range reps {
		out[k] = inter[2*k] * inter[2*k+1]
	}
	return x.Reshape(unit...).Expand(inter...).Reshape(out...)
}

// RepeatInterleave repeats each element of x repeats times along axis
// (negative counts from the end), keeping the copies of one element
// together: [a, b] with 2 gives [a, a, b, b], as PyTorch's
// torch.repeat_interleave with an int repeats and a dim. The result has
// the axis repeats times longer; its gradient sums the copies. It panics
// with an *Error for a negative repeats, an axis out of range or a result
// too large to count.
func (x *Tensor) RepeatInterleave(repeats, axis int) *Tensor {
	x.need("repeat_interleave", "x")
	a := x.axis("repeat_interleave", axis)
	if repeats < 0 {
		fail("repeat_interleave", []string{describe("x", x)}, "repeats %d is negative", repeats)
	}
	shape := x.shape()
	inter := make([]int, 0, len(shape)+1)
	inter = append(inter, shape[:a+1]...)
	inter = append(inter, repeats)
	inter = append(inter, shape[a+1:]...)
	if err := ir.CheckShape(inter); err != nil {
		fail("repeat_interleave", []string{describe("x", x)}, "repeats %d: %v", repeats, err)
	}
	out := append([]int{}, shape...)
	out[a] *= repeats
	return x.Unsqueeze(a + 1).Expand(inter...).Reshape(out...)
}

// SplitSizes splits x along axis (negative counts from the end) into
// consecutive pieces of the given sizes, which must be non-negative and
// sum to the axis's size (PyTorch's torch.split with a list). The pieces
// are views of x. It panics with an *Error otherwise.
func (x *Tensor) SplitSizes(sizes []int, axis int) []*Tensor {
	x.need("split", "x")
	a := x.axis("split", axis)
	n := x.shape()[a]
	total := 0
	for _, s := range sizes {
		if s < 0 || s > n-total {
			fail("split", []string{describe("x", x)}, "sizes %v do not sum to axis %d's size %d", sizes, a, n)
		}
		total += s
	}
	if total != n {
		fail("split", []string{describe("x", x)}, "sizes %v do not sum to axis %d's size %d", sizes, a, n)
	}
	out := make([]*Tensor, len(sizes))
	start := 0
	for i, s := range sizes {
		out[i] = x.Narrow(a, start, s)
		start += s
	}
	return out
}

// Split splits x along axis (negative counts from the end) into pieces of
// size elements, the last one smaller when size does not divide the axis
// (PyTorch's torch.split with an int). An empty axis gives one empty
// piece, as PyTorch. The pieces are views of x. It panics with an *Error
// when size is not positive or the axis is out of range.
func (x *Tensor) Split(size, axis int) []*Tensor {
	x.need("split", "x")
	a := x.axis("split", axis)
	if size <= 0 {
		fail("split", []string{describe("x", x)}, "split size %d must be positive", size)
	}
	n := x.shape()[a]
	if n == 0 {
		return []*Tensor{x}
	}
	sizes := make([]int, 0, (n+size-1)/size)
	for rest := n; rest > 0; rest -= size {
		sizes = append(sizes, min(size, rest))
	}
	return x.SplitSizes(sizes, a)
}

// Chunk splits x along axis (negative counts from the end) into at most
// chunks pieces of ⌈size/chunks⌉ elements (the last one smaller), as
// PyTorch's torch.chunk: fewer pieces come back when the axis is too short
// to make chunks of them (7 in 4 chunks of 2 is 2+2+2+1; 6 in 4 chunks is
// 2+2+2). The pieces are views of x. It panics with an *Error when chunks
// is not positive or the axis is out of range.
func (x *Tensor) Chunk(chunks, axis int) []*Tensor {
	x.need("chunk", "x")
	a := x.axis("chunk", axis)
	if chunks <= 0 {
		fail("chunk", []string{describe("x", x)}, "chunks %d must be positive", chunks)
	}
	n := x.shape()[a]
	size := n / chunks
	if n%chunks != 0 {
		size++
	}
	if n == 0 {
		size = 1
	}
	return x.Split(size, a)
}

// Unbind returns the slices of x along axis (negative counts from the end)
// with that axis removed: shape[axis] tensors of rank one less (PyTorch's
// torch.unbind). They are views of x. It panics with an *Error when the
// axis is out of range (a rank-0 tensor has none).
func (x *Tensor) Unbind(axis int) []*Tensor {
	x.need("unbind", "x")
	if x.Rank() == 0 {
		fail("unbind", []string{describe("x", x)}, "a rank-0 tensor has no axis to unbind")
	}
	a := x.axis("unbind", axis)
	n := x.shape()[a]
	out := make([]*Tensor, n)
	for i := range n {
		out[i] = x.Narrow(a, i, 1).Squeeze(a)
	}
	return out
}
