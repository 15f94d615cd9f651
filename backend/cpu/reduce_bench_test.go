package cpu

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

// benchInterleaved runs the named functions fs in turn, b.N rounds, timing
// each call, and reports the median time of each in milliseconds
// ("<name>-ms") and, for each after the first, its median over the
// first's ("<name>/<first>-time"): medians of interleaved calls compare
// the functions under the same, varying, load.
func benchInterleaved(b *testing.B, names []string, fs []func()) {
	ts := make([][]time.Duration, len(fs))
	for _, f := range fs {
		f() // warm up
	}
	b.ResetTimer()
	for b.Loop() {
		for i, f := range fs {
			t0 := time.Now()
			f()
			ts[i] = append(ts[i], time.Since(t0))
		}
	}
	med := make([]float64, len(fs))
	for i, t := range ts {
		slices.Sort(t)
		med[i] = float64(t[len(t)/2]) / 1e6
		b.ReportMetric(med[i], names[i]+"-ms")
		if i > 0 {
			b.ReportMetric(med[i]/med[0], names[i]+"/"+names[0]+"-time")
		}
	}
}

// BenchmarkReduceAxis4096 reduces a [4096, 4096] F32 matrix (64 MiB)
// along axis 0 and axis 1 with Sum, and along axis 0 with Max, Min and
// Prod; the baseline is Go's copy() of the same 64 MiB, so MB/s compares
// each reduction's read rate with copy's. Flex's reductions (the path of
// the non-last axes before their kernels) run alongside at axis 0. The
// interleaved case runs copy and the cpu sums and max in turn and reports
// their median times and each one's time over copy's (sum0/copy-time ≤
// 1.25: at least 0.8x copy's bandwidth over the input bytes).
func BenchmarkReduceAxis4096(b *testing.B) {
	const n = 4096
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	vals := randVals(n*n, 5)
	src := make([]float32, n*n)
	for i, v := range vals {
		src[i] = float32(v)
	}
	dst := make([]float32, n*n)
	x := be.FromData(ir.FromSlice(src, []int{n, n}))
	xf := fl.FromData(ir.FromSlice(src, []int{n, n}))
	reduce := func(e backend.Backend, in backend.Tensor, r backend.ReduceOp, axis int) func() {
		op := ir.Op{Kind: ir.KindReduce, Sub: uint8(r), Axis: axis, In: [3]ir.Tensor{in}}
		if err := op.Infer(); err != nil {
			b.Fatal(err)
		}
		return func() { e.Exec(op) }
	}
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(4 * n * n)
		for b.Loop() {
			copy(dst, src)
		}
	})
	for _, c := range []struct {
		r    backend.ReduceOp
		axis int
		flex bool
	}{
		{backend.ReduceSum, 0, false}, {backend.ReduceSum, 1, false},
		{backend.ReduceMax, 0, false}, {backend.ReduceMin, 0, false}, {backend.ReduceProd, 0, false},
		{backend.ReduceSum, 0, true}, {backend.ReduceMax, 0, true},
	} {
		e, in, name := backend.Backend(be), x, "cpu"
		if c.flex {
			e, in, name = fl, xf, "flex"
		}
		f := reduce(e, in, c.r, c.axis)
		b.Run(fmt.Sprintf("%s/%v/axis%d", name, c.r, c.axis), func(b *testing.B) {
			b.SetBytes(4 * n * n)
			for b.Loop() {
				f()
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		benchInterleaved(b, []string{"copy", "sum0", "sum1", "max0"}, []func(){
			func() { copy(dst, src) },
			reduce(be, x, backend.ReduceSum, 0),
			reduce(be, x, backend.ReduceSum, 1),
			reduce(be, x, backend.ReduceMax, 0),
		})
	})
}
