package ember

import "fmt"

// Autocast returns d with automatic mixed precision in dt, BF16 or F16
// (PyTorch's torch.autocast): operations whose device is an autocast
// device choose their compute dtype by class instead of by their
// operands' dtypes.
//
//   - Matmul and the convolutions (Conv1d/2d/3d, the transposed ones, and
//     so nn.Linear, nn.Conv2d and Einsum) cast F32, Flex32, F16 and BF16
//     operands to dt and return dt: the ops whose cost is in
//     multiply-adds, which accelerators run faster in 16 bits (PyTorch's
//     lower-precision list, the same for CPU and CUDA). A convolution's
//     bias is cast too, as PyTorch's conv2d does.
//   - Sum and Prod (and so Mean, Var, Std and the losses of package nn),
//     CumSum, Softmax, LogSoftmax, LogSumExp, LayerNorm and RMSNorm cast
//     F16 and BF16 operands to F32 and return F32: sums of many terms,
//     exponentials and normalizations, where 16 bits lose accuracy or
//     range (the reductions, softmax and norms of PyTorch's CUDA float32
//     lists; its CPU policy leaves softmax and sum in 16 bits).
//   - Every other op runs in its operands' dtypes, promoted as usual (a
//     BF16 activation plus an F32 bias is F32; ReLU of BF16 is BF16).
//     Elementwise functions such as Exp and Log stay in 16 bits too,
//     where PyTorch's CUDA policy widens some of them to F32.
//
// F64 operands are never cast (PyTorch's autocast leaves float64 alone),
// and integer and Bool operands are unaffected. The casts are ordinary
// Cast ops: on an autodiff device they are recorded, so gradients flow
// back through them to F32 parameters (master weights) in F32, the
// gradient of each cast being the cast of the gradient back to the input's
// dtype. Captured graphs record them too, so a graph captured under
// autocast replays with the same precisions on any device.
//
// An op's device is the one its operands share (see ToDevice): autocast
// when any operand is on an autocast device (autodiff when any is on an
// autodiff device), so a model whose parameters live on an F32 autodiff
// device runs in mixed precision when its input is moved to
// dev.Autocast(BF16) (or made there), and every result computed from that
// input stays on the autocast device. Tensors only carry the device in
// their handles: moving a tensor between d and d.Autocast(dt) copies
// nothing. Ops whose operands are all on devices without autocast are
// unchanged, so code outside the mixed-precision part of a program (an
// optimizer updating F32 parameters from their gradients, which
// Gradients.Of returns on the Inner device) runs in F32 as before.
//
// Autocast composes with Autodiff and GradientCheckpointing in any order
// and is part of the device's name: cpu+autodiff+autocast:bf16. Equal
// ignores it. Like every Device, an autocast device is an immutable value,
// safe for concurrent use; there is no per-goroutine state.
//
// Training in F16 needs loss scaling against gradient underflow (see
// optim.GradScaler); BF16 has F32's exponent range and does not. The
// scheme is that of Micikevicius et al., "Mixed Precision Training"
// (ICLR 2018), as PyTorch's AMP and NVIDIA Apex's O2 level implement it.
//
// It panics with an *Error when dt is not BF16 or F16, or on the zero
// Device.
func (d Device) Autocast(dt DType) Device {
	if d.IsZero() {
		panic(&Error{Op: "autocast", Operands: []string{d.String()}, Msg: "the zero Device has no backend"})
	}
	if dt != BF16 && dt != F16 {
		panic(&Error{Op: "autocast", Operands: []string{d.String()}, Msg: fmt.Sprintf("the autocast dtype must be bf16 or f16, got %v", dt)})
	}
	d.autocast = dt
	return d
}

// AutocastDType returns the low-precision dtype of an autocast device
// (BF16 or F16) and true, or 0 and false when d does not autocast.
func (d Device) AutocastDType() (DType, bool) { return d.autocast, d.autocast != 0 }

// WithoutAutocast returns d without autocast (d itself when it has none);
// autodiff and checkpointing are kept.
func (d Device) WithoutAutocast() Device {
	d.autocast = 0
	return d
}

// autocastLow returns the dtype a matmul-class op of promoted dtype dt
// computes in on d: d's autocast dtype when d autocasts and dt is F32,
// Flex32, F16 or BF16; dt otherwise (F64, integers, Bool, no autocast).
func (d Device) autocastLow(dt DType) DType {
	if d.autocast != 0 && (dt == F32 || dt == Flex32 || dt == F16 || dt == BF16) {
		return d.autocast
	}
	return dt
}

// autocastWide returns the dtype an F32-class op (reductions, softmax,
// norms) of operand dtype dt computes in on d: F32 when d autocasts and dt
// is F16 or BF16; dt otherwise.
func (d Device) autocastWide(dt DType) DType {
	if d.autocast != 0 && (dt == F16 || dt == BF16) {
		return F32
	}
	return dt
}

// widen returns x cast to F32 when dev autocasts and x is F16 or BF16 (the
// operand of an F32-class op), x itself otherwise.
func (x *Tensor) widen(dev Device) *Tensor {
	if dev.autocast == 0 {
		return x
	}
	return x.castTo(dev.autocastWide(x.DType()))
}

// joinDevices returns the device of an op whose operands live on a and b
// (the same hardware): autodiff when either is (with that one's
// checkpointing, a's when both are), autocast when either is (a's dtype
// when both are).
func joinDevices(a, b Device) Device {
	if b.autodiff && !a.autodiff {
		a.autodiff, a.checkpointing = true, b.checkpointing
	}
	if a.autocast == 0 {
		a.autocast = b.autocast
	}
	return a
}
