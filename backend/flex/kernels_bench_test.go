package flex

import (
	"math/rand/v2"
	"testing"

	"github.com/emberml/ember/backend"
)

// benchGemm times gemm on an m×n×k product with the given transposes and
// reports GFLOP/s (2·m·n·k floating-point operations per call).
func benchGemm[T kernelFloat](b *testing.B, f gemmFunc[T], transA, transB bool, m, n, k int) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randSlice[T](rng, m*k)
	y := randSlice[T](rng, k*n)
	c := make([]T, m*n)
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	for b.Loop() {
		f(transA, transB, m, n, k, x, lda, y, ldb, c, n, false)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm256(b *testing.B)  { benchGemm(b, gemmF32, false, false, 256, 256, 256) }
func BenchmarkSgemm1024(b *testing.B) { benchGemm(b, gemmF32, false, false, 1024, 1024, 1024) }
func BenchmarkDgemm256(b *testing.B)  { benchGemm(b, gemmF64, false, false, 256, 256, 256) }

// BenchmarkSgemmMNIST covers the products of an MLP 784-128-10 with batch 64:
// forward X·W (NN), and the backward products dW = Xᵀ·dY (TN) and dX = dY·Wᵀ (NT).
func BenchmarkSgemmMNIST(b *testing.B) {
	for _, s := range []struct {
		name    string
		ta, tb  bool
		m, n, k int
	}{
		{"fwd1_64x128x784", false, false, 64, 128, 784},
		{"fwd2_64x10x128", false, false, 64, 10, 128},
		{"dW1_784x128x64_TN", true, false, 784, 128, 64},
		{"dW2_128x10x64_TN", true, false, 128, 10, 64},
		{"dX2_64x128x10_NT", false, true, 64, 128, 10},
		{"dX1_64x784x128_NT", false, true, 64, 784, 128},
		{"fwd1T_64x128x784_NT", false, true, 64, 128, 784},
		{"batch1_1x128x784", false, false, 1, 128, 784},
		{"batch1_1x128x784_NT", false, true, 1, 128, 784},
		{"batch1_dX_1x784x128_NT", false, true, 1, 784, 128},
		{"outer_784x128x1_TN", true, false, 784, 128, 1},
	} {
		b.Run(s.name, func(b *testing.B) { benchGemm(b, gemmF32, s.ta, s.tb, s.m, s.n, s.k) })
	}
}

// benchConv times conv2dF32 (or its transpose) and reports GFLOP/s
// (2·N·Cout·Ho·Wo·Cin/groups·kH·kW operations).
func benchConv(b *testing.B, transpose bool, n, cin, h, w, cout, kh, kw int, o backend.ConvOptions) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := [4]int{n, cin, h, w}
	ws := [4]int{cout, cin / o.Groups, kh, kw}
	os := [4]int{n, cout, convOut(h, kh, o, 0), convOut(w, kw, o, 1)}
	x := randSlice[float32](rng, n*cin*h*w)
	wt := randSlice[float32](rng, ws[0]*ws[1]*kh*kw)
	out := make([]float32, os[0]*os[1]*os[2]*os[3])
	flops := 2 * float64(n*cout*os[2]*os[3]) * float64(cin/o.Groups*kh*kw)
	if transpose {
		// The adjoint maps out-shaped input to x-shaped output with w [Cout, Cin/g, kH, kW] read as [Cin', Cout'/g, kH, kW].
		for b.Loop() {
			convTranspose2dF32(out, os, wt, ws, o, x, xs)
		}
	} else {
		for b.Loop() {
			conv2dF32(x, xs, wt, ws, o, out, os)
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// convOut is the conv2d output size along axis ax (0 height, 1 width).
func convOut(in, kern int, o backend.ConvOptions, ax int) int {
	return (in+2*o.Padding[ax]-o.Dilation[ax]*(kern-1)-1)/o.Stride[ax] + 1
}

func convOpts(stride, pad int) backend.ConvOptions {
	return backend.ConvOptions{Stride: [2]int{stride, stride}, Padding: [2]int{pad, pad}, Dilation: [2]int{1, 1}, Groups: 1}
}

func BenchmarkConv2d(b *testing.B) {
	for _, s := range []struct {
		name                    string
		n, cin, h, cout, k, pad int
	}{
		{"b64_3x3_64to64_28x28", 64, 64, 28, 64, 3, 1},
		{"mnist1_b64_5x5_1to32_28x28", 64, 1, 28, 32, 5, 0},
		{"mnist2_b64_5x5_32to64_12x12", 64, 32, 12, 64, 5, 0},
	} {
		for _, tr := range []bool{false, true} {
			name := s.name
			if tr {
				name = "transpose_" + name
			}
			b.Run(name, func(b *testing.B) {
				benchConv(b, tr, s.n, s.cin, s.h, s.h, s.cout, s.k, s.k, convOpts(1, s.pad))
			})
		}
	}
}
