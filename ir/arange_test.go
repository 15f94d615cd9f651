package ir

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// refArangeLen is the element count of [start, end) in steps of step by
// big.Int arithmetic: ceil((end - start) / step), or -1 when the step's
// sign leads away from end.
func refArangeLen(start, end, step int) *big.Int {
	d := new(big.Int).Sub(big.NewInt(int64(end)), big.NewInt(int64(start)))
	s := big.NewInt(int64(step))
	if d.Sign() == 0 {
		return new(big.Int)
	}
	if d.Sign() != s.Sign() {
		return big.NewInt(-1)
	}
	d.Abs(d)
	s.Abs(s)
	d.Add(d, s).Sub(d, big.NewInt(1))
	return d.Quo(d, s)
}

// ArangeLen agrees with big.Int arithmetic for random and extreme bounds
// and steps, and reports a step leading away from end and a count past
// MaxInt as errors.
func TestArangeLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	edges := []int{math.MinInt, math.MinInt + 1, -1 << 53, -3, -1, 0, 1, 2, 1<<53 + 1, math.MaxInt - 1, math.MaxInt}
	pick := func() int {
		switch rng.IntN(3) {
		case 0:
			return edges[rng.IntN(len(edges))]
		case 1:
			return int(rng.Int64()) // any int
		}
		return rng.IntN(2001) - 1000
	}
	for i := range 20000 {
		start, end, step := pick(), pick(), pick()
		if i%3 == 0 {
			step = rng.IntN(7) - 3
		}
		got, err := ArangeLen(start, end, step)
		what := "ArangeLen(" + itoa(start) + ", " + itoa(end) + ", " + itoa(step) + ")"
		if step == 0 {
			if err == nil || !strings.Contains(err.Error(), "non-zero") {
				t.Fatalf("%s: %v, %v; want a zero-step error", what, got, err)
			}
			continue
		}
		want := refArangeLen(start, end, step)
		switch {
		case want.Sign() < 0:
			if err == nil || !strings.Contains(err.Error(), "leads away from end") {
				t.Fatalf("%s = %d, %v; want a step-sign error", what, got, err)
			}
		case !want.IsInt64() || want.Int64() > math.MaxInt:
			if err == nil || !strings.Contains(err.Error(), "more than an int can count") {
				t.Fatalf("%s = %d, %v; want a count overflow (%v elements)", what, got, err, want)
			}
		case err != nil || int64(got) != want.Int64():
			t.Fatalf("%s = %d, %v; want %v", what, got, err, want)
		}
	}
	if n, err := ArangeLen(math.MinInt, math.MaxInt, 1); err == nil {
		t.Errorf("ArangeLen(MinInt, MaxInt, 1) = %d, want an error", n)
	}
	if n, err := ArangeLen(5, 5, -2); n != 0 || err != nil {
		t.Errorf("equal bounds: %d, %v; want 0, nil", n, err)
	}
}

// The exact integer form of Arange infers only when every element
// start + i·step is an int64 in the dtype's range (checked with big.Int),
// for every integer dtype.
func TestInferArangeInts(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ranges := map[DType][2]int64{
		I64: {math.MinInt64, math.MaxInt64}, I32: {math.MinInt32, math.MaxInt32}, I16: {math.MinInt16, math.MaxInt16}, I8: {math.MinInt8, math.MaxInt8},
		U64: {0, math.MaxInt64}, U32: {0, math.MaxUint32}, U16: {0, math.MaxUint16}, U8: {0, math.MaxUint8},
	}
	for dt, r := range ranges {
		lo, hi := big.NewInt(r[0]), big.NewInt(r[1])
		for range 2000 {
			var start, step int64
			switch rng.IntN(3) {
			case 0: // near the dtype's bounds
				start = []int64{r[0], r[1], r[0] + 1, r[1] - 1}[rng.IntN(4)]
				step = rng.Int64N(9) - 4
			case 1: // anywhere in int64
				start, step = int64(rng.Uint64()), int64(rng.Uint64())>>rng.IntN(64)
			default:
				start, step = rng.Int64N(600)-300, rng.Int64N(61)-30
			}
			n := rng.IntN(40)
			op := Op{Kind: KindArange, Shape: []int{n}, DType: dt, Ints: []int{int(start), int(step)}}
			err := op.Infer()
			ok := step != 0
			if ok && n > 0 {
				last := new(big.Int).Mul(big.NewInt(int64(n-1)), big.NewInt(step))
				last.Add(last, big.NewInt(start))
				for _, v := range []*big.Int{big.NewInt(start), last} {
					if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
						ok = false
					}
				}
			}
			if ok != (err == nil) {
				t.Fatalf("%v: %d elements from %d in steps of %d: Infer error %v, want ok %v", dt, n, start, step, err, ok)
			}
		}
	}
	for name, op := range map[string]Op{
		"float dtype": {Kind: KindArange, Shape: []int{2}, DType: F32, Ints: []int{0, 1}},
		"one int":     {Kind: KindArange, Shape: []int{2}, DType: I64, Ints: []int{0}},
		"overflow":    {Kind: KindArange, Shape: []int{3}, DType: I64, Ints: []int{math.MaxInt64 - 1, 1}},
	} {
		if err := op.Infer(); err == nil {
			t.Errorf("%s: Infer accepted %+v", name, op)
		}
	}
}
