package nn

import (
	"maps"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/emberml/ember"
)

// logSoftmaxRows is log_softmax over rows of m [n, c] in float64.
func logSoftmaxRows(m []float64, n, c int) []float64 {
	out := make([]float64, len(m))
	for i := range n {
		row := m[i*c : i*c+c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		for j, v := range row {
			out[i*c+j] = v - mx - math.Log(s)
		}
	}
	return out
}

// ceRef is PyTorch's cross_entropy for class indices [n] of logits [n, c]
// in float64, written from its definition: per sample −w_t·lp_t scaled by
// (1 − ε) plus ε/C·(−Σ_c w_c·lp_c); mean divides the first by Σ w_t and the
// smoothing sum by Σ w_t (weights) or the count (no weights), over
// samples not ignored.
func ceRef(logits []float64, n, c int, tgt []int, w []float64, ignore *int, eps float64, r Reduction) (total float64, per []float64) {
	lp := logSoftmaxRows(logits, n, c)
	wc := func(k int) float64 {
		if w == nil {
			return 1
		}
		return w[k]
	}
	per = make([]float64, n)
	var nll, smooth, wsum, count float64
	for i := range n {
		if ignore != nil && tgt[i] == *ignore {
			continue
		}
		a := -wc(tgt[i]) * lp[i*c+tgt[i]]
		s := 0.0
		for k := range c {
			s -= wc(k) * lp[i*c+k]
		}
		nll += a
		smooth += s
		wsum += wc(tgt[i])
		count++
		per[i] = (1-eps)*a + eps/float64(c)*s
	}
	switch r {
	case ReductionSum:
		return (1-eps)*nll + eps/float64(c)*smooth, per
	case ReductionMean:
		den := count
		if w != nil {
			den = wsum
		}
		return (1-eps)*nll/wsum + eps/float64(c)*smooth/den, per
	}
	return 0, per
}

// TestCrossEntropyWith checks every option of CrossEntropyWith (reduction,
// class weights, ignored class, label smoothing, their combinations)
// against the float64 definition, probability targets, extra spatial axes
// (which must equal the flattened [N·d, C] loss) and one-sample input, to
// 1e-12 on F64; and the gradients in logits by finite differences.
func TestCrossEntropyWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dev := ember.CPU()
	const n, c = 7, 5
	logits := randVals(rng, n*c)
	for i := range logits {
		logits[i] *= 4
	}
	tgt := []int{0, 4, 2, 2, 1, 3, 4}
	w := []float64{0.5, 2, 1.5, 0.25, 1}
	lt := f64(logits, []int{n, c}, dev)
	tt := ember.FromInts(tgt, []int{n}, dev)
	wt := f64(w, []int{c}, dev)
	for _, useW := range []bool{false, true} {
		for _, ign := range []*int{nil, Index(2)} {
			for _, eps := range []float64{0, 0.1} {
				for _, r := range []Reduction{ReductionMean, ReductionSum, ReductionNone} {
					o := CrossEntropyOptions{Reduction: r, IgnoreIndex: ign, LabelSmoothing: eps}
					var wr []float64
					if useW {
						o.Weight, wr = wt, w
					}
					got := CrossEntropyWith(lt, tt, o)
					total, per := ceRef(logits, n, c, tgt, wr, ign, eps, r)
					name := "weights " + map[bool]string{false: "off", true: "on"}[useW] + " ignore " + map[bool]string{false: "off", true: "2"}[ign != nil] + " eps " + ftoa(eps) + " " + r.String()
					if r == ReductionNone {
						assertClose(t, name, got.Float64s(), per, 1e-12)
					} else {
						assertClose(t, name, []float64{got.Item()}, []float64{total}, 1e-12)
					}
				}
			}
		}
	}
	// The plain form is the options' zero value.
	assertClose(t, "CrossEntropy = CrossEntropyWith{}", []float64{CrossEntropy(lt, tt).Item()}, []float64{CrossEntropyWith(lt, tt, CrossEntropyOptions{}).Item()}, 1e-15)

	// Probability targets: −Σ_c w_c q_c lp_c, mean over samples.
	probs := make([]float64, n*c)
	for i := range n {
		s := 0.0
		for k := range c {
			probs[i*c+k] = rng.Float64() + 0.1
			s += probs[i*c+k]
		}
		for k := range c {
			probs[i*c+k] /= s
		}
	}
	lp := logSoftmaxRows(logits, n, c)
	for _, eps := range []float64{0, 0.2} {
		want := 0.0
		for i := range n {
			for k := range c {
				q := (1-eps)*probs[i*c+k] + eps/float64(c)
				want -= w[k] * q * lp[i*c+k]
			}
		}
		got := CrossEntropyWith(lt, f64(probs, []int{n, c}, dev), CrossEntropyOptions{Weight: wt, LabelSmoothing: eps})
		assertClose(t, "probability targets eps "+ftoa(eps), []float64{got.Item()}, []float64{want / n}, 1e-12)
	}

	// Spatial axes: [N, C, H, W] equals the flattened loss over N·H·W rows.
	const h, ww = 2, 3
	img := randVals(rng, 2*c*h*ww)
	it := f64(img, []int{2, c, h, ww}, dev)
	flat := it.Permute(0, 2, 3, 1).Reshape(-1, c)
	st := make([]int, 2*h*ww)
	for i := range st {
		st[i] = rng.IntN(c)
	}
	stt := ember.FromInts(st, []int{2, h, ww}, dev)
	o := CrossEntropyOptions{Weight: wt, LabelSmoothing: 0.05}
	assertClose(t, "spatial axes", []float64{CrossEntropyWith(it, stt, o).Item()},
		[]float64{CrossEntropyWith(flat, stt.Reshape(-1), o).Item()}, 1e-12)
	none := CrossEntropyWith(it, stt, CrossEntropyOptions{Reduction: ReductionNone})
	if s := none.Shape(); len(s) != 3 || s[0] != 2 || s[1] != h || s[2] != ww {
		t.Errorf("spatial none: shape %v, want [2 %d %d]", s, h, ww)
	}
	one := CrossEntropyWith(f64(logits[:c], []int{c}, dev), ember.FromInts([]int{3}, nil, dev), CrossEntropyOptions{Reduction: ReductionNone})
	if one.Rank() != 0 {
		t.Errorf("one sample none: shape %v, want rank 0", one.Shape())
	}
	assertClose(t, "one sample", []float64{one.Item()}, []float64{-lp[3]}, 1e-12)

	// Gradients.
	ad := ember.CPU().Autodiff()
	x := &Param{Value: f64(logits, []int{n, c}, ad)}
	tta := ember.FromInts(tgt, []int{n}, ad)
	checkGrads(t, func() *ember.Tensor {
		return CrossEntropyWith(x.Value, tta, CrossEntropyOptions{Weight: f64(w, []int{c}, ad), IgnoreIndex: Index(4), LabelSmoothing: 0.1})
	}, map[string]*Param{"logits": x})

	for name, f := range map[string]func(){
		"index out of range": func() {
			CrossEntropyWith(lt, ember.FromInts([]int{0, 1, 2, 3, 5, 0, 0}, []int{n}, dev), CrossEntropyOptions{})
		},
		"weight shape": func() { CrossEntropyWith(lt, tt, CrossEntropyOptions{Weight: f64([]float64{1}, []int{1}, dev)}) },
		"smoothing":    func() { CrossEntropyWith(lt, tt, CrossEntropyOptions{LabelSmoothing: 1.5}) },
		"prob shape":   func() { CrossEntropyWith(lt, f64(make([]float64, n), []int{n}, dev), CrossEntropyOptions{}) },
		"reduction":    func() { CrossEntropyWith(lt, tt, CrossEntropyOptions{Reduction: ReductionBatchMean}) },
	} {
		if err := ember.Try(f); err == nil || !strings.Contains(err.Error(), "cross_entropy") {
			t.Errorf("%s: got %v, want an *ember.Error naming cross_entropy", name, err)
		}
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestNLL checks NLL against the float64 definition (weights, ignored
// class, every reduction) and that NLL of log_softmax is CrossEntropyWith.
func TestNLL(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dev := ember.CPU()
	const n, c = 6, 4
	logits := randVals(rng, n*c)
	lp := logSoftmaxRows(logits, n, c)
	tgt := []int{3, 0, 1, 1, 2, 0}
	w := []float64{1.5, 0.5, 2, 1}
	lpt, tt, wt := f64(lp, []int{n, c}, dev), ember.FromInts(tgt, []int{n}, dev), f64(w, []int{c}, dev)
	for _, ign := range []*int{nil, Index(1)} {
		var sum, wsum float64
		per := make([]float64, n)
		for i := range n {
			if ign != nil && tgt[i] == *ign {
				continue
			}
			per[i] = -w[tgt[i]] * lp[i*c+tgt[i]]
			sum += per[i]
			wsum += w[tgt[i]]
		}
		o := NLLOptions{Weight: wt, IgnoreIndex: ign}
		assertClose(t, "nll mean", []float64{NLL(lpt, tt, o).Item()}, []float64{sum / wsum}, 1e-12)
		o.Reduction = ReductionSum
		assertClose(t, "nll sum", []float64{NLL(lpt, tt, o).Item()}, []float64{sum}, 1e-12)
		o.Reduction = ReductionNone
		assertClose(t, "nll none", NLL(lpt, tt, o).Float64s(), per, 1e-12)
	}
	lt := f64(logits, []int{n, c}, dev)
	assertClose(t, "nll of log_softmax", []float64{NLL(lt.LogSoftmax(1), tt, NLLOptions{Weight: wt}).Item()},
		[]float64{CrossEntropyWith(lt, tt, CrossEntropyOptions{Weight: wt}).Item()}, 1e-12)
}

// TestRegressionLosses checks MSEWith, L1, SmoothL1 and Huber against
// float64 formulas for every reduction (with a broadcast target), both
// sides of the β/δ kink, and their gradients by finite differences.
func TestRegressionLosses(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dev := ember.CPU()
	p := randVals(rng, 12)
	tg := randVals(rng, 4)
	for i := range p {
		p[i] *= 2
	}
	pt, tt := f64(p, []int{3, 4}, dev), f64(tg, []int{4}, dev)
	const beta, delta = 0.7, 1.3
	refs := map[string]func(d float64) float64{
		"mse": func(d float64) float64 { return d * d },
		"l1":  math.Abs,
		"smooth_l1": func(d float64) float64 {
			if math.Abs(d) < beta {
				return 0.5 * d * d / beta
			}
			return math.Abs(d) - 0.5*beta
		},
		"huber": func(d float64) float64 {
			if math.Abs(d) <= delta {
				return 0.5 * d * d
			}
			return delta * (math.Abs(d) - 0.5*delta)
		},
	}
	fns := map[string]func(a, b *ember.Tensor, r Reduction) *ember.Tensor{
		"mse":       MSEWith,
		"l1":        L1,
		"smooth_l1": func(a, b *ember.Tensor, r Reduction) *ember.Tensor { return SmoothL1(a, b, beta, r) },
		"huber":     func(a, b *ember.Tensor, r Reduction) *ember.Tensor { return Huber(a, b, delta, r) },
	}
	for name, f := range fns {
		per := make([]float64, 12)
		sum := 0.0
		for i := range per {
			per[i] = refs[name](p[i] - tg[i%4])
			sum += per[i]
		}
		assertClose(t, name+" none", f(pt, tt, ReductionNone).Float64s(), per, 1e-12)
		assertClose(t, name+" sum", []float64{f(pt, tt, ReductionSum).Item()}, []float64{sum}, 1e-12)
		assertClose(t, name+" mean", []float64{f(pt, tt, ReductionMean).Item()}, []float64{sum / 12}, 1e-12)
		ad := ember.CPU().Autodiff()
		x := &Param{Value: f64(p, []int{3, 4}, ad)}
		ta := f64(tg, []int{4}, ad)
		checkGrads(t, func() *ember.Tensor { return f(x.Value, ta, ReductionMean) }, map[string]*Param{name: x})
	}
	assertClose(t, "MSE = MSEWith mean", []float64{MSE(pt, tt).Item()}, []float64{MSEWith(pt, tt, ReductionMean).Item()}, 1e-15)
	if err := ember.Try(func() { Huber(pt, tt, 0, ReductionMean) }); err == nil {
		t.Error("huber with delta 0: no error")
	}
	// A target that would grow the result is refused, naming both shapes:
	// target [3] against pred [3, 1] would make a [3, 3] difference.
	col := f64(p[:3], []int{3, 1}, dev)
	row := f64(tg[:3], []int{3}, dev)
	all := map[string]func(a, b *ember.Tensor, r Reduction) *ember.Tensor{
		"mse_plain": func(a, b *ember.Tensor, _ Reduction) *ember.Tensor { return MSE(a, b) }}
	maps.Copy(all, fns)
	for name, f := range all {
		op := strings.TrimSuffix(name, "_plain")
		wantNNError(t, name+"(pred [3 1], target [3])", op, func() { f(col, row, ReductionMean) },
			"target [3] does not broadcast to pred's shape [3 1]", "pred [3 1]")
		wantNNError(t, name+"(pred [4], target [3 4])", op, func() { f(f64(p[:4], []int{4}, dev), pt, ReductionMean) },
			"target [3 4] does not broadcast to pred's shape [4]")
	}
	// The reshape hint only where the element counts agree.
	err := ember.Try(func() { L1(f64(p[:4], []int{4}, dev), pt, ReductionMean) })
	if err == nil || strings.Contains(err.Error(), "reshape") {
		t.Errorf("L1(pred [4], target [3 4]): %v, want an error without a reshape hint", err)
	}
	if err := ember.Try(func() { MSE(col, row) }); err == nil || !strings.Contains(err.Error(), "reshape target to [3 1]") {
		t.Errorf("MSE(pred [3 1], target [3]): %v, want a reshape hint", err)
	}
	ints := ember.FromInts([]int64{1, 2, 3}, []int{3}, dev)
	wantNNError(t, "MSE(int pred)", "mse", func() { MSE(ints, row) }, "needs float tensors")
}

// TestBCEWeightShapes checks that a Weight or PosWeight that would grow
// the binary cross-entropies' result is refused, as PyTorch refuses it,
// and that one broadcasting to the input's shape gives the weighted
// losses of the float64 definition.
func TestBCEWeightShapes(t *testing.T) {
	dev := ember.CPU()
	p := f64([]float64{0.2, 0.4, 0.6, 0.8}, []int{4, 1}, dev)
	y := f64([]float64{0, 1, 1, 0}, []int{4, 1}, dev)
	w4 := f64([]float64{1, 2, 3, 4}, []int{4}, dev)
	wantNNError(t, "BCE weight [4] on [4 1]", "binary_cross_entropy",
		func() { BinaryCrossEntropy(p, y, BCEOptions{Weight: w4, Reduction: ReductionNone}) },
		"weight [4] does not broadcast to probs's shape [4 1]", "reshape weight to [4 1]")
	wantNNError(t, "BCE with logits weight [4] on [4 1]", "binary_cross_entropy_with_logits",
		func() { BinaryCrossEntropyWithLogits(p, y, BCEOptions{Weight: w4, Reduction: ReductionNone}) },
		"weight [4] does not broadcast to logits's shape [4 1]")
	wantNNError(t, "BCE with logits pos_weight [4] on [4 1]", "binary_cross_entropy_with_logits",
		func() { BinaryCrossEntropyWithLogits(p, y, BCEOptions{PosWeight: w4, Reduction: ReductionNone}) },
		"pos_weight [4] does not broadcast to logits's shape [4 1]")
	wantNNError(t, "BCE weight [5] on [4 1]", "binary_cross_entropy",
		func() { BinaryCrossEntropy(p, y, BCEOptions{Weight: f64([]float64{1, 2, 3, 4, 5}, []int{5}, dev)}) },
		"weight [5] does not broadcast")
	// A [4, 1] weight (and a [1] one) broadcasts: per element −w·(y·log p + (1−y)·log(1−p)).
	pv, yv, wv := []float64{0.2, 0.4, 0.6, 0.8}, []float64{0, 1, 1, 0}, []float64{1, 2, 3, 4}
	want := make([]float64, 4)
	for i := range want {
		want[i] = -wv[i] * (yv[i]*math.Log(pv[i]) + (1-yv[i])*math.Log(1-pv[i]))
	}
	got := BinaryCrossEntropy(p, y, BCEOptions{Weight: w4.Reshape(4, 1), Reduction: ReductionNone})
	assertClose(t, "BCE weight [4 1]", got.Float64s(), want, 1e-12)
	got = BinaryCrossEntropy(p, y, BCEOptions{Weight: f64([]float64{2}, []int{1}, dev), Reduction: ReductionSum})
	sum := 0.0
	for i := range want {
		sum += 2 * want[i] / wv[i]
	}
	assertClose(t, "BCE weight [1]", []float64{got.Item()}, []float64{sum}, 1e-12)
}

// TestBinaryCrossEntropy checks both binary cross-entropies against the
// float64 definition (weights, pos_weight, reductions), the −100 clamp at
// p = 0 and 1, the stability of the logits form at |x| = 1000, that the
// logits form equals the probability form of sigmoid(x), and gradients.
func TestBinaryCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	dev := ember.CPU()
	const n, c = 4, 3
	x := randVals(rng, n*c)
	for i := range x {
		x[i] *= 3
	}
	y := make([]float64, n*c)
	for i := range y {
		y[i] = rng.Float64()
	}
	w := randVals(rng, n*c)
	pw := []float64{0.5, 2, 3}
	xt, yt := f64(x, []int{n, c}, dev), f64(y, []int{n, c}, dev)
	wt, pwt := f64(w, []int{n, c}, dev), f64(pw, []int{c}, dev)
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	var sum, sumPW float64
	per := make([]float64, n*c)
	for i := range x {
		p := sig(x[i])
		per[i] = -w[i] * (y[i]*math.Log(p) + (1-y[i])*math.Log(1-p))
		sum += per[i]
		sumPW -= w[i] * (pw[i%c]*y[i]*math.Log(p) + (1-y[i])*math.Log(1-p))
	}
	probs := make([]float64, len(x))
	for i, v := range x {
		probs[i] = sig(v)
	}
	pt := f64(probs, []int{n, c}, dev)
	assertClose(t, "bce none", BinaryCrossEntropy(pt, yt, BCEOptions{Weight: wt, Reduction: ReductionNone}).Float64s(), per, 1e-10)
	assertClose(t, "bce mean", []float64{BinaryCrossEntropy(pt, yt, BCEOptions{Weight: wt}).Item()}, []float64{sum / (n * c)}, 1e-10)
	assertClose(t, "bce with logits sum", []float64{BinaryCrossEntropyWithLogits(xt, yt, BCEOptions{Weight: wt, Reduction: ReductionSum}).Item()}, []float64{sum}, 1e-10)
	assertClose(t, "bce with logits pos_weight", []float64{BinaryCrossEntropyWithLogits(xt, yt, BCEOptions{Weight: wt, PosWeight: pwt, Reduction: ReductionSum}).Item()}, []float64{sumPW}, 1e-10)

	edge := BinaryCrossEntropy(f64([]float64{0, 1, 0, 1}, []int{4}, dev), f64([]float64{1, 0, 0, 1}, []int{4}, dev), BCEOptions{Reduction: ReductionNone}).Float64s()
	assertClose(t, "bce clamp at 0 and 1", edge, []float64{100, 100, 0, 0}, 1e-12)
	big := BinaryCrossEntropyWithLogits(f64([]float64{1000, -1000, 1000}, []int{3}, dev), f64([]float64{0, 0, 1}, []int{3}, dev), BCEOptions{Reduction: ReductionNone}).Float64s()
	assertClose(t, "bce with logits at |x| = 1000", big, []float64{1000, 0, 0}, 1e-12)

	ad := ember.CPU().Autodiff()
	xa := &Param{Value: f64(x, []int{n, c}, ad)}
	ya, wa, pwa := f64(y, []int{n, c}, ad), f64(w, []int{n, c}, ad), f64(pw, []int{c}, ad)
	checkGrads(t, func() *ember.Tensor {
		return BinaryCrossEntropyWithLogits(xa.Value, ya, BCEOptions{Weight: wa, PosWeight: pwa})
	}, map[string]*Param{"logits": xa})
	pa := &Param{Value: f64(probs, []int{n, c}, ad)}
	checkGrads(t, func() *ember.Tensor { return BinaryCrossEntropy(pa.Value, ya, BCEOptions{}) }, map[string]*Param{"probs": pa})
}

// TestKLDivAndCosineEmbedding checks KLDiv (target 0 contributes 0,
// log_target, every reduction including batchmean) and CosineEmbedding
// (both labels, the margin, PyTorch's 1e-12 in the norms) against float64
// formulas, and their gradients.
func TestKLDivAndCosineEmbedding(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	dev := ember.CPU()
	const n, c = 3, 4
	in := logSoftmaxRows(randVals(rng, n*c), n, c)
	tg := make([]float64, n*c)
	for i := range tg {
		tg[i] = rng.Float64()
	}
	tg[5] = 0
	it, tt := f64(in, []int{n, c}, dev), f64(tg, []int{n, c}, dev)
	var sum, sumLog float64
	for i := range in {
		if tg[i] > 0 {
			sum += tg[i] * (math.Log(tg[i]) - in[i])
		}
		sumLog += math.Exp(tg[i]) * (tg[i] - in[i])
	}
	assertClose(t, "kl_div sum", []float64{KLDiv(it, tt, false, ReductionSum).Item()}, []float64{sum}, 1e-12)
	assertClose(t, "kl_div mean", []float64{KLDiv(it, tt, false, ReductionMean).Item()}, []float64{sum / (n * c)}, 1e-12)
	assertClose(t, "kl_div batchmean", []float64{KLDiv(it, tt, false, ReductionBatchMean).Item()}, []float64{sum / n}, 1e-12)
	assertClose(t, "kl_div log_target", []float64{KLDiv(it, tt, true, ReductionSum).Item()}, []float64{sumLog}, 1e-12)
	if v := KLDiv(it, tt, false, ReductionNone).Float64s()[5]; v != 0 {
		t.Errorf("kl_div at target 0: %v, want 0", v)
	}
	ad := ember.CPU().Autodiff()
	ia := &Param{Value: f64(in, []int{n, c}, ad)}
	ta := f64(tg, []int{n, c}, ad)
	checkGrads(t, func() *ember.Tensor { return KLDiv(ia.Value, ta, false, ReductionBatchMean) }, map[string]*Param{"input": ia})

	const d = 5
	a, b := randVals(rng, n*d), randVals(rng, n*d)
	labels := []int{1, -1, -1}
	const margin = 0.1
	per := make([]float64, n)
	total := 0.0
	for i := range n {
		var dot, na, nb float64
		for k := range d {
			dot += a[i*d+k] * b[i*d+k]
			na += a[i*d+k] * a[i*d+k]
			nb += b[i*d+k] * b[i*d+k]
		}
		cos := dot / math.Sqrt((na+1e-12)*(nb+1e-12))
		if labels[i] == 1 {
			per[i] = 1 - cos
		} else {
			per[i] = math.Max(0, cos-margin)
		}
		total += per[i]
	}
	at, bt, lt := f64(a, []int{n, d}, dev), f64(b, []int{n, d}, dev), ember.FromInts(labels, []int{n}, dev)
	assertClose(t, "cosine_embedding none", CosineEmbedding(at, bt, lt, margin, ReductionNone).Float64s(), per, 1e-12)
	assertClose(t, "cosine_embedding mean", []float64{CosineEmbedding(at, bt, lt, margin, ReductionMean).Item()}, []float64{total / n}, 1e-12)
	aa := &Param{Value: f64(a, []int{n, d}, ad)}
	ba, la := f64(b, []int{n, d}, ad), ember.FromInts(labels, []int{n}, ad)
	checkGrads(t, func() *ember.Tensor { return CosineEmbedding(aa.Value, ba, la, margin, ReductionSum) }, map[string]*Param{"x1": aa})
}
