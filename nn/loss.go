package nn

import "github.com/emberml/ember"

// CrossEntropy returns the mean negative log-likelihood of the target
// classes under softmax(logits), PyTorch's cross_entropy with
// reduction="mean" and no weights:
//
//	loss = −(1/N) Σᵢ log_softmax(logits)[i, targets[i]]
//
// logits is a float tensor [N, C] and targets an integer tensor [N] of
// class indices in [0, C). The result is a rank-0 tensor of logits' dtype.
// It is computed through LogSoftmax (which subtracts the row maximum) and
// Gather, so huge logits stay finite and no one-hot matrix is built. It
// panics with an *ember.Error on shape or dtype mismatches, N = 0, or a
// target out of range. CrossEntropyWith takes PyTorch's other options
// (reductions, class weights, an ignored class, label smoothing,
// probability targets, extra spatial axes).
func CrossEntropy(logits, targets *ember.Tensor) *ember.Tensor {
	need("cross_entropy", []string{"logits", "targets"}, logits, targets)
	if logits.Rank() != 2 || !logits.DType().IsFloat() {
		fail("cross_entropy", logits, "logits must be a float tensor [N, C]")
	}
	n := logits.Dim(0)
	if targets.Rank() != 1 || targets.Dim(0) != n || !targets.DType().IsInt() {
		fail("cross_entropy", targets, "targets must be an integer tensor [%d]", n)
	}
	if n == 0 {
		fail("cross_entropy", logits, "needs at least one sample")
	}
	picked := autocastF32(logits, targets).LogSoftmax(1).Gather(1, targets.Reshape(n, 1))
	return picked.Sum().MulScalar(-1 / float64(n))
}

// MSE returns the mean squared error mean((pred − target)²) over all
// elements as a rank-0 tensor (PyTorch's mse_loss with reduction="mean").
// target broadcasts to pred's shape. It panics with an *ember.Error for
// non-float tensors, a target that does not broadcast to pred's shape
// (target [B] against pred [B, 1] would compare every prediction with
// every target; PyTorch warns of any size mismatch and goes on, this
// refuses the ones that grow the result) or empty tensors.
func MSE(pred, target *ember.Tensor) *ember.Tensor {
	checkPair("mse", pred, target)
	d := autocastF32(pred, target).Sub(autocastF32(target, pred))
	if d.NumElements() == 0 {
		fail("mse", pred, "needs at least one element")
	}
	return d.Mul(d).Sum().DivScalar(float64(d.NumElements()))
}
