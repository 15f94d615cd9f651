package cuda

import (
	"fmt"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
)

// probeSource holds the throughput probes of the tile (matrix-unit) and
// working-set keys of PerformanceStats.
//
// Each ember_stats_mma_* kernel has every warp issue 8 independent
// chains of one mma.sync instruction (PTX ISA, "Warp-level matrix
// multiply-accumulate instructions") from registers, iters times: no
// loads or stores in the loop, so the rate is the matrix units' issue
// rate for that instruction shape. The operands are small normal
// numbers (2^-7) and the accumulators F32.
//
// ember_stats_ws reads a working set of nvec 16-byte vectors: sweeps
// full passes in order (sequential), or reads loads at positions spread
// by a multiplicative hash (random), XOR-folding the data so the loads
// stay.
const probeSource = `
#define EMBER_MMA_LOOP(NAME, INIT_A, INIT_B, ASM, NA, NB, ...) \
extern "C" __global__ void NAME(float* out, int iters) { \
	unsigned a[4], b[2]; \
	for (int i = 0; i < 4; i++) a[i] = INIT_A; \
	for (int i = 0; i < 2; i++) b[i] = INIT_B; \
	float c[8][4]; \
	for (int j = 0; j < 8; j++) for (int i = 0; i < 4; i++) c[j][i] = 0.f; \
	_Pragma("unroll 1") \
	for (int it = 0; it < iters; it++) { \
		_Pragma("unroll") \
		for (int j = 0; j < 8; j++) asm volatile(ASM : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3]) : __VA_ARGS__); \
	} \
	float s = 0.f; \
	for (int j = 0; j < 8; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3]; \
	if (s == -1.2345f) out[0] = s; \
}

#define EMBER_A4 "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])
#define EMBER_A2 "r"(a[0]), "r"(a[1]), "r"(b[0])

EMBER_MMA_LOOP(ember_stats_mma_f16_k16, 0x20002000u, 0x20002000u,
	"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};", 4, 2, EMBER_A4)
EMBER_MMA_LOOP(ember_stats_mma_f16_k8, 0x20002000u, 0x20002000u,
	"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};", 2, 1, EMBER_A2)
EMBER_MMA_LOOP(ember_stats_mma_bf16_k16, 0x3c003c00u, 0x3c003c00u,
	"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};", 4, 2, EMBER_A4)
EMBER_MMA_LOOP(ember_stats_mma_bf16_k8, 0x3c003c00u, 0x3c003c00u,
	"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};", 2, 1, EMBER_A2)
EMBER_MMA_LOOP(ember_stats_mma_tf32_k8, 0x3c000000u, 0x3c000000u,
	"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};", 4, 2, EMBER_A4)
EMBER_MMA_LOOP(ember_stats_mma_tf32_k4, 0x3c000000u, 0x3c000000u,
	"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};", 2, 1, EMBER_A2)

extern "C" __global__ void ember_stats_ws(unsigned int* out, const uint4* src, unsigned long long nvec,
		unsigned long long sweeps, unsigned long long loads, int random) {
	unsigned int x = 0;
	unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	if (random) {
		for (unsigned long long i = t; i < loads; i += stride) {
			unsigned long long z = (i + 1) * 0x9e3779b97f4a7c15ull;
			z ^= z >> 31;
			unsigned long long j = __umul64hi(z, nvec);
			uint4 v = src[j];
			x ^= v.x ^ v.y ^ v.z ^ v.w;
		}
	} else {
		for (unsigned long long s = 0; s < sweeps; s++) {
			for (unsigned long long j = t; j < nvec; j += stride) {
				uint4 v = src[j];
				x ^= v.x ^ v.y ^ v.z ^ v.w;
			}
			x = x * 2654435761u + (unsigned int)s;
		}
	}
	if (x == 0x9e3779b9u) out[0] = x;
}
`

// mmaInstr is one mma.sync shape the tile probe issues: its kernel and
// its K (every shape is m16n8kK).
type mmaInstr struct {
	kernel string
	k      int
}

// mmaInstrFor returns the instruction a tile key is built from: F16 and
// BF16 tiles of K 16 (m16n8k16) or 8 (m16n8k8), F32 as TF32 of K 8
// (m16n8k8) or 4 (m16n8k4); M must be 16 and N 8 or 16 (one or two
// instructions per tile).
func mmaInstrFor(key backend.ThroughputKey) (mmaInstr, error) {
	if key.M != 16 || (key.N != 8 && key.N != 16) {
		return mmaInstr{}, fmt.Errorf("compute-cmma: tile %dx%dx%d is not an mma.sync tile (16x8xK or 16x16xK)", key.M, key.N, key.K)
	}
	var name string
	switch key.DType {
	case backend.F16:
		name = "f16"
	case backend.BF16:
		name = "bf16"
	case backend.F32, backend.Flex32:
		name = "tf32"
	default:
		return mmaInstr{}, fmt.Errorf("compute-cmma: dtype %v has no tile probe (f16, bf16, f32 as tf32)", key.DType)
	}
	ks := []int{16, 8}
	if name == "tf32" {
		ks = []int{8, 4}
	}
	for _, k := range ks {
		if key.K == k {
			return mmaInstr{kernel: fmt.Sprintf("ember_stats_mma_%s_k%d", name, k), k: k}, nil
		}
	}
	return mmaInstr{}, fmt.Errorf("compute-cmma: %v tiles have K %d or %d, not %d", key.DType, ks[0], ks[1], key.K)
}

// isTileKey reports whether a CMMA key names an instruction tile (every
// side at most 64) rather than a whole GEMM.
func isTileKey(key backend.ThroughputKey) bool {
	return key.M > 0 && key.N > 0 && key.K > 0 && key.M <= 64 && key.N <= 64 && key.K <= 64
}

// statTile measures the matrix units' rate on key's tile: FLOP/s of
// 2·16·8·K per mma.sync, every SM busy (4 blocks of 8 warps per SM, 8
// independent accumulators per warp); on compute capability 9.0, F16 and
// BF16 tiles of K 16 through wgmma instead (statWGMMA: 4 warpgroups per
// SM, 4 independent m64n32k16 accumulators each), falling back to
// mma.sync where NVRTC cannot build it.
func (b *Backend) statTile(key backend.ThroughputKey) (float64, error) {
	in, err := mmaInstrFor(key)
	if err != nil {
		return 0, err
	}
	if b.ccMajor < 8 {
		return 0, fmt.Errorf("compute-cmma: %v tiles need compute capability 8.0", key.DType)
	}
	if in.k == 16 && in.kernel != "" && b.ccMajor == 9 && b.ccMinor == 0 && (key.DType == backend.F16 || key.DType == backend.BF16) {
		// Hopper issues its full matrix-unit rate only through wgmma: a
		// warpgroup's m64n32k16 is, for each of its four warps, two
		// 16×16×16 (four 16×8×16) tiles. mma.sync, the per-warp
		// instruction, peaks at about 0.6 of it (bench/NOTES.md).
		if v, err := b.statWGMMA(key.DType.String(), 32, 4, 0, 4); err == nil {
			return v, nil
		}
	}
	return b.statMMA(in, 4)
}

// statMMA times the mma.sync probe of in with blocksPerSM blocks of 8
// warps on every SM.
func (b *Backend) statMMA(in mmaInstr, blocksPerSM int) (float64, error) {
	k := b.Kernel(in.kernel, probeSource)
	const threads, chains, iters = 256, 8, 1 << 15
	blocks := b.smCount * blocksPerSM
	scratch := b.Empty([]int{1}, backend.F32)
	defer b.Release(scratch)
	d := b.timeMedian(2, 7, func() {
		b.Launch(k, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{threads, 1, 1}, 0, scratch, int32(iters))
	})
	instrs := float64(blocks) * threads / 32 * chains * iters
	return instrs * 2 * 16 * 8 * float64(in.k) / d.Seconds(), nil
}

// workingSetLoads is how many 16-byte loads one working-set run makes
// (4 GiB of reads).
const workingSetLoads = 1 << 28

// statWorkingSet measures read bandwidth over a working set of
// key.Bytes (rounded down to 16-byte vectors, at least 16 bytes):
// sequential repeats whole passes in order; random spreads the loads over
// the set by a hash, 16 bytes counted per load.
func (b *Backend) statWorkingSet(key backend.ThroughputKey) (float64, error) {
	if key.Access != backend.AccessSequential && key.Access != backend.AccessRandom {
		return 0, fmt.Errorf("memory-working-set: unknown access pattern %v", key.Access)
	}
	if key.Bytes < 16 {
		return 0, fmt.Errorf("memory-working-set: a working set of %d bytes is below one 16-byte vector", key.Bytes)
	}
	nvec := key.Bytes / 16
	exit := b.enter()
	free, _, err := cu.MemGetInfo()
	exit()
	if err == nil && key.Bytes > free/2 {
		return 0, fmt.Errorf("memory-working-set: %d bytes is more than half the free device memory (%d)", key.Bytes, free)
	}
	src := b.Empty([]int{int(nvec * 16)}, backend.U8)
	defer b.Release(src)
	b.randomFill(&Tensor{buf: src.buf, shape: []int{int(nvec * 4)}, strides: []int{1}, dtype: backend.F32})
	out := b.Empty([]int{1}, backend.U32)
	defer b.Release(out)
	k := b.Kernel("ember_stats_ws", probeSource)
	grid := [3]uint32{uint32(b.smCount * 8), 1, 1}
	block := [3]uint32{512, 1, 1}
	sweeps := max(uint64(workingSetLoads)/nvec, 1)
	loads := sweeps * nvec
	random := int32(0)
	if key.Access == backend.AccessRandom {
		random = 1
	}
	d := b.timeMedian(2, 7, func() { b.Launch(k, grid, block, 0, out, src, nvec, sweeps, loads, random) })
	return float64(loads) * 16 / d.Seconds(), nil
}

// wgmmaSource returns the CUDA C of a kernel ember_stats_wgmma_<dt>_n<n>_c<chains>
// (sm_90a): each warpgroup (128 threads) issues chains independent
// wgmma.mma_async m64n<n>k16 instructions per iteration (A from
// registers, B from a shared-memory tile, F32 accumulators; PTX ISA,
// "Asynchronous warpgroup level matrix multiply-accumulate"), then commits
// and waits until at most depth groups are in flight. Each of its four warps owns 16 rows of the 64, so a
// warp works on 16×n×16 tiles.
func wgmmaSource(dt string, n, chains, depth int) (name, src string) {
	name = fmt.Sprintf("ember_stats_wgmma_%s_n%d_c%d_w%d", dt, n, chains, depth)
	nd := n / 2 // f32 accumulators per thread
	var regs, outs string
	for i := 0; i < nd; i++ {
		if i > 0 {
			regs += ","
			outs += ", "
		}
		regs += fmt.Sprintf("%%%d", i)
		outs += fmt.Sprintf(`"+f"(d[j][%d])`, i)
	}
	asm := fmt.Sprintf(`"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, {%%%d,%%%d,%%%d,%%%d}, %%%d, p, 1, 1, 0; }"`,
		nd+5, n, dt, dt, regs, nd, nd+1, nd+2, nd+3, nd+4)
	src = fmt.Sprintf(`
extern "C" __global__ void __launch_bounds__(128) %s(float* out, int iters) {
	__shared__ __align__(1024) unsigned short bs[16 * %d];
	for (int i = threadIdx.x; i < 16 * %d; i += 128) bs[i] = 0x2000;
	__syncthreads();
	unsigned addr = (unsigned)__cvta_generic_to_shared(bs);
	unsigned long long desc = (unsigned long long)((addr & 0x3FFFF) >> 4)
		| ((unsigned long long)(128 >> 4) << 16) | ((unsigned long long)(256 >> 4) << 32);
	unsigned a0 = 0x20002000u, a1 = a0, a2 = a0, a3 = a0;
	int one = 1;
	float d[%d][%d];
	for (int j = 0; j < %d; j++) for (int i = 0; i < %d; i++) d[j][i] = 0.f;
	_Pragma("unroll 1")
	for (int it = 0; it < iters; it++) {
		asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
		_Pragma("unroll")
		for (int j = 0; j < %d; j++)
			asm volatile(%s : %s : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(one));
		asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned %d;" ::: "memory");
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
	float s = 0.f;
	for (int j = 0; j < %d; j++) for (int i = 0; i < %d; i++) s += d[j][i];
	if (s == -1.2345f) out[0] = s;
}
`, name, n, n, chains, nd, chains, nd, chains, asm, outs, depth, chains, nd)
	return name, src
}

// statWGMMA measures wgmma m64n<n>k16 (sm_90 only): FLOP/s of 2·64·n·16
// per instruction, blocksPerSM warpgroups on every SM.
func (b *Backend) statWGMMA(dt string, n, chains, depth, blocksPerSM int) (float64, error) {
	if b.ccMajor != 9 || b.ccMinor != 0 {
		return 0, fmt.Errorf("compute-cmma: wgmma needs compute capability 9.0, the device has %d.%d", b.ccMajor, b.ccMinor)
	}
	name, src := wgmmaSource(dt, n, chains, depth)
	k, err := b.kernelWith(name, src, []string{"-arch=sm_90a"}, true)
	if err != nil {
		return 0, err
	}
	const iters = 1 << 13
	blocks := b.smCount * blocksPerSM
	scratch := b.Empty([]int{1}, backend.F32)
	defer b.Release(scratch)
	d := b.timeMedian(2, 7, func() {
		b.Launch(k, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{128, 1, 1}, 0, scratch, int32(iters))
	})
	instrs := float64(blocks) * float64(chains) * iters
	return instrs * 2 * 64 * float64(n) * 16 / d.Seconds(), nil
}
