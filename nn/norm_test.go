package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember"
)

// bnRef normalizes x [n, c, s] (s = spatial size) per channel with the
// given mean and variance, then applies weight and bias.
func bnRef(x []float64, n, c, s int, mean, variance, w, b []float64, eps float64) []float64 {
	out := make([]float64, len(x))
	for i := range n {
		for ch := range c {
			for k := range s {
				j := (i*c+ch)*s + k
				out[j] = (x[j]-mean[ch])/math.Sqrt(variance[ch]+eps)*w[ch] + b[ch]
			}
		}
	}
	return out
}

// batchStats returns per-channel mean and biased variance of x [n, c, s].
func batchStats(x []float64, n, c, s int) (mean, variance []float64) {
	mean = make([]float64, c)
	variance = make([]float64, c)
	cnt := float64(n * s)
	for ch := range c {
		for i := range n {
			for k := range s {
				mean[ch] += x[(i*c+ch)*s+k]
			}
		}
		mean[ch] /= cnt
		for i := range n {
			for k := range s {
				d := x[(i*c+ch)*s+k] - mean[ch]
				variance[ch] += d * d
			}
		}
		variance[ch] /= cnt
	}
	return mean, variance
}

func TestBatchNormForwardAndRunningStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dev := ember.Flex()
	for _, shape := range [][]int{{6, 3}, {4, 3, 2, 5}} {
		n, c := shape[0], shape[1]
		s := numel(shape) / (n * c)
		bn := NewBatchNorm(c, dev)
		w := setRandF64(rng, bn.Weight)
		b := setRandF64(rng, bn.Bias)
		rm := []float64{0, 0, 0}
		rv := []float64{1, 1, 1}
		bn.RunningMean.Value = f64(rm, []int{c}, dev)
		bn.RunningVar.Value = f64(rv, []int{c}, dev)
		for step := range 2 {
			x := randVals(rng, numel(shape))
			for i := range x {
				x[i] = 3*x[i] + float64(step) // non-trivial running statistics
			}
			y := bn.Forward(f64(x, shape, dev))
			mean, variance := batchStats(x, n, c, s)
			assertClose(t, "batchnorm train", y.Float64s(), bnRef(x, n, c, s, mean, variance, w, b, 1e-5), 1e-10)
			unbiased := float64(n*s) / float64(n*s-1)
			for ch := range c {
				rm[ch] = 0.9*rm[ch] + 0.1*mean[ch]
				rv[ch] = 0.9*rv[ch] + 0.1*variance[ch]*unbiased
			}
			assertClose(t, "running_mean", bn.RunningMean.Value.Float64s(), rm, 1e-12)
			assertClose(t, "running_var", bn.RunningVar.Value.Float64s(), rv, 1e-12)
		}
		if got := bn.NumBatchesTracked.Value.Item(); got != 2 {
			t.Errorf("num_batches_tracked = %v, want 2", got)
		}
		SetTraining(bn, false)
		before := bn.RunningMean.Value.Float64s()
		x := randVals(rng, numel(shape))
		y := bn.Forward(f64(x, shape, dev))
		assertClose(t, "batchnorm eval", y.Float64s(), bnRef(x, n, c, s, rm, rv, w, b, 1e-5), 1e-10)
		assertClose(t, "running_mean after eval", bn.RunningMean.Value.Float64s(), before, 0)
	}
}

func TestBatchNormGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	dev := ember.Flex().Autodiff()
	bn := NewBatchNorm(2, dev)
	setRandF64(rng, bn.Weight)
	setRandF64(rng, bn.Bias)
	x := &Param{Value: f64(randVals(rng, 3*2*2*2), []int{3, 2, 2, 2}, dev)}
	r := randVals(rng, 24)
	cells := map[string]*Param{"weight": bn.Weight, "bias": bn.Bias, "x": x}
	checkGrads(t, func() *ember.Tensor { return weightedSum(bn.Forward(x.Value), r) }, cells)
	SetTraining(bn, false)
	checkGrads(t, func() *ember.Tensor { return weightedSum(bn.Forward(x.Value), r) }, cells)
}

func TestBatchNormBuffers(t *testing.T) {
	bn := NewBatchNorm(4, ember.Flex().Autodiff())
	names := []string{}
	for _, p := range bn.NamedBuffers() {
		names = append(names, p.Name)
		if p.Param.Value.IsTracked() || p.Param.Value.Device().IsAutodiff() {
			t.Errorf("buffer %s is on an autodiff device or tracked", p.Name)
		}
	}
	if len(names) != 3 || names[0] != "running_mean" || names[1] != "running_var" || names[2] != "num_batches_tracked" {
		t.Errorf("buffers %v", names)
	}
	if len(bn.NamedParameters()) != 2 || NumParams(bn) != 8 {
		t.Errorf("parameters %d, elements %d; want 2 and 8", len(bn.NamedParameters()), NumParams(bn))
	}
	if err := ember.Try(func() { bn.Forward(ember.Zeros([]int{1, 4}, ember.Flex())) }); err == nil {
		t.Error("training on one value per channel did not panic")
	}
}

func TestLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	dev := ember.Flex()
	ln := NewLayerNorm(5, dev)
	w := setRandF64(rng, ln.Weight)
	b := setRandF64(rng, ln.Bias)
	x := randVals(rng, 2*3*5)
	y := ln.Forward(f64(x, []int{2, 3, 5}, dev))
	want := make([]float64, len(x))
	for r := range 6 {
		row := x[r*5 : r*5+5]
		var mean, v float64
		for _, e := range row {
			mean += e / 5
		}
		for _, e := range row {
			v += (e - mean) * (e - mean) / 5
		}
		for k, e := range row {
			want[r*5+k] = (e-mean)/math.Sqrt(v+1e-5)*w[k] + b[k]
		}
	}
	assertClose(t, "layernorm", y.Float64s(), want, 1e-12)

	adev := ember.Flex().Autodiff()
	ln2 := NewLayerNorm(4, adev)
	setRandF64(rng, ln2.Weight)
	setRandF64(rng, ln2.Bias)
	xp := &Param{Value: f64(randVals(rng, 12), []int{3, 4}, adev)}
	rr := randVals(rng, 12)
	checkGrads(t, func() *ember.Tensor { return weightedSum(ln2.Forward(xp.Value), rr) },
		map[string]*Param{"weight": ln2.Weight, "bias": ln2.Bias, "x": xp})
}
