package cuda

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

func init() {
	kernels.Set(ir.KindSoftmax, (*Backend).softmax, softmaxDType)
	kernels.Set(ir.KindLogSoftmax, (*Backend).softmax, softmaxDType)
}

// softmaxDType reports the dtypes of the softmax kernels: the floats.
func softmaxDType(dt backend.DType) bool {
	return dt == backend.F32 || dt == backend.F64 || dt == backend.F16 || dt == backend.BF16
}

// softmaxSpec is one softmax kernel's template data.
type softmaxSpec struct {
	Name, S, C string
	// Load converts S v to C; Round rounds a C value to the dtype and
	// back (identity for F32 and F64); Store converts C v to S.
	Load, Round, Store string
	// StoreD converts the double sum to S, rounding once.
	StoreD string
	Log    bool
}

// softmaxTmpl renders the softmax (or log-softmax) of each row of a
// contiguous [rows, r] x in three passes over the row, which the second
// and third read from cache: the maximum m (NaN if any element is NaN),
// the sum of e = exp(x − m) accumulated in double and rounded once, and
// the output e / sum (log-softmax: (x − m) − log(sum)). Every
// intermediate is rounded to the dtype where the decomposition
// (ir/fastpath_norm.go) rounds it, with the same functions as the
// elementwise kernels (exp, log, IEEE division), so the results are those
// of the decomposition but for the order of the sum's additions; its edge
// cases are the decomposition's: a row holding NaN or +Inf, or only -Inf,
// gives NaN throughout (log-softmax: NaN, and -Inf where x is -Inf beside
// finite values). A group of 32·wpr threads takes a row, as the rows
// reduce kernel.
var softmaxTmpl = mustTemplate("softmax", `
typedef {{.S}} S;
typedef {{.C}} C;
__device__ __forceinline__ C ld_(S v) { return {{.Load}}; }
__device__ __forceinline__ C rnd(C v) { return {{.Round}}; }
__device__ __forceinline__ S st_(C v) { return {{.Store}}; }
__device__ __forceinline__ C maxn(C a, C b) { return (b > a || b != b || a != a) ? (a != a ? a : b) : a; }
extern "C" __global__ void {{.Name}}(i64 rows, i64 r, u64 px, u64 py, int wpr) {
	__shared__ C shm[8];
	__shared__ double shs[8];
	const S* x = (const S*)px;
	S* y = (S*)py;
	const int g = 32 * wpr;
	const int lane = threadIdx.x % g;
	const int rpb = blockDim.x / g;
	const int warp = threadIdx.x / 32;
	for (i64 base = (i64)blockIdx.x * rpb; base < rows; base += (i64)gridDim.x * rpb) {
		const i64 row = base + threadIdx.x / g;
		const bool live = row < rows;
		const S* p = x + row * r;
		S* q = y + row * r;
		C m = (C)(-EMBER_DINF);
		if (live) {
			i64 j = lane;
			for (; j + 3 * g < r; j += 4 * g) {
				const C v0 = ld_(p[j]), v1 = ld_(p[j + g]), v2 = ld_(p[j + 2 * g]), v3 = ld_(p[j + 3 * g]);
				m = maxn(maxn(m, v0), maxn(v1, maxn(v2, v3)));
			}
			for (; j < r; j += g) m = maxn(m, ld_(p[j]));
		}
		for (int o = 16; o > 0; o >>= 1) m = maxn(m, __shfl_xor_sync(0xffffffffu, m, o));
		if (wpr > 1) {
			__syncthreads();
			if (threadIdx.x % 32 == 0) shm[warp] = m;
			__syncthreads();
			const int first = (threadIdx.x / g) * wpr;
			for (int w = 0; w < wpr; w++) m = maxn(m, shm[first + w]);
		}
		double sum = 0.0;
		if (live) {
			i64 j = lane;
			for (; j + 3 * g < r; j += 4 * g) {
				const C s0 = rnd(ld_(p[j]) - m), s1 = rnd(ld_(p[j + g]) - m), s2 = rnd(ld_(p[j + 2 * g]) - m), s3 = rnd(ld_(p[j + 3 * g]) - m);
				sum += (double)rnd(exp(s0)) + (double)rnd(exp(s1)) + (double)rnd(exp(s2)) + (double)rnd(exp(s3));
			}
			for (; j < r; j += g) sum += (double)rnd(exp(rnd(ld_(p[j]) - m)));
		}
		for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
		if (wpr > 1) {
			__syncthreads();
			if (threadIdx.x % 32 == 0) shs[warp] = sum;
			__syncthreads();
			const int first = (threadIdx.x / g) * wpr;
			sum = 0.0;
			for (int w = 0; w < wpr; w++) sum += shs[first + w];
		}
		const C tot = ld_((S){{.StoreD}});
{{- if .Log}}
		const C lt = rnd(log(tot));
		if (live) for (i64 j = lane; j < r; j += g) q[j] = st_(rnd(ld_(p[j]) - m) - lt);
{{- else}}
		if (live) for (i64 j = lane; j < r; j += g) q[j] = st_(rnd(exp(rnd(ld_(p[j]) - m))) / tot);
{{- end}}
	}
}
`)

// softmaxName is the name of the softmax (log: log-softmax) kernel of dt.
func softmaxName(dt backend.DType, log bool) string {
	if log {
		return "ember_log_softmax_" + ctypeOf(dt).Name
	}
	return "ember_softmax_" + ctypeOf(dt).Name
}

// softmaxSource renders the softmax (log: log-softmax) kernel of dt.
func softmaxSource(dt backend.DType, name string, log bool) string {
	c := ctypeOf(dt)
	sp := softmaxSpec{Name: name, S: c.S, C: c.C, Load: ld(c, "v"), Store: st(c, "v"), StoreD: std(c, "sum"), Round: "v", Log: log}
	if dt == backend.F16 || dt == backend.BF16 {
		sp.Round = ld(c, st(c, "v"))
	}
	return render(softmaxTmpl, sp)
}

// softmax is the kernel of KindSoftmax and KindLogSoftmax along the last
// axis of a float tensor (other axes, and empty axes, run the kinds'
// decompositions): one kernel launch, a warp per row for rows up to 512
// elements (8 rows a block), a 256-thread block per row above.
func (b *Backend) softmax(op ir.Op) ir.Outputs {
	x := tensorOf(op.In[0])
	shape := x.shape
	if len(shape) == 0 || op.Axis != len(shape)-1 || shape[op.Axis] == 0 {
		return ir.SpecOf(op.Kind).Decompose(op, b)
	}
	t := b.Contiguous(x)
	r := shape[op.Axis]
	rows := backend.NumElements(shape[:op.Axis])
	out := b.emptyOf(op.Shape, op.DType)
	if rows == 0 {
		return ir.One(out)
	}
	log := op.Kind == ir.KindLogSoftmax
	name := softmaxName(t.dtype, log)
	k := b.kernel(name, func() string { return softmaxSource(t.dtype, name, log) })
	wpr, rpb := 1, blockSize/32
	if r > 512 {
		wpr, rpb = blockSize/32, 1
	}
	b.Launch(k, grid1(rows, rpb), block1, 0, int64(rows), int64(r), t.Ptr(), out.Ptr(), int32(wpr))
	return ir.One(out)
}
