package cuda

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/backend/cuda/internal/nvrtc"
)

// Kernel is a compiled CUDA function, loaded in the backend's context.
type Kernel struct {
	name string
	fn   cu.Function
}

// Name is the kernel's function name.
func (k *Kernel) Name() string { return k.name }

// compiledKey identifies a compiled kernel: its function name, its source
// and the extra NVRTC options, joined by NUL ("" for none).
type compiledKey struct{ name, source, opts string }

// compileCall is one kernel build: the goroutine that stored it in the
// cache compiles and loads the kernel; callers of the same key wait for
// done and read k or err (written before done is closed).
type compileCall struct {
	done chan struct{}
	k    *Kernel
	err  error
}

// kernelCache holds a backend's compiled kernels (compiledKey ->
// *compileCall) and the statistics of their builds. Different keys build
// concurrently; one key builds once while its callers wait.
type kernelCache struct {
	calls sync.Map
	// built counts the kernels built and loaded; buildNanos sums the wall
	// time of those builds; waitNanos sums the time Kernel callers were
	// blocked on a build (their own or another goroutine's).
	built, buildNanos, waitNanos atomic.Int64
	// names lists the built kernels in the order they finished; nvrtc
	// those that NVRTC compiled (not read from the disk cache), in the
	// order their compilations started.
	namesMu sync.Mutex
	names   []string
	nvrtc   []string
	// warmDone is closed when the warm-up started by Open has finished.
	warmDone chan struct{}
}

// compileOptions are the NVRTC options for arch (sm_XY number): no fast
// math, so float results follow IEEE semantics.
func compileOptions(arch int, cubin bool) []string {
	target := fmt.Sprintf("-arch=sm_%d", arch)
	if !cubin {
		target = fmt.Sprintf("-arch=compute_%d", arch)
	}
	return []string{target, "-default-device", "-std=c++17"}
}

// Kernel returns the kernel name from source (CUDA C with extern "C"
// __global__ functions), compiled by NVRTC for this device's architecture
// (-arch=sm_XY, no fast math). Compiled modules are cached in the process
// by (source, name) and on disk under os.UserCacheDir()/ember/cuda as
// <hash>-sm_XY.cubin, where the hash covers the source, the options and
// NVRTC's version. Kernels of different (name, source) compile
// concurrently; a call for a kernel that another goroutine is compiling
// waits for that compilation and returns the same *Kernel. A compile error
// panics with the NVRTC log and the kernel's name; a driver error panics
// with an error naming the call. Kernel is KernelWith without options.
func (b *Backend) Kernel(name, source string) *Kernel { return b.KernelWith(name, source) }

// KernelWith is Kernel compiled with the extra NVRTC options opts (such as
// "-fmad=false"; a first option "-arch=..." replaces the device's target,
// as "-arch=sm_90a" for Hopper's wgmma), passed after the backend's own (-arch=sm_XY
// -default-device -std=c++17). The options are part of both cache keys:
// the in-process key (name, source, options) and the hash naming the disk
// cache file, so the same source with other options is another kernel.
// Invalid options fail as compile errors (a panic naming the kernel and
// NVRTC's log).
func (b *Backend) KernelWith(name, source string, opts ...string) *Kernel {
	k, err := b.kernelWith(name, source, opts, true)
	if err != nil {
		panic(err)
	}
	return k
}

// kernelWith returns the kernel (name, source, opts), building it on first
// use: the first caller of a key compiles and loads it, later callers of
// the same key wait for that build. A failed build is not cached (a later
// call tries again); every caller waiting for it gets its error. waited
// adds the time the caller was blocked to the wait statistic.
func (b *Backend) kernelWith(name, source string, opts []string, waited bool) (*Kernel, error) {
	key := compiledKey{name, source, strings.Join(opts, "\x00")}
	kc := &b.kcache
	v, ok := kc.calls.Load(key)
	if !ok {
		c := &compileCall{done: make(chan struct{})}
		if v, ok = kc.calls.LoadOrStore(key, c); !ok {
			start := time.Now()
			b.build(key, c, opts)
			if waited {
				kc.waitNanos.Add(int64(time.Since(start)))
			}
			return c.k, c.err
		}
	}
	c := v.(*compileCall)
	select {
	case <-c.done:
	default:
		start := time.Now()
		<-c.done
		if waited {
			kc.waitNanos.Add(int64(time.Since(start)))
		}
	}
	return c.k, c.err
}

// build compiles and loads the kernel of key into c and closes c.done; on
// failure (including a panic of the driver calls, such as the sticky fault
// enter reports) it records the error and removes c from the cache.
func (b *Backend) build(key compiledKey, c *compileCall, opts []string) {
	kc := &b.kcache
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			err, ok := r.(error)
			if !ok {
				err = fmt.Errorf("%v: kernel %s: %v", b.id, key.name, r)
			}
			c.k, c.err = nil, err
		}
		if c.err != nil {
			kc.calls.CompareAndDelete(key, c)
		} else {
			kc.built.Add(1)
			kc.buildNanos.Add(int64(time.Since(start)))
			kc.namesMu.Lock()
			kc.names = append(kc.names, key.name)
			kc.namesMu.Unlock()
		}
		close(c.done)
	}()
	image, err := b.compile(key.name, key.source, opts)
	if err != nil {
		c.err = fmt.Errorf("%v: kernel %s: %w", b.id, key.name, err)
		return
	}
	defer b.enter()()
	mod, err := cu.ModuleLoadData(image)
	if err != nil {
		c.err = b.failf(err, "loading kernel %s", key.name)
		return
	}
	fn, err := cu.ModuleGetFunction(mod, key.name)
	if err != nil {
		c.err = b.failf(err, "kernel %s", key.name)
		return
	}
	c.k = &Kernel{name: key.name, fn: fn}
}

// CompileStats reports the kernels this backend built since Open (compiled
// by NVRTC or read from the disk cache, then loaded into the context:
// each (name, source, options) counts once, whether an op, Kernel or the
// warm-up asked for it) and the total wall time of those builds, summed
// over kernels (builds run concurrently, so the sum may exceed the elapsed
// time). Failed builds are not counted.
func (b *Backend) CompileStats() (kernels int, wall time.Duration) {
	return int(b.kcache.built.Load()), time.Duration(b.kcache.buildNanos.Load())
}

// CompileWait reports the total time callers of Kernel and KernelWith
// (every op that launches a compiled kernel goes through them) spent
// blocked on a build, their own or one another goroutine or the warm-up
// had started; a kernel the warm-up finished before it was needed adds
// nothing. Precompile's own waiting is not counted.
func (b *Backend) CompileWait() time.Duration { return time.Duration(b.kcache.waitNanos.Load()) }

// builtKernels returns the names of the kernels built so far, in the order
// their builds finished.
func (b *Backend) builtKernels() []string {
	kc := &b.kcache
	kc.namesMu.Lock()
	defer kc.namesMu.Unlock()
	return slices.Clone(kc.names)
}

// nvrtcCompiled returns the names of the kernels NVRTC compiled for this
// backend so far (disk cache hits excluded), in the order the
// compilations started.
func (b *Backend) nvrtcCompiled() []string {
	kc := &b.kcache
	kc.namesMu.Lock()
	defer kc.namesMu.Unlock()
	return slices.Clone(kc.nvrtc)
}

// nvrtcInfo is NVRTC's version and the architectures it emits cubins for
// (all of them when NVRTC cannot list them), queried once.
var nvrtcInfo = sync.OnceValues(func() (string, func(arch int) bool) {
	ma, mi, _ := nvrtc.Version()
	archs, err := nvrtc.SupportedArchs()
	cubin := func(arch int) bool { return err != nil || slices.Contains(archs, arch) }
	return fmt.Sprintf("%d.%d", ma, mi), cubin
})

// compileTarget returns the NVRTC options of source compiled with the
// backend's options and then extra, whether they make a cubin (else PTX,
// when NVRTC cannot emit code for the device's architecture), and the
// disk cache file of the result ("" without a user cache directory).
func (b *Backend) compileTarget(source string, extra []string) (opts []string, cubin bool, file string) {
	arch := b.ccMajor*10 + b.ccMinor
	ver, emitsCubin := nvrtcInfo()
	cubin = emitsCubin(arch)
	opts = append(compileOptions(arch, cubin), extra...)
	if len(extra) > 0 && strings.HasPrefix(extra[0], "-arch=") {
		// The kernel names its own target (sm_90a for Hopper's
		// architecture-specific instructions): it replaces the device's.
		opts = append(compileOptions(arch, cubin)[1:], extra...)
	}
	h := sha256.New()
	fmt.Fprintf(h, "nvrtc %s\x00%v\x00%s\x00", ver, opts, source)
	ext := "cubin"
	if !cubin {
		ext = "ptx"
	}
	if dir, err := os.UserCacheDir(); err == nil {
		file = filepath.Join(dir, "ember", "cuda", fmt.Sprintf("%s-sm_%d.%s", hex.EncodeToString(h.Sum(nil))[:32], arch, ext))
	}
	return opts, cubin, file
}

// onDisk reports whether the disk cache holds source compiled with the
// backend's options and then extra (a build of it costs a file read and a
// module load, no NVRTC run).
func (b *Backend) onDisk(source string, extra []string) bool {
	_, _, file := b.compileTarget(source, extra)
	if file == "" {
		return false
	}
	fi, err := os.Stat(file)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// compile returns the cubin (or PTX, when NVRTC cannot emit code for the
// device's architecture) of source compiled with the backend's options and
// then extra, from the disk cache when present. NVRTC compiles independent
// programs concurrently, so compile runs without a lock.
func (b *Backend) compile(name, source string, extra []string) ([]byte, error) {
	opts, cubin, file := b.compileTarget(source, extra)
	if file != "" {
		if img, err := os.ReadFile(file); err == nil && len(img) > 0 {
			return img, nil
		}
	}
	b.kcache.namesMu.Lock()
	b.kcache.nvrtc = append(b.kcache.nvrtc, name)
	b.kcache.namesMu.Unlock()
	img, err := nvrtc.Compile(source, name, opts, cubin)
	if err != nil {
		return nil, err
	}
	if !cubin {
		img = append(img, 0) // PTX is loaded as a NUL-terminated string
	}
	if file != "" {
		writeCache(file, img)
	}
	return img, nil
}

// writeCache stores img at file atomically; failures are ignored (the
// cache is an optimization).
func writeCache(file string, img []byte) {
	if os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(img)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}

// Launch queues k on the backend's stream with the grid and block sizes,
// sharedBytes of dynamic shared memory and the arguments, packed in order
// at their natural alignment as the kernel's parameter list expects:
//
//	uint64, int64, float64        8 bytes (device pointers are uint64)
//	*Tensor                       8 bytes: t.Ptr(); t stays reachable until queued
//	int32, uint32, float32        4 bytes
//	int                           4 bytes (int32; panics when out of range)
//	[]byte                        a struct passed by value, aligned to 8 bytes
//	                              (declare it __align__(8) or with 8-byte members)
//
// Any other argument type panics. A failed launch panics with an error
// naming the kernel and the CUDA error; after a sticky device fault the
// error wraps backend.ErrExecution.
func (b *Backend) Launch(k *Kernel, grid, block [3]uint32, sharedBytes uint32, args ...any) {
	var a argPack
	for i, v := range args {
		switch v := v.(type) {
		case uint64:
			a.u64(v)
		case int64:
			a.i64(v)
		case float64:
			a.u64(math.Float64bits(v))
		case *Tensor:
			a.u64(v.Ptr())
		case int32:
			a.i32(v)
		case uint32:
			a.u32(v)
		case float32:
			a.u32(math.Float32bits(v))
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				panic(fmt.Sprintf("cuda: Launch %s: int argument %d = %d does not fit int32", k.name, i, v))
			}
			a.i32(int32(v))
		case []byte:
			a.blob(v)
		default:
			panic(fmt.Sprintf("cuda: Launch %s: unsupported argument %d of type %T", k.name, i, v))
		}
	}
	b.launchPacked(k, grid, block, sharedBytes, a.bytes())
	runtime.KeepAlive(args)
}

// launchPacked queues k with a parameter buffer already packed as Launch
// describes (the caller keeps the tensors it points to reachable).
func (b *Backend) launchPacked(k *Kernel, grid, block [3]uint32, sharedBytes uint32, params []byte) {
	exit := b.enter()
	err := cu.LaunchKernel(k.fn, grid, block, sharedBytes, b.stream, params)
	exit()
	if err != nil {
		panic(b.failf(err, "launching kernel %s (grid %v, block %v, shared %d bytes)", k.name, grid, block, sharedBytes))
	}
}

// argPack packs kernel arguments at their natural alignment into a fixed
// buffer on the caller's stack (no allocation). The backend's kernels take
// at most a few hundred bytes; more than len(buf) panics.
type argPack struct {
	buf [1024]byte
	n   int
}

// align pads to a multiple of to and checks that size more bytes fit.
func (a *argPack) align(to, size int) {
	for a.n%to != 0 {
		a.buf[a.n] = 0
		a.n++
	}
	if a.n+size > len(a.buf) {
		panic(fmt.Sprintf("cuda: kernel arguments exceed %d bytes", len(a.buf)))
	}
}

func (a *argPack) u64(v uint64) {
	a.align(8, 8)
	binary.LittleEndian.PutUint64(a.buf[a.n:], v)
	a.n += 8
}

func (a *argPack) i64(v int64) { a.u64(uint64(v)) }

func (a *argPack) u32(v uint32) {
	a.align(4, 4)
	binary.LittleEndian.PutUint32(a.buf[a.n:], v)
	a.n += 4
}

func (a *argPack) i32(v int32) { a.u32(uint32(v)) }

// blob appends a struct passed by value, aligned to 8 bytes.
func (a *argPack) blob(v []byte) {
	a.align(8, len(v))
	a.n += copy(a.buf[a.n:], v)
}

func (a *argPack) bytes() []byte { return a.buf[:a.n] }

// Grid1D returns the grid and block for n threads in blocks of threads
// (a 1-d launch covering n, at least one block).
func Grid1D(n, threads int) (grid, block [3]uint32) {
	blocks := max((n+threads-1)/threads, 1)
	return [3]uint32{uint32(blocks), 1, 1}, [3]uint32{uint32(threads), 1, 1}
}
