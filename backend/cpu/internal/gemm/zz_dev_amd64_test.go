package gemm

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/emberml/ember/backend/cpu/internal/peer"
)

func TestDevCompare(t *testing.T) {
	if os.Getenv("DEVCMP") == "" {
		t.Skip()
	}
	o, _ := peer.LoadOpenBLAS()
	if v, err := strconv.Atoi(os.Getenv("KC")); err == nil {
		sKernel.kc, dKernel.kc = v, v
	}
	if v, err := strconv.Atoi(os.Getenv("MC")); err == nil {
		sKernel.mc, dKernel.mc = v, v
	}
	fmt.Println(sKernel.kc, sKernel.mc)
	for _, ns := range []string{"1024", "2048"} {
		n, _ := strconv.Atoi(ns)
		a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		da, db, dc := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
		for i := range a {
			a[i], b[i] = float32(i%13)*0.1, float32(i%7)*0.2
			da[i], db[i] = float64(a[i]), float64(b[i])
		}
		best := [4]time.Duration{1 << 62, 1 << 62, 1 << 62, 1 << 62}
		for it := 0; it < 12; it++ {
			fs := []func(){
				func() { Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) },
				func() { o.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n) },
				func() { Dgemm(false, false, n, n, n, 1, da, n, db, n, 0, dc, n) },
				func() { o.Dgemm(false, false, n, n, n, 1, da, n, db, n, 0, dc, n) },
			}
			for i, f := range fs {
				t0 := time.Now()
				f()
				best[i] = min(best[i], time.Since(t0))
			}
		}
		g := func(d time.Duration) float64 { return 2 * float64(n*n*n) / d.Seconds() / 1e9 }
		fmt.Printf("n=%d sgemm ember %.1f openblas %.1f (%.2f)  dgemm ember %.1f openblas %.1f (%.2f)\n", n,
			g(best[0]), g(best[1]), g(best[0])/g(best[1]), g(best[2]), g(best[3]), g(best[2])/g(best[3]))
	}
}

func BenchmarkDevMacro(b *testing.B) {
	for _, kb := range []int{256, 384, 512} {
		for _, ldc := range []int{1024, 1040, 2048} {
			b.Run(fmt.Sprint(kb, "_", ldc), func(b *testing.B) {
				kr := sKernel
				mb, nb := 168, 1024
				ap := make([]float32, mb*kb)
				bp := make([]float32, nb*kb)
				c := make([]float32, mb*ldc)
				for b.Loop() {
					macro(kr, mb, nb, kb, ap, bp, c, ldc, true)
				}
				b.ReportMetric(2*float64(mb*nb*kb)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkDevAVX2Micro(b *testing.B) {
	b.Run("f32", func(b *testing.B) { benchMicro(b, sAVX2) })
	b.Run("f64", func(b *testing.B) { benchMicro(b, dAVX2) })
	b.Run("g32", func(b *testing.B) { benchMicro(b, sGeneric) })
	b.Run("g64", func(b *testing.B) { benchMicro(b, dGeneric) })
}
