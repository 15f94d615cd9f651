package ember

import (
	"testing"
)

// repeatRef tiles r reps[k] times along each axis (r viewed with leading
// size-1 axes up to len(reps)).
func repeatRef(r ref, reps []int) ref {
	shape := make([]int, len(reps))
	src := make([]int, len(reps))
	lead := len(reps) - len(r.shape)
	for k := range reps {
		src[k] = 1
		if k >= lead {
			src[k] = r.shape[k-lead]
		}
		shape[k] = src[k] * reps[k]
	}
	return build(shape, func(idx []int) float64 {
		j := make([]int, len(r.shape))
		for k := lead; k < len(reps); k++ {
			j[k-lead] = idx[k] % src[k]
		}
		return r.at(j...)
	})
}

// interleaveRef repeats each element of r n times along axis a.
func interleaveRef(r ref, n, a int) ref {
	shape := append([]int{}, r.shape...)
	shape[a] *= n
	return build(shape, func(idx []int) float64 {
		j := append([]int{}, idx...)
		j[a] /= n
		return r.at(j...)
	})
}

// narrowRef is r[start:start+n] along axis a, with the axis removed when
// squeeze.
func narrowRef(r ref, a, start, n int, squeeze bool) ref {
	shape := append([]int{}, r.shape...)
	shape[a] = n
	out := build(shape, func(idx []int) float64 {
		j := append([]int{}, idx...)
		j[a] += start
		return r.at(j...)
	})
	if squeeze {
		out.shape = append(append([]int{}, shape[:a]...), shape[a+1:]...)
	}
	return out
}

// TestTableRepeatSplit checks Repeat, RepeatInterleave, Split,
// SplitSizes, Chunk and Unbind on every device, dtype, layout and axis
// (negative too) against index arithmetic on the host: PyTorch's piece
// counts for chunk (7 in 4 → 2,2,2,1; 6 in 4 → 2,2,2) and split, empty
// axes and zero repeats.
func TestTableRepeatSplit(t *testing.T) {
	shapes := [][]int{{5}, {1, 1}, {3, 4}, {2, 3, 2}, {2, 0, 3}}
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(59)
		for _, dt := range []DType{F32, F64, BF16, I64, I32, Bool} {
			for _, shape := range shapes {
				x := randRef(shape, dt, ints(rng, -9, 9))
				if dt == Bool {
					x = randRef(shape, dt, ints(rng, 0, 1))
				} else if dt.IsFloat() {
					x = randRef(shape, dt, nonZero(rng, 0.25, 3))
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					name := dt.String() + " " + shapeName(shape) + " " + l.name
					reps := make([]int, len(shape))
					for k := range reps {
						reps[k] = 1 + rng.IntN(3)
					}
					checkEq(t, "repeat "+name, xt.Repeat(reps...), repeatRef(x, reps), dt)
					more := append([]int{2, 0}, reps...)
					checkEq(t, "repeat with new axes "+name, xt.Repeat(more...), repeatRef(x, more), dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						what := name + " axis " + itoa(a)
						for _, n := range []int{0, 1, 3} {
							checkEq(t, "repeat_interleave "+itoa(n)+" "+what, xt.RepeatInterleave(n, a), interleaveRef(x, n, pa), dt)
						}
						size := shape[pa]
						for _, piece := range []int{1, 2, 3} {
							got := xt.Split(piece, a)
							want := 0
							if size == 0 {
								want = 1
							} else {
								want = (size + piece - 1) / piece
							}
							if len(got) != want {
								t.Errorf("split %d %s: %d pieces, want %d", piece, what, len(got), want)
								continue
							}
							for i, p := range got {
								n := min(piece, size-i*piece)
								if size == 0 {
									n = 0
								}
								checkEq(t, "split "+itoa(piece)+" piece "+itoa(i)+" "+what, p, narrowRef(x, pa, i*piece, n, false), dt)
							}
						}
						for _, chunks := range []int{1, 2, 4} {
							got := xt.Chunk(chunks, a)
							cs := (size + chunks - 1) / chunks
							start := 0
							for i, p := range got {
								n := min(cs, size-start)
								checkEq(t, "chunk "+itoa(chunks)+" piece "+itoa(i)+" "+what, p, narrowRef(x, pa, start, n, false), dt)
								start += n
							}
							if size > 0 && start != size {
								t.Errorf("chunk %d %s: pieces cover %d of %d", chunks, what, start, size)
							}
						}
						if size > 0 {
							sizes := []int{size - 1, 0, 1}
							for i, p := range xt.SplitSizes(sizes, a) {
								start := []int{0, size - 1, size - 1}[i]
								checkEq(t, "split_sizes piece "+itoa(i)+" "+what, p, narrowRef(x, pa, start, sizes[i], false), dt)
							}
						}
						ub := xt.Unbind(a)
						if len(ub) != size {
							t.Errorf("unbind %s: %d tensors, want %d", what, len(ub), size)
						}
						for i, p := range ub {
							checkEq(t, "unbind "+itoa(i)+" "+what, p, narrowRef(x, pa, i, 1, true), dt)
						}
					}
				}
			}
		}
		seven := mk(dev, randRef([]int{7}, F32, nonZero(rng, 1, 2)), F32)
		var lens []int
		for _, p := range seven.Chunk(4, 0) {
			lens = append(lens, p.Dim(0))
		}
		if shapeName(lens) != "[2 2 2 1]" {
			t.Errorf("chunk 7 in 4: %v, want [2 2 2 1]", lens)
		}
		lens = nil
		for _, p := range seven.Narrow(0, 0, 6).Chunk(4, 0) {
			lens = append(lens, p.Dim(0))
		}
		if shapeName(lens) != "[2 2 2]" {
			t.Errorf("chunk 6 in 4: %v, want [2 2 2]", lens)
		}
		expectPanic(t, "repeat with too few reps", func() { Zeros([]int{2, 3}, dev).Repeat(2) }, "repeat", "at least as many")
		expectPanic(t, "repeat negative", func() { Zeros([]int{2}, dev).Repeat(-1) }, "repeat", "negative")
		expectPanic(t, "repeat overflow", func() { Zeros([]int{2}, dev).Repeat(1<<62, 1<<62) }, "repeat")
		expectPanic(t, "split sizes not summing", func() { seven.SplitSizes([]int{3, 3}, 0) }, "split", "sum")
		expectPanic(t, "split size 0", func() { seven.Split(0, 0) }, "split", "positive")
		expectPanic(t, "chunk 0", func() { seven.Chunk(0, 0) }, "chunk", "positive")
		expectPanic(t, "unbind rank 0", func() { seven.Sum().Unbind(0) }, "unbind", "rank-0")
	})
}

// TestGradRepeatSplit checks the gradients of Repeat, RepeatInterleave
// and the pieces of Split, Chunk and Unbind against central differences.
func TestGradRepeatSplit(t *testing.T) {
	rng := newRNG(61)
	m := randRef([]int{3, 4}, F64, nonZero(rng, 0.2, 2))
	un := func(name string, f func(*Tensor) *Tensor) gradCase {
		return gradCase{name: name, ins: []ref{m}, f: on1(f)}
	}
	runGradCases(t, []gradCase{
		un("repeat", func(x *Tensor) *Tensor { return x.Repeat(2, 1, 3) }),
		un("repeat_interleave", func(x *Tensor) *Tensor { return x.RepeatInterleave(3, -1) }),
		un("split", func(x *Tensor) *Tensor { p := x.Split(3, 1); return p[0].Sum().Add(p[1].MulScalar(2).Sum()) }),
		un("chunk", func(x *Tensor) *Tensor { p := x.Chunk(2, 0); return p[1].Mul(p[1]) }),
		un("unbind", func(x *Tensor) *Tensor { p := x.Unbind(0); return p[0].Mul(p[2]) }),
	})
}
