package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/backend/fusion"
	"github.com/emberml/ember/ir"
)

// optimVals returns n random non-zero values of the given scale; when
// special, the first few are edge cases (±0, a subnormal in float32, a
// value whose square overflows float32, ±Inf and NaN) that the update
// must treat as the decomposition does.
func optimVals(n int, seed uint64, scale float64, special bool) []float64 {
	r := rand.New(rand.NewPCG(seed, 29))
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * r.NormFloat64()
	}
	if special {
		for i, s := range []float64{0, math.Copysign(0, -1), 1e-40, 3e19, math.Inf(1), math.Inf(-1), math.NaN()} {
			if i < n {
				v[i*5%n] = s
			}
		}
	}
	return v
}

// absVals returns |x| for each x of v (second moments are non-negative).
func absVals(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

// sameBits checks that x on be and y on ye hold the same dtype, shape and
// bytes, a NaN matching any NaN (the vector units may keep another NaN's
// payload).
func sameBits(t *testing.T, name string, be backend.Backend, x backend.Tensor, ye backend.Backend, y backend.Tensor) {
	t.Helper()
	a, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ye.ToData(y)
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != b.DType || fmt.Sprint(a.Shape) != fmt.Sprint(b.Shape) || len(a.Bytes) != len(b.Bytes) {
		t.Fatalf("%s: %v %v, want %v %v", name, a.DType, a.Shape, b.DType, b.Shape)
	}
	if string(a.Bytes) == string(b.Bytes) {
		return
	}
	av, bv := a.Convert(backend.F64).Float64s(), b.Convert(backend.F64).Float64s()
	size := len(a.Bytes) / max(1, len(av))
	for i := range av {
		if math.IsNaN(av[i]) && math.IsNaN(bv[i]) {
			continue
		}
		if string(a.Bytes[i*size:(i+1)*size]) != string(b.Bytes[i*size:(i+1)*size]) {
			t.Fatalf("%s: [%d] = %v (bits %x), want %v (bits %x)", name, i, av[i], a.Bytes[i*size:(i+1)*size], bv[i], b.Bytes[i*size:(i+1)*size])
		}
	}
}

// withoutOptimKernels is the cpu backend without its optimizer kernels:
// the optimizer kinds are lowered with their decompositions (by ir.Run,
// or by the fusion decorator into fused elementwise programs).
type withoutOptimKernels struct{ *Backend }

// Supports reports false for the optimizer kinds, else what the backend
// supports.
func (b withoutOptimKernels) Supports(k ir.Kind, dt backend.DType) bool {
	return k != ir.KindAdamStep && k != ir.KindSGDStep && b.Backend.Supports(k, dt)
}

// newFusedDecomposition returns the fusion decorator over be without its
// optimizer kernels, which lowers the optimizer kinds into its fused
// elementwise programs (the default device's path without the kernels).
func newFusedDecomposition(t testing.TB, be *Backend) backend.Backend {
	fb, ok := fusion.New(withoutOptimKernels{be}, fusion.Options{})
	if !ok {
		t.Fatal("the cpu backend is not a fuser")
	}
	return fb
}

// adamOp is the inferred AdamStep op of p, g, m, v under u.
func adamOp(t *testing.T, u ir.OptimUpdate, xs ...ir.Tensor) ir.Op {
	t.Helper()
	op := ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: u}, Xs: xs}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	return op
}

// sgdOp is the inferred SGDStep op of p, g and buffer b (or nil) under u.
func sgdOp(t *testing.T, u ir.OptimUpdate, p, g, b ir.Tensor) ir.Op {
	t.Helper()
	op := ir.Op{Kind: ir.KindSGDStep, Attrs: &ir.Attrs{Optim: u}, In: [3]ir.Tensor{p, g, b}}
	if err := op.Infer(); err != nil {
		t.Fatal(err)
	}
	return op
}

// Operand layouts of the optimizer tests: the kernel's operands hold the
// same values as the row-major ones of the reference chains, laid out as a
// transposed matrix (a matmul weight gradient) or as a strided slice
// (copied by the kernel).
const (
	rowMajorLayout = iota
	transposedLayout
	slicedLayout
)

// laidOut returns a tensor of dt on e holding vals (of the matrix shape
// [r, c], or any shape for rowMajorLayout) in layout.
func laidOut(e backend.Backend, vals []float64, shape []int, dt backend.DType, layout int) backend.Tensor {
	switch layout {
	case transposedLayout:
		r, c := shape[0], shape[1]
		tv := make([]float64, len(vals))
		for i := range r {
			for j := range c {
				tv[j*r+i] = vals[i*c+j]
			}
		}
		return ir.Transpose(e, tensorOf(e, tv, []int{c, r}, dt))
	case slicedLayout:
		r, c := shape[0], shape[1]
		wide := make([]float64, 2*len(vals))
		for i := range r {
			for j := range c {
				wide[i*2*c+2*j], wide[i*2*c+2*j+1] = vals[i*c+j], 7
			}
		}
		return ir.Slice(e, tensorOf(e, wide, []int{r, 2 * c}, dt), []backend.Range{{Start: 0, End: r, Step: 1}, {Start: 0, End: 2 * c, Step: 2}})
	}
	return tensorOf(e, vals, shape, dt)
}

// optimCase is one shape and operand layout of the optimizer tests; all
// lays out every operand of the first step (else only the gradients) in
// layout.
type optimCase struct {
	shape  []int
	layout int
	all    bool
}

// optimCases are the shapes (vector tails; row and column tiles that are
// partial; for F32 and F64 sizes split over the workers) and layouts of the
// tests for dt (F16 only row-major).
func optimCases(dt backend.DType) []optimCase {
	large := dt == backend.F32 || dt == backend.F64
	var cs []optimCase
	for _, n := range []int{1, 7, 8, 9, 31, 1003, 3*serialElems + 13} {
		if n < serialElems || large {
			cs = append(cs, optimCase{shape: []int{n}})
		}
	}
	for _, s := range [][]int{{37, 531}, {200, 600}} {
		if dt == backend.F16 || (s[0] == 200 && !large) {
			continue
		}
		cs = append(cs, optimCase{s, rowMajorLayout, false}, optimCase{s, transposedLayout, false},
			optimCase{s, transposedLayout, true}, optimCase{s, slicedLayout, false})
	}
	return cs
}

// TestAdamStepMatchesDecomposition runs four Adam updates in a row on the
// kernel and, from the same start, on ir's decomposition (on this backend's
// elementwise kernels, on flex, and through the fusion decorator in fused
// elementwise programs), each chain fed its own results, and checks param,
// m and v bit for bit after every step: for F32, Flex32 and F64, Adam with
// and without the L2 penalty and AdamW with and without decay, the shapes
// and layouts of optimCases (the kernel's operands transposed or strided),
// random gradients (some with edge values: ±0, subnormals, overflowing
// squares, ±Inf, NaN). F16 is not the kernel's and must match flex too.
func TestAdamStepMatchesDecomposition(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	fb := newFusedDecomposition(t, be)
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16} {
		if got, want := be.Supports(ir.KindAdamStep, dt), dt != backend.F16; got != want {
			t.Fatalf("Supports(AdamStep, %v) = %v, want %v", dt, got, want)
		}
	}
	type mode struct {
		name      string
		wd        float64
		decoupled bool
	}
	modes := []mode{{"adam", 0, false}, {"adam-l2", 0.05, false}, {"adamw", 0.01, true}, {"adamw-no-decay", 0, true}}
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16} {
		for ci, c := range optimCases(dt) {
			n := numel(c.shape)
			for mi, md := range modes {
				name := fmt.Sprintf("%v/%v/layout %d (all %v)/%s", dt, c.shape, c.layout, c.all, md.name)
				seed := uint64(ci*10 + mi)
				vals := [4][]float64{optimVals(n, seed, 1, false), optimVals(n, seed+1, 0.1, n > 8),
					optimVals(n, seed+2, 0.01, false), absVals(optimVals(n, seed+3, 1e-4, false))}
				var k, d, f [4]backend.Tensor
				for i, v := range vals {
					l := c.layout
					if i != 1 && !c.all {
						l = rowMajorLayout
					}
					k[i] = laidOut(be, v, c.shape, dt, l)
					d[i], f[i] = tensorOf(be, v, c.shape, dt), tensorOf(fl, v, c.shape, dt)
				}
				z := d
				for step := 1; step <= 4; step++ {
					u := ir.OptimUpdate{LR: 0.01 * float64(step), Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: md.wd, Decoupled: md.decoupled, Step: step}
					if step == 3 {
						u.Beta1, u.Beta2, u.Eps = 0.8, 0.95, 1e-6
					}
					if dt != backend.F16 {
						in32, ok32 := optimInputs(k[:], c.shape, be.f32)
						in64, ok64 := optimInputs(k[:], c.shape, be.f64)
						trans := c.layout == transposedLayout
						if ok32 != isF32(dt) || ok64 != (dt == backend.F64) || (ok32 && in32.trans != trans) || (ok64 && in64.trans != trans) {
							t.Fatalf("%s/step %d: the kernel does not take the operands as expected", name, step)
						}
					}
					ko := ir.Run(be, adamOp(t, u, k[0], k[1], k[2], k[3]))
					do := ir.SpecOf(ir.KindAdamStep).Decompose(adamOp(t, u, d[0], d[1], d[2], d[3]), be)
					fo := ir.Run(fl, adamOp(t, u, f[0], f[1], f[2], f[3]))
					zo := ir.Run(fb, adamOp(t, u, z[0], z[1], z[2], z[3]))
					for j, out := range []string{"param", "m", "v"} {
						sameBits(t, fmt.Sprintf("%s/step %d/%s vs decomposition", name, step, out), be, ko[j], be, do[j])
						sameBits(t, fmt.Sprintf("%s/step %d/%s vs flex", name, step, out), be, ko[j], fl, fo[j])
						sameBits(t, fmt.Sprintf("%s/step %d/%s vs fused decomposition", name, step, out), be, ko[j], fb, zo[j])
					}
					if step == 1 && n > 8 && bitsEqual(t, be, ko[0], d[0]) {
						t.Fatalf("%s: the update left the parameter unchanged", name)
					}
					ng := optimVals(n, seed+uint64(10*step), 0.1, false)
					k = [4]backend.Tensor{ko[0], laidOut(be, ng, c.shape, dt, c.layout), ko[1], ko[2]}
					d = [4]backend.Tensor{do[0], tensorOf(be, ng, c.shape, dt), do[1], do[2]}
					f = [4]backend.Tensor{fo[0], tensorOf(fl, ng, c.shape, dt), fo[1], fo[2]}
					z = [4]backend.Tensor{zo[0], tensorOf(be, ng, c.shape, dt), zo[1], zo[2]}
				}
			}
		}
	}
	if fb.(*fusion.Backend).Stats().Programs.Load() == 0 {
		t.Fatal("the fusion decorator ran no fused program")
	}
}

// bitsEqual reports whether x and y (on be) hold the same bytes.
func bitsEqual(t *testing.T, be backend.Backend, x, y backend.Tensor) bool {
	t.Helper()
	a, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	b, err := be.ToData(y)
	if err != nil {
		t.Fatal(err)
	}
	return string(a.Bytes) == string(b.Bytes)
}

// TestSGDStepMatchesDecomposition runs four SGD updates in a row on the
// kernel and on ir's decomposition (on this backend, on flex and through
// the fusion decorator), the first without a momentum buffer, and checks
// the parameter and the buffer bit for bit after every step: for F32,
// Flex32 and F64, with and without weight decay, without momentum (no
// buffer returned), with momentum and with Nesterov momentum, the shapes
// and layouts of optimCases, gradients with edge values. The first step's
// buffer without decay is the gradient itself, as in the decomposition.
func TestSGDStepMatchesDecomposition(t *testing.T) {
	be, fl := newTestBackend(), flex.New(backend.DeviceID{Type: "flex"})
	fb := newFusedDecomposition(t, be)
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16} {
		if got, want := be.Supports(ir.KindSGDStep, dt), dt != backend.F16; got != want {
			t.Fatalf("Supports(SGDStep, %v) = %v, want %v", dt, got, want)
		}
	}
	type mode struct {
		name         string
		wd, momentum float64
		nesterov     bool
	}
	modes := []mode{
		{"plain", 0, 0, false}, {"decay", 1e-2, 0, false},
		{"momentum", 0, 0.9, false}, {"momentum-decay", 1e-2, 0.9, false},
		{"nesterov", 0, 0.9, true}, {"nesterov-decay", 1e-2, 0.7, true},
	}
	for _, dt := range []backend.DType{backend.F32, backend.Flex32, backend.F64, backend.F16} {
		for ci, c := range optimCases(dt) {
			n := numel(c.shape)
			for mi, md := range modes {
				name := fmt.Sprintf("%v/%v/layout %d (all %v)/%s", dt, c.shape, c.layout, c.all, md.name)
				seed := uint64(ci*10 + mi)
				pv, gv := optimVals(n, seed, 1, false), optimVals(n, seed+1, 0.1, n > 8)
				pl := rowMajorLayout
				if c.all {
					pl = c.layout
				}
				kp, kg := laidOut(be, pv, c.shape, dt, pl), laidOut(be, gv, c.shape, dt, c.layout)
				dp, dg := tensorOf(be, pv, c.shape, dt), tensorOf(be, gv, c.shape, dt)
				fp, fg := tensorOf(fl, pv, c.shape, dt), tensorOf(fl, gv, c.shape, dt)
				zp, zg := dp, dg
				var kb, db, fbuf, zb backend.Tensor
				for step := 1; step <= 4; step++ {
					u := ir.OptimUpdate{LR: 0.05 * float64(step), Momentum: md.momentum, WeightDecay: md.wd, Nesterov: md.nesterov}
					ko := ir.Run(be, sgdOp(t, u, kp, kg, kb))
					do := ir.SpecOf(ir.KindSGDStep).Decompose(sgdOp(t, u, dp, dg, db), be)
					fo := ir.Run(fl, sgdOp(t, u, fp, fg, fbuf))
					zo := ir.Run(fb, sgdOp(t, u, zp, zg, zb))
					sameBits(t, fmt.Sprintf("%s/step %d/param vs decomposition", name, step), be, ko[0], be, do[0])
					sameBits(t, fmt.Sprintf("%s/step %d/param vs flex", name, step), be, ko[0], fl, fo[0])
					sameBits(t, fmt.Sprintf("%s/step %d/param vs fused decomposition", name, step), be, ko[0], fb, zo[0])
					if (ko[1] == nil) != (md.momentum == 0) || (fo[1] == nil) != (md.momentum == 0) {
						t.Fatalf("%s/step %d: buffer %v (flex %v) with momentum %v", name, step, ko[1], fo[1], md.momentum)
					}
					if ko[1] != nil {
						sameBits(t, fmt.Sprintf("%s/step %d/buffer vs decomposition", name, step), be, ko[1], be, do[1])
						sameBits(t, fmt.Sprintf("%s/step %d/buffer vs flex", name, step), be, ko[1], fl, fo[1])
						sameBits(t, fmt.Sprintf("%s/step %d/buffer vs fused decomposition", name, step), be, ko[1], fb, zo[1])
						if step == 1 && md.wd == 0 && ko[1] != kg {
							t.Fatalf("%s: the first buffer without decay is not the gradient", name)
						}
					}
					if n > 8 && bitsEqual(t, be, ko[0], kp) {
						t.Fatalf("%s/step %d: the update left the parameter unchanged", name, step)
					}
					gv := optimVals(n, seed+uint64(10*step), 0.1, false)
					kp, kg, kb = ko[0], laidOut(be, gv, c.shape, dt, c.layout), ko[1]
					dp, dg, db = do[0], tensorOf(be, gv, c.shape, dt), do[1]
					fp, fg, fbuf = fo[0], tensorOf(fl, gv, c.shape, dt), fo[1]
					zp, zg, zb = zo[0], tensorOf(be, gv, c.shape, dt), zo[1]
				}
			}
		}
	}
}
