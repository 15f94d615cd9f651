package ndarray

import "github.com/emberml/ember/ir"

// mapOf applies f to every element of x.
func mapOf[E, O any](x []E, f func(E) O) []O {
	out := make([]O, len(x))
	for j, v := range x {
		out[j] = f(v)
	}
	return out
}

// zip applies f to n pairs of elements of a and b read through the index
// maps ia and ib (nil: the identity).
func zip[E, O any](a, b []E, ia, ib []int, n int, f func(E, E) O) []O {
	out := make([]O, n)
	switch {
	case n == 0:
	case ia == nil && ib == nil: // equal shapes, the common case
		a, b = a[:n], b[:n]
		for j := range out {
			out[j] = f(a[j], b[j])
		}
		return out
	case ia == nil && len(ib) == 0: // a tensor and a one-element operand
		a, bv := a[:n], b[0]
		for j := range out {
			out[j] = f(a[j], bv)
		}
		return out
	case len(ia) == 0 && ib == nil:
		av, b := a[0], b[:n]
		for j := range out {
			out[j] = f(av, b[j])
		}
		return out
	}
	for j := range out {
		out[j] = f(a[at(ia, j)], b[at(ib, j)])
	}
	return out
}

// unary applies the unary op op.Sub to In[0] elementwise (see ir.UnaryOp):
// floats compute in float64 and round to the dtype; on integers Neg wraps,
// Floor, Ceil and Round are the identity and Not is bitwise; on Bool, Not
// negates.
func (be *Backend) unary(op ir.Op) *Tensor {
	x := asTensor(op.In[0])
	u := ir.UnaryOp(op.Sub)
	out := &Tensor{dtype: x.dtype, shape: op.Shape}
	switch classOf(x.dtype) {
	case floatClass:
		out.f = mapOf(x.f, floatUnary(u))
	case intClass:
		out.i = mapOf(x.i, intUnary[int64](u))
	case uintClass:
		out.u = mapOf(x.u, intUnary[uint64](u))
	default:
		out.b = mapOf(x.b, func(v bool) bool { return !v }) // Not, the only unary op on Bool
	}
	return out.normalize()
}

// binary applies the binary op op.Sub to In[0] and In[1] (one dtype)
// elementwise, broadcast (NumPy) to op.Shape; comparisons return Bool. See
// ir.BinaryOp: integers wrap, integer Div truncates, FloorDiv floors, Rem
// takes the dividend's sign and Mod the divisor's, Max and Min propagate
// NaN, shifts by amounts outside [0, bits) give 0 or the sign fill.
func (be *Backend) binary(op ir.Op) *Tensor {
	x, y := asTensor(op.In[0]), asTensor(op.In[1])
	bop := ir.BinaryOp(op.Sub)
	ix, iy := broadcastIndex(x.shape, op.Shape), broadcastIndex(y.shape, op.Shape)
	n := ir.NumElements(op.Shape)
	out := &Tensor{dtype: op.DType, shape: op.Shape}
	bits := 8 * x.dtype.Size()
	switch c := classOf(x.dtype); {
	case bop.IsComparison() && c == floatClass:
		out.b = zip(x.f, y.f, ix, iy, n, compare[float64](bop))
	case bop.IsComparison() && c == intClass:
		out.b = zip(x.i, y.i, ix, iy, n, compare[int64](bop))
	case bop.IsComparison() && c == uintClass:
		out.b = zip(x.u, y.u, ix, iy, n, compare[uint64](bop))
	case bop.IsComparison():
		out.b = zip(x.b, y.b, ix, iy, n, compareBool(bop))
	case c == floatClass:
		out.f = zip(x.f, y.f, ix, iy, n, floatBinary(bop))
	case c == intClass:
		out.i = zip(x.i, y.i, ix, iy, n, intBinary[int64](bop, bits))
	case c == uintClass:
		out.u = zip(x.u, y.u, ix, iy, n, intBinary[uint64](bop, bits))
	default:
		out.b = zip(x.b, y.b, ix, iy, n, boolBinary(bop))
	}
	return out.normalize()
}

// where selects In[1]'s element where In[0] (Bool) is true, else In[2]'s;
// the three broadcast to op.Shape and the result has In[1]'s dtype.
func (be *Backend) where(op ir.Op) *Tensor {
	c, x, y := asTensor(op.In[0]), asTensor(op.In[1]), asTensor(op.In[2])
	m := [3][]int{broadcastIndex(c.shape, op.Shape), broadcastIndex(x.shape, op.Shape), broadcastIndex(y.shape, op.Shape)}
	n := ir.NumElements(op.Shape)
	return &Tensor{dtype: x.dtype, shape: op.Shape,
		f: choose(c.b, x.f, y.f, m, n), i: choose(c.b, x.i, y.i, m, n),
		u: choose(c.b, x.u, y.u, m, n), b: choose(c.b, x.b, y.b, m, n)}
}

// choose returns n elements, element j being a's where cond holds and b's
// otherwise, the three read through the index maps m (nil for a nil a:
// the slice of another class).
func choose[E any](cond []bool, a, b []E, m [3][]int, n int) []E {
	if a == nil {
		return nil
	}
	out := make([]E, n)
	for j := range out {
		if cond[at(m[0], j)] {
			out[j] = a[at(m[1], j)]
		} else {
			out[j] = b[at(m[2], j)]
		}
	}
	return out
}
