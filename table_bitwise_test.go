package ember

import "testing"

// TestTableBitwise checks And, Or, Xor and Not on integer tensors
// (bitwise) and Bool (logical), ShiftLeft and ShiftRight (tensor and
// scalar amounts, including amounts outside [0, bits): 0, or the sign fill
// for a negative right operand), on every device, every int dtype the
// device stores and every layout, against Go's operators on the host
// values; Bool with an integer promotes; floats are refused.
func TestTableBitwise(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(211)
		for _, dt := range []DType{I64, I32, I16, I8, U8, U32} {
			if !dev.SupportsDType(dt) {
				continue
			}
			bits := map[DType]int{I64: 64, I32: 32, I16: 16, I8: 8, U8: 8, U32: 32}[dt]
			lo, hi := -100, 100
			if dt == U8 || dt == U32 {
				lo = 0
			}
			a := randRef([]int{3, 4}, dt, ints(rng, lo, hi))
			b := randRef([]int{4}, dt, ints(rng, lo, hi))
			sh := randRef([]int{4}, dt, ints(rng, 0, bits+3))
			if dt != U8 && dt != U32 {
				sh.v[0] = -2
			}
			wrap := func(v int64) float64 { // to dt's range, as the hardware does
				switch dt {
				case I32:
					return float64(int32(v))
				case I16:
					return float64(int16(v))
				case I8:
					return float64(int8(v))
				case U8:
					return float64(uint8(v))
				case U32:
					return float64(uint32(v))
				}
				return float64(v)
			}
			shl := func(x, s float64) float64 {
				if s < 0 || int(s) >= bits {
					return 0
				}
				return wrap(int64(x) << uint(s))
			}
			shr := func(x, s float64) float64 {
				if s < 0 || int(s) >= bits {
					if x < 0 {
						return -1
					}
					return 0
				}
				return float64(int64(x) >> uint(s))
			}
			for _, l := range layoutsFor(2) {
				at := l.view(dev, a, dt)
				bt := mk(dev, b, dt)
				name := dt.String() + " " + l.name
				checkEq(t, "and "+name, at.And(bt), bcast2(a, b, func(x, y float64) float64 { return wrap(int64(x) & int64(y)) }), dt)
				checkEq(t, "or "+name, at.Or(bt), bcast2(a, b, func(x, y float64) float64 { return wrap(int64(x) | int64(y)) }), dt)
				checkEq(t, "xor "+name, at.Xor(bt), bcast2(a, b, func(x, y float64) float64 { return wrap(int64(x) ^ int64(y)) }), dt)
				checkEq(t, "not "+name, at.Not(), mapRef(a, func(x float64) float64 { return wrap(^int64(x)) }), dt)
				st := mk(dev, sh, dt)
				checkEq(t, "shl "+name, at.ShiftLeft(st), bcast2(a, sh, shl), dt)
				checkEq(t, "shr "+name, at.ShiftRight(st), bcast2(a, sh, shr), dt)
				for _, n := range []int{0, 3, bits - 1, bits, 200, -1} {
					checkEq(t, "shl scalar "+itoa(n)+" "+name, at.ShiftLeftScalar(n), mapRef(a, func(x float64) float64 { return shl(x, float64(n)) }), dt)
					checkEq(t, "shr scalar "+itoa(n)+" "+name, at.ShiftRightScalar(n), mapRef(a, func(x float64) float64 { return shr(x, float64(n)) }), dt)
				}
			}
		}
		p := mk(dev, ref{[]int{4}, []float64{1, 0, 1, 0}}, Bool)
		q := mk(dev, ref{[]int{4}, []float64{1, 1, 0, 0}}, Bool)
		checkEq(t, "logical and", p.And(q), ref{[]int{4}, []float64{1, 0, 0, 0}}, Bool)
		checkEq(t, "logical not", p.Not(), ref{[]int{4}, []float64{0, 1, 0, 1}}, Bool)
		checkEq(t, "bool and int promotes", p.And(mk(dev, ref{[]int{4}, []float64{3, 3, 2, 2}}, I32)), ref{[]int{4}, []float64{1, 0, 0, 0}}, I32)
		f := Ones([]int{2}, dev)
		expectPanic(t, "and of floats", func() { f.And(f) }, "and", "Bool or integer")
		expectPanic(t, "not of floats", func() { f.Not() }, "not", "Bool or integer")
		expectPanic(t, "shift of Bool", func() { p.ShiftLeft(p) }, "shl", "integer")
	})
}
