package cuda

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

var movementDTypes = []backend.DType{backend.F64, backend.F32, backend.F16, backend.BF16, backend.I64, backend.I16, backend.U8, backend.Bool}

func TestKernelPadCat(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, dt := range movementDTypes {
		for _, l := range layouts {
			shape := []int{3, 4, 5}
			x, fx := randomPair(b, rng, shape, dt, l)
			pads := []int{1, 0, 0, 2, 3, 1} // (before, after) per axis
			same(t, b, ir.Pad(b, x, pads, 2.5), ir.Pad(flexRef, fx, pads, 2.5), name("pad ", dt, " ", l.name))
			y, fy := randomPair(b, rng, []int{3, 2, 5}, dt, l)
			z, fz := randomPair(b, rng, []int{3, 0, 5}, dt, l)
			same(t, b, ir.Cat(b, []backend.Tensor{x, y, z, x}, 1), ir.Cat(flexRef, []backend.Tensor{fx, fy, fz, fx}, 1), name("cat ", dt, " ", l.name))
			same(t, b, ir.Cat(b, []backend.Tensor{x, x}, 2), ir.Cat(flexRef, []backend.Tensor{fx, fx}, 2), name("cat last ", dt, " ", l.name))
		}
	}
}

// indexData returns I64 indices in [0, size) of shape.
func indexData(rng *rand.Rand, shape []int, size int) *backend.TensorData {
	return fromF64(shape, backend.I64, func() float64 { return float64(rng.IntN(size)) })
}

func TestKernelGatherIndexSelectScatter(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dt := range append(movementDTypes, backend.I8, backend.U16, backend.I32, backend.U32) {
		for _, l := range layouts[:2] {
			shape := []int{4, 6, 5}
			x, fx := randomPair(b, rng, shape, dt, l)
			for axis := range 3 {
				ishape := []int{3, 5, 4}
				ishape[axis] = 7
				id := indexData(rng, l.base(ishape), shape[axis])
				ix, fix := pair(b, id, l, ishape)
				same(t, b, ir.Gather(b, x, axis, ix), ir.Gather(flexRef, fx, axis, fix), name("gather ", dt, " ", l.name, " axis ", axis))

				sel := indexData(rng, []int{9}, shape[axis])
				sx, fsx := pair(b, sel, layouts[0], []int{9})
				same(t, b, ir.IndexSelect(b, x, axis, sx), ir.IndexSelect(flexRef, fx, axis, fsx), name("index_select ", dt, " ", l.name, " axis ", axis))

				// scatter-add with many duplicate indices
				src, fsrc := randomPair(b, rng, ishape, dt, l)
				sameNorm(t, b, ir.ScatterAdd(b, x, axis, ix, src), ir.ScatterAdd(flexRef, fx, axis, fix, fsrc), name("scatter_add ", dt, " ", l.name, " axis ", axis))
			}
		}
	}
}

// TestKernelIndexOutOfRange checks that an out-of-range index neither
// crashes nor corrupts the device: the status word reports it with the op,
// the index and the size, and the device keeps working.
func TestKernelIndexOutOfRange(t *testing.T) {
	b := gpu(t)
	x := b.FromData(fromF64([]int{3, 5}, backend.F32, func() float64 { return 1 }))
	cases := []struct {
		op  string
		run func(ix backend.Tensor)
	}{
		{"gather", func(ix backend.Tensor) { ir.Gather(b, x, 1, ix) }},
		{"index_select", func(ix backend.Tensor) { ir.IndexSelect(b, x, 1, ir.Reshape(b, ix, []int{3})) }},
		{"scatter_add", func(ix backend.Tensor) { ir.ScatterAdd(b, x, 1, ix, ir.Full(b, []int{3, 1}, backend.F32, 1)) }},
	}
	for _, c := range cases {
		ix := b.FromData(fromF64([]int{3, 1}, backend.I64, func() float64 { return 7 }))
		c.run(ix)
		// Sync reports it once it checks the status word; until then the
		// check is statusError's alone.
		err := b.Sync()
		if err == nil {
			err = b.statusError()
		}
		if err == nil || !errors.Is(err, backend.ErrExecution) {
			t.Fatalf("%s: out-of-range index not reported: %v", c.op, err)
		}
		for _, frag := range []string{c.op, "index 7", "size 5"} {
			if !strings.Contains(err.Error(), frag) {
				t.Errorf("%s: message %q lacks %q", c.op, err, frag)
			}
		}
		if err := b.statusError(); err != nil {
			t.Errorf("%s: report not cleared: %v", c.op, err)
		}
	}
	if _, err := b.ToData(ir.Neg(b, x)); err != nil {
		t.Fatalf("device unusable after bad indices: %v", err)
	}
}
