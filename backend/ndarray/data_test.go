package ndarray

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// FromData then ToData returns the bytes unchanged for every dtype
// (random bit patterns; NaN patterns of the float dtypes excluded, since
// their payloads need not survive).
func TestDataRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, dt := range backend.AllDTypes {
		shape := []int{3, 7}
		b := make([]byte, numel(shape)*dt.Size())
		for {
			for i := range b {
				b[i] = byte(rng.Uint32())
				if dt == backend.Bool {
					b[i] &= 1
				}
			}
			d, _ := ir.NewTensorData(shape, dt, b)
			if !dt.IsFloat() || !slices.ContainsFunc(ir.As[float64](d), math.IsNaN) {
				break
			}
		}
		d, err := ir.NewTensorData(shape, dt, slices.Clone(b))
		if err != nil {
			t.Fatal(err)
		}
		x := tb.FromData(d)
		if x.DType() != dt || !slices.Equal(x.Shape(), shape) {
			t.Fatalf("%v: tensor %v %v", dt, x.DType(), x.Shape())
		}
		back := data(t, x)
		if back.DType != dt || !slices.Equal(back.Shape, shape) || !slices.Equal(back.Bytes, b) {
			t.Errorf("%v: round trip changed the data", dt)
		}
	}
	// Rank 0 and empty tensors.
	for _, shape := range [][]int{nil, {0, 3}} {
		v := make([]float64, numel(shape))
		if got := data(t, mk(backend.F16, shape, v)); numel(got.Shape) != len(v) || len(got.Bytes) != 2*len(v) {
			t.Errorf("shape %v: data %v", shape, got)
		}
	}
	// Bool bytes other than 0 are true.
	d, _ := ir.NewTensorData([]int{2}, backend.Bool, []byte{0, 7})
	if got := data(t, tb.FromData(d)).Bytes; !slices.Equal(got, []byte{0, 1}) {
		t.Errorf("bool bytes [0 7] read back as %v", got)
	}
}

func TestDataErrors(t *testing.T) {
	if err := catch(t, func() {
		tb.FromData(&backend.TensorData{Shape: []int{2, 2}, DType: backend.F32, Bytes: make([]byte, 15)})
	}); err == nil {
		t.Error("FromData with too few bytes did not panic")
	}
	var other struct{ backend.Tensor }
	err := catch(t, func() { _, _ = tb.ToData(other) })
	if !errors.Is(err, backend.ErrInvalidDevice) {
		t.Errorf("ToData of another backend's tensor: %v, want ErrInvalidDevice", err)
	}
	if err := tb.Sync(); err != nil {
		t.Errorf("Sync = %v", err)
	}
}

// Cast follows ir.TensorData.Convert: hand-worked edge values.
func TestCastEdges(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		from, to backend.DType
		in, want []float64
	}{
		{backend.F32, backend.I32, []float64{nan, inf, -inf, 1e10, -1e10, -3.7, 3.7, -0.5}, []float64{0, math.MaxInt32, math.MinInt32, math.MaxInt32, math.MinInt32, -3, 3, 0}},
		{backend.F64, backend.U8, []float64{300, -5, 255.9, nan}, []float64{255, 0, 255, 0}},
		{backend.F64, backend.I64, []float64{1e19, -1e19, 0x1p62}, []float64{math.MaxInt64, math.MinInt64, 0x1p62}},
		{backend.F64, backend.U64, []float64{1e20, -1, 0x1p63}, []float64{math.MaxUint64, 0, 0x1p63}},
		{backend.I32, backend.I8, []float64{200, -129, 127}, []float64{-56, 127, 127}},
		{backend.I16, backend.U8, []float64{-1, 256, 257}, []float64{255, 0, 1}},
		{backend.F32, backend.Bool, []float64{nan, 0, math.Copysign(0, -1), 0.1}, []float64{1, 0, 0, 1}},
		{backend.Bool, backend.F16, []float64{1, 0}, []float64{1, 0}},
		{backend.F64, backend.F16, []float64{1 + 0x1p-11, 1 + 0x1p-11 + 0x1p-40, 65520, 1e-9}, []float64{1, 1 + 0x1p-10, inf, 0}},
		{backend.F64, backend.BF16, []float64{1 + 0x1p-8, 1 + 0x1p-8 + 0x1p-30}, []float64{1, 1 + 0x1p-7}},
		{backend.F16, backend.BF16, []float64{1 + 0x1p-10}, []float64{1}},
	}
	for _, c := range cases {
		var x backend.Tensor
		if c.from.IsFloat() {
			x = mk(c.from, []int{len(c.in)}, c.in)
		} else {
			v := make([]int64, len(c.in))
			for i, f := range c.in {
				v[i] = int64(f)
			}
			x = mkI(c.from, []int{len(v)}, v)
		}
		got := vals(t, run(t, ir.Op{Kind: ir.KindCast, DType: c.to, In: [3]ir.Tensor{x}}))
		for i := range c.in {
			if !sameBits(got[i], c.want[i]) {
				t.Errorf("cast %v %v to %v = %v, want %v", c.from, c.in[i], c.to, got[i], c.want[i])
			}
		}
	}
	// Large int64 values round correctly (once) to F32.
	v := int64(1)<<60 + 1<<36 + 1 // just above the midpoint between two float32 values
	got := vals(t, run(t, ir.Op{Kind: ir.KindCast, DType: backend.F32, In: [3]ir.Tensor{mkI(backend.I64, []int{1}, []int64{v})}}))
	if want := float64(float32(v)); got[0] != want {
		t.Errorf("cast i64 %d to f32 = %v, want %v", v, got[0], want)
	}
}
