package ember

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Devices that check integer divisors and indices themselves
// (backend.DivisorChecker, backend.IndexChecker) must be given integer
// divisions and OneHot without a host read: these tests count the reads
// and syncs that reach such a device through a decorator, and check that
// a zero divisor or a bad label is reported by the next Sync instead.

// readCounter is a test decorator that counts the host reads (ToData) and
// Syncs made through it. It unwraps to the backend it wraps, so the
// capabilities of that backend are found through it.
type readCounter struct {
	inner        backend.Backend
	id           backend.DeviceID
	reads, syncs atomic.Int64
}

func (c *readCounter) Unwrap() backend.Backend                       { return c.inner }
func (c *readCounter) ID() backend.DeviceID                          { return c.id }
func (c *readCounter) Supports(k ir.Kind, dt ir.DType) bool          { return c.inner.Supports(k, dt) }
func (c *readCounter) Exec(op ir.Op) ir.Outputs                      { return c.inner.Exec(op) }
func (c *readCounter) Flush()                                        { c.inner.Flush() }
func (c *readCounter) Seed(seed uint64)                              { c.inner.Seed(seed) }
func (c *readCounter) SupportsDType(dt ir.DType) bool                { return c.inner.SupportsDType(dt) }
func (c *readCounter) FromData(d *backend.TensorData) backend.Tensor { return c.inner.FromData(d) }
func (c *readCounter) Sync() error                                   { c.syncs.Add(1); return c.inner.Sync() }
func (c *readCounter) ToData(t backend.Tensor) (*backend.TensorData, error) {
	c.reads.Add(1)
	return c.inner.ToData(t)
}

// counts returns the reads and syncs so far.
func (c *readCounter) counts() (int64, int64) { return c.reads.Load(), c.syncs.Load() }

// readCounterDriver opens a readCounter over the backend registered for
// the device index (readCounterTargets).
type readCounterDriver struct{}

var (
	readCounterOnce    sync.Once
	readCounterNext    atomic.Int64
	readCounterTargets sync.Map // device index -> backend.Backend
)

func (readCounterDriver) Open(id backend.DeviceID) (backend.Backend, error) {
	inner, ok := readCounterTargets.Load(id.Index)
	if !ok {
		return nil, fmt.Errorf("readcount: no backend for index %d", id.Index)
	}
	return &readCounter{inner: inner.(backend.Backend), id: id}, nil
}
func (readCounterDriver) Devices() []backend.DeviceID { return nil }
func (readCounterDriver) Priority() int               { return 0 }

// countedDevice returns a new device whose backend is a readCounter over
// dev's backend, and the counter.
func countedDevice(t testing.TB, dev Device) (Device, *readCounter) {
	t.Helper()
	readCounterOnce.Do(func() { backend.Register("readcount", readCounterDriver{}) })
	i := int(readCounterNext.Add(1))
	readCounterTargets.Store(i, dev.Backend())
	d := DeviceFromID(backend.DeviceID{Type: "readcount", Index: i})
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	rc, ok := backend.As[*readCounter](d.Backend())
	if !ok {
		t.Fatal("the counted device has no read counter")
	}
	return d, rc
}

// divisionCases are the integer divisions with their float64 references.
var divisionCases = []binaryCase{
	{"div", (*Tensor).Div, func(a, b float64) float64 { return float64(int64(a) / int64(b)) }},
	{"floor_div", (*Tensor).FloorDiv, floorDivRef},
	{"rem", (*Tensor).Rem, func(a, b float64) float64 { return float64(int64(a) % int64(b)) }},
	{"mod", (*Tensor).Mod, modRef},
}

// expectNoTraffic fails when the counter saw reads or syncs since (r0, s0).
func expectNoTraffic(t *testing.T, what string, rc *readCounter, r0, s0 int64) {
	t.Helper()
	if r, s := rc.counts(); r != r0 || s != s0 {
		t.Errorf("%s: %d host reads and %d syncs reached a device that checks on the device", what, r-r0, s-s0)
	}
}

// expectSyncError checks that dev's next Sync returns an error wrapping
// ErrExecution that contains every fragment, and the Sync after it none.
func expectSyncError(t *testing.T, what string, dev Device, fragments ...string) {
	t.Helper()
	err := dev.Sync()
	if err == nil || !errors.Is(err, ErrExecution) {
		t.Errorf("%s: Sync returned %v, want an error wrapping ErrExecution", what, err)
		return
	}
	for _, fr := range fragments {
		if !strings.Contains(err.Error(), fr) {
			t.Errorf("%s: message %q lacks %q", what, err, fr)
		}
	}
	if err := dev.Sync(); err != nil {
		t.Errorf("%s: the device stays failed after the report: %v", what, err)
	}
}

// TestDivisionCheckedOnDevice runs the integer divisions on a remote
// device (whose server checks divisors) through a read counter: results
// are the hand-computed quotients and remainders with no host read before
// the result is read, and a zero divisor is reported by the next Sync,
// naming the op, without a read or a panic. On flex, which checks on the
// host, the counter sees the divisor's read and a zero panics at once.
func TestDivisionCheckedOnDevice(t *testing.T) {
	rng := newRNG(71)
	t.Run("remote", func(t *testing.T) {
		dev, rc := countedDevice(t, remoteDev(t, 0))
		if ok := checksDivisorsOnDevice(dev); !ok {
			t.Fatal("the remote device does not report checking divisors")
		}
		for _, dt := range []DType{I32, I64, I16, U8} {
			lo := -40
			if !dt.IsSigned() {
				lo = 0
			}
			a := randRef([]int{3, 4}, dt, ints(rng, lo, 40))
			b := randRef([]int{4}, dt, func() float64 {
				v := float64(1 + rng.IntN(9))
				if dt.IsSigned() && rng.IntN(2) == 0 {
					v = -v
				}
				return v
			})
			at, bt := mk(dev, a, dt), mk(dev, b, dt)
			z := mk(dev, ref{[]int{4}, []float64{3, 0, 1, 2}}, dt)
			for _, c := range divisionCases {
				what := c.name + " " + dt.String()
				r0, s0 := rc.counts()
				out := c.f(at, bt)
				expectNoTraffic(t, what, rc, r0, s0)
				checkEq(t, what, out, bcast2(a, b, c.ref), dt)

				r0, s0 = rc.counts()
				if err := Try(func() { c.f(at, z) }); err != nil {
					t.Errorf("%s by zero: panicked on a device that checks divisors: %v", what, err)
				}
				expectNoTraffic(t, what+" by zero", rc, r0, s0)
				expectSyncError(t, what+" by zero", dev, c.name, "integer division by zero")
			}
		}
	})
	t.Run("flex", func(t *testing.T) {
		dev, rc := countedDevice(t, Flex())
		if checksDivisorsOnDevice(dev) {
			t.Fatal("flex reports checking divisors on the device")
		}
		a := mk(dev, ref{[]int{2}, []float64{7, -7}}, I32)
		b := mk(dev, ref{[]int{2}, []float64{2, -2}}, I32)
		for _, c := range divisionCases {
			r0, _ := rc.counts()
			checkEq(t, c.name, c.f(a, b), bcast2(ref{[]int{2}, []float64{7, -7}}, ref{[]int{2}, []float64{2, -2}}, c.ref), I32)
			if r, _ := rc.counts(); r < r0+2 {
				t.Errorf("%s: %d reads for the divisor's check and the result, want 2", c.name, r-r0)
			}
			z := mk(dev, ref{[]int{2}, []float64{1, 0}}, I32)
			var e *Error
			if err := Try(func() { c.f(a, z) }); !errors.As(err, &e) || !strings.Contains(err.Error(), "division by zero") || e.Op != c.name {
				t.Errorf("%s by zero on flex: %v, want an *Error naming the op", c.name, err)
			}
		}
	})
}

// oneHotRef is the hand-built one-hot encoding of labels r (values in
// [0, classes)).
func oneHotRef(r ref, classes int) ref {
	return build(append(append([]int{}, r.shape...), classes), func(i []int) float64 {
		return b2f(r.v[ravel(i[:len(i)-1], r.shape)] == float64(i[len(i)-1]))
	})
}

// TestOneHotScatterMatchesCompare checks the two forms of OneHot on the
// host devices (flex, cpu fused and unfused): the scatter form that
// devices checking indices run and the comparison form of the others give
// the same bits, equal to the hand-built encoding, for every integer label
// dtype, float result dtype, layout and shape (rank 0 and empty among
// them), with 1 to 6 classes.
func TestOneHotScatterMatchesCompare(t *testing.T) {
	rng := newRNG(72)
	labelDTypes := []DType{I64, I32, I16, I8, U64, U32, U16, U8}
	for _, dev := range []Device{Flex(), CPU(), unfusedCPU()} {
		t.Run(dev.String(), func(t *testing.T) {
			for _, ldt := range labelDTypes {
				for _, shape := range [][]int{{}, {0}, {7}, {3, 5}, {2, 3, 4}} {
					classes := 1 + rng.IntN(6)
					lab := randRef(shape, ldt, ints(rng, 0, classes-1))
					want := oneHotRef(lab, classes)
					for _, l := range layoutsFor(len(shape)) {
						x := l.view(dev, lab, ldt)
						for _, dt := range []DType{F32, F64, F16, BF16} {
							what := fmt.Sprint("one_hot ", ldt, " ", shape, " ", l.name, " ", classes, " classes to ", dt)
							s, c := oneHotScatter(x, classes, dt), oneHotCompare(x, classes, dt)
							if s.DType() != dt || c.DType() != dt {
								t.Fatalf("%s: dtypes %v and %v", what, s.DType(), c.DType())
							}
							if sd, cd := s.Data(), c.Data(); string(sd.Bytes) != string(cd.Bytes) || fmt.Sprint(sd.Shape) != fmt.Sprint(cd.Shape) {
								t.Errorf("%s: scatter %v %v, compare %v %v", what, sd.Shape, s.Float64s(), cd.Shape, c.Float64s())
							}
							checkEq(t, what, s, want, dt)
						}
					}
				}
			}
		})
	}
}

// TestOneHotCheckedOnDevice runs OneHot on a remote device (which checks
// indices on its server) through a read counter: the values are the
// hand-built encoding with no host read before the result is read, and a
// label out of range (too large or negative) is reported by the next Sync
// as a scatter_add index error, without a read or a panic. On flex the
// labels are read and a bad one panics with an *Error naming it.
func TestOneHotCheckedOnDevice(t *testing.T) {
	rng := newRNG(73)
	t.Run("remote", func(t *testing.T) {
		dev, rc := countedDevice(t, remoteDev(t, 0))
		for _, shape := range [][]int{{}, {5}, {2, 3}} {
			lab := randRef(shape, I32, ints(rng, 0, 3))
			x := mk(dev, lab, I32)
			r0, s0 := rc.counts()
			hot := OneHot(x, 4)
			expectNoTraffic(t, "one_hot", rc, r0, s0)
			checkEq(t, fmt.Sprint("one_hot ", shape), hot, oneHotRef(lab, 4), DType(dev.Settings().FloatDType))
		}
		for _, bad := range []float64{4, -1} {
			x := mk(dev, ref{[]int{3}, []float64{0, bad, 2}}, I64)
			r0, s0 := rc.counts()
			if err := Try(func() { OneHot(x, 4) }); err != nil {
				t.Errorf("one_hot label %v: panicked on a device that checks indices: %v", bad, err)
			}
			expectNoTraffic(t, fmt.Sprint("one_hot label ", bad), rc, r0, s0)
			expectSyncError(t, fmt.Sprint("one_hot label ", bad), dev, "scatter_add", fmt.Sprintf("index %v", bad), "size 4")
		}
	})
	t.Run("flex", func(t *testing.T) {
		dev, rc := countedDevice(t, Flex())
		lab := ref{[]int{3}, []float64{2, 0, 1}}
		x := mk(dev, lab, I32)
		r0, _ := rc.counts()
		hot := OneHot(x, 3)
		if r, _ := rc.counts(); r != r0+1 {
			t.Errorf("one_hot on flex: %d reads, want 1 (the labels)", r-r0)
		}
		checkEq(t, "one_hot flex", hot, oneHotRef(lab, 3), F32)
		bad := mk(dev, ref{[]int{2}, []float64{1, 3}}, I32)
		expectPanic(t, "one_hot label 3 on flex", func() { OneHot(bad, 3) }, "one_hot", "label 3 at flat position 1", "[0, 3)")
	})
}

// TestCUDAChecksWithoutSync runs the integer divisions and OneHot on
// cuda:0 through a read counter, over the device's stack (fusion on) and
// over the bare cuda backend: neither reads anything back nor syncs (the
// kernels check the divisors and labels), the values equal flex's for
// every integer dtype on random non-zero divisors over the whole range
// (MIN / -1 included), and a zero divisor (alone or inside a fused chain)
// or a bad label is reported by the next Sync as an error naming cuda:0
// and the op. It skips without a GPU.
func TestCUDAChecksWithoutSync(t *testing.T) {
	gpu := CUDA(0)
	if err := gpu.Init(); err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	for _, inner := range []struct {
		name string
		b    backend.Backend
	}{{"stack", gpu.Backend()}, {"bare", backend.Base(gpu.Backend())}} {
		t.Run(inner.name, func(t *testing.T) {
			readCounterOnce.Do(func() { backend.Register("readcount", readCounterDriver{}) })
			i := int(readCounterNext.Add(1))
			readCounterTargets.Store(i, inner.b)
			dev := DeviceFromID(backend.DeviceID{Type: "readcount", Index: i})
			if err := dev.Init(); err != nil {
				t.Fatal(err)
			}
			rc, _ := backend.As[*readCounter](dev.Backend())
			cudaChecks(t, dev, rc)
		})
	}
}

// cudaChecks is TestCUDAChecksWithoutSync on dev, whose counter is rc.
func cudaChecks(t *testing.T, dev Device, rc *readCounter) {
	if !checksDivisorsOnDevice(dev) || !checksIndicesOnDevice(dev) {
		t.Fatal("cuda:0 does not report checking divisors and indices on the device")
	}
	rng := newRNG(74)
	for _, dt := range []DType{I8, I16, I32, I64, U8, U16, U32, U64} {
		lo, _ := ir.IntRange(dt)
		wide := func() float64 {
			var v float64
			switch rng.IntN(8) {
			case 0:
				v = float64(lo)
			case 1:
				v = 1 << 52 // MAX of the narrow dtypes
			case 2:
				v = -1
			default:
				v = float64(rng.IntN(2000) - 1000)
			}
			if !dt.IsSigned() {
				v = math.Abs(v)
			}
			return quantizeInt(v, dt)
		}
		divisor := func() float64 {
			if v := wide(); v != 0 {
				return v
			}
			return 3
		}
		a := randRef([]int{33, 65}, dt, wide)
		b := randRef([]int{33, 65}, dt, divisor)
		ha, hb := mk(Flex(), a, dt), mk(Flex(), b, dt)
		ga, gb := mk(dev, a, dt), mk(dev, b, dt)
		z := mk(dev, randRef([]int{65}, dt, func() float64 { return float64(rng.IntN(2)) }), dt) // zeros among ones
		for _, c := range divisionCases {
			what := c.name + " " + dt.String()
			r0, s0 := rc.counts()
			got := c.f(ga, gb)
			expectNoTraffic(t, what, rc, r0, s0)
			if err := dev.Sync(); err != nil {
				t.Errorf("%s: a report without a zero divisor: %v", what, err)
			}
			if g, w := got.Int64s(), c.f(ha, hb).Int64s(); fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("%s: cuda and flex differ", what)
			}
			r0, s0 = rc.counts()
			bad := c.f(ga, z)
			expectNoTraffic(t, what+" by zero", rc, r0, s0)
			expectSyncError(t, what+" by zero", dev, "cuda:0", ": "+c.name+": integer division by zero", "("+dt.String()+" operands)")
			r0, s0 = rc.counts()
			chain := c.f(ga.Add(gb), z).Mul(ga)
			expectNoTraffic(t, what+" by zero in a chain", rc, r0, s0)
			expectSyncError(t, what+" by zero in a chain", dev, "cuda:0", ": "+c.name+": integer division by zero")
			runtime.KeepAlive(bad)
			runtime.KeepAlive(chain)
		}
	}
	lab := randRef([]int{64, 3}, I64, ints(rng, 0, 9))
	r0, s0 := rc.counts()
	hot := OneHot(mk(dev, lab, I64), 10)
	expectNoTraffic(t, "one_hot", rc, r0, s0)
	checkEq(t, "one_hot", hot, oneHotRef(lab, 10), DType(dev.Settings().FloatDType))
	r0, s0 = rc.counts()
	bad := OneHot(mk(dev, ref{[]int{2}, []float64{3, 10}}, I64), 10)
	expectNoTraffic(t, "one_hot label 10", rc, r0, s0)
	expectSyncError(t, "one_hot label 10", dev, "cuda:0", "scatter_add", "index 10", "size 10")
	runtime.KeepAlive(bad)
}

// quantizeInt is v as the integer dtype dt stores it (truncated and
// saturated, as Cast).
func quantizeInt(v float64, dt DType) float64 {
	lo, hi := ir.IntRange(dt)
	return math.Max(float64(lo), math.Min(float64(hi), math.Trunc(v)))
}
