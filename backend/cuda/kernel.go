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

type compiledKey struct{ name, source string }

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
// NVRTC's version. A compile error panics with the NVRTC log and the
// kernel's name; a driver error panics with an error naming the call.
func (b *Backend) Kernel(name, source string) *Kernel {
	key := compiledKey{name, source}
	if k, ok := b.compiled.Load(key); ok {
		return k.(*Kernel)
	}
	b.compileMu.Lock()
	defer b.compileMu.Unlock()
	if k, ok := b.compiled.Load(key); ok {
		return k.(*Kernel)
	}
	image, err := b.compile(name, source)
	if err != nil {
		panic(fmt.Errorf("%v: kernel %s: %w", b.id, name, err))
	}
	defer b.enter()()
	mod, err := cu.ModuleLoadData(image)
	if err != nil {
		panic(b.failf(err, "loading kernel %s", name))
	}
	fn, err := cu.ModuleGetFunction(mod, name)
	if err != nil {
		panic(b.failf(err, "kernel %s", name))
	}
	k := &Kernel{name: name, fn: fn}
	b.compiled.Store(key, k)
	return k
}

// compile returns the cubin (or PTX, when NVRTC cannot emit code for the
// device's architecture) of source, from the disk cache when present.
func (b *Backend) compile(name, source string) ([]byte, error) {
	arch := b.ccMajor*10 + b.ccMinor
	cubin := true
	if archs, err := nvrtc.SupportedArchs(); err == nil && !slices.Contains(archs, arch) {
		cubin = false
	}
	opts := compileOptions(arch, cubin)
	ma, mi, _ := nvrtc.Version()
	h := sha256.New()
	fmt.Fprintf(h, "nvrtc %d.%d\x00%v\x00%s\x00", ma, mi, opts, source)
	ext := "cubin"
	if !cubin {
		ext = "ptx"
	}
	file := ""
	if dir, err := os.UserCacheDir(); err == nil {
		file = filepath.Join(dir, "ember", "cuda", fmt.Sprintf("%s-sm_%d.%s", hex.EncodeToString(h.Sum(nil))[:32], arch, ext))
		if img, err := os.ReadFile(file); err == nil && len(img) > 0 {
			return img, nil
		}
	}
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
