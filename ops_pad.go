package ember

import (
	"math"
	"strconv"
)

// PaddingMode says what Tensor.PadWithMode fills the padding with, as
// PyTorch's torch.nn.functional.pad mode argument.
type PaddingMode int

const (
	// PadZeros fills with zeros (PyTorch's "constant" with value 0).
	PadZeros PaddingMode = iota
	// PadReflect mirrors the tensor without repeating the edge element:
	// [a b c d] padded by 2 on the left is [c b a b c d] ("reflect"). Each
	// pad must be smaller than its axis.
	PadReflect
	// PadReplicate repeats the edge element ("replicate"); the axis must
	// not be empty.
	PadReplicate
	// PadCircular wraps around: the left padding is the axis's tail
	// ("circular"). Each pad must be at most its axis's size.
	PadCircular
)

// String returns PyTorch's name of the mode.
func (m PaddingMode) String() string {
	switch m {
	case PadZeros:
		return "constant"
	case PadReflect:
		return "reflect"
	case PadReplicate:
		return "replicate"
	case PadCircular:
		return "circular"
	}
	return "PaddingMode(" + strconv.Itoa(int(m)) + ")"
}

// PadWithMode pads x as Pad does (pads lists (before, after) pairs from
// the last axis, as PyTorch's pad), filling by mode (see PaddingMode). The
// padding is built from slices of x (Narrow, Flip, Expand) joined with
// Cat, so it is differentiable: the gradient of a padded element flows to
// the element it copies. Any number of axes may be padded (PyTorch limits
// the non-constant modes to the last three). It panics with an *Error for
// negative pads, pads larger than the mode allows, or an unknown mode.
func (x *Tensor) PadWithMode(pads []int, mode PaddingMode) *Tensor {
	x.need("pad", "x")
	if mode == PadZeros {
		return x.Pad(pads, 0)
	}
	r := x.Rank()
	if len(pads)%2 != 0 || len(pads)/2 > r {
		fail("pad", []string{describe("x", x)}, "pads %v must be pairs for at most %d axes", pads, r)
	}
	if mode < PadZeros || mode > PadCircular {
		fail("pad", []string{describe("x", x)}, "unknown padding mode %v", mode)
	}
	out := x
	for i := 0; i < len(pads)/2; i++ {
		before, after := pads[2*i], pads[2*i+1]
		a := r - 1 - i
		n := x.shape()[a]
		if before < 0 || after < 0 {
			fail("pad", []string{describe("x", x)}, "negative padding in %v", pads)
		}
		if before == 0 && after == 0 {
			continue
		}
		limit, what := n, "at most"
		switch mode {
		case PadReflect:
			limit, what = n-1, "less than"
		case PadReplicate:
			limit = math.MaxInt
			if n == 0 {
				fail("pad", []string{describe("x", x)}, "%v padding of the empty axis %d", mode, a)
			}
		}
		if before > limit || after > limit {
			fail("pad", []string{describe("x", x)}, "%v padding %d, %d of axis %d must be %s the axis size %d", mode, before, after, a, what, n)
		}
		var parts []*Tensor
		edge := func(start, length int, left bool) *Tensor {
			switch mode {
			case PadReflect:
				return out.Narrow(a, start, length).Flip(a)
			case PadReplicate:
				shape := append([]int{}, out.shape()...)
				shape[a] = length
				if left {
					return out.Narrow(a, 0, 1).Expand(shape...)
				}
				return out.Narrow(a, n-1, 1).Expand(shape...)
			}
			return out.Narrow(a, start, length) // circular
		}
		if before > 0 {
			start := n - before // circular: the tail
			if mode == PadReflect {
				start = 1
			}
			parts = append(parts, edge(start, before, true))
		}
		parts = append(parts, out)
		if after > 0 {
			start := 0 // circular: the head
			if mode == PadReflect {
				start = n - 1 - after
			}
			parts = append(parts, edge(start, after, false))
		}
		out = Cat(parts, a)
	}
	return out
}
