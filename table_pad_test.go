package ember

import (
	"math"
	"testing"
)

// padIndex maps index i of an axis of size n padded by before on the
// left to the source index for mode (as numpy.pad's reflect, edge and
// wrap modes).
func padIndex(i, before, n int, mode PaddingMode) int {
	j := i - before
	switch mode {
	case PadReflect:
		for j < 0 || j >= n {
			if j < 0 {
				j = -j
			}
			if j >= n {
				j = 2*(n-1) - j
			}
		}
	case PadReplicate:
		j = min(max(j, 0), n-1)
	case PadCircular:
		j = ((j % n) + n) % n
	}
	return j
}

// TestTablePadModes checks PadWithMode (reflect, replicate, circular,
// zeros) on every device, dtype and layout, padding one to all axes
// asymmetrically up to each mode's limit, against index mapping on the
// host, and its limits' errors.
func TestTablePadModes(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(103)
		for _, dt := range []DType{F32, F64, I64} {
			for _, shape := range [][]int{{5}, {3, 4}, {2, 3, 4}} {
				gen := nonZero(rng, 0.25, 3)
				if dt.IsInt() {
					gen = ints(rng, -9, 9)
				}
				x := randRef(shape, dt, gen)
				for _, mode := range []PaddingMode{PadReflect, PadReplicate, PadCircular, PadZeros} {
					for naxes := 1; naxes <= len(shape); naxes++ {
						pads := make([]int, 2*naxes)
						for k := range naxes {
							n := shape[len(shape)-1-k]
							hi := n // circular: at most n
							if mode == PadReflect {
								hi = n - 1
							} else if mode == PadReplicate || mode == PadZeros {
								hi = n + 2
							}
							pads[2*k], pads[2*k+1] = rng.IntN(hi+1), rng.IntN(hi+1)
						}
						out := append([]int{}, shape...)
						for k := range naxes {
							a := len(shape) - 1 - k
							out[a] += pads[2*k] + pads[2*k+1]
						}
						want := build(out, func(idx []int) float64 {
							j := append([]int{}, idx...)
							for k := range naxes {
								a := len(shape) - 1 - k
								if mode == PadZeros {
									j[a] = idx[a] - pads[2*k]
									if j[a] < 0 || j[a] >= shape[a] {
										return 0
									}
									continue
								}
								j[a] = padIndex(idx[a], pads[2*k], shape[a], mode)
							}
							return x.at(j...)
						})
						for _, l := range layoutsFor(len(shape)) {
							checkEq(t, "pad "+mode.String()+" "+dt.String()+" "+shapeName(shape)+" "+l.name+" "+shapeName(pads),
								l.view(dev, x, dt).PadWithMode(pads, mode), want, dt)
						}
					}
				}
			}
		}
		x := Zeros([]int{2, 3}, dev)
		expectPanic(t, "reflect as wide as the axis", func() { x.PadWithMode([]int{3, 0}, PadReflect) }, "pad", "less than")
		expectPanic(t, "circular wider than the axis", func() { x.PadWithMode([]int{0, 4}, PadCircular) }, "pad", "at most")
		expectPanic(t, "replicate of an empty axis", func() { Zeros([]int{2, 0}, dev).PadWithMode([]int{1, 1}, PadReplicate) }, "pad", "empty")
		expectPanic(t, "negative pad", func() { x.PadWithMode([]int{-1, 0}, PadReflect) }, "pad", "negative")
	})
}

// pySlice is CPython's slice adjustment (PySlice_AdjustIndices): the
// indices x[start:end:step] selects on an axis of size n.
func pySlice(n, start, end, step int) []int {
	adj := func(v int) int {
		if v < 0 {
			v += n
			if v < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		} else if v >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	start, end = adj(start), adj(end)
	var out []int
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		out = append(out, i)
		if (step > 0 && i > math.MaxInt-step) || (step < 0 && i < math.MinInt-step) {
			break
		}
	}
	return out
}

// TestTableSliceNegativeStep checks Slice with negative steps (and mixed
// with positive ones) on every device and layout against CPython's slice
// rules, including Reverse(), clamped and out-of-range bounds, and the
// gradient by finite differences.
func TestTableSliceNegativeStep(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(107)
		x := randRef([]int{5, 6}, F32, nonZero(rng, 0.25, 3))
		rs := []Range{Reverse(), {Start: 4, End: 0, Step: -1}, {Start: -1, End: -7, Step: -2}, {Start: 100, End: -100, Step: -3},
			{Start: 2, End: 3, Step: -1}, {Start: 0, End: math.MinInt, Step: -1}, {Start: 3, End: 1, Step: math.MinInt}, R(1, 4), {Start: 0, End: 6, Step: 2}}
		for _, l := range layoutsFor(2) {
			xt := l.view(dev, x, F32)
			for _, r0 := range rs {
				for _, r1 := range rs {
					i0 := pySlice(5, r0.Start, r0.End, max(r0.Step, 1)*boolSign(r0.Step < 0))
					i1 := pySlice(6, r1.Start, r1.End, max(r1.Step, 1)*boolSign(r1.Step < 0))
					if r0.Step < 0 {
						i0 = pySlice(5, r0.Start, r0.End, r0.Step)
					}
					if r1.Step < 0 {
						i1 = pySlice(6, r1.Start, r1.End, r1.Step)
					}
					want := build([]int{len(i0), len(i1)}, func(idx []int) float64 { return x.at(i0[idx[0]], i1[idx[1]]) })
					checkEq(t, "slice "+l.name+" "+rangeName(r0)+" "+rangeName(r1), xt.Slice(r0, r1), want, F32)
				}
			}
		}
	})
	rng := newRNG(109)
	m := randRef([]int{4, 5}, F64, nonZero(rng, 0.2, 2))
	runGradCases(t, []gradCase{{name: "slice negative step", ins: []ref{m}, f: on1(func(x *Tensor) *Tensor {
		return x.Slice(Range{Start: -1, End: 0, Step: -2}, Reverse())
	})}, {name: "pad reflect", ins: []ref{m}, f: on1(func(x *Tensor) *Tensor { return x.PadWithMode([]int{2, 3, 1, 0}, PadReflect) })},
		{name: "pad circular", ins: []ref{m}, f: on1(func(x *Tensor) *Tensor { return x.PadWithMode([]int{4, 2}, PadCircular) })},
		{name: "pad replicate", ins: []ref{m}, f: on1(func(x *Tensor) *Tensor { return x.PadWithMode([]int{3, 1, 2, 2}, PadReplicate) })}})
}

func boolSign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func rangeName(r Range) string {
	return "[" + itoa(r.Start) + ":" + itoa(r.End) + ":" + itoa(r.Step) + "]"
}
