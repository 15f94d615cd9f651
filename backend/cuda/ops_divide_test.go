package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// The integer divisions check their divisors on the device
// (ChecksDivisorsOnDevice): these tests cover every integer dtype and the
// four division ops, unfused and in fused programs.

var (
	divIntDTypes = []backend.DType{backend.I8, backend.I16, backend.I32, backend.I64, backend.U8, backend.U16, backend.U32, backend.U64}
	divOps       = []backend.BinaryOp{backend.OpDiv, backend.OpFloorDiv, backend.OpRem, backend.OpMod}
)

// randomInts returns data of shape and the integer dtype dt: random bit
// patterns over the whole range (MIN and MAX among them), or, with
// nonZero, values that are never 0: half small (±[1, 20], -1 often), half
// random bit patterns with a zero replaced by 1.
func randomInts(rng *rand.Rand, shape []int, dt backend.DType, nonZero bool) *backend.TensorData {
	n := backend.NumElements(shape)
	size := dt.Size()
	raw := make([]byte, n*size)
	for i := range n {
		e := raw[i*size : (i+1)*size]
		for j := range e {
			e[j] = byte(rng.Uint32())
		}
		switch r := rng.IntN(16); {
		case r == 0: // MIN (signed) or 0 (unsigned)
			clear(e)
			if dt.IsSigned() {
				e[size-1] = 0x80
			}
		case r == 1: // -1 or MAX
			for j := range e {
				e[j] = 0xff
			}
		case nonZero && r < 9: // small
			clear(e)
			v := uint64(1 + rng.IntN(20))
			if dt.IsSigned() && rng.IntN(2) == 0 {
				v = -v
			}
			for j := range e {
				e[j] = byte(v >> (8 * j))
			}
		}
		if nonZero {
			zero := true
			for _, c := range e {
				zero = zero && c == 0
			}
			if zero {
				e[0] = 1
			}
		}
	}
	d, err := backend.NewTensorData(slices0(shape), dt, raw)
	if err != nil {
		panic(err)
	}
	return d
}

// slices0 returns a copy of s that is never nil.
func slices0(s []int) []int { return append([]int{}, s...) }

// TestKernelIntDivision checks Div, FloorDiv, Rem and Mod on every
// integer dtype against flex on random non-zero divisors over the whole
// range (MIN / -1 included), in every layout, with a broadcast scalar
// divisor, and at the range limits by hand: the values are flex's and no
// zero divisor is reported.
func TestKernelIntDivision(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(61, 62))
	shapes := [][2][]int{{{1000, 37}, {1000, 37}}, {{1000, 37}, {}}, {{3, 1, 5}, {4, 1}}, {{7}, {7}}, {{0, 3}, {1, 3}}}
	for _, dt := range divIntDTypes {
		for _, op := range divOps {
			for si, sh := range shapes {
				l := layouts[si%len(layouts)]
				what := name(op, " ", dt, " ", l.name, " ", sh)
				try(t, what, func() {
					x, fx := pair(b, randomInts(rng, l.base(sh[0]), dt, false), l, sh[0])
					y, fy := pair(b, randomInts(rng, l.base(sh[1]), dt, true), l, sh[1])
					got := binaryOn(b, op, x, y)
					if err := b.Sync(); err != nil {
						t.Fatalf("%s: a report without a zero divisor: %v", what, err)
					}
					same(t, b, got, binaryOn(flexRef, op, fx, fy), what)
				})
			}
			if !dt.IsSigned() {
				continue
			}
			// MIN / -1 wraps to MIN (Go's rule), MIN % -1 is 0.
			bits := 8 * dt.Size()
			lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
			as := []int64{lo, lo, hi, -7, 7, lo + 1, 0, lo, hi}
			bs := []int64{-1, 1, -1, 2, -2, -1, 5, lo, lo}
			da := fromF64([]int{len(as)}, dt, func() float64 { v := as[0]; as = as[1:]; return float64(v) })
			db := fromF64([]int{len(bs)}, dt, func() float64 { v := bs[0]; bs = bs[1:]; return float64(v) })
			what := name(op, " ", dt, " limits")
			x, fx := pair(b, da, layouts[0], da.Shape)
			y, fy := pair(b, db, layouts[0], db.Shape)
			got := binaryOn(b, op, x, y)
			if err := b.Sync(); err != nil {
				t.Fatalf("%s: a report without a zero divisor: %v", what, err)
			}
			same(t, b, got, binaryOn(flexRef, op, fx, fy), what)
		}
	}
}

// checkDivisionReport checks that err reports a zero divisor of op on dt
// on b: it wraps backend.ErrExecution and names the device, the op and
// the dtype.
func checkDivisionReport(t *testing.T, b *Backend, err error, op backend.BinaryOp, dt backend.DType, what string) {
	t.Helper()
	if err == nil || !errors.Is(err, backend.ErrExecution) {
		t.Errorf("%s: zero divisor reported as %v, want an error wrapping ErrExecution", what, err)
		return
	}
	for _, frag := range []string{b.ID().String() + ": ", ": " + op.String() + ": integer division by zero", "(" + dt.String() + " operands)"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("%s: message %q lacks %q", what, err, frag)
		}
	}
}

// TestKernelIntDivisionByZero checks that a zero divisor is reported by
// the next Sync (and by the next ToData, which synchronizes too) as an
// error naming the device, the op and the dtype, once; that the elements
// with a non-zero divisor hold flex's values and those with a zero divisor
// 0; and that the device keeps working. The zero sits in the vector body,
// in the tail, in a strided (permuted) divisor and in a broadcast scalar
// divisor.
func TestKernelIntDivisionByZero(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(63, 64))
	for _, dt := range divIntDTypes {
		for _, op := range divOps {
			for _, c := range []struct {
				name   string
				yShape []int
				l      viewLayout
				zeros  []int // flat positions of y's base data set to 0
			}{
				{"contiguous", []int{67, 3}, layouts[0], []int{5, 200}},
				{"permuted", []int{67, 3}, layouts[1], []int{17}},
				{"scalar", []int{}, layouts[0], []int{0}},
			} {
				what := name(op, " ", dt, " ", c.name)
				try(t, what, func() {
					shape := []int{67, 3}
					dx := randomInts(rng, c.l.base(shape), dt, false)
					dy := randomInts(rng, c.l.base(c.yShape), dt, true)
					ones := &backend.TensorData{Shape: slices0(dy.Shape), DType: dt, Bytes: append([]byte{}, dy.Bytes...)}
					for _, i := range c.zeros {
						clear(dy.Bytes[i*dt.Size() : (i+1)*dt.Size()])
					}
					x, fx := pair(b, dx, c.l, shape)
					y := c.l.view(b, b.FromData(dy), c.yShape)
					got := binaryOn(b, op, x, y)
					checkDivisionReport(t, b, b.Sync(), op, dt, what)
					if err := b.Sync(); err != nil {
						t.Errorf("%s: reported twice: %v", what, err)
					}
					g, err := b.ToData(got)
					if err != nil {
						t.Fatalf("%s: reading the result: %v", what, err)
					}
					// The reference: flex with the zeros replaced by the
					// original divisors, and 0 where the divisor was 0.
					fy := c.l.view(flexRef, flexRef.FromData(ones), c.yShape)
					w, _ := flexRef.ToData(binaryOn(flexRef, op, fx, fy))
					yz, _ := flexRef.ToData(ir.Expand(flexRef, c.l.view(flexRef, flexRef.FromData(dy), c.yShape), shape))
					size := dt.Size()
					for i := range g.NumElements() {
						want := w.Bytes[i*size : (i+1)*size]
						if yz.Value(i) == 0 {
							want = make([]byte, size)
						}
						if string(g.Bytes[i*size:(i+1)*size]) != string(want) {
							t.Errorf("%s: element %d = %v, want %x", what, i, g.Value(i), want)
							break
						}
					}
					// ToData reports a zero divisor itself.
					binaryOn(b, op, x, y)
					_, err = b.ToData(x)
					checkDivisionReport(t, b, err, op, dt, what+" (ToData)")
					if err := b.statusError(); err != nil {
						t.Errorf("%s: report not cleared by ToData: %v", what, err)
					}
				})
			}
		}
	}
	if _, err := b.ToData(ir.Neg(b, b.FromData(fromF64([]int{3}, backend.F32, func() float64 { return 1 })))); err != nil {
		t.Fatalf("device unusable after the zero divisors: %v", err)
	}
}

// TestFusedIntDivision checks programs with integer divisions on every
// integer dtype: with non-zero divisors they match the op-by-op run bit
// for bit and report nothing; a zero divisor (in a contiguous, a strided
// or a scalar divisor input, or a constant) is reported by the next Sync
// naming the op and the dtype.
func TestFusedIntDivision(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(65, 66))
	shape := []int{33, 65}
	for _, dt := range divIntDTypes {
		for _, op := range divOps {
			// (x op y) + x, then op z, z a scalar input; and op by a constant.
			g := newProg(shape)
			x, y, z := g.input(dt, shape), g.input(dt, shape), g.input(dt, nil)
			v := g.binary(backend.OpAdd, g.binary(op, x, y), x)
			p := g.output(g.binary(op, v, z), g.binary(op, x, g.full(dt, 3)))
			for _, l := range layouts[:2] {
				what := name("fused ", op, " ", dt, " ", l.name)
				up := func(d *backend.TensorData, s []int) backend.Tensor { return l.view(b, b.FromData(d), s) }
				ins := []backend.Tensor{
					up(randomInts(rng, l.base(shape), dt, false), shape),
					up(randomInts(rng, l.base(shape), dt, true), shape),
					b.FromData(randomInts(rng, nil, dt, true)),
				}
				checkFused(t, b, p, ins, func() string { return what })
				if err := b.Sync(); err != nil {
					t.Fatalf("%s: a report without a zero divisor: %v", what, err)
				}
				zy := randomInts(rng, l.base(shape), dt, true)
				clear(zy.Bytes[7*dt.Size() : 8*dt.Size()])
				bad := []backend.Tensor{ins[0], up(zy, shape), ins[2]}
				if _, ok := b.ExecFused(p, bad); !ok {
					t.Fatalf("%s: ExecFused declined", what)
				}
				checkDivisionReport(t, b, b.Sync(), op, dt, what+" (zero in y)")
				bad = []backend.Tensor{ins[0], ins[1], b.FromData(fromF64(nil, dt, func() float64 { return 0 }))}
				if _, ok := b.ExecFused(p, bad); !ok {
					t.Fatalf("%s: ExecFused declined", what)
				}
				checkDivisionReport(t, b, b.Sync(), op, dt, what+" (zero scalar)")
			}
			// A zero constant divisor.
			g = newProg(shape)
			x = g.input(dt, shape)
			p = g.output(g.binary(op, x, g.full(dt, 0)))
			if _, ok := b.ExecFused(p, []backend.Tensor{b.FromData(randomInts(rng, shape, dt, false))}); !ok {
				t.Fatal("ExecFused declined a division by a constant")
			}
			checkDivisionReport(t, b, b.Sync(), op, dt, fmt.Sprint("fused ", op, " ", dt, " by a zero constant"))
		}
	}
}

// TestStatusReport checks the decoding of the status word (no GPU is
// needed): each division op and dtype code, and an index report with a
// negative 64-bit index, against messages written out by hand.
func TestStatusReport(t *testing.T) {
	id := backend.DeviceID{Type: "cuda", Index: 1}
	if err := statusReport(id, [4]uint32{}); err != nil {
		t.Fatalf("no report: %v", err)
	}
	for _, c := range []struct {
		w    [4]uint32
		want string
	}{
		{[4]uint32{statusDivide | 4, uint32(backend.I32)}, "cuda:1: execution failed: div: integer division by zero (i32 operands)"},
		{[4]uint32{statusDivide | 5, uint32(backend.U8)}, "cuda:1: execution failed: floor_div: integer division by zero (u8 operands)"},
		{[4]uint32{statusDivide | 6, uint32(backend.I64)}, "cuda:1: execution failed: rem: integer division by zero (i64 operands)"},
		{[4]uint32{statusDivide | 7, uint32(backend.U64)}, "cuda:1: execution failed: mod: integer division by zero (u64 operands)"},
		{[4]uint32{statusIndexSelect, 0xfffffffe, 0xffffffff, 5}, "cuda:1: execution failed: index_select: index -2 is out of range for an axis of size 5"},
		{[4]uint32{statusScatterAdd, 7, 0, 3}, "cuda:1: execution failed: scatter_add: index 7 is out of range for an axis of size 3"},
	} {
		err := statusReport(id, c.w)
		if err == nil || err.Error() != c.want || !errors.Is(err, backend.ErrExecution) {
			t.Errorf("report %x: %v, want %q wrapping ErrExecution", c.w, err, c.want)
		}
	}
	// The division codes are the ops' own codes, as the kernels write them.
	for _, op := range divOps {
		if got := statusReport(id, [4]uint32{statusDivide | uint32(op), uint32(backend.I8)}); !strings.Contains(got.Error(), ": "+op.String()+": ") {
			t.Errorf("%v: %v", op, got)
		}
	}
}
