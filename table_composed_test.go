package ember

import (
	"math"
	"testing"
)

func softmaxLane(l []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range l {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range l {
		s += math.Exp(v - m)
	}
	out := make([]float64, len(l))
	for i, v := range l {
		out[i] = math.Exp(v-m) / s
	}
	return out
}

// laneMap applies f to each lane of axis a, keeping the shape.
func laneMap(r ref, a int, f func([]float64) []float64) ref {
	out := ref{r.shape, make([]float64, len(r.v))}
	st := stridesOf(r.shape)
	idx := make([]int, len(r.shape))
	for i := range r.v {
		unravelInto(i, r.shape, idx)
		if idx[a] != 0 {
			continue
		}
		lane := make([]float64, r.shape[a])
		for k := range lane {
			lane[k] = r.v[i+k*st[a]]
		}
		for k, v := range f(lane) {
			out.v[i+k*st[a]] = v
		}
	}
	return out
}

func TestTableSoftmax(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(41)
		for _, dt := range floatDTypes {
			for _, shape := range [][]int{{5}, {1, 1}, {3, 4}, {2, 3, 4}, {2, 0, 3}} {
				x := randRef(shape, dt, nonZero(rng, 0.1, 3))
				// Shift one lane far up to test stability.
				if len(x.v) > 0 {
					x.v[0] = quantize(x.v[0]+80, dt)
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for a := -len(shape); a < len(shape); a++ {
						pa := (a + len(shape)) % len(shape)
						name := dt.String() + " " + shapeName(shape) + " " + l.name + " axis " + itoa(pa)
						sm := laneMap(x, pa, softmaxLane)
						check(t, "softmax "+name, xt.Softmax(a), sm, dt, 2, nil)
						lsm := laneMap(x, pa, func(l []float64) []float64 {
							p := softmaxLane(l)
							for i := range p {
								p[i] = math.Log(p[i])
							}
							return p
						})
						// log-softmax of the shifted lane is about -80: relative to max(|w|, 1).
						check(t, "log_softmax "+name, xt.LogSoftmax(a), lsm, dt, 2, nil)
						for _, keep := range []bool{false, true} {
							lse := reduceRef(x, pa, keep, func(l []float64) float64 {
								m := math.Inf(-1)
								for _, v := range l {
									m = math.Max(m, v)
								}
								if len(l) == 0 {
									return math.Inf(-1)
								}
								s := 0.0
								for _, v := range l {
									s += math.Exp(v - m)
								}
								return m + math.Log(s)
							})
							check(t, "logsumexp "+name, xt.LogSumExp(a, keep), lse, dt, 2, nil)
						}
					}
				}
			}
		}
	})
}

func geluRef(x float64) float64 { return x * 0.5 * (1 + math.Erf(x/math.Sqrt2)) }

func TestTableActivations(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(42)
		for _, dt := range floatDTypes {
			for _, shape := range [][]int{{}, {0}, {7}, {3, 4}, {2, 1, 3}} {
				x := randRef(shape, dt, nonZero(rng, 0.05, 4))
				if len(x.v) > 1 {
					x.v[1] = 0
				}
				cases := []struct {
					name string
					f    func(*Tensor) *Tensor
					ref  func(float64) float64
				}{
					{"relu", (*Tensor).Relu, func(v float64) float64 { return math.Max(v, 0) }},
					{"gelu", (*Tensor).Gelu, geluRef},
					{"silu", (*Tensor).Silu, func(v float64) float64 { return v / (1 + math.Exp(-v)) }},
					{"leaky_relu", func(x *Tensor) *Tensor { return x.LeakyRelu(0.01) }, func(v float64) float64 {
						if v > 0 {
							return v
						}
						return 0.01 * v
					}},
					{"square", (*Tensor).Square, func(v float64) float64 { return v * v }},
					{"clamp", func(x *Tensor) *Tensor { return x.Clamp(-1.5, 2) }, func(v float64) float64 { return math.Min(math.Max(v, -1.5), 2) }},
					{"clamp_min", func(x *Tensor) *Tensor { return x.ClampMin(0.5) }, func(v float64) float64 { return math.Max(v, 0.5) }},
					{"clamp_max", func(x *Tensor) *Tensor { return x.ClampMax(-0.5) }, func(v float64) float64 { return math.Min(v, -0.5) }},
				}
				for _, l := range layoutsFor(len(shape)) {
					xt := l.view(dev, x, dt)
					for _, c := range cases {
						// Gelu and silu compose several rounded ops: loosen 3x.
						check(t, c.name+" "+dt.String()+" "+shapeName(shape)+" "+l.name, c.f(xt), mapRef(x, c.ref), dt, 3, nil)
					}
				}
			}
		}
		for _, dt := range intDTypes {
			x := randRef([]int{3, 4}, dt, ints(rng, -9, 9))
			xt := layoutsFor(2)[1].view(dev, x, dt)
			checkEq(t, "relu "+dt.String(), xt.Relu(), mapRef(x, func(v float64) float64 { return math.Max(v, 0) }), dt)
			checkEq(t, "clamp "+dt.String(), xt.Clamp(-2.7, 3.2), mapRef(x, func(v float64) float64 { return math.Min(math.Max(v, -2), 3) }), dt)
			checkEq(t, "square "+dt.String(), xt.Square(), mapRef(x, func(v float64) float64 { return v * v }), dt)
		}
	})
}

func TestTableOneHot(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		rng := newRNG(43)
		for _, dt := range intDTypes {
			for _, shape := range [][]int{{}, {0}, {5}, {2, 3}} {
				lab := randRef(shape, dt, ints(rng, 0, 3))
				want := build(append(append([]int{}, shape...), 4), func(i []int) float64 {
					return b2f(lab.v[ravel(i[:len(i)-1], shape)] == float64(i[len(i)-1]))
				})
				for _, l := range layoutsFor(len(shape)) {
					checkEq(t, "one_hot "+dt.String()+" "+shapeName(shape)+" "+l.name, OneHot(l.view(dev, lab, dt), 4), want, F32)
				}
			}
		}
		expectPanic(t, "one_hot float labels", func() { OneHot(Zeros([]int{2}, dev), 3) }, "integer")
	})
}

func TestTableCreation(t *testing.T) {
	forDevices(t, func(t *testing.T, dev Device) {
		checkEq(t, "arange", Arange(-3, 4, dev), ref{[]int{7}, []float64{-3, -2, -1, 0, 1, 2, 3}}, I64)
		checkEq(t, "arange empty", Arange(4, 4, dev), ref{[]int{0}, nil}, I64)
		checkEq(t, "arange step -4", ArangeStep(10, -3, -4, dev), ref{[]int{4}, []float64{10, 6, 2, -2}}, I64)
		checkEq(t, "arange step 3", ArangeStep(1, 8, 3, dev), ref{[]int{3}, []float64{1, 4, 7}}, I64)
		checkEq(t, "linspace", Linspace(-1, 1, 5, dev), ref{[]int{5}, []float64{-1, -0.5, 0, 0.5, 1}}, F32)
		for _, dt := range []DType{F64, F32, F16, BF16, I64, I32, Bool} {
			checkEq(t, "full 2.7 "+dt.String(), FullDType([]int{2, 3}, 2.7, dt, dev), build([]int{2, 3}, func([]int) float64 { return quantize(2.7, dt) }), dt)
			checkEq(t, "full -2.7 rank 0 "+dt.String(), FullDType(nil, -2.7, dt, dev), ref{nil, []float64{quantize(-2.7, dt)}}, dt)
			checkEq(t, "full empty "+dt.String(), FullDType([]int{0, 3}, 1, dt, dev), ref{[]int{0, 3}, nil}, dt)
		}
		checkEq(t, "zeros", Zeros([]int{2}, dev), ref{[]int{2}, []float64{0, 0}}, F32)
		checkEq(t, "ones_like", OnesLike(FromInts([]int{5}, []int{1}, dev)), ref{[]int{1}, []float64{1}}, I64)
	})
}

// moments returns the mean and standard deviation of v.
func moments(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)-1))
}

func TestTableRandomStatistics(t *testing.T) {
	const n = 100_000
	forDevices(t, func(t *testing.T, dev Device) {
		dev.Seed(7)
		for _, dt := range []DType{F32, F64, BF16} {
			// Uniform on [-2, 5): mean 1.5, std 7/√12; every sample in range.
			u := RandomDType([]int{n}, Uniform(-2, 5), dt, dev).Float64s()
			m, s := moments(u)
			wantS := 7 / math.Sqrt(12)
			if math.Abs(m-1.5) > 5*wantS/math.Sqrt(n) || math.Abs(s-wantS) > 0.02*wantS {
				t.Errorf("uniform %v: mean %v std %v, want 1.5 and %v", dt, m, s, wantS)
			}
			for _, v := range u {
				if v < -2 || v > 5 || (v == 5 && dt != BF16) {
					t.Errorf("uniform %v: sample %v outside [-2, 5)", dt, v)
					break
				}
			}
			// Normal(2, 3): mean within 5 standard errors, std within 2%.
			g := RandomDType([]int{n}, Normal(2, 3), dt, dev).Float64s()
			m, s = moments(g)
			if math.Abs(m-2) > 5*3/math.Sqrt(n) || math.Abs(s-3) > 0.02*3 {
				t.Errorf("normal %v: mean %v std %v, want 2 and 3", dt, m, s)
			}
			// Default is uniform on [0, 1).
			d := RandomDType([]int{n}, DefaultDistribution(), dt, dev).Float64s()
			m, _ = moments(d)
			if math.Abs(m-0.5) > 5*math.Sqrt(1.0/12/n) {
				t.Errorf("default %v: mean %v, want 0.5", dt, m)
			}
		}
		// Bernoulli(0.3): frequency within 5 standard errors; values 0 or 1.
		b := Random([]int{n}, Bernoulli(0.3), dev).Float64s()
		ones := 0
		for _, v := range b {
			if v != 0 && v != 1 {
				t.Fatalf("bernoulli sample %v is not 0 or 1", v)
			}
			ones += int(v)
		}
		if f := float64(ones) / n; math.Abs(f-0.3) > 5*math.Sqrt(0.21/n) {
			t.Errorf("bernoulli(0.3) frequency %v", f)
		}
		// Rank 0 and empty shapes.
		if got := Rand(nil, dev).Shape(); len(got) != 0 {
			t.Errorf("rand rank 0: shape %v", got)
		}
		if got := Randn([]int{3, 0}, dev).NumElements(); got != 0 {
			t.Errorf("randn empty: %d elements", got)
		}
	})
}
