package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// problem is one gemm call with random operands stored with padded
// leading dimensions.
type problem struct {
	transA, transB bool
	m, n, k        int
	lda, ldb, ldc  int
	alpha, beta    float64
	a, b, c        []float64 // c: the initial C
	expect         []float64 // cache of want
}

func newProblem(rng *rand.Rand, transA, transB bool, m, n, k, pad int, alpha, beta float64) *problem {
	p := &problem{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta}
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	p.lda, p.ldb, p.ldc = max(ca, 1)+pad, max(cb, 1)+pad, max(n, 1)+pad
	p.a = randSlice(rng, max(ra, 1)*p.lda)
	p.b = randSlice(rng, max(rb, 1)*p.ldb)
	p.c = randSlice(rng, max(m, 1)*p.ldc)
	if beta == 0 { // BLAS: C must not be read when beta is 0
		for i := range p.c {
			p.c[i] = math.NaN()
		}
	}
	return p
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

// want returns the expected C from a float64 triple loop; padding
// elements of C keep their initial values.
func (p *problem) want() []float64 {
	if p.expect != nil {
		return p.expect
	}
	out := append([]float64(nil), p.c...)
	defer func() { p.expect = out }()
	for i := range p.m {
		for j := range p.n {
			var s float64
			for q := range p.k {
				var av, bv float64
				if p.transA {
					av = p.a[q*p.lda+i]
				} else {
					av = p.a[i*p.lda+q]
				}
				if p.transB {
					bv = p.b[j*p.ldb+q]
				} else {
					bv = p.b[q*p.ldb+j]
				}
				s += av * bv
			}
			v := p.alpha * s
			if p.beta != 0 {
				v += p.beta * p.c[i*p.ldc+j]
			}
			out[i*p.ldc+j] = v
		}
	}
	return out
}

func to32(s []float64) []float32 {
	r := make([]float32, len(s))
	for i, v := range s {
		r[i] = float32(v)
	}
	return r
}

// check compares got with want elementwise: |got−want| ≤ tol·(k+1)
// (the operands lie in [−1, 1], so each of the k products is at most 1 in
// magnitude, and alpha, beta ≤ 2); NaN anywhere fails.
func check(t *testing.T, name string, p *problem, got func(i int) float64, want []float64, tol float64) {
	t.Helper()
	bound := tol * float64(p.k+1)
	for i, w := range want {
		g := got(i)
		if i/p.ldc >= p.m || i%p.ldc >= p.n { // padding: untouched
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) && float64(float32(w)) != g {
				t.Fatalf("%s: padding element %d changed from %v to %v", name, i, w, g)
			}
			continue
		}
		if math.IsNaN(g) || math.Abs(g-w) > bound {
			t.Fatalf("%s: element %d (row %d, col %d) = %v, want %v (tol %.2g)", name, i, i/p.ldc, i%p.ldc, g, w, bound)
		}
	}
}

func (p *problem) run32(t *testing.T, name string) {
	t.Helper()
	a, b, c := to32(p.a), to32(p.b), to32(p.c)
	Sgemm(p.transA, p.transB, p.m, p.n, p.k, float32(p.alpha), a, p.lda, b, p.ldb, float32(p.beta), c, p.ldc)
	check(t, name+" sgemm", p, func(i int) float64 { return float64(c[i]) }, p.want(), 2e-6)
}

func (p *problem) run64(t *testing.T, name string) {
	t.Helper()
	c := append([]float64(nil), p.c...)
	Dgemm(p.transA, p.transB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, c, p.ldc)
	check(t, name+" dgemm", p, func(i int) float64 { return c[i] }, p.want(), 1e-14)
}

// sizes covers empty, tiny and odd shapes (non-multiples of every mr and
// nr) and shapes spanning several kc/mc blocks.
var sizes = [][3]int{
	{0, 5, 3}, {5, 0, 3}, {4, 6, 0}, {1, 1, 1}, {1, 17, 5}, {17, 1, 5},
	{5, 5, 5}, {17, 63, 9}, {63, 17, 97}, {97, 33, 63}, {13, 257, 31},
	{257, 15, 300}, {40, 70, 600}, {130, 129, 260}, {5, 4200, 7},
	// the MNIST MLP's products (direct path, narrow kernel for n ≤ 16)
	{64, 128, 784}, {784, 128, 64}, {64, 10, 128}, {128, 10, 64}, {64, 128, 10},
}

func TestGemmAgainstTripleLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ab := [][2]float64{{1, 0}, {1, 1}, {-0.5, 0}, {1.5, -0.75}, {0, 0.5}, {0, 0}}
	for _, sz := range sizes {
		for ti := range 4 {
			ta, tb := ti&1 != 0, ti&2 != 0
			for ai, x := range ab {
				pad := (ai + ti) % 3 * 3
				p := newProblem(rng, ta, tb, sz[0], sz[1], sz[2], pad, x[0], x[1])
				name := fmt.Sprintf("m=%d n=%d k=%d tA=%v tB=%v alpha=%v beta=%v pad=%d", sz[0], sz[1], sz[2], ta, tb, x[0], x[1], pad)
				p.run32(t, name)
				p.run64(t, name)
			}
		}
	}
}

// kernelSet is a float32 and a float64 micro-kernel used together.
type kernelSet struct {
	s *microKernel[float32]
	d *microKernel[float64]
}

// TestEveryKernel runs every kernel this CPU supports (assembly of each
// instruction set and the pure-Go fallback, forced through the same switch
// forceGeneric uses) against the triple loop on edge-heavy shapes.
func TestEveryKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer forceGeneric(false)
	for _, ks := range testKernelSets() {
		sKernel, dKernel = ks.s, ks.d
		for _, sz := range [][3]int{{1, 1, 1}, {17, 63, 9}, {97, 33, 300}, {200, 150, 70}} {
			for ti := range 4 {
				p := newProblem(rng, ti&1 != 0, ti&2 != 0, sz[0], sz[1], sz[2], 1, 1.25, 0.5)
				name := fmt.Sprintf("kernel %s m=%d n=%d k=%d tA=%v tB=%v", ks.s.name, sz[0], sz[1], sz[2], p.transA, p.transB)
				p.run32(t, name)
				p.run64(t, name)
			}
		}
	}
}

// TestForceGeneric checks the fallback switch: on selects the pure-Go
// kernels, off restores the CPU's choice.
func TestForceGeneric(t *testing.T) {
	selected := Kernel()
	forceGeneric(true)
	if sKernel != sGeneric || dKernel != dGeneric {
		t.Errorf("forceGeneric(true): kernel %q", Kernel())
	}
	forceGeneric(false)
	if Kernel() != selected {
		t.Errorf("forceGeneric(false): kernel %q, want %q", Kernel(), selected)
	}
}

// TestConcurrentCallers runs many products at once (meant for -race): each
// goroutine has its own C, all share A and B.
func TestConcurrentCallers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := newProblem(rng, false, true, 70, 90, 110, 2, 1, 0)
	want := p.want()
	a, b := to32(p.a), to32(p.b)
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for g := range 12 {
		wg.Go(func() {
			for it := range 3 {
				c := to32(p.c)
				Sgemm(p.transA, p.transB, p.m, p.n, p.k, 1, a, p.lda, b, p.ldb, 0, c, p.ldc)
				for i, w := range want {
					if math.Abs(float64(c[i])-w) > 2e-6*float64(p.k+1) {
						errs <- fmt.Sprintf("goroutine %d iteration %d: element %d = %v, want %v", g, it, i, c[i], w)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestKernelName(t *testing.T) {
	if Kernel() == "" {
		t.Fatal("empty kernel name")
	}
}
