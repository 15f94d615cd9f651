package ember

import (
	"slices"
	"strings"
)

// Einsum evaluates an Einstein-summation expression over one or two
// operands, as PyTorch's torch.einsum for that subset: spec names each
// operand's axes with letters ("ij,jk->ik", "bij,bjk->bik", "i,i->",
// "ij->ji", "ij->j"), an index appearing in both operands and not in the
// output is summed over (a contraction), an index only in one operand and
// not in the output is summed over that operand, and without "->" the
// output is the indices that appear once, in alphabetical order. Two
// operands are contracted by one batched Matmul after Permute and Reshape
// (their dtypes promoted as Matmul does), so it is differentiable and
// runs at GEMM speed. It panics with an *Error naming the spec for
// malformed specs, an index repeated within one operand (diagonals are
// not supported), "..." (not supported), more than two operands,
// mismatched sizes of one index, or an output index that is in no
// operand.
func Einsum(spec string, xs ...*Tensor) *Tensor {
	args := []string{"spec " + spec}
	for i, x := range xs {
		x.need("einsum", "operand "+itoa(i))
		args = append(args, describe("operand "+itoa(i), x))
	}
	bad := func(format string, a ...any) { fail("einsum", args, format, a...) }
	if len(xs) < 1 || len(xs) > 2 {
		bad("takes one or two operands, got %d", len(xs))
	}
	spec = strings.ReplaceAll(spec, " ", "")
	if strings.Contains(spec, "...") {
		bad("ellipsis (...) is not supported")
	}
	lhs, out, explicit := strings.Cut(spec, "->")
	ins := strings.Split(lhs, ",")
	if len(ins) != len(xs) {
		bad("%d operand subscripts for %d operands", len(ins), len(xs))
	}
	size := map[rune]int{}
	count := map[rune]int{}
	for i, s := range ins {
		if len([]rune(s)) != xs[i].Rank() {
			bad("operand %d has rank %d but subscripts %q", i, xs[i].Rank(), s)
		}
		seen := map[rune]bool{}
		for k, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				bad("subscript %q is not a letter", c)
			}
			if seen[c] {
				bad("index %q repeats within operand %d (diagonals are not supported)", c, i)
			}
			seen[c] = true
			d := xs[i].Dim(k)
			if n, ok := size[c]; ok && n != d {
				bad("index %q has sizes %d and %d", c, n, d)
			}
			size[c] = d
			count[c]++
		}
	}
	if !explicit {
		var once []rune
		for c, n := range count {
			if n == 1 {
				once = append(once, c)
			}
		}
		slices.Sort(once)
		out = string(once)
	}
	outIdx := []rune(out)
	for i, c := range outIdx {
		if _, ok := size[c]; !ok {
			bad("output index %q is in no operand", c)
		}
		if slices.Contains(outIdx[:i], c) {
			bad("output index %q repeats", c)
		}
	}
	inOut := func(c rune) bool { return slices.Contains(outIdx, c) }
	// Sum each operand over the indices only it has and the output lacks.
	idx := make([][]rune, len(xs))
	ops := make([]*Tensor, len(xs))
	for i, s := range ins {
		x := xs[i]
		var keep []rune
		for k := len([]rune(s)) - 1; k >= 0; k-- {
			c := []rune(s)[k]
			other := len(xs) == 2 && strings.ContainsRune(ins[1-i], c)
			if !inOut(c) && !other {
				x = x.SumAxis(k, false)
				continue
			}
			keep = append([]rune{c}, keep...)
		}
		idx[i], ops[i] = keep, x
	}
	if len(xs) == 1 {
		return permuteTo(ops[0], idx[0], outIdx)
	}
	a, b := ops[0], ops[1]
	var batch, left, right, contract []rune
	for _, c := range idx[0] {
		inB := slices.Contains(idx[1], c)
		switch {
		case inB && inOut(c):
			batch = append(batch, c)
		case inB:
			contract = append(contract, c)
		default:
			left = append(left, c)
		}
	}
	for _, c := range idx[1] {
		if !slices.Contains(idx[0], c) {
			right = append(right, c)
		}
	}
	prod := func(cs []rune) int {
		p := 1
		for _, c := range cs {
			p *= size[c]
		}
		return p
	}
	a = permuteTo(a, idx[0], concat(batch, left, contract)).Reshape(prod(batch), prod(left), prod(contract))
	b = permuteTo(b, idx[1], concat(batch, contract, right)).Reshape(prod(batch), prod(contract), prod(right))
	shape := make([]int, 0, len(batch)+len(left)+len(right))
	for _, c := range concat(batch, left, right) {
		shape = append(shape, size[c])
	}
	return permuteTo(a.Matmul(b).Reshape(shape...), concat(batch, left, right), outIdx)
}

// permuteTo permutes x, whose axes are named by from, to the order of to
// (the same letters).
func permuteTo(x *Tensor, from, to []rune) *Tensor {
	if slices.Equal(from, to) {
		return x
	}
	perm := make([]int, len(to))
	for i, c := range to {
		perm[i] = slices.Index(from, c)
	}
	return x.Permute(perm...)
}

func concat(parts ...[]rune) []rune {
	var out []rune
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
