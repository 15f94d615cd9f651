package winograd

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// points are the finite interpolation points of the construction, in the
// order of the transformed positions 0…6 (position 7 is ∞).
var points = []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(2, 1), big.NewRat(-2, 1), big.NewRat(1, 2), big.NewRat(-1, 2)}

// exactAT returns Aᵀ (4×8): row i holds the points' i-th powers, and 1 at
// ∞ in the last row.
func exactAT() [M][Alpha]*big.Rat {
	var a [M][Alpha]*big.Rat
	for i := range M {
		for j, p := range points {
			a[i][j] = pow(p, i)
		}
		a[i][Alpha-1] = big.NewRat(0, 1)
	}
	a[M-1][Alpha-1] = big.NewRat(1, 1)
	return a
}

// exactG returns G (8×5): row j holds p_j^k / Π_{l≠j}(p_j − p_l), the last
// row picks g4; row 0 is negated (as Bᵀ's row 0, see gen_winograd.go).
func exactG() [Alpha][R]*big.Rat {
	var g [Alpha][R]*big.Rat
	for j, p := range points {
		f := big.NewRat(1, 1)
		for l, q := range points {
			if l != j {
				f.Mul(f, new(big.Rat).Sub(p, q))
			}
		}
		for k := range R {
			g[j][k] = new(big.Rat).Quo(pow(p, k), f)
		}
	}
	for k := range R {
		g[0][k].Neg(g[0][k])
		g[Alpha-1][k] = big.NewRat(0, 1)
	}
	g[Alpha-1][R-1] = big.NewRat(1, 1)
	return g
}

// exactBT returns Bᵀ (8×8), row 0 negated.
func exactBT() [Alpha][Alpha]*big.Rat {
	rows := [Alpha][Alpha][2]int64{
		{{1, 1}, {0, 1}, {-21, 4}, {0, 1}, {21, 4}, {0, 1}, {-1, 1}, {0, 1}},
		{{0, 1}, {1, 1}, {1, 1}, {-17, 4}, {-17, 4}, {1, 1}, {1, 1}, {0, 1}},
		{{0, 1}, {-1, 1}, {1, 1}, {17, 4}, {-17, 4}, {-1, 1}, {1, 1}, {0, 1}},
		{{0, 1}, {1, 2}, {1, 4}, {-5, 2}, {-5, 4}, {2, 1}, {1, 1}, {0, 1}},
		{{0, 1}, {-1, 2}, {1, 4}, {5, 2}, {-5, 4}, {-2, 1}, {1, 1}, {0, 1}},
		{{0, 1}, {2, 1}, {4, 1}, {-5, 2}, {-5, 1}, {1, 2}, {1, 1}, {0, 1}},
		{{0, 1}, {-2, 1}, {4, 1}, {5, 2}, {-5, 1}, {-1, 2}, {1, 1}, {0, 1}},
		{{0, 1}, {-1, 1}, {0, 1}, {21, 4}, {0, 1}, {-21, 4}, {0, 1}, {1, 1}},
	}
	var b [Alpha][Alpha]*big.Rat
	for i, r := range rows {
		for j, v := range r {
			b[i][j] = big.NewRat(v[0], v[1])
		}
	}
	return b
}

func pow(p *big.Rat, k int) *big.Rat {
	r := big.NewRat(1, 1)
	for range k {
		r.Mul(r, p)
	}
	return r
}

// TestMatricesExact checks the identity behind the algorithm in exact
// arithmetic: Σ_j Aᵀ[i][j]·G[j][k]·Bᵀ[j][l] = [l = i + k], i.e.
// Aᵀ[(G·g) ⊙ (Bᵀ·d)] = the correlation of d and g, for every i < 4,
// k < 5, l < 8.
func TestMatricesExact(t *testing.T) {
	a, g, b := exactAT(), exactG(), exactBT()
	for i := range M {
		for k := range R {
			for l := range Alpha {
				s := new(big.Rat)
				for j := range Alpha {
					s.Add(s, new(big.Rat).Mul(new(big.Rat).Mul(a[i][j], g[j][k]), b[j][l]))
				}
				want := int64(0)
				if l == i+k {
					want = 1
				}
				if s.Cmp(big.NewRat(want, 1)) != 0 {
					t.Fatalf("i=%d k=%d l=%d: %v, want %d", i, k, l, s, want)
				}
			}
		}
	}
}

// programMatrix returns the matrix of p (out×in), interpreting it in
// float64 with its float32 constants.
func programMatrix(p *program) [][]float64 {
	m := make([][]float64, p.out)
	for i := range m {
		m[i] = make([]float64, p.in)
	}
	for k := range p.in {
		var r [16]float64
		r[k] = 1
		for _, o := range p.ops {
			switch o.code {
			case opAdd:
				r[o.d] = r[o.a] + r[o.b]
			case opSub:
				r[o.d] = r[o.a] - r[o.b]
			case opMul:
				r[o.d] = r[o.a] * float64(o.c)
			case opFMA:
				r[o.d] += r[o.a] * float64(o.c)
			case opOut:
				m[o.b][k] = r[o.a]
			}
		}
	}
	return m
}

// TestProgramsMatchMatrices checks that the programs of programs.go (the
// assembly's instruction sequences) compute Bᵀ, Aᵀ and their transposes
// A and B exactly, and G up to the float32 rounding of its entries.
func TestProgramsMatchMatrices(t *testing.T) {
	cmp := func(name string, p *program, want func(i, j int) *big.Rat, tol float64) {
		got := programMatrix(p)
		for i := range p.out {
			for j := range p.in {
				w, _ := want(i, j).Float64()
				if d := math.Abs(got[i][j] - w); d > tol*math.Abs(w) || (w == 0 && got[i][j] != 0) {
					t.Errorf("%s[%d][%d] = %v, want %v", name, i, j, got[i][j], w)
				}
			}
		}
	}
	a, g, b := exactAT(), exactG(), exactBT()
	cmp("Bᵀ", &inputProg, func(i, j int) *big.Rat { return b[i][j] }, 0)
	cmp("Aᵀ", &outputProg, func(i, j int) *big.Rat { return a[i][j] }, 0)
	cmp("G", &kernelProg, func(i, j int) *big.Rat { return g[i][j] }, 3e-7)
	cmp("A", &tinputProg, func(i, j int) *big.Rat { return a[j][i] }, 0)
	cmp("B", &toutputProg, func(i, j int) *big.Rat { return b[j][i] }, 0)
	cmp("Gᵀ", &wgradProg, func(i, j int) *big.Rat { return g[j][i] }, 3e-7)
}

// TestDualAlgorithmFloat64 checks the algebra of the weight gradient's
// dual algorithm in float64 with the exact matrices, on random tiles:
// Gᵀ·[(A·y·Aᵀ) ⊙ (Bᵀ·d·B)]·G equals Σ_ij y[i][j]·d[i+ky][j+kx] to 1e-13
// of the sum of the absolute terms.
func TestDualAlgorithmFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, g, b := exactAT(), exactG(), exactBT()
	am := floatMatrix(Alpha, M, func(i, j int) *big.Rat { return a[j][i] })
	bm := floatMatrix(Alpha, Alpha, func(i, j int) *big.Rat { return b[i][j] })
	gt := floatMatrix(R, Alpha, func(i, j int) *big.Rat { return g[j][i] })
	for range 20 {
		y, d := make([][]float64, M), make([][]float64, Alpha)
		for i := range y {
			y[i] = make([]float64, M)
			for j := range y[i] {
				y[i][j] = rng.NormFloat64()
			}
		}
		for i := range d {
			d[i] = make([]float64, Alpha)
			for j := range d[i] {
				d[i][j] = rng.NormFloat64()
			}
		}
		u, _ := apply2D(am, y)
		v, _ := apply2D(bm, d)
		m := make([][]float64, Alpha)
		for i := range m {
			m[i] = make([]float64, Alpha)
			for j := range m[i] {
				m[i][j] = u[i][j] * v[i][j]
			}
		}
		w, _ := apply2D(gt, m)
		for ky := range R {
			for kx := range R {
				want, scale := 0.0, 0.0
				for i := range M {
					for j := range M {
						want += y[i][j] * d[i+ky][j+kx]
						scale += math.Abs(y[i][j] * d[i+ky][j+kx])
					}
				}
				if e := math.Abs(w[ky][kx] - want); e > 1e-13*scale {
					t.Fatalf("(%d,%d): %v, want %v", ky, kx, w[ky][kx], want)
				}
			}
		}
	}
}

// sets returns the transform sets this machine runs.
func sets() []*Set {
	var s []*Set
	for _, n := range []string{"avx512", "avx2", "generic"} {
		if x := ByName(n); x != nil {
			s = append(s, x)
		}
	}
	return s
}

// apply2D returns m·x·mᵀ in float64 (x n×n, m p×n) and the same product
// of the absolute values (the scale rounding errors are relative to).
func apply2D(m [][]float64, x [][]float64) (y, s [][]float64) {
	p, n := len(m), len(x)
	y, s = make([][]float64, p), make([][]float64, p)
	for a := range p {
		y[a], s[a] = make([]float64, p), make([]float64, p)
		for b := range p {
			for i := range n {
				for j := range n {
					y[a][b] += m[a][i] * x[i][j] * m[b][j]
					s[a][b] += math.Abs(m[a][i] * x[i][j] * m[b][j])
				}
			}
		}
	}
	return y, s
}

// floatMatrix returns the rows×cols matrix get(i, j) in float64.
func floatMatrix(rows, cols int, get func(i, j int) *big.Rat) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
		for j := range cols {
			m[i][j], _ = get(i, j).Float64()
		}
	}
	return m
}

// transformCase is one transform under test: its matrix (out×in), whether
// it reads through a table (else writes through one), whether it adds to
// its output, its tolerance relative to the sum of absolute terms and the
// call.
type transformCase struct {
	name     string
	mat      [][]float64
	tableIn  bool
	add      bool
	tol      float64
	callIn   func(s *Set, n int, src []float32, sstep int, tab []int32, dst []float32, dstep, xs int, tmp *Tmp)
	callOut  func(s *Set, n int, src []float32, sstep, xs int, dst []float32, dstep int, tab []int32, tmp *Tmp)
	in, outs int // tile sides
}

func transformCases() []transformCase {
	a, g, b := exactAT(), exactG(), exactBT()
	return []transformCase{
		{name: "input", mat: floatMatrix(Alpha, Alpha, func(i, j int) *big.Rat { return b[i][j] }), tableIn: true, tol: 2e-7,
			callIn: func(s *Set, n int, src []float32, sstep int, tab []int32, dst []float32, dstep, xs int, tmp *Tmp) {
				s.Input(n, src, sstep, (*[Points]int32)(tab), dst, dstep, xs, tmp)
			}},
		{name: "kernel", mat: floatMatrix(Alpha, R, func(i, j int) *big.Rat { return g[i][j] }), tableIn: true, tol: 1e-6,
			callIn: func(s *Set, n int, src []float32, sstep int, tab []int32, dst []float32, dstep, xs int, tmp *Tmp) {
				s.Kernel(n, src, sstep, (*[R * R]int32)(tab), dst, dstep, xs, tmp)
			}},
		{name: "transposed input", mat: floatMatrix(Alpha, M, func(i, j int) *big.Rat { return a[j][i] }), tableIn: true, tol: 2e-7,
			callIn: func(s *Set, n int, src []float32, sstep int, tab []int32, dst []float32, dstep, xs int, tmp *Tmp) {
				s.TransposedInput(n, src, sstep, (*[M * M]int32)(tab), dst, dstep, xs, tmp)
			}},
		{name: "output", mat: floatMatrix(M, Alpha, func(i, j int) *big.Rat { return a[i][j] }), tol: 2e-7,
			callOut: func(s *Set, n int, src []float32, sstep, xs int, dst []float32, dstep int, tab []int32, tmp *Tmp) {
				s.Output(n, src, sstep, xs, dst, dstep, (*[M * M]int32)(tab), tmp)
			}},
		{name: "transposed output", mat: floatMatrix(Alpha, Alpha, func(i, j int) *big.Rat { return b[j][i] }), add: true, tol: 2e-7,
			callOut: func(s *Set, n int, src []float32, sstep, xs int, dst []float32, dstep int, tab []int32, tmp *Tmp) {
				s.TransposedOutput(n, src, sstep, xs, dst, dstep, (*[Points]int32)(tab), tmp)
			}},
		{name: "weight gradient", mat: floatMatrix(R, Alpha, func(i, j int) *big.Rat { return g[j][i] }), tol: 1e-6,
			callOut: func(s *Set, n int, src []float32, sstep, xs int, dst []float32, dstep int, tab []int32, tmp *Tmp) {
				s.WeightGrad(n, src, sstep, xs, dst, dstep, (*[R * R]int32)(tab), tmp)
			}},
	}
}

// TestTransformsAgainstFloat64 runs every transform of every set on
// random tiles laid out with strides, gaps between tiles and scrambled
// offset tables, against the float64 products with the exact matrices:
// each result within 2e-7 (1e-6 for G, whose entries are rounded) of the
// sum of the absolute terms (plus the old value for the adding
// transform); elements outside the written vectors stay untouched.
func TestTransformsAgainstFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range sets() {
		L := set.lanes
		var tmp Tmp
		const n = 3
		for _, tc := range transformCases() {
			t.Run(set.name+"/"+tc.name, func(t *testing.T) {
				nout, nin := len(tc.mat), len(tc.mat[0])
				// Tables: element k at a scrambled position in a spread
				// layout (k ↦ (k·7 mod size)·(L+1) + 2).
				tab := func(size int) []int32 {
					o := make([]int32, size)
					for k := range o {
						o[k] = int32((k*7%size)*(L+1) + 2)
					}
					return o
				}
				var src, dst []float32
				var call func()
				var at func(c, i, j int) int  // src element of input (i, j) of item c
				var out func(c, i, j int) int // dst element of output (i, j)
				xs := n*L + 3
				if tc.tableIn {
					it := tab(nin * nin)
					sstep := (nin*nin)*(L+1) + 5
					src = make([]float32, n*sstep+L)
					dstep := L + 1
					dst = make([]float32, (n-1)*dstep+(Points-1)*xs+L+7)
					at = func(c, i, j int) int { return c*sstep + int(it[nin*i+j]) }
					out = func(c, i, j int) int { return c*dstep + (nout*i+j)*xs }
					call = func() { tc.callIn(set, n, src, sstep, it, dst[:len(dst)-7], dstep, xs, &tmp) }
				} else {
					ot := tab(nout * nout)
					sstep := L + 2
					src = make([]float32, (n-1)*sstep+(Points-1)*xs+L)
					dstep := (nout*nout)*(L+1) + 4
					dst = make([]float32, n*dstep+L)
					at = func(c, i, j int) int { return c*sstep + (nin*i+j)*xs }
					out = func(c, i, j int) int { return c*dstep + int(ot[nout*i+j]) }
					call = func() { tc.callOut(set, n, src, sstep, xs, dst, dstep, ot, &tmp) }
				}
				for i := range src {
					src[i] = float32(rng.NormFloat64())
				}
				for i := range dst {
					dst[i] = float32(rng.NormFloat64())
				}
				old := append([]float32(nil), dst...)
				call()
				{
					written := make([]bool, len(dst))
					for c := range n {
						for l := range L {
							x := make([][]float64, nin)
							for i := range x {
								x[i] = make([]float64, nin)
								for j := range x[i] {
									x[i][j] = float64(src[at(c, i, j)+l])
								}
							}
							y, sc := apply2D(tc.mat, x)
							for i := range nout {
								for j := range nout {
									k := out(c, i, j) + l
									written[k] = true
									want := y[i][j]
									if tc.add {
										want += float64(old[k])
										sc[i][j] += math.Abs(float64(old[k]))
									}
									if d := math.Abs(float64(dst[k]) - want); d > tc.tol*sc[i][j] {
										t.Fatalf("item %d lane %d (%d,%d): %v, want %v", c, l, i, j, dst[k], want)
									}
								}
							}
						}
					}
					for k, w := range written {
						if !w && dst[k] != old[k] {
							t.Fatalf("element %d overwritten", k)
						}
					}
				}
			})
		}
	}
}

// TestTileCorrelation runs the whole algorithm on single tiles of every
// set: Input and Kernel, the 64 products summed over C channels in
// float32, Output, against the float64 correlation of the 8×8 input and
// the 5×5 kernel. The error bound asserted (and the one the convolution
// relies on) is 2e-6 times Σ_c Σ_{8×8} |d|·max|g| per output; on these
// normal inputs the measured error is far below it.
func TestTileCorrelation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const C = 32
	for _, set := range sets() {
		L := set.lanes
		var tmp Tmp
		// d: [c][i][j][L]; g: [c][ky][kx][L]
		d := make([]float32, C*Points*L+L)
		g := make([]float32, C*R*R*L)
		for i := range d[:C*Points*L] {
			d[i] = float32(rng.NormFloat64())
		}
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		var soff [Points]int32
		for k := range soff {
			soff[k] = int32(k * L)
		}
		var koff [R * R]int32
		for k := range koff {
			koff[k] = int32(k * L)
		}
		V := make([]float32, Points*C*L)
		U := make([]float32, Points*C*L)
		set.Input(C, d, Points*L, &soff, V, L, C*L, &tmp)
		set.Kernel(C, g, R*R*L, &koff, U, L, C*L, &tmp)
		Mt := make([]float32, Points*L)
		for p := range Points {
			for l := range L {
				var s float32
				for c := range C {
					s = fma32(V[(p*C+c)*L+l], U[(p*C+c)*L+l], s)
				}
				Mt[p*L+l] = s
			}
		}
		var doff [M * M]int32
		for k := range doff {
			doff[k] = int32(k * L)
		}
		Y := make([]float32, M*M*L)
		set.Output(1, Mt, 0, L, Y, 0, &doff, &tmp)
		worst := 0.0
		for l := range L {
			bound := 0.0
			for c := range C {
				dm, gm := 0.0, 0.0
				for k := range Points {
					dm += math.Abs(float64(d[(c*Points+k)*L+l]))
				}
				for k := range R * R {
					gm = max(gm, math.Abs(float64(g[(c*R*R+k)*L+l])))
				}
				bound += dm * gm
			}
			for i := range M {
				for j := range M {
					want := 0.0
					for c := range C {
						for ky := range R {
							for kx := range R {
								want += float64(d[(c*Points+(i+ky)*Alpha+j+kx)*L+l]) * float64(g[(c*R*R+ky*R+kx)*L+l])
							}
						}
					}
					e := math.Abs(float64(Y[(i*M+j)*L+l]) - want)
					worst = max(worst, e/bound)
					if e > 2e-6*bound {
						t.Fatalf("%s lane %d (%d,%d): %v, want %v (bound %g)", set.name, l, i, j, Y[(i*M+j)*L+l], want, 2e-6*bound)
					}
				}
			}
		}
		t.Logf("%s: largest error %.3g × Σ|d|·max|g|", set.name, worst)
	}
}

// TestTransposedTileConvolution runs the transposed algorithm on single
// tiles of every set: TransposedInput of a 4×4 tile and Kernel, the 64
// products summed over C channels in float32, TransposedOutput into a
// zero block, against the float64 full convolution (the 8×8 block
// D[i][j] = Σ_c Σ y[i−ky][j−kx]·g[ky][kx]); bound 2e-6 times
// Σ_c Σ_{4×4} |y|·max|g| per output.
func TestTransposedTileConvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const C = 32
	for _, set := range sets() {
		L := set.lanes
		var tmp Tmp
		y := make([]float32, C*M*M*L)
		g := make([]float32, C*R*R*L)
		for i := range y {
			y[i] = float32(rng.NormFloat64())
		}
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		var soff [M * M]int32
		for k := range soff {
			soff[k] = int32(k * L)
		}
		var koff [R * R]int32
		for k := range koff {
			koff[k] = int32(k * L)
		}
		V := make([]float32, Points*C*L)
		U := make([]float32, Points*C*L)
		set.TransposedInput(C, y, M*M*L, &soff, V, L, C*L, &tmp)
		set.Kernel(C, g, R*R*L, &koff, U, L, C*L, &tmp)
		Mt := make([]float32, Points*L)
		for p := range Points {
			for l := range L {
				var s float32
				for c := range C {
					s = fma32(V[(p*C+c)*L+l], U[(p*C+c)*L+l], s)
				}
				Mt[p*L+l] = s
			}
		}
		var doff [Points]int32
		for k := range doff {
			doff[k] = int32(k * L)
		}
		D := make([]float32, Points*L)
		set.TransposedOutput(1, Mt, 0, L, D, 0, &doff, &tmp)
		worst := 0.0
		for l := range L {
			bound := 0.0
			for c := range C {
				ym, gm := 0.0, 0.0
				for k := range M * M {
					ym += math.Abs(float64(y[(c*M*M+k)*L+l]))
				}
				for k := range R * R {
					gm = max(gm, math.Abs(float64(g[(c*R*R+k)*L+l])))
				}
				bound += ym * gm
			}
			for i := range Alpha {
				for j := range Alpha {
					want := 0.0
					for c := range C {
						for ky := range R {
							for kx := range R {
								if yi, yj := i-ky, j-kx; yi >= 0 && yi < M && yj >= 0 && yj < M {
									want += float64(y[(c*M*M+yi*M+yj)*L+l]) * float64(g[(c*R*R+ky*R+kx)*L+l])
								}
							}
						}
					}
					e := math.Abs(float64(D[(i*Alpha+j)*L+l]) - want)
					worst = max(worst, e/bound)
					if e > 2e-6*bound {
						t.Fatalf("%s lane %d (%d,%d): %v, want %v (bound %g)", set.name, l, i, j, D[(i*Alpha+j)*L+l], want, 2e-6*bound)
					}
				}
			}
		}
		t.Logf("%s: largest error %.3g × Σ|y|·max|g|", set.name, worst)
	}
}

// TestTileWeightGrad runs the dual algorithm on single tiles of every
// set: Input of an 8×8 tile d and TransposedInput of a 4×4 tile y, the 64
// products summed over C pairs in float32 (the images and tiles of a
// weight gradient), WeightGrad, against the float64 correlation
// W[ky][kx] = Σ_c Σ y[i][j]·d[i+ky][j+kx]; bound 2e-6 times
// Σ_c Σ_{8×8} |d|·max|y| per output.
func TestTileWeightGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const C = 32
	for _, set := range sets() {
		L := set.lanes
		var tmp Tmp
		d := make([]float32, C*Points*L)
		y := make([]float32, C*M*M*L)
		for i := range d {
			d[i] = float32(rng.NormFloat64())
		}
		for i := range y {
			y[i] = float32(rng.NormFloat64())
		}
		var soff [Points]int32
		for k := range soff {
			soff[k] = int32(k * L)
		}
		var yoff [M * M]int32
		for k := range yoff {
			yoff[k] = int32(k * L)
		}
		V := make([]float32, Points*C*L)
		U := make([]float32, Points*C*L)
		set.Input(C, d, Points*L, &soff, V, L, C*L, &tmp)
		set.TransposedInput(C, y, M*M*L, &yoff, U, L, C*L, &tmp)
		Mt := make([]float32, Points*L)
		for p := range Points {
			for l := range L {
				var s float32
				for c := range C {
					s = fma32(V[(p*C+c)*L+l], U[(p*C+c)*L+l], s)
				}
				Mt[p*L+l] = s
			}
		}
		var woff [R * R]int32
		for k := range woff {
			woff[k] = int32(k * L)
		}
		W := make([]float32, R*R*L)
		set.WeightGrad(1, Mt, 0, L, W, 0, &woff, &tmp)
		worst := 0.0
		for l := range L {
			bound := 0.0
			for c := range C {
				dm, ym := 0.0, 0.0
				for k := range Points {
					dm += math.Abs(float64(d[(c*Points+k)*L+l]))
				}
				for k := range M * M {
					ym = max(ym, math.Abs(float64(y[(c*M*M+k)*L+l])))
				}
				bound += dm * ym
			}
			for ky := range R {
				for kx := range R {
					want := 0.0
					for c := range C {
						for i := range M {
							for j := range M {
								want += float64(y[(c*M*M+i*M+j)*L+l]) * float64(d[(c*Points+(i+ky)*Alpha+j+kx)*L+l])
							}
						}
					}
					e := math.Abs(float64(W[(ky*R+kx)*L+l]) - want)
					worst = max(worst, e/bound)
					if e > 2e-6*bound {
						t.Fatalf("%s lane %d (%d,%d): %v, want %v (bound %g)", set.name, l, ky, kx, W[(ky*R+kx)*L+l], want, 2e-6*bound)
					}
				}
			}
		}
		t.Logf("%s: largest error %.3g × Σ|d|·max|y|", set.name, worst)
	}
}

// TestBoundsPanic checks that reads and writes past the slices and
// negative offsets panic before any work.
func TestBoundsPanic(t *testing.T) {
	for _, set := range sets() {
		L := set.lanes
		var tmp Tmp
		var soff [Points]int32
		for k := range soff {
			soff[k] = int32(k * L)
		}
		src := make([]float32, Points*L)
		dst := make([]float32, Points*L)
		expectPanic(t, set.name+" short dst", func() { set.Input(1, src, 0, &soff, dst[:len(dst)-1], 0, L, &tmp) })
		expectPanic(t, set.name+" short src", func() { set.Input(2, src, 1, &soff, dst, 0, L, &tmp) })
		soff[3] = -1
		expectPanic(t, set.name+" negative", func() { set.Input(1, src, 0, &soff, dst, 0, L, &tmp) })
		var doff [M * M]int32
		doff[5] = int32(len(dst) - L + 1)
		expectPanic(t, set.name+" output past", func() { set.Output(1, src, 0, L, dst, 0, &doff, &tmp) })
		var koff [R * R]int32
		expectPanic(t, set.name+" kernel past", func() { set.Kernel(1, src[:L], 0, &koff, dst[:Points*L-1], 0, L, &tmp) })
		koff[24] = int32(len(dst) - L + 1)
		expectPanic(t, set.name+" weight gradient past", func() { set.WeightGrad(1, src, 0, L, dst, 0, &koff, &tmp) })
	}
}

func expectPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
