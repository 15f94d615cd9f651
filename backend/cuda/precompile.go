package cuda

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/emberml/ember/backend"
)

// A kernel is compiled by NVRTC the first time an op needs it (about a
// quarter of a second each), so a fresh process would spend its first
// training step compiling the few dozen kernels of that step one after
// another. Open therefore starts a warm-up: the kernels of the common
// training steps (trainingKernels) are built in the background, several
// at a time, while the program loads its data and builds its model, and
// Precompile lets a program build the kernels of its own ops ahead of
// time. Both go through the kernel cache of Kernel, so an op finds its
// kernel built, or waits for the build already under way.

// KernelSource names a kernel for Precompile: what Kernel (KernelWith, with
// Options) takes.
type KernelSource struct {
	// Name is the extern "C" __global__ function.
	Name string
	// Source is the CUDA C source defining it.
	Source string
	// Options are extra NVRTC options (nil: none), as KernelWith takes them.
	Options []string
}

// Precompile builds the kernels ks as KernelWith(k.Name, k.Source,
// k.Options...) would, on at most GOMAXPROCS goroutines at once, and
// returns when all are built: a later Kernel or KernelWith call of the
// same name, source and options returns the built kernel at once. Kernels
// already built cost nothing; a kernel another goroutine is building is
// waited for. The error joins the errors of the kernels that failed (each
// naming its kernel, with NVRTC's log or the driver error); the others are
// built all the same, and a failed kernel is tried again by its next call.
func (b *Backend) Precompile(ks ...KernelSource) error {
	return b.precompile(ks, runtime.GOMAXPROCS(0))
}

// precompile builds ks on at most workers goroutines, taking the kernels
// in order, and joins their errors.
func (b *Backend) precompile(ks []KernelSource, workers int) error {
	workers = max(1, min(workers, len(ks)))
	errs := make([]error, len(ks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ks) {
					return
				}
				_, errs[i] = b.kernelWith(ks[i].Name, ks[i].Source, ks[i].Options, false)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startWarmUp starts building trainingKernels in the background on at most
// GOMAXPROCS goroutines (the warm-up); kcache.warmDone is closed when it
// has finished. Failures are dropped: the op that needs a failed kernel
// builds it again and reports the error. The environment variable
// EMBER_CUDA_WARMUP=0 skips the warm-up.
func (b *Backend) startWarmUp() {
	done := make(chan struct{})
	b.kcache.warmDone = done
	if os.Getenv("EMBER_CUDA_WARMUP") == "0" {
		close(done)
		return
	}
	go func() {
		defer close(done)
		_ = b.precompile(trainingKernels(), runtime.GOMAXPROCS(0))
	}()
}

// trainingKernels lists, once per process, the kernels that the training
// steps of package train request on this backend for the MLP and the CNN
// on F32 data (forward, cross-entropy, backward, the fused Adam update,
// the SGD update's elementwise ops, and the evaluation's argmax), in the
// order a first step needs them: the MLP's, then those only the CNN
// (convolutions, the max-pool decomposition and its gradient) adds. Each
// (name, source) is built by the same family functions as the op that
// launches it; none of them depends on the device. Listing a kernel no op
// requests only costs its compilation, and a source that differs from the
// op's only leaves that op to compile its own.
var trainingKernels = sync.OnceValue(func() []KernelSource {
	f32, u32 := backend.F32, 4 // the float dtype and the element size of F32 data
	var ks []KernelSource
	add := func(name, source string) { ks = append(ks, KernelSource{Name: name, Source: source}) }

	// The MLP: parameter initialization, Linear (matmul, broadcast bias),
	// ReLU (le, where), log-softmax and the picked log-probabilities
	// (max and sum along rows, exp, log, gather), the mean (a scalar mul);
	// backward adds scatter-add (after a copy of its input), neg, div,
	// add, column sums, and Adam copies transposed gradients.
	add(srcRandom(f32))
	add(srcElem(binaryCall(f32, backend.OpAdd), false, 4, 4, 4))
	add(srcElem(binaryCall(f32, backend.OpLe), true, 1, 4, 4))
	add(srcElem(whereCall(u32), true, 4, 1, 4, 4))
	add(srcSoftmax(f32, true))
	add(srcReduce(f32, backend.ReduceMax, false))
	add(srcReduce(f32, backend.ReduceSum, false))
	add(srcReduce(f32, backend.ReduceArgMax, false))
	add(srcElem(unaryCall(f32, backend.OpExp), true, 4, 4))
	add(srcElem(unaryCall(f32, backend.OpLog), true, 4, 4))
	add(srcGather(u32))
	add(srcElem(binaryCall(f32, backend.OpMul), true, 4, 4, 4))
	add(srcElem(copyCall(u32), true, 4, 4))
	add(srcScatterAdd(f32))
	add(srcElem(unaryCall(f32, backend.OpNeg), true, 4, 4))
	add(srcElem(binaryCall(f32, backend.OpDiv), true, 4, 4, 4))
	add(srcElem(binaryCall(f32, backend.OpAdd), true, 4, 4, 4))
	add(srcReduce(f32, backend.ReduceSum, true))
	add(srcReduce(f32, backend.ReduceMax, true))
	add(srcElem(copyCall(u32), false, 4, 4))
	add(srcAdam(f32))
	add(srcElem(binaryCall(f32, backend.OpSub), true, 4, 4, 4))

	// The CNN: im2col for the convolutions and their weight gradients,
	// col2im for the input gradient, the max-pool kernels; and the
	// max-pool's decomposition (other dtypes) and its gradient's compare
	// (ne, eq, broadcast eq), combine Bool masks (and, or), cast them to
	// F32, take a cumulative sum and select with a broadcast where.
	add(srcIm2col(u32))
	add(srcElem(binaryCall(f32, backend.OpNe), true, 1, 4, 4))
	add(srcElem(binaryCall(backend.Bool, backend.OpAnd), false, 1, 1, 1))
	add(srcElem(binaryCall(f32, backend.OpEq), false, 1, 4, 4))
	add(srcElem(binaryCall(f32, backend.OpEq), true, 1, 4, 4))
	add(srcElem(binaryCall(backend.Bool, backend.OpOr), true, 1, 1, 1))
	add(srcCast(backend.Bool))
	add(srcCumsum(f32))
	add(srcElem(whereCall(u32), false, 4, 1, 4, 4))
	add(srcCol2im(f32))
	add(srcMaxPool(f32))
	add(srcMaxPoolGrad(f32))
	return ks
})

// The functions below give the (name, source) of one kernel of a family as
// the op launching it builds them, for launches whose offsets fit in 32
// bits (the strided kernels' int indices).

// srcElem is c's contiguous kernel (contig) or its strided kernel with
// int indices, for operands of the element sizes sizes (the output's
// first), as Backend.elementwise launches them.
func srcElem(c elemCall, contig bool, sizes ...int) (string, string) {
	idx := ""
	if !contig {
		idx = "int"
	}
	name, gen := elemSource(c, contig, idx, elemVec(sizes...))
	return name, gen()
}

// srcCast is the cast kernel of source dtype src (Backend.castInto).
func srcCast(src backend.DType) (string, string) {
	name := "ember_cast_" + ctypeOf(src).Name + "_s32"
	return name, castSource(src, name, "int")
}

// srcReduce is the rows (cols false) or cols kernel of dt and rop
// (Backend.reduce: reduceName chooses between the kernels that fix the op
// and those that take it at run time).
func srcReduce(dt backend.DType, rop backend.ReduceOp, cols bool) (string, string) {
	base, fixed := reduceName(dt, rop)
	kernel := "rows"
	if cols {
		kernel = "cols"
	}
	name := base + "_" + kernel
	return name, reduceOpSource(dt, name, kernel, fixed)
}

// srcSoftmax is the softmax (log: log-softmax) kernel of dt
// (Backend.softmax).
func srcSoftmax(dt backend.DType, log bool) (string, string) {
	name := softmaxName(dt, log)
	return name, softmaxSource(dt, name, log)
}

// srcRandom is the random kernel of dt (Backend.random).
func srcRandom(dt backend.DType) (string, string) {
	name := "ember_random_" + ctypeOf(dt).Name
	return name, randomSource(dt, name)
}

// srcGather is the gather kernel of elements of size bytes (Backend.gather).
func srcGather(size int) (string, string) {
	name := "ember_gather_" + bitsType(size)
	return name, render(gatherTmpl, indexSpec{Name: name, T: bitsType(size)})
}

// srcScatterAdd is the scatter-add kernel of dt (Backend.scatterAddTo).
func srcScatterAdd(dt backend.DType) (string, string) {
	c := ctypeOf(dt)
	name := "ember_scatter_add_" + c.Name
	return name, render(scatterTmpl, indexSpec{Name: name, T: c.S, Add: scatterAdd(dt)})
}

// srcIm2col is the im2col kernel of elements of size bytes (Backend.conv2d).
func srcIm2col(size int) (string, string) {
	name := "ember_im2col_" + bitsType(size)
	return name, render(im2colTmpl, convSpec{Name: name, T: bitsType(size)})
}

// srcCol2im is the col2im kernel of dt (Backend.convTranspose2d).
func srcCol2im(dt backend.DType) (string, string) {
	name := "ember_col2im_" + ctypeOf(dt).Name
	return name, col2imSource(dt, name)
}

// srcCumsum is the cumulative-sum kernel of dt (Backend.cumSum).
func srcCumsum(dt backend.DType) (string, string) {
	name := "ember_cumsum_" + ctypeOf(dt).Name
	return name, scanSource(dt, name)
}

// srcAdam is the fused Adam kernel of dt, F32 (and Flex32) or F64
// (Backend.adamStep).
func srcAdam(dt backend.DType) (string, string) {
	if dt == backend.F64 {
		return "ember_adam_f64", adamSource
	}
	return "ember_adam_f32", adamSource
}
