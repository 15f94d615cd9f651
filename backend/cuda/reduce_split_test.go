package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/nvrtc"
	"github.com/emberml/ember/ir"
)

// The split reductions (planReduce, Backend.reduceSplit) are checked
// against a float64 reference computed here element by element:
//
//   - float Sum: F32, Flex32, F16 and BF16 within 1 ulp of the result (in
//     the dtype) plus |sum|·1e-7; F64 within 1e-12·|sum|; a NaN, or +Inf
//     and -Inf together, give NaN, a lone infinity that infinity;
//   - float Prod: as Sum, F64 within 1e-10 relative (an uncompensated
//     product of up to 2^20 factors);
//   - integer Sum and Prod wrap (the u64 result truncated to the dtype),
//     Max, Min, ArgMax and ArgMin, and Bool's any/all: exactly, with NaN
//     propagating, the first NaN's index and the lowest tied index;
//
// and every result but float sums and products must be identical to the
// single-pass kernels' (splitting turned off).

// TestPlanReduce checks the plans of hand-worked shapes on a GPU of 132
// SMs, that the chunks cover the axis exactly with chunks no shorter than
// the minimum, and that the reductions of the training steps (the warm-up
// list holds only the single-pass kernels) do not split.
func TestPlanReduce(t *testing.T) {
	const sms = 132
	cases := []struct {
		outer, r, inner int
		want            reducePlan
	}{
		{1, 1 << 24, 1, reducePlan{chunks: 1056, length: 15888}},
		{1, 1 << 19, 32, reducePlan{chunks: 1055, length: 497, cw: 32}},
		{1, 8191, 1, reducePlan{chunks: 1, length: 8191}},
		{1, 8192, 1, reducePlan{chunks: 2, length: 4096}},
		{2000, 100000, 1, reducePlan{chunks: 1, length: 100000}},
		{700, 9000, 1, reducePlan{chunks: 2, length: 4500}},
		{300, 9000, 1, reducePlan{chunks: 2, length: 4500}},
		{1, 255, 32, reducePlan{chunks: 1, length: 255}},
		{1, 256, 32, reducePlan{chunks: 2, length: 128, cw: 32}},
		{2, 5000, 2, reducePlan{chunks: 2, length: 2500, cw: 2}},
		{3, 40000, 3, reducePlan{chunks: 39, length: 1026, cw: 4}},
		{1, 64, 18432, reducePlan{chunks: 1, length: 64}},
		{2, 0, 5, reducePlan{chunks: 1, length: 0}},
	}
	for _, c := range cases {
		if got := planReduce(c.outer, c.r, c.inner, sms); got != c.want {
			t.Errorf("planReduce(%d, %d, %d, %d) = %+v, want %+v", c.outer, c.r, c.inner, sms, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for range 2000 {
		outer, r, inner := 1+rng.IntN(3000), rng.IntN(1<<22), 1+rng.IntN(100)
		if rng.IntN(2) == 0 {
			inner = 1
		}
		sms := 1 + rng.IntN(200)
		p := planReduce(outer, r, inner, sms)
		if p.chunks == 1 {
			if p.length != r {
				t.Errorf("planReduce(%d, %d, %d, %d) = %+v: a single pass covers r", outer, r, inner, sms, p)
			}
			continue
		}
		minLen := blockSize * splitMinPerThread
		if inner > 1 {
			minLen = blockSize / p.cw * splitMinPerThread
			if p.cw < inner && p.cw != 32 || p.cw >= 2*inner || p.cw&(p.cw-1) != 0 {
				t.Errorf("planReduce(%d, %d, %d, %d) = %+v: cw is not the power of two covering inner (at most 32)", outer, r, inner, sms, p)
			}
		}
		if p.chunks*p.length < r || (p.chunks-1)*p.length >= r || p.length < minLen {
			t.Errorf("planReduce(%d, %d, %d, %d) = %+v: chunks do not cover r = %d exactly with length >= %d", outer, r, inner, sms, p, r, minLen)
		}
	}
	// The reductions of the MLP and CNN training steps (TestTrainingKernelsMatchOps).
	for _, s := range []struct {
		shape []int
		axis  int
	}{{[]int{64, 10}, 1}, {[]int{64, 128}, 0}, {[]int{64}, 0}, {[]int{1, 64, 8, 8}, 2},
		{[]int{64, 32, 12, 12, 4}, 4}, {[]int{1000, 10}, 1}, {[]int{64, 32, 24, 24}, 0}, {[]int{1, 32, 24, 24}, 2}, {[]int{1, 32, 1, 24}, 3}} {
		outer, r, inner := backend.NumElements(s.shape[:s.axis]), s.shape[s.axis], backend.NumElements(s.shape[s.axis+1:])
		for _, sms := range []int{1, 16, 132} {
			if p := planReduce(outer, r, inner, sms); p.chunks != 1 {
				t.Errorf("the training-step reduction %v axis %d splits on %d SMs (%+v): the warm-up lists only the single-pass kernels", s.shape, s.axis, sms, p)
			}
		}
	}
}

// olderNVRTC names NVRTC libraries that nvrtc.Libraries does not list but
// that compile for sm_90 (CUDA 11.8 as Debian packages it).
var olderNVRTC = []string{"libnvrtc.so.11.2"}

// TestReduceSplitSourcesCompile compiles every reduce kernel of every
// dtype with NVRTC for sm_90 when a library loads (no GPU is needed). When
// only a library of olderNVRTC is present, the test runs itself again in
// a child process that loads it (Load keeps its first result, so this
// process cannot retry); EMBER_TEST_NVRTC names the library in the child.
func TestReduceSplitSourcesCompile(t *testing.T) {
	if lib := os.Getenv("EMBER_TEST_NVRTC"); lib != "" {
		nvrtc.Libraries = append([]string{lib}, nvrtc.Libraries...)
	}
	if err := nvrtc.Load(); err != nil {
		if os.Getenv("EMBER_TEST_NVRTC") != "" {
			t.Fatalf("loading %s: %v", os.Getenv("EMBER_TEST_NVRTC"), err)
		}
		for _, lib := range olderNVRTC {
			if _, serr := os.Stat(filepath.Join("/usr/lib/x86_64-linux-gnu", lib)); serr != nil {
				continue
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestReduceSplitSourcesCompile$", "-test.v")
			cmd.Env = append(os.Environ(), "EMBER_TEST_NVRTC="+lib)
			out, cerr := cmd.CombinedOutput()
			if cerr != nil {
				t.Fatalf("compiling with %s: %v\n%s", lib, cerr, out)
			}
			if !strings.Contains(string(out), "--- PASS: TestReduceSplitSourcesCompile") {
				t.Fatalf("compiling with %s did not run:\n%s", lib, out)
			}
			t.Logf("compiled with %s", lib)
			return
		}
		t.Skipf("no NVRTC: %v", err)
	}
	type src struct{ name, source string }
	var srcs []src
	for _, dt := range backend.AllDTypes {
		if dt == backend.Flex32 {
			continue // F32's kernels
		}
		for _, k := range []string{"rows", "cols", "rows_split", "cols_split", "combine"} {
			name := "ember_reduce_" + ctypeOf(dt).Name + "_" + k
			srcs = append(srcs, src{name, reduceKernelSource(dt, name, k)})
		}
	}
	work := make(chan src)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for s := range work {
				if _, err := nvrtc.Compile(s.source, s.name, compileOptions(90, false), false); err != nil {
					t.Errorf("%s: %v", s.name, err)
				}
			}
		})
	}
	for _, s := range srcs {
		work <- s
	}
	close(work)
	wg.Wait()
}

// splitCase is a reduction of shape along axis; split says whether it is
// meant to take the split kernels on the test's GPU.
type splitCase struct {
	shape []int
	axis  int
	split bool
}

// dims returns the [outer, r, inner] view of c.
func (c splitCase) dims() (int, int, int) {
	return backend.NumElements(c.shape[:c.axis]), c.shape[c.axis], backend.NumElements(c.shape[c.axis+1:])
}

// splitData makes data for c and op: kind "normal" (N(0, 1) with some
// exact zeros; for Prod 1 + N(0, 1e-3); integers: Sum values in ±100 or
// [0, 250] so that narrow types wrap, Prod odd values in ±5), "special"
// (normal plus NaN, +Inf and -Inf placed at chunk boundaries of the plan
// p, per output) or "ties" (values in [-1, 1], integers in {1, 2, 3}, the
// largest and smallest values repeated on both sides of a chunk boundary
// and in the last chunk). Bool data are rarely true for Sum, Max and
// ArgMax, rarely false for Prod, Min and ArgMin.
func splitData(rng *rand.Rand, c splitCase, dt backend.DType, op backend.ReduceOp, kind string, p reducePlan) *backend.TensorData {
	outer, r, inner := c.dims()
	n := outer * r * inner
	v := make([]float64, n)
	all := op == backend.ReduceProd || op == backend.ReduceMin || op == backend.ReduceArgMin
	for i := range v {
		switch {
		case dt == backend.Bool: // rarely true for any, rarely false for all
			rare := rng.IntN(max(2, r/4)) == 0
			v[i] = float64(b2f(rare != all))
		case kind == "ties" && dt.IsInt():
			v[i] = float64(1 + rng.IntN(3))
		case kind == "ties":
			v[i] = 2*rng.Float64() - 1
		case dt.IsInt() && op == backend.ReduceProd:
			v[i] = float64(2*rng.IntN(3) + 1)
			if dt.IsSigned() && rng.IntN(2) == 0 {
				v[i] = -v[i]
			}
		case dt.IsInt() && dt.IsSigned():
			v[i] = float64(rng.IntN(201) - 100)
		case dt.IsInt():
			v[i] = float64(rng.IntN(251))
		case op == backend.ReduceProd:
			v[i] = 1 + 1e-3*rng.NormFloat64()
		default:
			v[i] = rng.NormFloat64()
			if rng.IntN(64) == 0 {
				v[i] = 0
			}
		}
	}
	length := p.length
	if p.chunks == 1 {
		length = max(1, r/3)
	}
	at := func(o, col, j int) int { return (o*r+j)*inner + col }
	for q := range outer * inner {
		o, col := q/inner, q%inner
		k := 1 + q%max(1, (r-1)/length) // a chunk boundary inside the axis
		bnd := min(k*length, r-1)
		switch {
		case kind == "ties" && dt != backend.Bool:
			hi, lo := 2.0, -2.0
			if dt.IsInt() {
				hi, lo = 5, 0
			}
			for _, j := range []int{bnd - 1, bnd, r - 1} {
				if j >= 0 {
					v[at(o, col, j)] = hi
				}
			}
			b2 := min(bnd+length, r-1)
			for _, j := range []int{b2, b2 + 1, r - 1 - r/2} {
				if j >= 0 && j < r && v[at(o, col, j)] != hi {
					v[at(o, col, j)] = lo
				}
			}
		case kind == "special" && !dt.IsInt() && dt != backend.Bool:
			switch q % 4 {
			case 0: // NaNs from a boundary on, and at the end
				for _, j := range []int{bnd, bnd + 1 + length/2, r - 1} {
					if j < r {
						v[at(o, col, j)] = math.NaN()
					}
				}
				if bnd > 0 {
					v[at(o, col, bnd-1)] = math.Inf(1)
				}
			case 1: // one NaN at the very end
				v[at(o, col, r-1)] = math.NaN()
			case 2: // infinities of both signs
				v[at(o, col, bnd)] = math.Inf(1)
				v[at(o, col, r/2)] = math.Inf(-1)
			case 3: // one infinity on each side of a boundary
				v[at(o, col, bnd)] = math.Inf(-1)
				if bnd > 0 {
					v[at(o, col, bnd-1)] = math.Inf(-1)
				}
			}
		}
	}
	i := 0
	return fromF64(c.shape, dt, func() float64 { i++; return v[i-1] })
}

func b2f(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wrapInt truncates the wrapped u64 accumulator acc to dt and returns it
// as TensorData.Value reads it.
func wrapInt(acc uint64, dt backend.DType) float64 {
	switch dt {
	case backend.I8:
		return float64(int8(acc))
	case backend.I16:
		return float64(int16(acc))
	case backend.I32:
		return float64(int32(acc))
	case backend.I64:
		return float64(int64(acc))
	case backend.U8:
		return float64(uint8(acc))
	case backend.U16:
		return float64(uint16(acc))
	case backend.U32:
		return float64(uint32(acc))
	}
	return float64(acc)
}

// refReduce reduces d's values, viewed as [outer, r, inner], by op along r
// in float64 (float sums compensated), giving one value per output (the
// index for ArgMax/ArgMin).
func refReduce(x []float64, dt backend.DType, op backend.ReduceOp, outer, r, inner int) []float64 {
	out := make([]float64, outer*inner)
	if dt == backend.Bool {
		switch op {
		case backend.ReduceSum:
			op = backend.ReduceMax
		case backend.ReduceProd:
			op = backend.ReduceMin
		}
	}
	for q := range out {
		o, col := q/inner, q%inner
		elem := func(j int) float64 { return x[(o*r+j)*inner+col] }
		switch {
		case op == backend.ReduceSum && dt.IsFloat():
			var s, comp float64
			var nan, pos, neg bool
			for j := range r {
				v := elem(j)
				switch {
				case math.IsNaN(v):
					nan = true
				case math.IsInf(v, 1):
					pos = true
				case math.IsInf(v, -1):
					neg = true
				default:
					t := s + v
					if math.Abs(s) >= math.Abs(v) {
						comp += (s - t) + v
					} else {
						comp += (v - t) + s
					}
					s = t
				}
			}
			switch {
			case nan || pos && neg:
				out[q] = math.NaN()
			case pos:
				out[q] = math.Inf(1)
			case neg:
				out[q] = math.Inf(-1)
			default:
				out[q] = s + comp
			}
		case op == backend.ReduceProd && dt.IsFloat():
			p := 1.0
			for j := range r {
				p *= elem(j)
			}
			out[q] = p
		case op == backend.ReduceSum || op == backend.ReduceProd:
			acc := uint64(0)
			if op == backend.ReduceProd {
				acc = 1
			}
			for j := range r {
				v := elem(j)
				var u uint64
				if v < 0 {
					u = uint64(int64(v))
				} else {
					u = uint64(v)
				}
				if op == backend.ReduceSum {
					acc += u
				} else {
					acc *= u
				}
			}
			out[q] = wrapInt(acc, dt)
		default:
			isMax := op == backend.ReduceMax || op == backend.ReduceArgMax
			best, bi := elem(0), 0
			for j := 1; j < r && !math.IsNaN(best); j++ {
				v := elem(j)
				if math.IsNaN(v) || isMax && v > best || !isMax && v < best {
					best, bi = v, j
				}
			}
			out[q] = best
			if op == backend.ReduceArgMax || op == backend.ReduceArgMin {
				out[q] = float64(bi)
			}
		}
	}
	return out
}

// mantissaBits is the precision of float dtype dt, with the smallest
// positive (subnormal) value.
func mantissaBits(dt backend.DType) (int, float64) {
	switch dt {
	case backend.F64:
		return 53, math.SmallestNonzeroFloat64
	case backend.F16:
		return 11, 0x1p-24
	case backend.BF16:
		return 8, 0x1p-133
	}
	return 24, math.SmallestNonzeroFloat32
}

// ulpOf is the spacing of dt's values at v.
func ulpOf(dt backend.DType, v float64) float64 {
	bits, tiny := mantissaBits(dt)
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return tiny
	}
	_, e := math.Frexp(math.Abs(v))
	return max(tiny, math.Ldexp(1, e-bits))
}

// closeTo reports whether got matches the reference want of a reduction
// by op of dtype dt (see the tolerances at the top of the file).
func closeTo(got, want float64, dt backend.DType, op backend.ReduceOp) bool {
	if math.IsNaN(want) || math.IsNaN(got) || math.IsInf(want, 0) {
		return math.IsNaN(want) && math.IsNaN(got) || got == want
	}
	if !dt.IsFloat() || (op != backend.ReduceSum && op != backend.ReduceProd) {
		return got == want
	}
	tol := ulpOf(dt, want) + 1e-7*math.Abs(want)
	if dt == backend.F64 {
		tol = 1e-12 * math.Abs(want)
		if op == backend.ReduceProd {
			tol = 1e-10 * math.Abs(want)
		}
	}
	return math.Abs(got-want) <= tol
}

// reduceBoth reduces x by op along axis with the split kernels allowed and
// with splitting turned off, returning both results.
func reduceBoth(t *testing.T, b *Backend, x backend.Tensor, op backend.ReduceOp, axis int) (split, single *backend.TensorData) {
	t.Helper()
	read := func() *backend.TensorData {
		d, err := b.ToData(reduceOn(b, op, x, axis, false))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	split = read()
	saved := splitBlocksPerSM
	splitBlocksPerSM = 0
	defer func() { splitBlocksPerSM = saved }()
	return split, read()
}

// checkSplit runs case c for op on data d and compares with the reference
// and with the single-pass kernels.
func checkSplit(t *testing.T, b *Backend, c splitCase, d *backend.TensorData, op backend.ReduceOp, what string) {
	t.Helper()
	outer, r, inner := c.dims()
	if p := planReduce(outer, r, inner, b.smCount); (p.chunks > 1) != c.split {
		t.Errorf("%s: plan %+v, want split = %v", what, p, c.split)
	}
	x := make([]float64, d.NumElements())
	for i := range x {
		x[i] = d.Value(i)
	}
	want := refReduce(x, d.DType, op, outer, r, inner)
	split, single := reduceBoth(t, b, b.FromData(d), op, c.axis)
	if split.NumElements() != len(want) {
		t.Fatalf("%s: %d results, want %d", what, split.NumElements(), len(want))
	}
	bad := 0
	for q := range want {
		if g := split.Value(q); !closeTo(g, want[q], d.DType, op) {
			if bad++; bad <= 3 {
				t.Errorf("%s: output %d = %v, want %v", what, q, g, want[q])
			}
		}
	}
	if d.DType.IsFloat() && (op == backend.ReduceSum || op == backend.ReduceProd) {
		return
	}
	if !slices.Equal(split.Bytes, single.Bytes) {
		t.Errorf("%s: the split kernels' result differs from the single-pass kernels'", what)
	}
}

var splitOps = []backend.ReduceOp{backend.ReduceSum, backend.ReduceProd, backend.ReduceMax, backend.ReduceMin, backend.ReduceArgMax, backend.ReduceArgMin}

// TestGPUReduceSplit checks the split reductions of rows and columns
// around the split thresholds, for every dtype and op, on normal data,
// data with NaN and infinities at chunk boundaries, and data with ties
// across chunk boundaries.
func TestGPUReduceSplit(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(43, 44))
	// Thresholds: rows split from r = 2·4096 (when fewer than 8·SMs rows);
	// columns from r = 2·4096/cw, cw the power of two covering inner.
	cases := []splitCase{
		{[]int{1}, 0, false},
		{[]int{8191}, 0, false},
		{[]int{8192}, 0, true},
		{[]int{8193}, 0, true},
		{[]int{1, 100003}, 1, true},
		{[]int{3, 65537}, 1, true},
		{[]int{300, 9000}, 1, true},
		{[]int{5, 300}, 1, false},
		{[]int{255, 32}, 0, false},
		{[]int{256, 32}, 0, true},
		{[]int{4099, 32}, 0, true},
		{[]int{7, 300, 33}, 1, true},
		{[]int{3, 40000, 3}, 1, true},
		{[]int{2, 5000, 2}, 1, true},
		{[]int{1000, 600}, 0, true},
		{[]int{2, 0, 3}, 1, false},
	}
	for _, c := range cases {
		for _, dt := range backend.AllDTypes {
			for _, op := range splitOps {
				kinds := []string{"normal"}
				if op >= backend.ReduceMax || op == backend.ReduceSum && dt.IsFloat() {
					kinds = append(kinds, "special", "ties")
				}
				for _, kind := range kinds {
					outer, r, inner := c.dims()
					if r == 0 && op != backend.ReduceSum && op != backend.ReduceProd {
						continue
					}
					what := name(op, " ", dt, " ", c.shape, " axis ", c.axis, " ", kind)
					if r == 0 {
						split, single := reduceBoth(t, b, b.FromData(fromF64(c.shape, dt, rng.NormFloat64)), op, c.axis)
						if !slices.Equal(split.Bytes, single.Bytes) || split.NumElements() != outer*inner {
							t.Errorf("%s: empty axis: got %v, single-pass %v", what, split.Bytes, single.Bytes)
						}
						continue
					}
					if outer*r*inner > 1<<20 && !slices.Contains([]backend.DType{backend.F32, backend.F64, backend.F16, backend.I32, backend.U8, backend.Bool}, dt) {
						continue
					}
					p := planReduce(outer, r, inner, b.smCount)
					try(t, what, func() { checkSplit(t, b, c, splitData(rng, c, dt, op, kind, p), op, what) })
				}
			}
		}
	}
}

// TestGPUReduceSplitLarge checks a full reduction of 2^24 + 3 elements and
// a column reduction of [2^19, 32] over axis 0 (every op on F32; Sum on
// F64, F16, BF16, I8 and Bool).
func TestGPUReduceSplitLarge(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(45, 46))
	for _, c := range []splitCase{{[]int{1<<24 + 3}, 0, true}, {[]int{1 << 19, 32}, 0, true}, {[]int{2, 1<<21 + 1}, 1, true}} {
		outer, r, inner := c.dims()
		p := planReduce(outer, r, inner, b.smCount)
		type run struct {
			dt   backend.DType
			op   backend.ReduceOp
			kind string
		}
		runs := []run{{backend.F64, backend.ReduceSum, "normal"}, {backend.F16, backend.ReduceSum, "normal"},
			{backend.BF16, backend.ReduceSum, "normal"}, {backend.I8, backend.ReduceSum, "normal"}, {backend.Bool, backend.ReduceSum, "normal"},
			{backend.F32, backend.ReduceSum, "special"}, {backend.F32, backend.ReduceArgMax, "special"}, {backend.F32, backend.ReduceArgMin, "ties"}}
		for _, op := range splitOps {
			runs = append(runs, run{backend.F32, op, "normal"})
		}
		for _, rn := range runs {
			what := name(rn.op, " ", rn.dt, " ", c.shape, " axis ", c.axis, " ", rn.kind)
			try(t, what, func() { checkSplit(t, b, c, splitData(rng, c, rn.dt, rn.op, rn.kind, p), rn.op, what) })
		}
	}
}

// TestGPUReduceSplitBiasGrad checks the reductions of a convolution's bias
// gradient ([64, 32, 24, 24] summed over axes 0, 2 and 3, one axis at a
// time with keepDim, as ir.SumTo lowers it) and of a [4, 8, 128, 128]
// gradient, against flex's same op sequence and a float64 sum per channel.
func TestGPUReduceSplitBiasGrad(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(47, 48))
	for _, shape := range [][]int{{64, 32, 24, 24}, {4, 8, 128, 128}, {1, 3, 512, 512}} {
		for _, dt := range []backend.DType{backend.F32, backend.F64, backend.BF16} {
			what := name("bias grad ", dt, " ", shape)
			try(t, what, func() {
				d := fromF64(shape, dt, rng.NormFloat64)
				x, fx := b.FromData(d), flexRef.FromData(d)
				for _, axis := range []int{0, 2, 3} {
					x, fx = reduceOn(b, backend.ReduceSum, x, axis, true), reduceOn(flexRef, backend.ReduceSum, fx, axis, true)
				}
				g, err := b.ToData(x)
				if err != nil {
					t.Fatal(err)
				}
				w, err := flexRef.ToData(fx)
				if err != nil {
					t.Fatal(err)
				}
				n, c, hw := shape[0], shape[1], shape[2]*shape[3]
				for ch := range c {
					var sum, abs float64
					for i := range n {
						for k := range hw {
							v := d.Value((i*c+ch)*hw + k)
							sum += v
							abs += math.Abs(v)
						}
					}
					got, flex := g.Value(ch), w.Value(ch)
					// flex rounds each stage to dt as well: 2 ulps of the result; the
					// float64 sum: three roundings, each within 2^-bits·Σ|x|.
					if math.Abs(got-flex) > 2*ulpOf(dt, flex)+1e-12*math.Abs(flex) {
						t.Errorf("%s: channel %d = %v, flex's sequence %v", what, ch, got, flex)
					}
					bits, _ := mantissaBits(dt)
					if math.Abs(got-sum) > 3*math.Ldexp(abs, -bits) {
						t.Errorf("%s: channel %d = %v, float64 sum %v (Σ|x| = %v)", what, ch, got, sum, abs)
					}
				}
			})
		}
	}
}

// BenchmarkReduceSplit measures F32 sums that the split kernels take: the
// full sum of 2^24 elements, the column sum of [2^19, 32] over axis 0, and
// a conv bias gradient, [64, 32, 24, 24] summed over axes 0, 2 and 3 (the
// backend op sequence ir.SumTo gives), each with splitting on (several
// block targets) and off; GB/s counts the input's bytes once.
func BenchmarkReduceSplit(bb *testing.B) {
	b := gpu(bb)
	dist := backend.Distribution{Kind: backend.DistNormal, A: 0, B: 1}
	full := b.random([]int{1 << 24}, backend.F32, dist)
	cols := b.random([]int{1 << 19, 32}, backend.F32, dist)
	conv := b.random([]int{64, 32, 24, 24}, backend.F32, dist)
	cases := []struct {
		name  string
		bytes float64
		run   func()
	}{
		{"full-2^24", 4 << 24, func() { ir.Reduce(b, backend.ReduceSum, full, 0, false) }},
		{"cols-2^19x32", 4 << 24, func() { ir.Reduce(b, backend.ReduceSum, cols, 0, false) }},
		{"bias-64x32x24x24", 4 * 64 * 32 * 24 * 24, func() {
			var g backend.Tensor = conv
			for _, axis := range []int{0, 2, 3} {
				g = ir.Reduce(b, backend.ReduceSum, g, axis, true)
			}
		}},
	}
	for _, c := range cases {
		for _, per := range []int{0, 4, 8, 16} {
			label := fmt.Sprintf("%s/blocksPerSM=%d", c.name, per)
			if per == 0 {
				label = c.name + "/single-pass"
			}
			bb.Run(label, func(bb *testing.B) {
				saved := splitBlocksPerSM
				splitBlocksPerSM = per
				defer func() { splitBlocksPerSM = saved }()
				ms := kernelMillis(bb, b, c.run)
				bb.ReportMetric(c.bytes/(ms*1e-3)/1e9, "GB/s")
				bb.ReportMetric(ms, "ms")
			})
		}
	}
}

// TestGPUReduceUnaligned checks the float Sum and Max kernels, which load
// rows 16 bytes at a time, on rows that start off a 16-byte boundary
// (views at element offsets 0 to 7) and lengths around the vector width,
// single-pass and split, against the host reference; Max also on data
// with ties and NaN, bit for bit with the kernels that take the op at run
// time (ArgMax's value path is the same code).
func TestGPUReduceUnaligned(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(47, 48))
	for _, dt := range []backend.DType{backend.F32, backend.F64, backend.F16, backend.BF16} {
		for _, r := range []int{1, 2, 5, 9, 33, 1000, 9000, 100003} {
			for _, rows := range []int{1, 3} {
				for off := range 8 {
					n := rows*r + off
					v := make([]float64, n)
					for i := range v {
						v[i] = rng.NormFloat64()
						if i%7 == 3 {
							v[i] = 1.5 // ties for Max
						}
					}
					if r > 5 && off == 3 {
						v[off+r/2] = math.NaN()
					}
					k := 0
					d := fromF64([]int{n}, dt, func() float64 { k++; return v[k-1] })
					flat := b.FromData(d)
					x := ir.Reshape(b, ir.Slice(b, flat, []backend.Range{{Start: off, End: n, Step: 1}}), []int{rows, r})
					xs := make([]float64, rows*r)
					for i := range xs {
						xs[i] = d.Value(off + i)
					}
					for _, op := range []backend.ReduceOp{backend.ReduceSum, backend.ReduceMax} {
						what := name(op, " ", dt, " rows ", rows, " r ", r, " offset ", off)
						got, err := b.ToData(reduceOn(b, op, x, 1, false))
						if err != nil {
							t.Fatal(what, err)
						}
						want := refReduce(xs, dt, op, rows, r, 1)
						for q := range want {
							if g := got.Value(q); !closeTo(g, want[q], dt, op) {
								t.Errorf("%s: output %d = %v, want %v", what, q, g, want[q])
							}
						}
					}
				}
			}
		}
	}
}
