package nn_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/emberml/ember"
	"github.com/emberml/ember/nn"
)

// summaryMLP is train.NewMLP: 784 → 128 → ReLU → 10.
func summaryMLP(dev ember.Device) nn.Module {
	return nn.NewSequential(nn.Flatten{}, nn.NewLinear(784, 128, dev), nn.Relu{}, nn.NewLinear(128, 10, dev))
}

// summaryCNN is train.NewCNN.
func summaryCNN(dev ember.Device) nn.Module {
	return nn.NewSequential(
		nn.NewConv2d(1, 32, 5, ember.ConvOptions{}, dev),
		nn.Relu{},
		nn.NewMaxPool2d(2, 2),
		nn.NewConv2d(32, 64, 5, ember.ConvOptions{}, dev),
		nn.Relu{},
		nn.NewMaxPool2d(2, 2),
		nn.Flatten{},
		nn.NewLinear(64*4*4, 10, dev),
	)
}

// summaryNested has a Sequential two levels deep and BatchNorm buffers.
func summaryNested(dev ember.Device) nn.Module {
	return nn.NewSequential(
		nn.NewConv2d(3, 8, 3, ember.ConvOptions{Padding: [2]int{1, 1}}, dev),
		nn.NewSequential(
			nn.NewBatchNorm(8, dev),
			nn.Relu{},
			nn.NewSequential(nn.NewDropout(0.25), nn.NewLinear(8, 4, dev)),
		),
		nn.NewLinear(4, 2, dev),
	)
}

// affine is a module defined outside package nn: y = x·W + b, plus a
// step-counter buffer.
type affine struct {
	W, B  *nn.Param
	steps *nn.Param
}

func newAffine(in, out int, dev ember.Device) *affine {
	return &affine{
		W:     &nn.Param{Value: ember.FullDType([]int{in, out}, 0.5, ember.F64, dev)},
		B:     &nn.Param{Value: ember.FullDType([]int{out}, 0.25, ember.F16, dev)},
		steps: &nn.Param{Value: ember.FullDType([]int{2}, 0, ember.I32, dev.Inner())},
	}
}

func (a *affine) Forward(x *ember.Tensor) *ember.Tensor { return x.Matmul(a.W.Value).Add(a.B.Value) }

func (a *affine) NamedParameters() []nn.NamedParam {
	return []nn.NamedParam{{Name: "w", Param: a.W}, {Name: "b", Param: a.B}}
}

func (a *affine) NamedBuffers() []nn.NamedParam {
	return []nn.NamedParam{{Name: "steps", Param: a.steps}}
}

// checkSummary compares s with quantities computed from m's parameter and
// buffer lists (the state-dict view): the totals, NumParams, the memory by
// dtype size, and each leaf row against the parameters whose names start
// with its path.
func checkSummary(t *testing.T, m nn.Module, s *nn.ModuleSummary) {
	t.Helper()
	ps := m.NamedParameters()
	if s.Params != nn.NumParams(m) {
		t.Errorf("Params = %d, NumParams = %d", s.Params, nn.NumParams(m))
	}
	var bytes int64
	for _, p := range ps {
		bytes += int64(p.Param.Value.NumElements() * p.Param.Value.DType().Size())
	}
	if s.ParamBytes != bytes {
		t.Errorf("ParamBytes = %d, want %d", s.ParamBytes, bytes)
	}
	nb := 0
	var bb int64
	for _, b := range nn.NamedBuffers(m) {
		if b.Param == nil || b.Param.Value == nil {
			continue // a literal module without its buffers
		}
		nb += b.Param.Value.NumElements()
		bb += int64(b.Param.Value.NumElements() * b.Param.Value.DType().Size())
	}
	if s.Buffers != nb || s.BufferBytes != bb {
		t.Errorf("Buffers = %d (%d B), want %d (%d B)", s.Buffers, s.BufferBytes, nb, bb)
	}
	leaves := 0
	for _, r := range s.Rows {
		var shapes [][]int
		n := 0
		for _, p := range ps {
			if r.Path == "" || strings.HasPrefix(p.Name, r.Path+".") {
				if !r.Container {
					shapes = append(shapes, p.Param.Value.Shape())
				}
				n += p.Param.Value.NumElements()
			}
		}
		if r.Params != n || !slices.EqualFunc(r.ParamShapes, shapes, slices.Equal) {
			t.Errorf("row %q: %d params %v, want %d %v", r.Path, r.Params, r.ParamShapes, n, shapes)
		}
		if want := strings.Count(r.Path, "."); r.Path != "" && r.Depth != want {
			t.Errorf("row %q: depth %d, want %d", r.Path, r.Depth, want)
		}
		if !r.Container {
			leaves += r.Params
		}
	}
	if leaves != s.Params {
		t.Errorf("leaf rows hold %d params, the total is %d", leaves, s.Params)
	}
}

func TestSummaryMLP(t *testing.T) {
	m := summaryMLP(ember.CPU())
	want := `Model: Sequential
======================================================
Path   Layer               Parameter shapes     Params
------------------------------------------------------
0      Flatten                                       0
1      Linear(784 → 128)   [128, 784], [128]   100,480
2      Relu                                          0
3      Linear(128 → 10)    [10, 128], [10]       1,290
======================================================
Trainable parameters:  101,770
Non-trainable buffers: 0
Parameter memory:      397.54 KiB (407,080 B, f32)
`
	if got := nn.Summary(m); got != want {
		t.Fatalf("Summary:\n%s\nwant:\n%s", got, want)
	}
	s := nn.Summarize(m)
	// 784·128 + 128 + 128·10 + 10, four bytes each.
	if s.Params != 101770 || s.ParamBytes != 4*101770 || s.Buffers != 0 || !slices.Equal(s.ParamDTypes, []ember.DType{ember.F32}) {
		t.Errorf("totals %d params, %d B, %d buffers, dtypes %v", s.Params, s.ParamBytes, s.Buffers, s.ParamDTypes)
	}
	checkSummary(t, m, s)
}

func TestSummaryCNN(t *testing.T) {
	m := summaryCNN(ember.CPU())
	want := `Model: Sequential
===========================================================
Path   Layer                  Parameter shapes       Params
-----------------------------------------------------------
0      Conv2d(1 → 32, 5×5)    [32, 1, 5, 5], [32]       832
1      Relu                                               0
2      MaxPool2d(2)                                       0
3      Conv2d(32 → 64, 5×5)   [64, 32, 5, 5], [64]   51,264
4      Relu                                               0
5      MaxPool2d(2)                                       0
6      Flatten                                            0
7      Linear(1024 → 10)      [10, 1024], [10]       10,250
===========================================================
Trainable parameters:  62,346
Non-trainable buffers: 0
Parameter memory:      243.54 KiB (249,384 B, f32)
`
	if got := nn.Summary(m); got != want {
		t.Fatalf("Summary:\n%s\nwant:\n%s", got, want)
	}
	s := nn.Summarize(m)
	// 32·25 + 32 + 64·32·25 + 64 + 1024·10 + 10.
	if s.Params != 62346 || s.ParamBytes != 4*62346 {
		t.Errorf("totals %d params, %d B", s.Params, s.ParamBytes)
	}
	checkSummary(t, m, s)
}

func TestSummaryNestedWithBuffers(t *testing.T) {
	m := summaryNested(ember.CPU())
	s := nn.Summarize(m)
	type row struct {
		path      string
		depth     int
		layer     string
		container bool
		params    int
		buffers   int
	}
	// Conv 8·3·9 + 8; BatchNorm 8 + 8 and buffers 8 + 8 + 1; Linear 8·4 + 4
	// and 4·2 + 2.
	rows := []row{
		{"0", 0, "Conv2d(3 → 8, 3×3, padding 1)", false, 224, 0},
		{"1", 0, "Sequential", true, 16 + 36, 17},
		{"1.0", 1, "BatchNorm(8)", false, 16, 17},
		{"1.1", 1, "Relu", false, 0, 0},
		{"1.2", 1, "Sequential", true, 36, 0},
		{"1.2.0", 2, "Dropout(0.25)", false, 0, 0},
		{"1.2.1", 2, "Linear(8 → 4)", false, 36, 0},
		{"2", 0, "Linear(4 → 2)", false, 10, 0},
	}
	if len(s.Rows) != len(rows) {
		t.Fatalf("%d rows, want %d", len(s.Rows), len(rows))
	}
	for i, w := range rows {
		r := s.Rows[i]
		if g := (row{r.Path, r.Depth, r.Layer, r.Container, r.Params, r.Buffers}); g != w {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	// BatchNorm(8): running_mean and running_var, 8 f32 each, and the I64
	// counter: 17 elements, 32 + 32 + 8 bytes.
	if s.Params != 224+16+36+10 || s.Buffers != 17 || s.BufferBytes != 72 {
		t.Errorf("totals %d params, %d buffers (%d B)", s.Params, s.Buffers, s.BufferBytes)
	}
	checkSummary(t, m, s)
	got := nn.Summary(m)
	wantText := `Model: Sequential
======================================================================
Path        Layer                           Parameter shapes    Params
----------------------------------------------------------------------
0           Conv2d(3 → 8, 3×3, padding 1)   [8, 3, 3, 3], [8]      224
1           Sequential                                              --
  1.0       BatchNorm(8)                    [8], [8]                16
  1.1       Relu                                                     0
  1.2       Sequential                                              --
    1.2.0   Dropout(0.25)                                            0
    1.2.1   Linear(8 → 4)                   [4, 8], [4]             36
2           Linear(4 → 2)                   [2, 4], [2]             10
======================================================================
Trainable parameters:  286
Non-trainable buffers: 17 (72 B)
Parameter memory:      1.12 KiB (1,144 B, f32)
`
	if got != wantText {
		t.Fatalf("Summary:\n%s\nwant:\n%s", got, wantText)
	}
}

func TestSummaryBufferUnits(t *testing.T) {
	// BatchNorm(256): 2·256 f32 + one I64 = 513 elements, 2,056 bytes.
	m := nn.NewBatchNorm(256, ember.CPU())
	s := nn.Summarize(m)
	checkSummary(t, m, s)
	got := nn.Summary(m)
	for _, line := range []string{
		"Model: BatchNorm(256)\n",
		"\n-      BatchNorm(256)   [256], [256]          512\n",
		"\nTrainable parameters:  512\n",
		"\nNon-trainable buffers: 513 (2.01 KiB, 2,056 B)\n",
		"\nParameter memory:      2.00 KiB (2,048 B, f32)\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("Summary lacks %q:\n%s", line, got)
		}
	}
}

func TestSummaryCustomModule(t *testing.T) {
	dev := ember.CPU()
	a := newAffine(3, 5, dev)
	// w: 15 f64 = 120 B; b: 5 f16 = 10 B; steps: 2 i32 = 8 B.
	want := `Model: nn_test.affine
=================================================
Path   Layer            Parameter shapes   Params
-------------------------------------------------
-      nn_test.affine   [3, 5], [5]            20
=================================================
Trainable parameters:  20
Non-trainable buffers: 2 (8 B)
Parameter memory:      130 B (f64, f16)
`
	if got := nn.Summary(a); got != want {
		t.Fatalf("Summary:\n%s\nwant:\n%s", got, want)
	}
	s := nn.Summarize(a)
	if s.Params != 20 || s.ParamBytes != 130 || s.Buffers != 2 || s.BufferBytes != 8 ||
		!slices.Equal(s.ParamDTypes, []ember.DType{ember.F64, ember.F16}) {
		t.Errorf("totals %+v", *s)
	}
	checkSummary(t, a, s)

	// Inside a Sequential, the custom module is one row named by its index.
	seq := nn.NewSequential(nn.NewLinear(4, 3, dev), a, nn.Gelu{})
	s = nn.Summarize(seq)
	checkSummary(t, seq, s)
	if r := s.Rows[1]; r.Path != "1" || r.Layer != "nn_test.affine" || r.Params != 20 || r.Buffers != 2 {
		t.Errorf("row 1 = %+v", r)
	}
	if s.Params != 4*3+3+20 || s.ParamBytes != 15*4+130 || !slices.Equal(s.ParamDTypes, []ember.DType{ember.F32, ember.F64, ember.F16}) {
		t.Errorf("totals %+v", *s)
	}
}

func TestSummaryLayerDescriptions(t *testing.T) {
	dev := ember.CPU()
	zeros := func(shape ...int) *nn.Param { return &nn.Param{Value: ember.Zeros(shape, dev)} }
	cases := []struct {
		m    nn.Module
		want string
	}{
		{nn.NewLinear(784, 128, dev), "Linear(784 → 128)"},
		{&nn.Linear{Weight: zeros(4, 3), Bias: zeros(4)}, "Linear(3 → 4)"},
		{nn.NewConv2d(1, 32, 5, ember.ConvOptions{}, dev), "Conv2d(1 → 32, 5×5)"},
		{nn.NewConv2d(8, 16, 3, ember.ConvOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 0}, Dilation: [2]int{2, 2}, Groups: 4}, dev),
			"Conv2d(8 → 16, 3×3, stride 2, padding 1×0, dilation 2, 4 groups)"},
		{&nn.Conv2d{Weight: zeros(6, 2, 3, 1), Bias: zeros(6), Opts: ember.ConvOptions{Groups: 2}}, "Conv2d(4 → 6, 3×1, 2 groups)"},
		{nn.NewConvTranspose2d(8, 4, 2, ember.ConvOptions{Stride: [2]int{2, 2}, OutputPadding: [2]int{1, 1}}, dev),
			"ConvTranspose2d(8 → 4, 2×2, stride 2, output padding 1)"},
		{nn.NewConv1d(16, 32, 3, ember.Conv1dOptions{Padding: 1}, dev), "Conv1d(16 → 32, kernel 3, padding 1)"},
		{nn.NewConv3d(2, 4, 3, ember.Conv3dOptions{Stride: [3]int{1, 2, 2}}, dev), "Conv3d(2 → 4, 3×3×3, stride 1×2×2)"},
		{nn.NewMaxPool2d(2, 2), "MaxPool2d(2)"},
		{nn.NewMaxPool2d(3, 0), "MaxPool2d(3)"},
		{&nn.MaxPool2d{Opts: ember.PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}}, "MaxPool2d(3, stride 2, padding 1)"},
		{nn.NewAvgPool2d(3, 2), "AvgPool2d(3, stride 2)"},
		{&nn.AvgPool2d{Opts: ember.PoolOptions{Kernel: [2]int{2, 2}, Padding: [2]int{1, 1}}}, "AvgPool2d(2, padding 1, padding not counted)"},
		{nn.AdaptiveAvgPool2d{OutH: 7, OutW: 7}, "AdaptiveAvgPool2d(7×7)"},
		{nn.Upsample{Size: [2]int{32, 64}, Mode: ember.InterpBilinear, AlignCorners: true}, "Upsample(32×64, bilinear, align corners)"},
		{nn.Relu{}, "Relu"},
		{nn.Gelu{}, "Gelu"},
		{nn.Flatten{}, "Flatten"},
		{nn.NewDropout(0.5), "Dropout(0.5)"},
		{nn.NewEmbedding(1000, 64, dev), "Embedding(1000, 64)"},
		{nn.NewEmbeddingWithPadding(1000, 64, -1, dev), "Embedding(1000, 64, padding 999)"},
		{nn.NewBatchNorm(64, dev), "BatchNorm(64)"},
		{&nn.BatchNorm{Weight: zeros(5), Bias: zeros(5), Eps: 1e-3, Momentum: 0.01}, "BatchNorm(5, eps 0.001, momentum 0.01)"},
		{nn.NewLayerNorm(512, dev), "LayerNorm(512)"},
		{nn.NewRMSNorm(512, dev), "RMSNorm(512)"},
		{nn.NewGroupNorm(4, 16, dev), "GroupNorm(16, 4 groups)"},
		{nn.NewMultiHeadAttention(64, 8, dev), "MultiHeadAttention(64, 8 heads)"},
		{nn.NewLSTM(10, 20, 2, dev), "LSTM(10 → 20, 2 layers)"},
		{&nn.GRU{Layers: nn.NewGRU(6, 5, 1, dev).Layers, BatchFirst: true}, "GRU(6 → 5, 1 layer, batch-first)"},
		{nn.NewSequential(), "Sequential"},
		{newAffine(2, 2, dev), "nn_test.affine"},
	}
	for _, c := range cases {
		s := nn.Summarize(c.m)
		if s.Model != c.want {
			t.Errorf("%T: Model %q, want %q", c.m, s.Model, c.want)
		}
		if _, seq := c.m.(*nn.Sequential); !seq {
			if len(s.Rows) != 1 || s.Rows[0].Layer != c.want || s.Rows[0].Path != "" || s.Rows[0].Container {
				t.Errorf("%T: rows %+v", c.m, s.Rows)
			}
			checkSummary(t, c.m, s)
		}
	}
}

// TestSummaryDevices checks that the summary reads no tensor data: the
// parameters of modules made inside a capture scope are recorded, not
// computed (reading one fails), and the summary is the CPU one.
func TestSummaryDevices(t *testing.T) {
	want := nn.Summary(summaryNested(ember.CPU()))
	if got := nn.Summary(summaryNested(ember.CPU().Autodiff())); got != want {
		t.Errorf("cpu+autodiff:\n%s\nwant:\n%s", got, want)
	}
	moved := summaryNested(ember.CPU())
	if err := nn.ToDevice(moved, ember.Capture()); err != nil {
		t.Fatal(err)
	}
	if got := nn.Summary(moved); got != want {
		t.Errorf("moved to a capture device:\n%s\nwant:\n%s", got, want)
	}
	for _, dev := range []ember.Device{ember.Capture(), ember.Capture().Autodiff()} {
		var got string
		_, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
			m := summaryNested(dev)
			w := m.NamedParameters()[0].Param.Value
			if ember.Try(func() { w.Data() }) == nil {
				t.Errorf("%v: a recorded parameter's data could be read", dev)
			}
			got = nn.Summary(m)
			return sc.Complete(nil, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%v:\n%s\nwant:\n%s", dev, got, want)
		}
	}
}

// TestSummaryMemoryUnits checks the memory line around the unit
// boundaries, with parameters recorded on a capture device (the GiB ones
// are never allocated).
func TestSummaryMemoryUnits(t *testing.T) {
	dev := ember.Capture()
	cases := []struct {
		shape []int
		dt    ember.DType
		want  string
	}{
		{[]int{255}, ember.F32, "1,020 B (f32)"},
		{[]int{1023}, ember.U8, "1,023 B (u8)"},
		{[]int{256}, ember.F32, "1.00 KiB (1,024 B, f32)"},
		{[]int{3 << 17}, ember.F32, "1.50 MiB (1,572,864 B, f32)"},
		{[]int{1 << 20, 3}, ember.BF16, "6.00 MiB (6,291,456 B, bf16)"},
		{[]int{3 << 27}, ember.F32, "1.50 GiB (1,610,612,736 B, f32)"},
	}
	_, err := dev.CaptureScope(func(sc *ember.CaptureScope) ember.CompletedCaptureScope {
		for _, c := range cases {
			m := &blob{P: &nn.Param{Value: ember.FullDType(c.shape, 0, c.dt, dev)}}
			got := nn.Summary(m)
			if want := "\nParameter memory:      " + c.want + "\n"; !strings.Contains(got, want) {
				t.Errorf("%v %v: summary lacks %q:\n%s", c.shape, c.dt, want, got)
			}
		}
		return sc.Complete(nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// blob is a module holding one parameter.
type blob struct{ P *nn.Param }

func (b *blob) Forward(x *ember.Tensor) *ember.Tensor { return x.Mul(b.P.Value) }

func (b *blob) NamedParameters() []nn.NamedParam { return []nn.NamedParam{{Name: "p", Param: b.P}} }

func TestSummaryNil(t *testing.T) {
	if got := nn.Summary(nil); got != "nn.Summary: nil module\n" {
		t.Errorf("Summary(nil) = %q", got)
	}
	if got := nn.Summary((*nn.Linear)(nil)); got != "nn.Summary: nil module (*nn.Linear)\n" {
		t.Errorf("Summary((*nn.Linear)(nil)) = %q", got)
	}
	if s := nn.Summarize((*nn.Sequential)(nil)); s != nil {
		t.Errorf("Summarize((*nn.Sequential)(nil)) = %+v", s)
	}
	if got := (*nn.ModuleSummary)(nil).String(); got != "nn.Summary: nil module\n" {
		t.Errorf("nil ModuleSummary prints %q", got)
	}
	// Broken trees are reported row by row.
	dev := ember.CPU()
	m := nn.NewSequential(nn.NewLinear(2, 3, dev), nil, (*nn.Conv2d)(nil), &nn.Linear{}, nn.NewSequential())
	s := nn.Summarize(m)
	got := make([]string, len(s.Rows))
	for i, r := range s.Rows {
		got[i] = r.Layer
	}
	if want := []string{"Linear(2 → 3)", "nil", "nil *nn.Conv2d", "Linear", "Sequential"}; !slices.Equal(got, want) {
		t.Errorf("layers %q, want %q", got, want)
	}
	if r := s.Rows[3]; !slices.EqualFunc(r.ParamShapes, [][]int{nil, nil}, slices.Equal) || r.Params != 0 {
		t.Errorf("zero-value Linear row %+v", r)
	}
	if s.Params != 9 || !strings.Contains(s.String(), "\n3      Linear           missing, missing        0\n") {
		t.Errorf("Params %d; summary:\n%s", s.Params, s)
	}
	want := `Model: Sequential
========================================
Path   Layer   Parameter shapes   Params
----------------------------------------
========================================
Trainable parameters:  0
Non-trainable buffers: 0
Parameter memory:      0 B
`
	if got := nn.Summary(nn.NewSequential()); got != want {
		t.Errorf("empty Sequential:\n%s\nwant:\n%s", got, want)
	}
}
