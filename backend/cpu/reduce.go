package cpu

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu/internal/workers"
	"github.com/emberml/ember/backend/internal/host"
	"github.com/emberml/ember/ir"
)

func init() { kernels.Set(ir.KindReduce, (*Backend).reduce, nil) }

// reduce reduces In[0] along op.Axis (PyTorch's sum/prod/amax/amin/...
// with dim and keepdim; see ir.ReduceOp). Contiguous F32/Flex32 data runs
// here, in parallel:
//
//   - Sum, Max and Min along the last axis (which includes full
//     reductions, which the root package runs on the flattened tensor):
//     sums accumulate in float64 like flex's, in several partial sums per
//     row, so they agree with flex up to the order of the float64
//     additions; Max and Min propagate NaN (Go's max and min).
//   - Sum, Prod, Max and Min along any other axis (reduceAxis): whole rows
//     at a time into a row of accumulators, each lane in flex's order, so
//     the results are flex's bit for bit.
//
// Everything else (other dtypes, ArgMax and ArgMin, Prod along the last
// axis, strided views) and empty axes run on flex (whose F64 sums add
// pairwise).
func (be *Backend) reduce(op ir.Op) ir.Outputs {
	r := ir.ReduceOp(op.Sub)
	if isF32(op.DType) && (r == backend.ReduceSum || r == backend.ReduceMax || r == backend.ReduceMin || r == backend.ReduceProd) {
		if out := be.reduceF32(&op, r); out != nil {
			return ir.One(out)
		}
	}
	return be.flex.Exec(op)
}

func (be *Backend) reduceF32(op *ir.Op, r ir.ReduceOp) ir.Tensor {
	v, ok := host.Float32(op.In[0])
	if !ok {
		return nil
	}
	src, ok := v.Contiguous()
	if !ok || len(src) == 0 {
		return nil
	}
	return be.reduceContiguous(r, src, v.Shape, op.Axis, op.DType, op.Shape)
}

// reduceContiguous reduces contiguous src of shape along axis into a
// tensor of dtype dt and shape oshape, or returns nil for what it does not
// take (Prod along the last axis).
func (be *Backend) reduceContiguous(op ir.ReduceOp, src []float32, shape []int, axis int, dt ir.DType, oshape []int) ir.Tensor {
	outer := numel(shape[:axis])
	r := shape[axis]
	inner := numel(shape[axis+1:])
	var out []float32
	switch {
	case inner > 1:
		out = be.f32(outer * inner)
		reduceAxis(op, out, src, outer, r, inner)
	case op == backend.ReduceProd:
		return nil
	case outer == 1:
		out = []float32{reduceAll(op, src)}
	default: // the last axis
		out = be.f32(outer)
		rowsOf := func(lo, hi int) {
			if r < 8 {
				reduceShortRows(op, out[lo:hi], src[lo*r:hi*r], r)
				return
			}
			for o := lo; o < hi; o++ {
				out[o] = reduceRow(op, src[o*r:(o+1)*r])
			}
		}
		if outer*r < serialElems {
			rowsOf(0, outer)
		} else {
			rows := max(1, chunkElems/r)
			workers.ParallelFor((outer+rows-1)/rows, func(task int) {
				rowsOf(task*rows, min(outer, (task+1)*rows))
			})
		}
	}
	return host.NewFloat32(dt, oshape, out)
}

// reduceSplit is the number of chunks reduceAll cuts a vector of fewer
// than reduceSplit·chunkElems (and at least serialElems) elements into.
const reduceSplit = 8

// reduceAll reduces all of src (len > 0), in parallel chunks when large;
// the chunks depend only on len(src), so the result does not depend on the
// worker count.
func reduceAll(op backend.ReduceOp, src []float32) float32 {
	n := len(src)
	if n < serialElems {
		return reduceRow(op, src)
	}
	// The split sets the sum's rounding, so it depends on n only: chunks
	// of chunkElems, or reduceSplit of them below reduceSplit chunks.
	chunk := chunkElems
	if n < chunk*reduceSplit {
		chunk = (n + reduceSplit - 1) / reduceSplit
	}
	tasks := (n + chunk - 1) / chunk
	if op == backend.ReduceSum {
		part := make([]float64, tasks)
		workers.ParallelFor(tasks, func(t int) { part[t] = sumF32(src[t*chunk : min(n, (t+1)*chunk)]) })
		var s float64
		for _, v := range part {
			s += v
		}
		return float32(s)
	}
	part := make([]float32, tasks)
	workers.ParallelFor(tasks, func(t int) { part[t] = reduceRow(op, src[t*chunk:min(n, (t+1)*chunk)]) })
	return reduceRow(op, part)
}

// reduceShortRows reduces the consecutive rows of r (1 ≤ r < 8) elements
// of src into out, one per row, with the results of reduceRow (whose
// accumulators see at most one element each for rows this short, so a
// sequential loop gives the same values).
func reduceShortRows(op backend.ReduceOp, out, src []float32, r int) {
	src = src[:len(out)*r]
	switch op {
	case backend.ReduceSum:
		for o := range out {
			row := src[o*r : o*r+r]
			s := float64(row[0])
			for _, v := range row[1:] {
				s += float64(v)
			}
			out[o] = float32(s)
		}
	case backend.ReduceMax:
		for o := range out {
			row := src[o*r : o*r+r]
			m := row[0]
			for _, v := range row[1:] {
				m = max(m, v)
			}
			out[o] = m
		}
	default:
		for o := range out {
			row := src[o*r : o*r+r]
			m := row[0]
			for _, v := range row[1:] {
				m = min(m, v)
			}
			out[o] = m
		}
	}
}

// reduceRow reduces one contiguous row (len > 0).
func reduceRow(op backend.ReduceOp, x []float32) float32 {
	switch op {
	case backend.ReduceSum:
		return float32(sumF32(x))
	case backend.ReduceMax:
		return maxRow(x)
	}
	return minRow(x)
}

// sum64 sums x in float64 with eight independent accumulators.
func sum64(x []float32) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
		s4 += float64(v[4])
		s5 += float64(v[5])
		s6 += float64(v[6])
		s7 += float64(v[7])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// maxRow is the largest element of x (len > 0), NaN if x holds one.
func maxRow(x []float32) float32 {
	m0, m1, m2, m3 := x[0], x[0], x[0], x[0]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0, m1, m2, m3 = max(m0, v[0]), max(m1, v[1]), max(m2, v[2]), max(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// minRow is the smallest element of x (len > 0), NaN if x holds one.
func minRow(x []float32) float32 {
	m0, m1, m2, m3 := x[0], x[0], x[0], x[0]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0, m1, m2, m3 = min(m0, v[0]), min(m1, v[1]), min(m2, v[2]), min(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = min(m0, x[i])
	}
	return min(min(m0, m1), min(m2, m3))
}
