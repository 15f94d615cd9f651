package autodiff

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cpu"
	"github.com/emberml/ember/backend/flex"
	"github.com/emberml/ember/ir"
)

func f32Data(shape []int, v []float32) *backend.TensorData {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	d, err := backend.NewTensorData(shape, backend.F32, b)
	if err != nil {
		panic(err)
	}
	return d
}

// add4 returns the operand of the 4-element f32 adds below: an untracked
// tensor of e, or a tracked leaf when e is an autodiff backend and track
// is set.
func add4(e backend.Backend, track bool) backend.Tensor {
	x := e.FromData(f32Data([]int{4}, []float32{1, 2, 3, 4}))
	if ad, ok := e.(*Backend); ok && track {
		x = ad.RequireGrad(x)
	}
	return x
}

// benchInners are the inner backends the add benchmarks run over.
var benchInners = []struct {
	name string
	new  func() backend.Backend
}{
	{"flex", func() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) }},
	{"cpu", func() backend.Backend { return cpu.New(backend.DeviceID{Type: "cpu"}) }},
}

// BenchmarkTrackedAdd4 measures the per-op cost of recording a tiny
// tracked add (ir.Add: inference, autodiff's Exec and the inner backend's
// 4-element f32 add), over flex and cpu.
func BenchmarkTrackedAdd4(bm *testing.B) {
	for _, in := range benchInners {
		bm.Run(in.name, func(bm *testing.B) {
			b := New(in.new(), false)
			x := add4(b, true)
			bm.ReportAllocs()
			for bm.Loop() {
				ir.Add(b, x, x)
			}
		})
	}
}

// BenchmarkTrackedAdd4Checkpointing is BenchmarkTrackedAdd4 under the
// Balanced strategy.
func BenchmarkTrackedAdd4Checkpointing(bm *testing.B) {
	for _, in := range benchInners {
		bm.Run(in.name, func(bm *testing.B) {
			b := New(in.new(), true)
			x := add4(b, true)
			bm.ReportAllocs()
			for bm.Loop() {
				ir.Add(b, x, x)
			}
		})
	}
}

// BenchmarkUntrackedAdd4 is the same add on untracked tensors.
func BenchmarkUntrackedAdd4(bm *testing.B) {
	for _, in := range benchInners {
		bm.Run(in.name, func(bm *testing.B) {
			b := New(in.new(), false)
			x := add4(b, false)
			bm.ReportAllocs()
			for bm.Loop() {
				ir.Add(b, x, x)
			}
		})
	}
}

// BenchmarkInnerAdd4 is the add on the inner backend directly, the
// baseline for the ones above.
func BenchmarkInnerAdd4(bm *testing.B) {
	for _, in := range benchInners {
		bm.Run(in.name, func(bm *testing.B) {
			e := in.new()
			x := add4(e, false)
			bm.ReportAllocs()
			for bm.Loop() {
				ir.Add(e, x, x)
			}
		})
	}
}

// TestTrackedAddAllocs checks autodiff's share of the allocations of a
// tracked 4-element f32 add over flex and cpu: at most the node and the
// output tensor (2) beyond the inner backend's own, and none for
// untracked operands.
func TestTrackedAddAllocs(t *testing.T) {
	for _, in := range benchInners {
		t.Run(in.name, func(t *testing.T) { testTrackedAddAllocs(t, in.new()) })
	}
}

func testTrackedAddAllocs(t *testing.T, in backend.Backend) {
	b := New(in, false)
	xi, xu, xt := add4(in, false), add4(b, false), add4(b, true)
	base := testing.AllocsPerRun(100, func() { ir.Add(in, xi, xi) })
	untracked := testing.AllocsPerRun(100, func() { ir.Add(b, xu, xu) })
	tracked := testing.AllocsPerRun(100, func() { ir.Add(b, xt, xt) })
	mixed := testing.AllocsPerRun(100, func() { ir.Add(b, xt, xu) })
	t.Logf("allocations per 4-element f32 add: inner %v, untracked %v, tracked %v, tracked+untracked %v", base, untracked, tracked, mixed)
	if untracked > base {
		t.Errorf("untracked add: %v allocations, the inner backend's %v", untracked, base)
	}
	if tracked > base+2 || mixed > base+2 {
		t.Errorf("tracked add: %v allocations (%v with one untracked operand), want at most the inner backend's %v + 2", tracked, mixed, base)
	}
}

// TestNodeSize keeps a recorded op of up to three inputs and one output
// in one 224-byte allocation (with the 32-byte output tensor, what
// recording a tracked op allocates).
func TestNodeSize(t *testing.T) {
	if s := unsafe.Sizeof(node{}); s > 224 {
		t.Errorf("a node is %d bytes, want at most 224", s)
	}
	if s := unsafe.Sizeof(tensor{}); s > 32 {
		t.Errorf("a tracked tensor is %d bytes, want at most 32", s)
	}
}
