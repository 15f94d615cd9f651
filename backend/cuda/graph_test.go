package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/cuda/internal/cu"
	"github.com/emberml/ember/ir"
)

// The graph tests record work with BeginGraph/EndGraph, launch it and
// compare every result bit for bit with the same ops run eagerly on the
// same input values (the kernels and cuBLAS calls are the same, so the
// bits must be). The TestGPUGraph tests need a GPU and skip without one;
// the TestGraph tests check the allocator, the capture gate and the
// argument checks on the host.

// sameBits fails unless got and want hold the same shape, dtype and bits,
// naming the first differing element and how many differ.
func sameBits(t *testing.T, what string, got, want *backend.TensorData) {
	t.Helper()
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		t.Errorf("%s: graph gave %v %v, eager gave %v %v", what, got.DType, got.Shape, want.DType, want.Shape)
		return
	}
	if bytes.Equal(got.Bytes, want.Bytes) {
		return
	}
	es, n := want.DType.Size(), want.NumElements()
	first, count := -1, 0
	for i := range n {
		if !bytes.Equal(got.Bytes[i*es:(i+1)*es], want.Bytes[i*es:(i+1)*es]) {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	t.Errorf("%s: %d of %d elements differ; first at %v (flat %d): graph %v (bits %x), eager %v (bits %x)",
		what, count, n, unravel(first, want.Shape), first, got.Value(first), got.Bytes[first*es:(first+1)*es],
		want.Value(first), want.Bytes[first*es:(first+1)*es])
}

// unravel turns a flat row-major index into coordinates of shape.
func unravel(i int, shape []int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			c[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return c
}

// readNamed returns x's data, failing the test with what on an error.
func readNamed(t *testing.T, b *Backend, x backend.Tensor, what string) *backend.TensorData {
	t.Helper()
	d, err := b.ToData(x)
	if err != nil {
		t.Fatalf("%s: ToData: %v", what, err)
	}
	return d
}

// feed copies src into the static tensor dst, failing the test on an error.
func feed(t *testing.T, b *Backend, dst, src backend.Tensor, what string) {
	t.Helper()
	if err := b.CopyInto(dst, src); err != nil {
		t.Fatalf("feeding %s: %v", what, err)
	}
}

// beginGraph starts recording on b and makes sure the recording is ended
// when the test stops early.
func beginGraph(t *testing.T, b *Backend) {
	t.Helper()
	if err := b.BeginGraph(); err != nil {
		if errors.Is(err, backend.ErrGraphsUnsupported) {
			t.Skipf("no CUDA graphs: %v", err)
		}
		t.Fatalf("BeginGraph: %v", err)
	}
	t.Cleanup(func() {
		if b.rec.Load() != nil {
			if g, err := b.EndGraph(); err == nil {
				_ = g.Close()
			}
		}
	})
}

// endGraph ends the recording, failing the test on an error, and closes
// the graph when the test ends.
func endGraph(t *testing.T, b *Backend) *DeviceGraph {
	t.Helper()
	g, err := b.EndGraph()
	if err != nil {
		t.Fatalf("EndGraph: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g.(*DeviceGraph)
}

// notCapturing fails unless the backend's stream is out of capture mode
// and the backend does not record.
func notCapturing(t *testing.T, b *Backend, when string) {
	t.Helper()
	st, err := cu.StreamIsCapturing(b.stream)
	if err != nil || st != cu.CaptureNone {
		t.Fatalf("%s: stream capture status %d (err %v), want %d (none)", when, st, err, cu.CaptureNone)
	}
	if b.rec.Load() != nil {
		t.Fatalf("%s: the backend still records", when)
	}
}

// graphStep is the work TestGPUGraphStep records and runs eagerly: a
// cuBLAS product, elementwise ops (one with a Full constant), a
// reduction over the rows, a long reduction that takes the split path
// (scratch buffer released mid-op), and a transposed view.
func graphStep(b *Backend, x, w, v backend.Tensor) (mm, ew, red, long, tr backend.Tensor) {
	mm = ir.Matmul(b, x, w)
	ew = ir.Mul(b, ir.Unary(b, ir.OpTanh, mm), ir.AddScalar(b, mm, 0.5))
	red = ir.Reduce(b, ir.ReduceSum, ew, 1, false)
	long = ir.Reduce(b, ir.ReduceSum, ir.Unary(b, ir.OpExp, v), 1, false)
	tr = ir.Transpose(b, ew)
	return
}

func TestGPUGraphStep(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(11, 3))
	const m, k, n, rows, long = 64, 96, 48, 4, 20000
	f32 := backend.F32
	xS, wS, vS := b.NewStatic([]int{m, k}, f32), b.NewStatic([]int{k, n}, f32), b.NewStatic([]int{rows, long}, f32)
	names := []string{"matmul", "elementwise", "row sum", "split sum", "transposed copy"}
	outs := []backend.Tensor{b.NewStatic([]int{m, n}, f32), b.NewStatic([]int{m, n}, f32),
		b.NewStatic([]int{m}, f32), b.NewStatic([]int{rows}, f32), b.NewStatic([]int{n, m}, f32)}

	beginGraph(t, b)
	mm, ew, red, lg, tr := graphStep(b, xS, wS, vS)
	for i, r := range []backend.Tensor{mm, ew, red, lg, tr} {
		if err := b.CopyInto(outs[i], r); err != nil {
			t.Fatalf("recording CopyInto of the %s: %v", names[i], err)
		}
	}
	g := endGraph(t, b)
	notCapturing(t, b, "after EndGraph")

	var prev *backend.TensorData
	for it := range 5 {
		xd, wd, vd := nonZero(rng, []int{m, k}, f32), nonZero(rng, []int{k, n}, f32), nonZero(rng, []int{rows, long}, f32)
		xE := b.FromData(xd)
		if it%2 == 1 {
			// Feed x from a transposed upload: CopyInto's strided path.
			xT := b.FromData(transposed(xd))
			xE = ir.Transpose(b, xT)
		}
		feed(t, b, xS, xE, "x")
		feed(t, b, wS, b.FromData(wd), "w")
		feed(t, b, vS, b.FromData(vd), "v")
		if err := g.Launch(); err != nil {
			t.Fatalf("launch %d: %v", it, err)
		}
		got := make([]*backend.TensorData, len(outs))
		for i, o := range outs {
			got[i] = readNamed(t, b, o, fmt.Sprintf("launch %d: %s", it, names[i]))
		}
		mm, ew, red, lg, tr := graphStep(b, b.Contiguous(xE.(*Tensor)), b.FromData(wd), b.FromData(vd))
		for i, r := range []backend.Tensor{mm, ew, red, lg, b.Contiguous(tr.(*Tensor))} {
			sameBits(t, fmt.Sprintf("launch %d: %s", it, names[i]), got[i], readNamed(t, b, r, names[i]))
		}
		if prev != nil && bytes.Equal(prev.Bytes, got[0].Bytes) {
			t.Errorf("launch %d: the matmul output did not change with new inputs", it)
		}
		prev = got[0]
	}
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync after the launches: %v", err)
	}
}

// transposed returns the [cols, rows] transpose of the 2-d data d.
func transposed(d *backend.TensorData) *backend.TensorData {
	r, c, es := d.Shape[0], d.Shape[1], d.DType.Size()
	out := make([]byte, len(d.Bytes))
	for i := range r {
		for j := range c {
			copy(out[(j*r+i)*es:(j*r+i+1)*es], d.Bytes[(i*c+j)*es:(i*c+j+1)*es])
		}
	}
	return &backend.TensorData{Shape: []int{c, r}, DType: d.DType, Bytes: out}
}

// span is a device address range [lo, hi).
type span struct {
	what   string
	lo, hi uint64
}

func spanOf(what string, x backend.Tensor) span {
	buf := x.(*Tensor).Buffer()
	return span{what, buf.Ptr(), buf.Ptr() + buf.Bytes()}
}

func TestGPUGraphMemoryIsolation(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(5, 8))
	const n = 256
	f32 := backend.F32
	xS, outS := b.NewStatic([]int{n, n}, f32), b.NewStatic([]int{n}, f32)
	wd := nonZero(rng, []int{n, n}, f32)
	w := b.FromData(wd) // made before the recording, not static: the graph keeps it
	beginGraph(t, b)
	h1 := ir.Mul(b, xS, w)
	h2 := ir.Add(b, h1, xS)
	h3 := ir.Matmul(b, h2, w)
	h4 := ir.Unary(b, ir.OpSigmoid, h3)
	out := ir.Reduce(b, ir.ReduceSum, h4, 1, false)
	feed(t, b, outS, out, "out (recorded)")
	graphMem := []span{spanOf("h1", h1), spanOf("h2", h2), spanOf("h3", h3), spanOf("h4", h4), spanOf("out", out), spanOf("w", w)}
	g := endGraph(t, b)
	step := func(x, w backend.Tensor) backend.Tensor {
		h2 := ir.Add(b, ir.Mul(b, x, w), x)
		return ir.Reduce(b, ir.ReduceSum, ir.Unary(b, ir.OpSigmoid, ir.Matmul(b, h2, w)), 1, false)
	}

	// Drop every intermediate and the graph's weight handle (releasing
	// two of them at once); their buffers may return to a pool, but never
	// to one eager work uses.
	b.Release(h1.(*Tensor))
	b.Release(w.(*Tensor))
	h1, h2, h3, h4, out, w = nil, nil, nil, nil, nil, nil
	_, _, _, _, _, _ = h1, h2, h3, h4, out, w
	for range 3 {
		collectGarbage()
	}
	var fills []backend.Tensor
	var fillVals []float64
	for i := range 40 {
		shape := []int{n, n}
		if i%3 == 1 {
			shape = []int{n}
		}
		v := float64(i + 1)
		fills = append(fills, ir.Full(b, shape, f32, v))
		fillVals = append(fillVals, v)
	}
	for i, f := range fills {
		s := spanOf(fmt.Sprintf("fill %d", i), f)
		for _, gm := range graphMem {
			if s.lo < gm.hi && gm.lo < s.hi {
				t.Errorf("eager tensor %s [%#x, %#x) overlaps the graph's %s [%#x, %#x)", s.what, s.lo, s.hi, gm.what, gm.lo, gm.hi)
			}
		}
	}
	for it := range 3 {
		xd := nonZero(rng, []int{n, n}, f32)
		feed(t, b, xS, b.FromData(xd), "x")
		if err := g.Launch(); err != nil {
			t.Fatalf("launch %d: %v", it, err)
		}
		sameBits(t, fmt.Sprintf("launch %d after the intermediates were dropped", it),
			readNamed(t, b, outS, "out"), readNamed(t, b, step(b.FromData(xd), b.FromData(wd)), "eager out"))
	}
	for i, f := range fills {
		d := readNamed(t, b, f, "fill")
		for j := range d.NumElements() {
			if d.Value(j) != fillVals[i] {
				t.Fatalf("eager tensor fill %d %v: element %v is %v after the launches, want %v", i, d.Shape, unravel(j, d.Shape), d.Value(j), fillVals[i])
			}
		}
	}
}

func TestGPUGraphWaitsRefusedWhileRecording(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(2, 9))
	f32 := backend.F32
	xS, outS := b.NewStatic([]int{33, 7}, f32), b.NewStatic([]int{33, 7}, f32)
	beginGraph(t, b)
	if err := b.BeginGraph(); !errors.Is(err, ErrRecording) || !strings.Contains(err.Error(), b.id.String()) {
		t.Errorf("second BeginGraph: %v, want an error wrapping ErrRecording naming %v", err, b.id)
	}
	y := ir.Mul(b, ir.Add(b, xS, xS), xS)
	if err := b.Sync(); !errors.Is(err, ErrRecording) || !strings.Contains(err.Error(), b.id.String()) {
		t.Errorf("Sync while recording: %v, want an error wrapping ErrRecording naming %v", err, b.id)
	}
	if d, err := b.ToData(y); !errors.Is(err, ErrRecording) || !strings.Contains(err.Error(), b.id.String()) {
		t.Errorf("ToData while recording: data %v, error %v; want an error wrapping ErrRecording naming %v", d != nil, err, b.id)
	}
	feed(t, b, outS, y, "out (recorded)")
	g := endGraph(t, b)
	notCapturing(t, b, "after EndGraph")
	if _, err := b.EndGraph(); err == nil || !strings.Contains(err.Error(), "not recording") {
		t.Errorf("EndGraph without a recording: %v, want a not-recording error", err)
	}
	xd := nonZero(rng, xS.Shape(), f32)
	feed(t, b, xS, b.FromData(xd), "x")
	// A graph is not launched into another recording.
	beginGraph(t, b)
	if err := g.Launch(); !errors.Is(err, ErrRecording) || !strings.Contains(err.Error(), b.id.String()) {
		t.Errorf("Launch while recording: %v, want an error wrapping ErrRecording naming %v", err, b.id)
	}
	_ = ir.Neg(b, xS)
	endGraph(t, b)
	if err := g.Launch(); err != nil {
		t.Fatal(err)
	}
	x := b.FromData(xd)
	sameBits(t, "graph recorded around refused waits", readNamed(t, b, outS, "out"), readNamed(t, b, ir.Mul(b, ir.Add(b, x, x), x), "eager"))
}

func TestGPUGraphOpPanic(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(4, 4))
	f32 := backend.F32
	xS, outS := b.NewStatic([]int{100}, f32), b.NewStatic([]int{100}, f32)
	// A kind without a cuda kernel: Exec panics with *ir.UnsupportedError.
	missing := ir.Kind(0)
	for k := ir.Kind(1); k < ir.NumKinds; k++ {
		if kernels[k].Run == nil {
			missing = k
			break
		}
	}
	if missing == 0 {
		t.Fatal("every kind has a kernel: no op to make panic")
	}
	beginGraph(t, b)
	_ = ir.Add(b, xS, xS)
	err := mustPanic(t, func() { b.Exec(ir.Op{Kind: missing, DType: f32, Shape: []int{100}, In: [3]ir.Tensor{xS}}) })
	var ue *ir.UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("op panic: %v, want an *ir.UnsupportedError", err)
	}
	g, err := b.EndGraph()
	if err == nil {
		_ = g.Close()
		t.Fatal("EndGraph after an op panicked returned a graph, want an error")
	}
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), b.id.String()) {
		t.Errorf("EndGraph after an op panicked: %v, want an error naming %v and wrapping the op's *ir.UnsupportedError", err, b.id)
	}
	notCapturing(t, b, "after the failed EndGraph")

	// A kernel launch the driver refuses (1024 threads is the largest
	// block): whether the driver invalidates the capture or not, EndGraph
	// must end it and the device must stay usable.
	k := b.Kernel("ember_fill_u64", fillSource)
	beginGraph(t, b)
	lerr := mustPanic(t, func() { b.Launch(k, [3]uint32{1, 1, 1}, [3]uint32{4096, 1, 1}, 0, xS, uint64(1), uint64(0)) })
	g, err = b.EndGraph()
	t.Logf("refused launch while recording: %v; EndGraph: %v", lerr, err)
	if err == nil {
		_ = g.Close()
	}
	notCapturing(t, b, "after EndGraph following a refused launch")

	// The backend records and runs as before.
	beginGraph(t, b)
	feed(t, b, outS, ir.Unary(b, ir.OpNeg, xS), "out (recorded)")
	g2 := endGraph(t, b)
	xd := nonZero(rng, []int{100}, f32)
	feed(t, b, xS, b.FromData(xd), "x")
	if err := g2.Launch(); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "graph recorded after the failures", readNamed(t, b, outS, "out"), readNamed(t, b, ir.Unary(b, ir.OpNeg, b.FromData(xd)), "eager"))
}

func TestGPUGraphClose(t *testing.T) {
	b := gpu(t)
	f32 := backend.F32
	xS, outS := b.NewStatic([]int{1 << 16}, f32), b.NewStatic([]int{1 << 16}, f32)
	beginGraph(t, b)
	keep := ir.Unary(b, ir.OpAbs, xS) // made while recording, alive past Close
	feed(t, b, outS, ir.Mul(b, keep, keep), "out (recorded)")
	g, err := b.EndGraph()
	if err != nil {
		t.Fatal(err)
	}
	ga := g.(*DeviceGraph).st.alloc
	if u, _ := ga.ownUsage(); u.BytesReserved == 0 || u.BytesInUse == 0 {
		t.Fatalf("graph allocator before Close: %+v, want reserved and used bytes", u)
	}
	own, _ := b.alloc.ownUsage()
	gu, _ := ga.ownUsage()
	if total := b.alloc.usage(); total.BytesReserved < own.BytesReserved+gu.BytesReserved {
		t.Errorf("MemoryPoolUsage reserves %d bytes, fewer than the pools' %d plus the graph's %d", total.BytesReserved, own.BytesReserved, gu.BytesReserved)
	}
	if err := g.Launch(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := g.Launch(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Launch after Close: %v, want a closed-graph error", err)
	}
	if u, _ := ga.ownUsage(); u.BytesReserved == 0 {
		t.Errorf("graph allocator after Close: %+v, want the page of the live tensor kept", u)
	}
	runtime.KeepAlive(keep)
	keep = nil
	for range 3 {
		collectGarbage()
	}
	if u, gone := ga.ownUsage(); u.BytesReserved != 0 || !gone {
		t.Errorf("graph allocator after Close and the last tensor dropped: %+v (gone %v), want every page given back", u, gone)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestGPUGraphKernelLoadedWhileRecording(t *testing.T) {
	b := gpu(t)
	const name = "ember_test_graph_affine"
	const src = `extern "C" __global__ void ember_test_graph_affine(const float* x, float* y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}`
	if _, ok := b.kcache.calls.Load(compiledKey{name, src, ""}); ok {
		t.Log("the kernel was built before the recording")
	}
	const n = 5000
	rng := rand.New(rand.NewPCG(6, 6))
	xS, outS := b.NewStatic([]int{n}, backend.F32), b.NewStatic([]int{n}, backend.F32)
	beginGraph(t, b)
	k := b.Kernel(name, src) // compiled (or read from the disk cache) and loaded while capturing
	grid, block := Grid1D(n, 256)
	b.Launch(k, grid, block, 0, xS, outS, n)
	g := endGraph(t, b)
	for it := range 2 {
		xd := nonZero(rng, []int{n}, backend.F32)
		feed(t, b, xS, b.FromData(xd), "x")
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		got := readNamed(t, b, outS, "out")
		for i := range n {
			x := math.Float32frombits(binary.LittleEndian.Uint32(xd.Bytes[4*i:]))
			want := float64(2*x + 1)
			if got.Value(i) != want {
				t.Fatalf("launch %d: y[%d] = %v, want 2*%v+1 = %v", it, i, got.Value(i), x, want)
			}
		}
	}
}

func TestGPUGraphFromDataWhileRecording(t *testing.T) {
	b := gpu(t)
	rng := rand.New(rand.NewPCG(8, 1))
	const n = 777
	f32 := backend.F32
	xS, outS := b.NewStatic([]int{n}, f32), b.NewStatic([]int{n}, f32)
	cd := nonZero(rng, []int{n}, f32)
	orig := slices.Clone(cd.Bytes)
	beginGraph(t, b)
	c := b.FromData(cd) // a constant uploaded at every launch
	ar := arangeOn(b, -3, 0.25, n, f32)
	feed(t, b, outS, ir.Add(b, ir.Mul(b, xS, c), ar), "out (recorded)")
	g := endGraph(t, b)
	for i := range cd.Bytes {
		cd.Bytes[i] = 0xff // the caller's bytes may change after FromData
	}
	c, ar, cd = nil, nil, nil
	_, _, _ = c, ar, cd
	collectGarbage()
	for it := range 3 {
		xd := nonZero(rng, []int{n}, f32)
		feed(t, b, xS, b.FromData(xd), "x")
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		want := ir.Add(b, ir.Mul(b, b.FromData(xd), b.FromData(&backend.TensorData{Shape: []int{n}, DType: f32, Bytes: orig})), arangeOn(b, -3, 0.25, n, f32))
		sameBits(t, fmt.Sprintf("launch %d of a graph uploading data", it), readNamed(t, b, outS, "out"), readNamed(t, b, want, "eager"))
	}
}

func TestGPUGraphCopyIntoChecks(t *testing.T) {
	b := gpu(t)
	s := b.NewStatic([]int{3, 4}, backend.F32)
	plain := b.Empty([]int{3, 4}, backend.F32)
	for _, c := range []struct {
		what     string
		dst, src backend.Tensor
		want     []string
	}{
		{"dst not from NewStatic", plain, plain, []string{"NewStatic", "[3 4]"}},
		{"shape mismatch", s, b.Empty([]int{4, 3}, backend.F32), []string{"[4 3]", "[3 4]"}},
		{"dtype mismatch", s, b.Empty([]int{3, 4}, backend.I32), []string{"i32", "f32"}},
	} {
		err := b.CopyInto(c.dst, c.src)
		if err == nil {
			t.Errorf("%s: no error", c.what)
			continue
		}
		for _, w := range append(c.want, b.id.String()) {
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w)) {
				t.Errorf("%s: error %q does not name %q", c.what, err, w)
			}
		}
	}
}

// The host-side tests.

func TestGraphCopyIntoArguments(t *testing.T) {
	b := &Backend{id: backend.DeviceID{Type: "cuda", Index: 3}}
	mk := func(shape []int, dt backend.DType, static bool) *Tensor {
		t := &Tensor{buf: &Buffer{blk: &block{ptr: 1 << 20, size: 4096}, static: static}, shape: shape, dtype: dt}
		t.strides = make([]int, len(shape))
		st := 1
		for i := len(shape) - 1; i >= 0; i-- {
			t.strides[i] = st
			st *= shape[i]
		}
		return t
	}
	dst := mk([]int{2, 5}, backend.F32, true)
	view := dst.view([]int{5, 2}, []int{1, 5}, 0)
	for _, c := range []struct {
		what     string
		dst, src backend.Tensor
		want     []string
	}{
		{"dst not from NewStatic", mk([]int{2, 5}, backend.F32, false), mk([]int{2, 5}, backend.F32, false), []string{"cuda:3", "NewStatic", "f32 [2 5]"}},
		{"shape mismatch", dst, mk([]int{5, 2}, backend.F32, false), []string{"cuda:3", "[5 2]", "[2 5]"}},
		{"dtype mismatch", dst, mk([]int{2, 5}, backend.F64, false), []string{"cuda:3", "f64 [2 5]", "f32 [2 5]"}},
		{"non-contiguous dst", view, mk([]int{5, 2}, backend.F32, false), []string{"cuda:3", "not contiguous"}},
		{"foreign dst", foreignTensor{}, dst, []string{"cuda:3", "invalid device"}},
		{"foreign src", dst, foreignTensor{}, []string{"cuda:3", "invalid device"}},
	} {
		err := b.CopyInto(c.dst, c.src)
		if err == nil {
			t.Errorf("%s: no error", c.what)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %q", c.what, err, w)
			}
		}
	}
	if err := b.CopyInto(mk([]int{0, 5}, backend.F32, true), mk([]int{0, 5}, backend.F32, false)); err != nil {
		t.Errorf("empty copy: %v", err)
	}
}

// foreignTensor is a tensor of another backend.
type foreignTensor struct{}

func (foreignTensor) Shape() []int         { return []int{2, 5} }
func (foreignTensor) DType() backend.DType { return backend.F32 }

func TestGraphRefusalsOnTheHost(t *testing.T) {
	b := &Backend{id: backend.DeviceID{Type: "cuda", Index: 1}}
	b.rec.Store(&recording{})
	if err := b.Sync(); !errors.Is(err, ErrRecording) || !strings.Contains(err.Error(), "cuda:1") || !strings.Contains(err.Error(), "Sync") {
		t.Errorf("Sync while recording: %v, want an error wrapping ErrRecording naming cuda:1 and Sync", err)
	}
	g := &DeviceGraph{b: b}
	if err := g.Launch(); err == nil || !strings.Contains(err.Error(), "closed") || !strings.Contains(err.Error(), "cuda:1") {
		t.Errorf("Launch of a closed graph: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close of a closed graph: %v", err)
	}
	b.rec.Store(nil)
	if err := b.notRecording("Sync"); err != nil {
		t.Errorf("not recording: %v", err)
	}
}

func TestGraphCaptureGate(t *testing.T) {
	var g captureGate
	var log []string
	if !g.ifIdle(func() { log = append(log, "sync 1") }) {
		t.Fatal("ifIdle refused while idle")
	}
	g.whenIdle(func() { log = append(log, "free 1") })
	if err := g.begin(func() error { return errors.New("driver says no") }); err == nil || g.capturing {
		t.Fatalf("begin with a failing start: %v, capturing %v", err, g.capturing)
	}
	if err := g.begin(func() error { log = append(log, "begin"); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := g.begin(func() error { t.Error("second begin started a capture"); return nil }); !errors.Is(err, ErrRecording) {
		t.Errorf("second begin: %v", err)
	}
	if g.ifIdle(func() { log = append(log, "sync while capturing") }) {
		t.Error("ifIdle ran while capturing")
	}
	g.whenIdle(func() { log = append(log, "free 2") })
	g.whenIdle(func() { log = append(log, "free 3") })
	g.end(func() { log = append(log, "end") })
	g.whenIdle(func() { log = append(log, "free 4") })
	want := []string{"sync 1", "free 1", "begin", "end", "free 2", "free 3", "free 4"}
	if !slices.Equal(log, want) {
		t.Errorf("order %q, want %q", log, want)
	}
}

func TestGraphAllocatorKeepsPagesUntilClose(t *testing.T) {
	mem := newFake(400 << 20) // 328 MiB of pages below, 72 MiB free
	parent := newAllocator(newFake(0), nil)
	a := newGraphAllocator(mem, nil)
	parent.adopt(a)
	var blocks []*block
	for _, n := range []uint64{1000, 3 << 20, 40 << 20} {
		b, err := a.alloc(n, false)
		if err != nil {
			t.Fatalf("alloc %d: %v", n, err)
		}
		blocks = append(blocks, b)
	}
	pages := len(mem.live)
	for _, b := range blocks[1:] {
		a.free(b)
	}
	a.cleanup()
	// Out of memory: a keep allocator gives no page back, it fails.
	if _, err := a.alloc(100<<20, false); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("alloc beyond the device: %v, want ErrOutOfMemory", err)
	}
	if len(mem.live) != pages {
		t.Fatalf("the graph allocator gave pages back before close: %d live, had %d", len(mem.live), pages)
	}
	// Freed space is reused inside the graph.
	b, err := a.alloc(3<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.ptr != blocks[1].ptr {
		t.Errorf("reuse: got %#x, want the freed block at %#x", b.ptr, blocks[1].ptr)
	}
	a.free(b)
	pu := parent.usage()
	if au, _ := a.ownUsage(); pu.BytesReserved != au.BytesReserved || pu.NumberAllocs != 1 || pu.BytesInUse != 1000 {
		t.Errorf("parent usage %+v, want the graph allocator's %+v", pu, au)
	}
	a.close()
	if len(mem.live) != 1 {
		t.Errorf("after close %d pages live, want 1 (the page of the live block)", len(mem.live))
	}
	if pu := parent.usage(); pu.NumberAllocs != 1 || len(parent.children) != 1 {
		t.Errorf("parent usage after close %+v (%d children), want the live block counted", pu, len(parent.children))
	}
	a.free(blocks[0])
	if len(mem.live) != 0 {
		t.Errorf("after the last free %d pages live, want 0", len(mem.live))
	}
	if pu := parent.usage(); pu != (backend.MemoryPoolUsage{}) || len(parent.children) != 0 {
		t.Errorf("parent usage after the graph allocator emptied: %+v (%d children), want zero and no child", pu, len(parent.children))
	}
}

// BenchmarkGPUGraphChain runs a chain of 32 small elementwise ops on a
// 4096-element tensor per iteration, eagerly (32 launches) and as one
// device graph launch, each followed by Sync.
func BenchmarkGPUGraphChain(bm *testing.B) {
	b := gpu(bm)
	const n, depth = 4096, 32
	rng := rand.New(rand.NewPCG(1, 2))
	xS, outS := b.NewStatic([]int{n}, backend.F32), b.NewStatic([]int{n}, backend.F32)
	if err := b.CopyInto(xS, b.FromData(nonZero(rng, []int{n}, backend.F32))); err != nil {
		bm.Fatal(err)
	}
	chain := func(x backend.Tensor) backend.Tensor {
		for i := range depth {
			if i%2 == 0 {
				x = ir.Unary(b, ir.OpTanh, x)
			} else {
				x = ir.Mul(b, x, xS)
			}
		}
		return x
	}
	bm.Run("eager", func(bm *testing.B) {
		for bm.Loop() {
			_ = chain(xS)
			if err := b.Sync(); err != nil {
				bm.Fatal(err)
			}
		}
	})
	bm.Run("graph", func(bm *testing.B) {
		if err := b.BeginGraph(); err != nil {
			bm.Skip(err)
		}
		if err := b.CopyInto(outS, chain(xS)); err != nil {
			bm.Fatal(err)
		}
		g, err := b.EndGraph()
		if err != nil {
			bm.Fatal(err)
		}
		defer g.Close()
		for bm.Loop() {
			if err := g.Launch(); err != nil {
				bm.Fatal(err)
			}
			if err := b.Sync(); err != nil {
				bm.Fatal(err)
			}
		}
	})
}
