package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/autodiff"
	"github.com/emberml/ember/backend/internal/layout"
	"github.com/emberml/ember/ir"
)

// The warm-up list is checked without a GPU against the kernels the ops
// request for the layouts of the MLP and CNN training steps (the layouts
// below are those package train's steps give these ops); the GPU tests
// check that a backend whose warm-up has finished runs such steps without
// building another kernel, and the concurrency of Kernel.

// listed returns the warm-up list as a map from name to source.
func listed(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, k := range trainingKernels() {
		m[k.Name] = k.Source
	}
	return m
}

func TestTrainingKernelsList(t *testing.T) {
	ks := trainingKernels()
	if len(ks) < 20 {
		t.Fatalf("the warm-up lists %d kernels, want the two dozen or so of the MLP and CNN steps", len(ks))
	}
	seen := map[string]bool{}
	for _, k := range ks {
		if seen[k.Name] {
			t.Errorf("%s is listed twice", k.Name)
		}
		seen[k.Name] = true
		if !strings.HasPrefix(k.Name, "ember_") {
			t.Errorf("%s: not one of the backend's kernel names", k.Name)
		}
		if !strings.Contains(k.Source, `extern "C" __global__ void `+k.Name+"(") {
			t.Errorf("%s: the source does not define the kernel", k.Name)
		}
		if k.Options != nil {
			t.Errorf("%s: options %q, want none (the ops compile without)", k.Name, k.Options)
		}
		// Generated families start with the prelude; the fused Adam
		// source is a constant of its own.
		if k.Name != "ember_adam_f32" && !strings.HasPrefix(k.Source, prelude) {
			t.Errorf("%s: the source does not start with the kernel prelude", k.Name)
		}
	}
}

// elemRequest is the (name, source) Backend.elementwise requests for c over
// shape with the output's strides outSt, the inputs' strides inSt and the
// element sizes sizes (the output's first), with every pointer 256-byte
// aligned as the allocator gives them: the flat contiguous kernel when the
// output is dense and each input dense or one broadcast scalar, else the
// kernel of the collapsed layout (contiguous when it collapses to one
// dense axis, else strided with int or long long indices).
func elemRequest(c elemCall, shape, outSt []int, inSt [][]int, sizes ...int) (string, string) {
	n := backend.NumElements(shape)
	flat := true
	if f := flatStrides(shape, outSt); f == nil || f[0] == 0 && n > 1 {
		flat = false
	}
	for _, st := range inSt {
		if flatStrides(shape, st) == nil {
			flat = false
		}
	}
	contig, idx := flat, ""
	if !flat {
		sh, st := collapse(shape, append([][]int{outSt}, inSt...))
		contig = len(sh) <= 1
		for k := range st {
			if len(sh) == 1 && !(st[k][0] == 1 || st[k][0] == 0 && k > 0) {
				contig = false
			}
		}
		idx = "i64"
		if fits32(sh, st) {
			idx = "int"
		}
	}
	if contig {
		idx = ""
	}
	name, gen := elemSource(c, contig, idx, elemVec(sizes...))
	return name, gen()
}

// rowMajor returns the strides of a contiguous tensor of shape.
func rowMajor(shape ...int) []int { return layout.RowMajorStrides(shape) }

// bcast returns the strides of a contiguous tensor of shape from viewed
// as shape to (broadcasting).
func bcast(from, to []int) []int {
	return broadcastStrides(&Tensor{shape: from, strides: layout.RowMajorStrides(from)}, to)
}

// reduceRequest is the (name, source) Backend.reduce requests for a
// contiguous x of dt and shape reduced by rop along axis.
func reduceRequest(dt backend.DType, rop backend.ReduceOp, shape []int, axis int) (string, string) {
	name, fixed := reduceName(dt, rop)
	kernel := "cols"
	if backend.NumElements(shape[axis+1:]) == 1 {
		kernel = "rows"
	}
	name += "_" + kernel
	return name, reduceOpSource(dt, name, kernel, fixed)
}

// TestTrainingKernelsMatchOps checks that the kernels the ops of the MLP
// and CNN training steps request, for the layouts those steps give them,
// are in the warm-up list with the same source.
func TestTrainingKernelsMatchOps(t *testing.T) {
	f32 := backend.F32
	mlp := []int{64, 128}
	logits := []int{64, 10}
	pool := []int{64, 32, 12, 12, 4}
	pool1 := []int{64, 32, 12, 12, 1}
	type req struct {
		what         string
		name, source string
	}
	as := func(what string) func(name, source string) req {
		return func(name, source string) req { return req{what, name, source} }
	}
	reqs := []req{
		as("linear bias")(elemRequest(binaryCall(f32, backend.OpAdd), mlp, rowMajor(mlp...), [][]int{rowMajor(mlp...), bcast([]int{128}, mlp)}, 4, 4, 4)),
		as("conv bias")(elemRequest(binaryCall(f32, backend.OpAdd), []int{64, 32, 24, 24}, rowMajor(64, 32, 24, 24),
			[][]int{rowMajor(64, 32, 24, 24), bcast([]int{1, 32, 1, 1}, []int{64, 32, 24, 24})}, 4, 4, 4)),
		as("relu le")(elemRequest(binaryCall(f32, backend.OpLe), mlp, rowMajor(mlp...), [][]int{rowMajor(mlp...), bcast(nil, mlp)}, 1, 4, 4)),
		as("relu where")(elemRequest(whereCall(4), mlp, rowMajor(mlp...), [][]int{rowMajor(mlp...), bcast(nil, mlp), rowMajor(mlp...)}, 4, 1, 4, 4)),
		as("logits - max")(elemRequest(binaryCall(f32, backend.OpSub), logits, rowMajor(logits...), [][]int{rowMajor(logits...), bcast([]int{64, 1}, logits)}, 4, 4, 4)),
		as("exp")(elemRequest(unaryCall(f32, backend.OpExp), logits, rowMajor(logits...), [][]int{rowMajor(logits...)}, 4, 4)),
		as("log")(elemRequest(unaryCall(f32, backend.OpLog), []int{64, 1}, rowMajor(64, 1), [][]int{rowMajor(64, 1)}, 4, 4)),
		as("mean scale")(elemRequest(binaryCall(f32, backend.OpMul), nil, nil, [][]int{nil, nil}, 4, 4, 4)),
		as("scatter-add copy")(elemRequest(copyCall(4), logits, rowMajor(logits...), [][]int{rowMajor(logits...)}, 4, 4)),
		as("neg")(elemRequest(unaryCall(f32, backend.OpNeg), logits, rowMajor(logits...), [][]int{rowMajor(logits...)}, 4, 4)),
		as("div")(elemRequest(binaryCall(f32, backend.OpDiv), []int{64, 1}, rowMajor(64, 1), [][]int{rowMajor(64, 1), rowMajor(64, 1)}, 4, 4, 4)),
		as("expanded grad mul")(elemRequest(binaryCall(f32, backend.OpMul), logits, rowMajor(logits...), [][]int{{1, 0}, rowMajor(logits...)}, 4, 4, 4)),
		as("grad add")(elemRequest(binaryCall(f32, backend.OpAdd), logits, rowMajor(logits...), [][]int{rowMajor(logits...), rowMajor(logits...)}, 4, 4, 4)),
		as("transposed grad copy")(elemRequest(copyCall(4), []int{128, 784}, rowMajor(128, 784), [][]int{{1, 128}}, 4, 4)),
		as("SGD sub")(elemRequest(binaryCall(f32, backend.OpSub), []int{128}, rowMajor(128), [][]int{rowMajor(128), rowMajor(128)}, 4, 4, 4)),
		as("max-pool cat slab")(elemRequest(copyCall(4), pool1, rowMajor(pool...), [][]int{{18432, 576, 48, 2, 2}}, 4, 4)),
		as("max-pool nan mask")(elemRequest(binaryCall(f32, backend.OpNe), pool, rowMajor(pool...), [][]int{rowMajor(pool...), rowMajor(pool...)}, 1, 4, 4)),
		as("max-pool mask and")(elemRequest(binaryCall(backend.Bool, backend.OpAnd), pool, rowMajor(pool...), [][]int{rowMajor(pool...), bcast(pool1, pool)}, 1, 1, 1)),
		as("max-pool mask or")(elemRequest(binaryCall(backend.Bool, backend.OpOr), pool, rowMajor(pool...), [][]int{rowMajor(pool...), rowMajor(pool...)}, 1, 1, 1)),
		as("max-pool eq")(elemRequest(binaryCall(f32, backend.OpEq), pool, rowMajor(pool...), [][]int{rowMajor(pool...), bcast(pool1, pool)}, 1, 4, 4)),
		as("max-pool eq scalar")(elemRequest(binaryCall(f32, backend.OpEq), pool, rowMajor(pool...), [][]int{rowMajor(pool...), bcast(nil, pool)}, 1, 4, 4)),
		as("max-pool where")(elemRequest(whereCall(4), pool, rowMajor(pool...), [][]int{rowMajor(pool...), bcast(pool1, pool), bcast(nil, pool)}, 4, 1, 4, 4)),
		as("max-pool pad copy")(elemRequest(copyCall(4), []int{64, 64, 7, 4}, []int{2048, 32, 4, 1}, [][]int{{2048, 32, 4, 1}}, 4, 4)),
		as("row max")(reduceRequest(f32, backend.ReduceMax, logits, 1)),
		as("batch sum")(reduceRequest(f32, backend.ReduceSum, mlp, 0)),
		as("full sum")(reduceRequest(f32, backend.ReduceSum, []int{64}, 0)),
		as("conv bias grad")(reduceRequest(f32, backend.ReduceSum, []int{1, 64, 8, 8}, 2)),
		as("max-pool max")(reduceRequest(f32, backend.ReduceMax, pool, 4)),
		as("eval argmax")(reduceRequest(f32, backend.ReduceArgMax, []int{1000, 10}, 1)),
	}
	// The other families, as their ops build the name and source.
	castName := "ember_cast_" + ctypeOf(backend.Bool).Name + "_s32"
	randName := "ember_random_" + ctypeOf(f32).Name
	gatherName := "ember_gather_" + bitsType(f32.Size())
	scatterName := "ember_scatter_add_" + ctypeOf(f32).Name
	im2colName := "ember_im2col_" + bitsType(f32.Size())
	col2imName := "ember_col2im_" + ctypeOf(f32).Name
	cumsumName := "ember_cumsum_" + ctypeOf(f32).Name
	reqs = append(reqs,
		req{"max-pool mask cast", castName, castSource(backend.Bool, castName, "int")},
		req{"parameter init", randName, randomSource(f32, randName)},
		req{"picked log-probabilities", gatherName, render(gatherTmpl, indexSpec{Name: gatherName, T: bitsType(f32.Size())})},
		req{"gather gradient", scatterName, render(scatterTmpl, indexSpec{Name: scatterName, T: ctypeOf(f32).S, Add: scatterAdd(f32)})},
		req{"convolution", im2colName, render(im2colTmpl, convSpec{Name: im2colName, T: bitsType(f32.Size())})},
		req{"convolution input gradient", col2imName, col2imSource(f32, col2imName)},
		req{"max-pool cumsum", cumsumName, scanSource(f32, cumsumName)},
		req{"Adam", "ember_adam_f32", adamSource},
	)
	poolName, poolSrc := srcMaxPool(f32)
	poolGradName, poolGradSrc := srcMaxPoolGrad(f32)
	reqs = append(reqs, req{"max-pool", poolName, poolSrc}, req{"max-pool gradient", poolGradName, poolGradSrc})
	have := listed(t)
	for _, r := range reqs {
		src, ok := have[r.name]
		switch {
		case !ok:
			t.Errorf("%s: the op requests %s, which the warm-up does not list", r.what, r.name)
		case src != r.source:
			t.Errorf("%s: the warm-up lists %s with another source than the op's", r.what, r.name)
		}
	}
	// A strided kernel of 64-bit indices is another kernel: the layout
	// logic distinguishes it, and the list (for 32-bit offsets) has none.
	big := []int{1 << 16, 1 << 16}
	name, _ := elemRequest(binaryCall(f32, backend.OpAdd), big, rowMajor(big...), [][]int{rowMajor(big...), bcast([]int{1 << 16}, big)}, 4, 4, 4)
	if name != "ember_binary_f32_s64" {
		t.Errorf("a broadcast add over 2^32 elements requests %s, want ember_binary_f32_s64", name)
	}
	if _, ok := have[name]; ok {
		t.Errorf("the warm-up lists %s, which the training steps do not request", name)
	}
}

// pending stores an unfinished build of (name, source, opts) in b's cache
// and returns it: callers of that key wait until done is closed.
func pending(b *Backend, name, source string, opts ...string) *compileCall {
	c := &compileCall{done: make(chan struct{})}
	b.kcache.calls.Store(compiledKey{name, source, strings.Join(opts, "\x00")}, c)
	return c
}

// TestKernelCallersShareOneBuild checks, without a GPU (the builds are
// stood in for by cache entries), that concurrent callers of one key wait
// for the build under way and all get its kernel or its error, and that
// the options are part of the key.
func TestKernelCallersShareOneBuild(t *testing.T) {
	b := &Backend{}
	c := pending(b, "ember_k", "src")
	const callers = 16
	got := make([]*Kernel, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { got[i] = b.Kernel("ember_k", "src") })
	}
	want := &Kernel{name: "ember_k"}
	c.k = want
	close(c.done)
	wg.Wait()
	for i, k := range got {
		if k != want {
			t.Fatalf("caller %d got %p, want the build's kernel %p", i, k, want)
		}
	}

	// Options make another key; the same options find the same kernel.
	plain, fmad := &Kernel{name: "ember_o"}, &Kernel{name: "ember_o"}
	c1, c2 := pending(b, "ember_o", "src"), pending(b, "ember_o", "src", "-fmad=false", "-lineinfo")
	c1.k, c2.k = plain, fmad
	close(c1.done)
	close(c2.done)
	if k := b.Kernel("ember_o", "src"); k != plain {
		t.Errorf("Kernel got the kernel of other options")
	}
	if k := b.KernelWith("ember_o", "src", "-fmad=false", "-lineinfo"); k != fmad {
		t.Errorf("KernelWith got the kernel of other options")
	}

	// A failed build reaches every waiting caller.
	bad := pending(b, "ember_bad", "src")
	errBuild := errors.New("cuda:0: kernel ember_bad: nvrtc: compiling ember_bad: undefined identifier")
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			defer func() {
				r := recover()
				errs[i], _ = r.(error)
			}()
			b.Kernel("ember_bad", "src")
		})
	}
	bad.err = errBuild
	close(bad.done)
	wg.Wait()
	for i, err := range errs {
		if err != errBuild {
			t.Fatalf("caller %d panicked with %v, want the build's error", i, err)
		}
	}

	// Precompile waits for the listed builds and joins their errors.
	err := b.Precompile(KernelSource{Name: "ember_k", Source: "src"}, KernelSource{Name: "ember_bad", Source: "src"},
		KernelSource{Name: "ember_o", Source: "src", Options: []string{"-fmad=false", "-lineinfo"}})
	if !errors.Is(err, errBuild) || strings.Count(err.Error(), "ember_bad") != 2 || strings.Contains(err.Error(), "ember_k") {
		t.Errorf("Precompile: %v, want only ember_bad's error", err)
	}
	if err := b.Precompile(KernelSource{Name: "ember_k", Source: "src"}); err != nil {
		t.Errorf("Precompile of a built kernel: %v", err)
	}
	if n, wall := b.CompileStats(); n != 0 || wall != 0 {
		t.Errorf("CompileStats = %d, %v after no build, want 0, 0", n, wall)
	}
}

// useCacheDir points the disk cache of kernels at a directory of the test
// (os.UserCacheDir reads XDG_CACHE_HOME), so that the kernels the test
// makes up are compiled by NVRTC and leave no files behind.
func useCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

// waitWarmUp waits for b's warm-up, so that its builds do not mix with the
// test's in CompileStats.
func waitWarmUp(t *testing.T, b *Backend) {
	t.Helper()
	select {
	case <-b.kcache.warmDone:
	case <-time.After(5 * time.Minute):
		t.Fatal("the warm-up did not finish within 5 minutes")
	}
}

// constKernel is a kernel writing v to p[0], named after tag.
func constKernel(tag string, v int32) (string, string) {
	name := "ember_test_const_" + tag
	return name, fmt.Sprintf(`extern "C" __global__ void %s(int* p) { p[0] = %d; }`, name, v)
}

// runConst launches k (a constKernel) and returns the value it wrote.
func runConst(t *testing.T, b *Backend, k *Kernel) int32 {
	t.Helper()
	out := b.Empty([]int{1}, backend.I32)
	b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, out)
	d, err := b.ToData(out)
	if err != nil {
		t.Fatal(err)
	}
	return int32(d.Value(0))
}

func TestGPUKernelConcurrentSameKey(t *testing.T) {
	b := gpu(t)
	waitWarmUp(t, b)
	useCacheDir(t)
	name, src := constKernel(fmt.Sprintf("same_%d", time.Now().UnixNano()), 4711)
	n0, _ := b.CompileStats()
	const callers = 16
	got := make([]*Kernel, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			got[i] = b.Kernel(name, src)
		})
	}
	close(start)
	wg.Wait()
	for i, k := range got {
		if k == nil || k != got[0] {
			t.Fatalf("caller %d got kernel %p, caller 0 %p: want one kernel", i, k, got[0])
		}
	}
	if n, _ := b.CompileStats(); n != n0+1 {
		t.Errorf("%d callers of one kernel built %d kernels, want 1", callers, n-n0)
	}
	if v := runConst(t, b, got[0]); v != 4711 {
		t.Errorf("the kernel wrote %d, want 4711", v)
	}
}

func TestGPUKernelConcurrentDistinctKeys(t *testing.T) {
	b := gpu(t)
	waitWarmUp(t, b)
	useCacheDir(t)
	const kernels = 12
	nonce := time.Now().UnixNano()
	got := make([]*Kernel, kernels)
	start := make(chan struct{})
	var wg sync.WaitGroup
	n0, wall0 := b.CompileStats()
	w0 := b.CompileWait()
	for i := range kernels {
		wg.Go(func() {
			<-start
			try(t, fmt.Sprint("kernel ", i), func() {
				got[i] = b.Kernel(constKernel(fmt.Sprintf("distinct_%d_%d", nonce, i), int32(1000+i)))
			})
		})
	}
	close(start)
	wg.Wait()
	for i, k := range got {
		if k == nil {
			t.Fatalf("kernel %d was not built", i)
		}
		if v := runConst(t, b, k); v != int32(1000+i) {
			t.Errorf("kernel %d wrote %d, want %d", i, v, 1000+i)
		}
	}
	n, wall := b.CompileStats()
	if n != n0+kernels {
		t.Errorf("%d distinct kernels built %d kernels", kernels, n-n0)
	}
	if wall <= wall0 {
		t.Errorf("the compile wall time did not grow (%v, then %v)", wall0, wall)
	}
	if b.CompileWait() <= w0 {
		t.Errorf("the callers' wait did not grow")
	}
}

// TestGPUKernelWithOptions compiles a multiply-add with and without
// -fmad=false: NVRTC contracts a*b + c into one fused multiply-add by
// default, and the option keeps the product rounded on its own. The
// operands make the two differ: a·b = 1 + 2^-11 + 2^-24 rounds to
// 1 + 2^-11 in float.
func TestGPUKernelWithOptions(t *testing.T) {
	b := gpu(t)
	waitWarmUp(t, b)
	useCacheDir(t)
	name := fmt.Sprintf("ember_test_madd_%d", time.Now().UnixNano())
	src := fmt.Sprintf(`extern "C" __global__ void %s(float* out, const float* x) { out[0] = x[0] * x[1] + x[2]; }`, name)
	x := float32(1 + 1.0/4096)
	vals := []float64{float64(x), float64(x), -1}
	in := b.FromData(fromF64([]int{3}, backend.F32, func() float64 { v := vals[0]; vals = vals[1:]; return v }))
	eval := func(k *Kernel) float32 {
		out := b.Empty([]int{1}, backend.F32)
		b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, out, in.(*Tensor))
		d, err := b.ToData(out)
		if err != nil {
			t.Fatal(err)
		}
		return float32(d.Value(0))
	}
	n0, _ := b.CompileStats()
	plain := b.Kernel(name, src)
	strict := b.KernelWith(name, src, "-fmad=false")
	if plain == strict {
		t.Fatal("the kernel with -fmad=false is the kernel without options")
	}
	if again := b.KernelWith(name, src, "-fmad=false"); again != strict {
		t.Error("a second KernelWith with the same options built another kernel")
	}
	if n, _ := b.CompileStats(); n != n0+2 {
		t.Errorf("built %d kernels, want 2", n-n0)
	}
	fused := float32(math.FMA(float64(x), float64(x), -1))
	rounded := float32(x*x) - 1
	if got := eval(strict); got != rounded {
		t.Errorf("with -fmad=false: %g, want the separately rounded %g", got, rounded)
	}
	if got := eval(plain); got != fused {
		t.Errorf("without options: %g, want the fused %g", got, fused)
	}
}

func TestGPUPrecompileErrors(t *testing.T) {
	b := gpu(t)
	waitWarmUp(t, b)
	useCacheDir(t)
	good, goodSrc := constKernel(fmt.Sprintf("pre_%d", time.Now().UnixNano()), 99)
	err := b.Precompile(
		KernelSource{Name: "ember_test_broken", Source: `extern "C" __global__ void ember_test_broken() { not_declared(); }`},
		KernelSource{Name: good, Source: goodSrc})
	if err == nil || !strings.Contains(err.Error(), "ember_test_broken") || !strings.Contains(err.Error(), "not_declared") || strings.Contains(err.Error(), good) {
		t.Fatalf("Precompile: %v, want the broken kernel's NVRTC log only", err)
	}
	n0, _ := b.CompileStats()
	k := b.Kernel(good, goodSrc)
	if n, _ := b.CompileStats(); n != n0 {
		t.Errorf("Kernel built the precompiled kernel again")
	}
	if v := runConst(t, b, k); v != 99 {
		t.Errorf("the precompiled kernel wrote %d, want 99", v)
	}
}

// stepResult is what trainStep reads back from one training step.
type stepResult struct {
	loss   float64
	logits *backend.TensorData
	pred   *backend.TensorData // argmax of the logits along axis 1
	grads  []*backend.TensorData
	params []*backend.TensorData // after the Adam update
}

// read copies t to the host.
func read(t *testing.T, be backend.Backend, x ir.Tensor) *backend.TensorData {
	t.Helper()
	d, err := be.ToData(x)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// linear is x·wᵀ + bias, as nn.Linear issues it.
func linear(e ir.Executor, x, w, bias ir.Tensor) ir.Tensor {
	return ir.Add(e, ir.Matmul(e, x, ir.Permute(e, w, []int{1, 0})), bias)
}

// relu is where(x <= 0, 0, x), as ember's Relu.
func relu(e ir.Executor, x ir.Tensor) ir.Tensor {
	return ir.Where(e, ir.CompareScalar(e, ir.OpLe, x, 0), ir.Scalar(e, x.DType(), 0), x)
}

// crossEntropy is the mean negative log-softmax of logits [N, C] at the
// I64 labels [N], as nn.CrossEntropy issues it.
func crossEntropy(ad *autodiff.Backend, logits, labels ir.Tensor) ir.Tensor {
	n := logits.Shape()[0]
	s := ir.Sub(ad, logits, ad.Detach(ir.Reduce(ad, ir.ReduceMax, logits, 1, true)))
	lp := ir.Sub(ad, s, ir.Unary(ad, ir.OpLog, ir.Reduce(ad, ir.ReduceSum, ir.Unary(ad, ir.OpExp, s), 1, true)))
	picked := ir.Gather(ad, lp, 1, ir.Reshape(ad, labels, []int{n, 1}))
	return ir.MulScalar(ad, ir.Reduce(ad, ir.ReduceSum, ir.Reshape(ad, picked, []int{n}), 0, false), -1/float64(n))
}

// maxPool2 is the 2×2 max-pool of stride 2 (nn.MaxPool2d(2, 2)).
func maxPool2(e ir.Executor, x ir.Tensor) ir.Tensor {
	o := ir.PoolOptions{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}
	return ir.Apply(e, ir.Op{Kind: ir.KindMaxPool2d, Attrs: &ir.Attrs{Pool: o}, In: [3]ir.Tensor{x}})
}

// trainStep runs one training step of package train's MLP (cnn false) or
// CNN on be, through the autodiff decorator as an autodiff device does:
// forward on images x [N, 1, 28, 28] with the given parameters, the
// cross-entropy at labels y, backward, one Adam update per parameter
// (fresh moments) and the argmax of the logits.
func trainStep(t *testing.T, be backend.Backend, cnn bool, x, y *backend.TensorData, params []*backend.TensorData) stepResult {
	t.Helper()
	ad := autodiff.New(be, false)
	ps := make([]ir.Tensor, len(params))
	for i, p := range params {
		ps[i] = ad.RequireGrad(be.FromData(p))
	}
	n := x.Shape[0]
	h := be.FromData(x)
	if cnn {
		conv := ir.ConvOptions{}.WithDefaults()
		for l := range 2 {
			w, bias := ps[2*l], ps[2*l+1]
			c := w.Shape()[0]
			h = ir.Add(ad, ir.Conv2d(ad, h, w, conv), ir.Reshape(ad, bias, []int{1, c, 1, 1}))
			h = maxPool2(ad, relu(ad, h))
		}
		h = linear(ad, ir.Reshape(ad, h, []int{n, 1024}), ps[4], ps[5])
	} else {
		h = ir.Reshape(ad, h, []int{n, 784})
		h = linear(ad, relu(ad, linear(ad, h, ps[0], ps[1])), ps[2], ps[3])
	}
	loss := crossEntropy(ad, h, be.FromData(y))
	grads := ad.Backward(loss)
	res := stepResult{
		loss:   read(t, be, ad.Primal(loss)).Value(0),
		logits: read(t, be, ad.Primal(h)),
		pred:   read(t, be, ir.Reduce(be, ir.ReduceArgMax, ad.Primal(h), 1, false)),
	}
	u := ir.OptimUpdate{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1}
	for i, p := range ps {
		g, ok := grads.Get(p)
		if !ok {
			t.Fatalf("parameter %d got no gradient", i)
		}
		pp := ad.Primal(p)
		out := ir.ApplyAll(be, ir.Op{Kind: ir.KindAdamStep, Attrs: &ir.Attrs{Optim: u},
			Xs: []ir.Tensor{pp, g, ir.Zeros(be, pp.Shape(), backend.F32), ir.Zeros(be, pp.Shape(), backend.F32)}})
		res.grads = append(res.grads, read(t, be, g))
		res.params = append(res.params, read(t, be, out[0]))
	}
	return res
}

// stepData returns random images, labels and parameters (uniform in
// ±1/sqrt(fan-in), as nn's initialization) of the MLP or the CNN for a
// batch of n.
func stepData(rng *rand.Rand, cnn bool, n int) (x, y *backend.TensorData, params []*backend.TensorData) {
	x = fromF64([]int{n, 1, 28, 28}, backend.F32, rng.Float64)
	y = fromF64([]int{n}, backend.I64, func() float64 { return float64(rng.IntN(10)) })
	shapes := [][]int{{128, 784}, {128}, {10, 128}, {10}}
	fanIn := []int{784, 784, 128, 128}
	if cnn {
		shapes = [][]int{{32, 1, 5, 5}, {32}, {64, 32, 5, 5}, {64}, {10, 1024}, {10}}
		fanIn = []int{25, 25, 800, 800, 1024, 1024}
	}
	for i, s := range shapes {
		a := 1 / math.Sqrt(float64(fanIn[i]))
		params = append(params, fromF64(s, backend.F32, func() float64 { return a * (2*rng.Float64() - 1) }))
	}
	return x, y, params
}

// checkStep compares the GPU's step with flex's: the loss within 1e-5,
// logits, gradients and updated parameters norm-wise within 1e-4 (1e-3
// for the parameters: Adam's first update is ±lr wherever a gradient is
// far from 0, so a tiny gradient whose rounding differs moves its
// parameter by up to 2·lr), and the argmax kernel against the argmax of
// the GPU's own logits.
func checkStep(t *testing.T, what string, got, want stepResult) {
	t.Helper()
	if math.Abs(got.loss-want.loss) > 1e-5*math.Abs(want.loss) || math.IsNaN(got.loss) {
		t.Errorf("%s: loss %v, flex %v", what, got.loss, want.loss)
	}
	if e := relErr(values(got.logits), values(want.logits)); !(e <= 1e-4) {
		t.Errorf("%s: logits differ from flex's by %g", what, e)
	}
	for i := range want.grads {
		if e := relErr(values(got.grads[i]), values(want.grads[i])); !(e <= 1e-4) {
			t.Errorf("%s: gradient %d differs from flex's by %g", what, i, e)
		}
		if e := relErr(values(got.params[i]), values(want.params[i])); !(e <= 1e-3) {
			t.Errorf("%s: updated parameter %d differs from flex's by %g", what, i, e)
		}
	}
	lg, c := values(got.logits), got.logits.Shape[1]
	for r := range got.logits.Shape[0] {
		row := lg[r*c : (r+1)*c]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if p := int(got.pred.Value(r)); p != best {
			t.Errorf("%s: argmax of row %d is %d, the row's largest logit is at %d", what, r, p, best)
		}
	}
}

// TestGPUWarmUpCoversTrainingSteps opens a backend of its own (a fresh
// kernel cache), waits for its warm-up and checks that the warm-up built
// the whole list, then that an MLP and a CNN training step (the ops of
// package train's steps, with values checked against flex) and a parameter
// initialization build no kernel the warm-up had not.
func TestGPUWarmUpCoversTrainingSteps(t *testing.T) {
	gpu(t)
	b, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	waitWarmUp(t, b)
	if os.Getenv("EMBER_CUDA_WARMUP") == "0" {
		if err := b.Precompile(trainingKernels()...); err != nil {
			t.Fatal(err)
		}
	}
	n0, wall := b.CompileStats()
	t.Logf("warm-up: %d kernels, %v of compile time summed over kernels", n0, wall)
	if n0 != len(trainingKernels()) {
		t.Errorf("the warm-up built %d of its %d kernels: %v", n0, len(trainingKernels()), b.builtKernels())
	}
	w0 := b.CompileWait()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, cnn := range []bool{false, true} {
		what, n := "MLP step", 64
		if cnn {
			what, n = "CNN step", 8
		}
		x, y, params := stepData(rng, cnn, n)
		got := trainStep(t, b, cnn, x, y, params)
		checkStep(t, what, got, trainStep(t, flexRef, cnn, x, y, params))
	}
	init := read(t, b, randomOn(b, []int{4096}, backend.F32, backend.Distribution{Kind: backend.DistUniform, A: -0.5, B: 0.5}))
	vals := values(init)
	if slices.Min(vals) < -0.5 || slices.Max(vals) >= 0.5 || slices.Min(vals) == slices.Max(vals) {
		t.Errorf("uniform parameters range over [%v, %v], want [-0.5, 0.5) and not constant", slices.Min(vals), slices.Max(vals))
	}
	if n, _ := b.CompileStats(); n != n0 {
		t.Errorf("the training steps built %d kernels the warm-up had not: %v", n-n0, b.builtKernels()[n0:])
	}
	if w := b.CompileWait() - w0; w != 0 {
		t.Errorf("the training steps waited %v for kernel builds after the warm-up", w)
	}
}

// BenchmarkColdCompileTrainingKernels builds the warm-up list with an
// empty disk cache, on one worker and on GOMAXPROCS workers: the wall time
// a fresh machine's warm-up takes (NVRTC's compilations dominate it). Each
// iteration uses a kernel cache of its own and a new cache directory.
func BenchmarkColdCompileTrainingKernels(bb *testing.B) {
	b := gpu(bb)
	<-b.kcache.warmDone
	ks := trainingKernels()
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		bb.Run(fmt.Sprintf("workers=%d", workers), func(bb *testing.B) {
			base := bb.TempDir()
			bb.Setenv("XDG_CACHE_HOME", base)
			for i := range bb.N {
				bb.StopTimer()
				if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(base, strconv.Itoa(i))); err != nil {
					bb.Fatal(err)
				}
				kb := &Backend{id: b.id, dev: b.dev, ctx: b.ctx, ccMajor: b.ccMajor, ccMinor: b.ccMinor}
				bb.StartTimer()
				if err := kb.precompile(ks, workers); err != nil {
					bb.Fatal(err)
				}
			}
			bb.ReportMetric(float64(len(ks)), "kernels/op")
		})
	}
}
